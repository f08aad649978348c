//! Local semantic search (feature `semantic`): a static embedding model read from a folder the
//! user supplies, and hybrid ranking: the keyword list's scores mixed with similarity.
//!
//! # The model folder
//!
//! A [model2vec]-style static embedding: one vector per vocabulary entry, no network at all.
//! Nothing is ever downloaded; [`Model::load`] reads two files:
//!
//! - `model.safetensors`: a 2-D tensor `[vocabulary, dimensions]` of `F32`, `F16` or `BF16`,
//!   named `embeddings` (model2vec's name), or the only tensor in the file;
//! - the vocabulary, row `i` of the matrix being entry `i`: `tokenizer.json` (the Hugging Face
//!   tokenizers format model2vec ships: `model.vocab` as a `{token: id}` map, WordPiece or BPE
//!   style, or as a `[[token, score], ...]` list, Unigram style, ids in list order), or else
//!   `vocab.txt` (one token per line).
//!
//! # Tokenization (simple, documented, not the Hugging Face tokenizer)
//!
//! The text is split into words by memory-core's [`tokenize`]
//! (folded: lower case, no diacritics). A word found in the vocabulary as it is (or as
//! `▁word`, SentencePiece's word start) is one token; otherwise it is split greedily into the
//! longest vocabulary pieces from its start, continuation pieces looked up as `##piece`
//! (WordPiece) or as they are; a rest that no piece covers is skipped. Vocabulary entries are
//! folded the same way when loaded. The text's embedding is the mean of its tokens' rows,
//! scaled to unit length; a text with no known token has none and takes part in the keyword
//! list only.
//!
//! # Ranking
//!
//! `hybrid` fuses the keyword list (memory-core's ranking, as without this feature) with the
//! files nearest to the query by cosine similarity: each file scores
//! `0.8 · keyword / best keyword + 0.2 · (similarity − lowest) / (highest − lowest)` over the
//! lists it is in ([`KEYWORD_SHARE`] = 0.8; each list's top [`FUSION_DEPTH`]). Scores, not
//! ranks, are mixed: a static embedding of a whole file is a weak signal, and reciprocal rank
//! fusion (which weighs the two lists' ranks alike) made the evaluation set's figures worse
//! than keyword search alone (BENCHMARKS.md). A file found by meaning only may hold none
//! of the query's words: its snippet is then its first line. It must still hold every `+`
//! clause and no `-` clause.
//!
//! [model2vec]: https://github.com/MinishLab/model2vec

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memory_core::MemoryPath;
use memory_core::search::{ParsedQuery, SearchHit, SearchQuery, is_searchable, tokenize};
use safetensors::{Dtype, SafeTensors};
use sha2::Digest;

use crate::error::IndexError;
use crate::index::Index;

/// How much the keyword list weighs in a hybrid score (the meaning list weighs the rest).
pub const KEYWORD_SHARE: f64 = 0.8;
/// How many files each list contributes to the fusion, at least (or the query's limit, if
/// larger).
pub const FUSION_DEPTH: usize = 50;
/// The longest vocabulary piece looked for when splitting a word, in characters.
const MAX_PIECE_CHARS: usize = 24;

/// Why a model folder could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A file of the model could not be read.
    #[error("cannot read the embedding model's {file}: {source}")]
    Read {
        /// The file's name in the model folder.
        file: &'static str,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The folder has no vocabulary file.
    #[error("the embedding model folder has neither tokenizer.json nor vocab.txt")]
    NoVocabulary,
    /// `tokenizer.json` is not the format described in the module documentation.
    #[error("the embedding model's tokenizer.json has no usable model.vocab: {reason}")]
    Tokenizer {
        /// What is missing or wrong.
        reason: String,
    },
    /// `model.safetensors` cannot be read as safetensors.
    #[error("the embedding model's model.safetensors is not valid: {reason}")]
    Tensors {
        /// What the safetensors reader said.
        reason: String,
    },
    /// The embedding tensor has an unusable shape or type.
    #[error(
        "the embedding tensor must be 2-D of F32, F16 or BF16 with one row per vocabulary entry; {found}"
    )]
    Shape {
        /// What the file holds.
        found: String,
    },
}

/// A static embedding model: one unit-length-able vector per vocabulary entry.
#[derive(Clone)]
pub struct Model {
    /// Folded token → row.
    vocab: HashMap<String, usize>,
    /// Rows, `dimensions` floats each, one after the other.
    matrix: Vec<f32>,
    dimensions: usize,
    /// Names the model in the index (a hash of its vocabulary and matrix), so vectors of
    /// another model are computed again.
    id: String,
    folder: PathBuf,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("folder", &self.folder)
            .field("vocabulary", &self.vocab.len())
            .field("dimensions", &self.dimensions)
            .field("id", &self.id)
            .finish()
    }
}

