//! Builds a tiny static embedding model folder (a vocabulary and a safetensors matrix), the
//! form `memory_search::semantic::Model::load` reads.

use std::collections::HashMap;
use std::path::Path;

use safetensors::tensor::TensorView;

/// Writes `tokenizer.json` (a WordPiece-style `{token: id}` vocabulary) and
/// `model.safetensors` (`embeddings`, F32 `[vocabulary, dimensions]`) into `dir`: each group
/// of words shares one direction (words of a group are near each other, groups are apart),
/// and every other word in `others` gets a small vector of its own.
pub fn write_model(dir: &Path, groups: &[&[&str]], others: &[&str]) {
    let dims = groups.len() + others.len() + 1;
    let mut tokens: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<f32>> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for (i, word) in group.iter().enumerate() {
            let mut v = vec![0f32; dims];
            v[g] = 1.0;
            // A little of a shared axis so that vectors differ within a group.
            v[dims - 1] = 0.05 * (i as f32 + 1.0);
            tokens.push((*word).to_owned());
            rows.push(v);
        }
    }
    for (o, word) in others.iter().enumerate() {
        let mut v = vec![0f32; dims];
        v[groups.len() + o] = 0.3;
        tokens.push((*word).to_owned());
        rows.push(v);
    }
    let vocab: HashMap<&str, usize> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let tokenizer = serde_json::json!({"model": {"type": "WordPiece", "vocab": vocab}});
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let bytes: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let view = TensorView::new(safetensors::Dtype::F32, vec![tokens.len(), dims], &bytes).unwrap();
    let file = safetensors::tensor::serialize([("embeddings", view)], None).unwrap();
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
}
