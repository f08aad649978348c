//! Hybrid search with a tiny static embedding model the test builds (feature `semantic`).

#![cfg(feature = "semantic")]

mod common;

use std::sync::Arc;

use memory_core::search::SearchQuery;
use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_search::semantic::{Model, ModelError};
use memory_search::{IndexLocation, IndexOptions, Indexed};

const GROUPS: &[&[&str]] = &[
    &["car", "automobile", "vehicle", "engine"],
    &["banana", "apple", "fruit", "sweet"],
];
const OTHERS: &[&str] = &[
    "my", "needs", "new", "and", "are", "the", "weather", "is", "##s", "cold",
];

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

async fn store_with(model: Option<Arc<Model>>) -> Indexed<InMemoryStorage> {
    let mut options = IndexOptions::new(IndexLocation::Memory);
    if let Some(model) = model {
        options = options.semantic(model);
    }
    let store = Indexed::new(InMemoryStorage::new(), options);
    for (path, text) in [
        (
            "/memories/garage.md",
            "# Garage\nMy car needs a new engine.",
        ),
        (
            "/memories/kitchen.md",
            "# Kitchen\nBananas and apples are sweet.",
        ),
        ("/memories/misc.md", "# Misc\nThe weather is cold."),
    ] {
        store
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    store
}

async fn paths(store: &dyn Storage, q: &str) -> Vec<String> {
    store
        .search(&SearchQuery::new(q).unwrap())
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.path.as_str().to_owned())
        .collect()
}

fn model() -> Arc<Model> {
    let dir = tempfile::tempdir().unwrap();
    common::model::write_model(dir.path(), GROUPS, OTHERS);
    Arc::new(Model::load(dir.path()).unwrap())
}

#[test]
fn the_model_tokenizes_words_and_pieces() {
    let model = model();
    assert_eq!(model.dimensions(), GROUPS.len() + OTHERS.len() + 1);
    // "Bananas" is not in the vocabulary: banana + ##s.
    assert_eq!(model.token_rows("Bananas").len(), 2);
    assert_eq!(model.token_rows("Automobile!").len(), 1);
    assert!(model.token_rows("zzz").is_empty());
    assert!(model.embed("zzz").is_none());
    let car = model.embed("car").unwrap();
    let auto = model.embed("automobile").unwrap();
    let fruit = model.embed("fruit").unwrap();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!((dot(&car, &car) - 1.0).abs() < 1e-5, "unit length");
    assert!(dot(&car, &auto) > 0.9);
    assert!(dot(&car, &fruit) < 0.1);
}

#[tokio::test]
async fn hybrid_finds_by_meaning_where_keywords_find_nothing() {
    let keyword = store_with(None).await;
    assert!(paths(&keyword, "automobile").await.is_empty());
    assert!(paths(&keyword, "fruit").await.is_empty());

    let hybrid = store_with(Some(model())).await;
    assert_eq!(paths(&hybrid, "automobile").await[0], "/memories/garage.md");
    assert_eq!(paths(&hybrid, "fruit").await[0], "/memories/kitchen.md");
    // A keyword hit stays first, with its lines and snippet.
    let hits = hybrid
        .search(&SearchQuery::new("engine").unwrap())
        .await
        .unwrap();
    assert_eq!(hits[0].path, p("/memories/garage.md"));
    assert_eq!(hits[0].lines, [2]);
    assert_eq!(hits[0].snippet, "My car needs a new engine.");
    // A hit by meaning only shows the file's first line.
    let hits = hybrid
        .search(&SearchQuery::new("vehicle").unwrap())
        .await
        .unwrap();
    assert_eq!(hits[0].path, p("/memories/garage.md"));
    assert!(hits[0].lines.is_empty());
    assert_eq!(hits[0].snippet, "# Garage");
    // Changed behind its back: the new text's vector is used.
    hybrid
        .inner()
        .write(
            &p("/memories/misc.md"),
            b"Apples everywhere".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    let found = paths(&hybrid, "fruit").await;
    assert!(found.contains(&"/memories/misc.md".to_owned()), "{found:?}");
}

/// A model read from a folder on the first search, not before.
#[tokio::test]
async fn a_model_folder_is_read_on_the_first_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = Indexed::new(
        InMemoryStorage::new(),
        IndexOptions::new(IndexLocation::Memory).semantic_folder(dir.path().join("model")),
    );
    // No model there yet: writes work, the search says what is missing.
    store
        .write(&p("/memories/a.md"), b"my car".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let err = store
        .search(&SearchQuery::new("car").unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, memory_core::Error::Backend { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("neither tokenizer.json nor vocab.txt")
            || format!("{err:?}").contains("NoVocabulary"),
        "{err:?}"
    );
    std::fs::create_dir(dir.path().join("model")).unwrap();
    common::model::write_model(&dir.path().join("model"), GROUPS, OTHERS);
    assert_eq!(paths(&store, "automobile").await, ["/memories/a.md"]);
}

#[test]
fn bad_model_folders_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Model::load(dir.path()),
        Err(ModelError::NoVocabulary)
    ));
    std::fs::write(dir.path().join("vocab.txt"), "a\nb\n").unwrap();
    assert!(matches!(
        Model::load(dir.path()),
        Err(ModelError::Read { .. })
    ));
    std::fs::write(dir.path().join("model.safetensors"), b"not tensors").unwrap();
    assert!(matches!(
        Model::load(dir.path()),
        Err(ModelError::Tensors { .. })
    ));
    // A 1-D tensor is no embedding matrix.
    let bytes = [0u8; 8];
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2], &bytes).unwrap();
    let file = safetensors::tensor::serialize([("embeddings", view)], None).unwrap();
    std::fs::write(dir.path().join("model.safetensors"), file).unwrap();
    let err = Model::load(dir.path()).unwrap_err();
    assert!(matches!(err, ModelError::Shape { .. }), "{err}");
    // vocab.txt with a matrix of the right shape loads.
    let bytes = [0u8; 16];
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 2], &bytes).unwrap();
    let file = safetensors::tensor::serialize([("embeddings", view)], None).unwrap();
    std::fs::write(dir.path().join("model.safetensors"), file).unwrap();
    assert_eq!(Model::load(dir.path()).unwrap().dimensions(), 2);
}