impl Model {
    /// Reads the model in `folder` (see the [module documentation](self) for its files).
    ///
    /// # Errors
    /// [`ModelError`] naming the file that is missing or not in the expected form.
    pub fn load(folder: impl AsRef<Path>) -> Result<Model, ModelError> {
        let folder = folder.as_ref();
        let tokens = read_vocabulary(folder)?;
        let bytes =
            std::fs::read(folder.join("model.safetensors")).map_err(|source| ModelError::Read {
                file: "model.safetensors",
                source,
            })?;
        let tensors = SafeTensors::deserialize(&bytes).map_err(|e| ModelError::Tensors {
            reason: e.to_string(),
        })?;
        let names = tensors.names();
        let name = if names.contains(&"embeddings") {
            "embeddings".to_owned()
        } else if names.len() == 1 {
            names[0].to_owned()
        } else {
            return Err(ModelError::Shape {
                found: format!("no tensor named `embeddings` among {} tensors", names.len()),
            });
        };
        let view = tensors.tensor(&name).map_err(|e| ModelError::Tensors {
            reason: e.to_string(),
        })?;
        let shape = view.shape().to_vec();
        let [rows, dimensions] = shape[..] else {
            return Err(ModelError::Shape {
                found: format!("`{name}` has shape {shape:?}"),
            });
        };
        if rows < tokens.len() || dimensions == 0 {
            return Err(ModelError::Shape {
                found: format!(
                    "`{name}` has shape {shape:?} for {} vocabulary entries",
                    tokens.len()
                ),
            });
        }
        let matrix = to_f32(view.dtype(), view.data()).ok_or_else(|| ModelError::Shape {
            found: format!("`{name}` holds {:?}", view.dtype()),
        })?;
        let mut hash = sha2::Sha256::new();
        for token in &tokens {
            hash.update(token.as_bytes());
            hash.update([0]);
        }
        hash.update(view.data());
        let id = format!("static-{}", &hex::encode(hash.finalize())[..24]);
        let mut vocab = HashMap::with_capacity(tokens.len());
        for (row, token) in tokens.into_iter().enumerate() {
            let key = fold_piece(&token);
            if !key.is_empty() {
                // The first entry of a folded form wins (`The` and `the` fold alike).
                vocab.entry(key).or_insert(row);
            }
        }
        Ok(Model {
            vocab,
            matrix,
            dimensions,
            id,
            folder: folder.to_owned(),
        })
    }

    /// Names the model (a hash of its vocabulary and matrix).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// How many numbers a vector has.
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The rows of the tokens of `text` (see the module documentation).
    pub fn token_rows(&self, text: &str) -> Vec<usize> {
        let mut rows = Vec::new();
        for word in tokenize(text) {
            let word = word.text;
            if let Some(&row) = self
                .vocab
                .get(&word)
                .or_else(|| self.vocab.get(&format!("▁{word}")))
            {
                rows.push(row);
                continue;
            }
            // Greedy longest pieces from the start.
            let chars: Vec<char> = word.chars().collect();
            let mut start = 0;
            while start < chars.len() {
                let longest = (chars.len() - start).min(MAX_PIECE_CHARS);
                let mut found = None;
                for len in (1..=longest).rev() {
                    let piece: String = chars[start..start + len].iter().collect();
                    let hit = if start == 0 {
                        self.vocab
                            .get(&piece)
                            .or_else(|| self.vocab.get(&format!("▁{piece}")))
                    } else {
                        self.vocab
                            .get(&format!("##{piece}"))
                            .or_else(|| self.vocab.get(&piece))
                    };
                    if let Some(&row) = hit {
                        found = Some((row, len));
                        break;
                    }
                }
                match found {
                    Some((row, len)) => {
                        rows.push(row);
                        start += len;
                    }
                    // No piece covers the rest of the word: skip it.
                    None => break,
                }
            }
        }
        rows
    }

    /// The unit-length embedding of `text`, or `None` when it has no known token.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let rows = self.token_rows(text);
        if rows.is_empty() {
            return None;
        }
        let mut sum = vec![0f32; self.dimensions];
        for row in &rows {
            let at = row * self.dimensions;
            for (s, v) in sum.iter_mut().zip(&self.matrix[at..at + self.dimensions]) {
                *s += v;
            }
        }
        let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return None;
        }
        for s in &mut sum {
            *s /= norm;
        }
        Some(sum)
    }

    /// [`embed`](Self::embed) as the index stores it: little-endian `f32`s, empty for none.
    pub(crate) fn embed_bytes(&self, text: &str) -> Vec<u8> {
        self.embed(text)
            .map(|v| v.iter().flat_map(|f| f.to_le_bytes()).collect())
            .unwrap_or_default()
    }
}

fn from_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A vocabulary entry folded as words are (so it matches the text's folded words), keeping
/// the `##` and `▁` markers.
fn fold_piece(token: &str) -> String {
    let (mark, body) = if let Some(rest) = token.strip_prefix("##") {
        ("##", rest)
    } else if let Some(rest) = token.strip_prefix('▁') {
        ("▁", rest)
    } else {
        ("", token)
    };
    let folded = memory_core::search::fold(body);
    if folded.is_empty() {
        String::new()
    } else {
        format!("{mark}{folded}")
    }
}

fn read_vocabulary(folder: &Path) -> Result<Vec<String>, ModelError> {
    match std::fs::read(folder.join("tokenizer.json")) {
        Ok(bytes) => return tokenizer_vocab(&bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(ModelError::Read {
                file: "tokenizer.json",
                source,
            });
        }
    }
    match std::fs::read_to_string(folder.join("vocab.txt")) {
        Ok(text) => Ok(text.lines().map(str::to_owned).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ModelError::NoVocabulary),
        Err(source) => Err(ModelError::Read {
            file: "vocab.txt",
            source,
        }),
    }
}

fn tokenizer_vocab(bytes: &[u8]) -> Result<Vec<String>, ModelError> {
    let bad = |reason: &str| ModelError::Tokenizer {
        reason: reason.to_owned(),
    };
    let json: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| bad(&format!("not JSON ({e})")))?;
    let vocab = json
        .get("model")
        .and_then(|m| m.get("vocab"))
        .ok_or_else(|| bad("no model.vocab"))?;
    match vocab {
        serde_json::Value::Object(map) => {
            let mut tokens = vec![String::new(); map.len()];
            for (token, id) in map {
                let id = id
                    .as_u64()
                    .and_then(|id| usize::try_from(id).ok())
                    .filter(|&id| id < map.len())
                    .ok_or_else(|| {
                        bad(&format!("the id of `{token}` is not below {}", map.len()))
                    })?;
                tokens[id] = token.clone();
            }
            Ok(tokens)
        }
        serde_json::Value::Array(entries) => entries
            .iter()
            .map(|entry| match entry {
                serde_json::Value::String(token) => Ok(token.clone()),
                serde_json::Value::Array(pair) => pair
                    .first()
                    .and_then(|t| t.as_str())
                    .map(str::to_owned)
                    .ok_or_else(|| bad("a Unigram entry is not [token, score]")),
                _ => Err(bad(
                    "a vocabulary entry is neither a string nor [token, score]",
                )),
            })
            .collect(),
        _ => Err(bad("model.vocab is neither a map nor a list")),
    }
}

/// The matrix as `f32`s, for the types a static model ships in.
fn to_f32(dtype: Dtype, data: &[u8]) -> Option<Vec<f32>> {
    match dtype {
        Dtype::F32 => Some(from_bytes(data)),
        Dtype::F16 => Some(
            data.chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        Dtype::BF16 => Some(
            data.chunks_exact(2)
                .map(|c| f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16))
                .collect(),
        ),
        _ => None,
    }
}

/// IEEE 754 half precision to single.
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut f = frac;
            while f & 0x400 == 0 {
                f <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((f & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// The fused hits of `query`: the keyword list and the files nearest by meaning, by
/// mixing their scores (see the module documentation). Embeds first any indexed file that
/// has no vector of this model yet.
pub(crate) fn hybrid(
    index: &mut Index,
    model: &Model,
    query: &SearchQuery,
) -> Result<Vec<SearchHit>, IndexError> {
    let under = query.under();
    let missing = index.missing_vectors(model.id(), under.as_str())?;
    if !missing.is_empty() {
        let vectors: Vec<(String, Vec<u8>)> = missing
            .into_iter()
            .map(|(path, text)| {
                let v = model.embed_bytes(&text);
                (path, v)
            })
            .collect();
        index.put_vectors(model.id(), &vectors)?;
    }
    let depth = FUSION_DEPTH.max(query.limit());
    let keyword = crate::indexed::keyword_hits(index, query, depth)?;

    let mut nearest: Vec<(f32, String)> = Vec::new();
    if let Some(q) = model.embed(query.text()) {
        for (path, bytes) in index.vectors(model.id(), under.as_str())? {
            if bytes.len() != q.len() * 4 {
                continue;
            }
            let Ok(p) = MemoryPath::parse(&path) else {
                continue;
            };
            if !is_searchable(&p, under) {
                continue;
            }
            let v = from_bytes(&bytes);
            let sim: f32 = v.iter().zip(&q).map(|(a, b)| a * b).sum();
            if sim > 0.0 {
                nearest.push((sim, path));
            }
        }
        nearest.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        nearest.truncate(depth);
    }

    // Each list's scores scaled to [0, 1] by its best (keyword) or its range (meaning), then
    // mixed: the keyword list weighs KEYWORD_SHARE, the meaning list the rest.
    let alpha = KEYWORD_SHARE;
    let mut fused: HashMap<String, f64> = HashMap::new();
    let mut by_path: HashMap<String, SearchHit> = HashMap::new();
    let best = keyword
        .first()
        .map_or(1.0, |h| h.score)
        .max(f64::MIN_POSITIVE);
    for hit in keyword {
        *fused.entry(hit.path.as_str().to_owned()).or_default() += alpha * hit.score / best;
        by_path.insert(hit.path.as_str().to_owned(), hit);
    }
    if let (Some(top), Some(bottom)) = (nearest.first(), nearest.last()) {
        let (top, bottom) = (f64::from(top.0), f64::from(bottom.0));
        let range = (top - bottom).max(f64::MIN_POSITIVE);
        for (sim, path) in &nearest {
            *fused.entry(path.clone()).or_default() +=
                (1.0 - alpha) * (f64::from(*sim) - bottom) / range;
        }
    }
    let mut ranked: Vec<(String, f64)> = fused.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut hits = Vec::with_capacity(query.limit());
    for (path, score) in ranked {
        if hits.len() == query.limit() {
            break;
        }
        let hit = match by_path.remove(&path) {
            Some(mut hit) => {
                hit.score = score;
                hit
            }
            None => {
                let Ok(p) = MemoryPath::parse(&path) else {
                    continue;
                };
                let Some(text) = index.text(&path)? else {
                    continue;
                };
                if !query.parsed().admits(&text) {
                    // A `+` clause it lacks or a `-` clause it holds rules it out.
                    continue;
                }
                meaning_hit(p, score, &text, query.parsed())
            }
        };
        hits.push(hit);
    }
    Ok(hits)
}

/// The hit of a file found by meaning: the lines and snippet of the clauses it holds, or its
/// first non-empty line when it holds none.
fn meaning_hit(path: MemoryPath, score: f64, text: &str, parsed: &ParsedQuery) -> SearchHit {
    if let Some(hit) = SearchHit::from_text(path.clone(), score, text, parsed) {
        return hit;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    SearchHit {
        path,
        score,
        lines: Vec::new(),
        snippet: first
            .chars()
            .take(memory_core::search::SNIPPET_CHARS)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_convert() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert!(f16_to_f32(0x0001) > 0.0 && f16_to_f32(0x0001) < 1e-7);
        assert!(f16_to_f32(0x7c00).is_infinite());
    }

    #[test]
    fn vocabularies_of_both_forms() {
        let map = br###"{"model": {"type": "WordPiece", "vocab": {"b": 1, "a": 0, "##c": 2}}}"###;
        assert_eq!(tokenizer_vocab(map).unwrap(), ["a", "b", "##c"]);
        let list = br#"{"model": {"type": "Unigram", "vocab": [["x", -1.0], ["y", -2.0]]}}"#;
        assert_eq!(tokenizer_vocab(list).unwrap(), ["x", "y"]);
        assert!(matches!(
            tokenizer_vocab(br#"{"model": {}}"#),
            Err(ModelError::Tokenizer { .. })
        ));
        assert!(matches!(
            tokenizer_vocab(br#"{"model": {"vocab": {"a": 7}}}"#),
            Err(ModelError::Tokenizer { .. })
        ));
    }

    #[test]
    fn pieces_fold_and_keep_their_marks() {
        assert_eq!(fold_piece("Café"), "cafe");
        assert_eq!(fold_piece("##É"), "##e");
        assert_eq!(fold_piece("▁Zoë"), "▁zoe");
        assert_eq!(fold_piece("[CLS]"), "[cls]");
    }
}
