//! Folder and S3 stores opened from configuration search from a side index (feature
//! `search-index`), where the `search_index` option puts it; encrypted stores never get one.

#![cfg(all(feature = "search-index", feature = "fs"))]

use std::path::Path;

use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_runner::{OpenError, OpenOptions, open, open_with};

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

async fn write_and_find(store: &dyn Storage, word: &str) {
    let path = p("/memories/notes/a.md");
    store
        .write(
            &path,
            format!("# A\nremember {word} tomorrow\n").into_bytes(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let hits = store
        .search(&SearchQuery::new(word).unwrap())
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "{store}");
    assert_eq!(hits[0].path, path);
    assert_eq!(hits[0].lines, [2]);
}

/// Every file below `dir` whose bytes hold `word`.
fn files_holding(dir: &Path, word: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                let bytes = std::fs::read(entry.path()).unwrap();
                if bytes.windows(word.len()).any(|w| w == word.as_bytes()) {
                    found.push(entry.path().display().to_string());
                }
            }
        }
    }
    found
}

#[tokio::test]
async fn a_folder_store_gets_an_index_beside_memories() {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().to_str().unwrap();
    let store = open(url).await.unwrap();
    assert_eq!(store.to_string(), format!("Indexed(Fs({url}))"));
    assert!(
        !dir.path().join(".memory-search").exists(),
        "not before a search"
    );
    write_and_find(&*store, "gazpacho").await;
    assert!(dir.path().join(".memory-search/index.sqlite3").is_file());
    // A file written by hand is found by the next search.
    std::fs::write(dir.path().join("memories/hand.md"), "gazpacho by hand").unwrap();
    let hits = store
        .search(&SearchQuery::new("gazpacho").unwrap())
        .await
        .unwrap();
    assert_eq!(hits.len(), 2);
}

#[tokio::test]
async fn search_index_off_memory_or_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("off");
    let store = open(&format!("{}?search_index=off", base.display()))
        .await
        .unwrap();
    assert_eq!(store.to_string(), format!("Fs({})", base.display()));
    write_and_find(&*store, "gazpacho").await;
    assert!(!base.join(".memory-search").exists());

    let base = dir.path().join("mem");
    let options = OpenOptions::new().with_store_option("search_index", "memory");
    let store = open_with(base.to_str().unwrap(), &options).await.unwrap();
    assert!(store.to_string().starts_with("Indexed("), "{store}");
    write_and_find(&*store, "gazpacho").await;
    assert!(!base.join(".memory-search").exists());

    // The program's option wins over the URL's, as the folder store's own options do.
    let base = dir.path().join("file");
    let index = dir.path().join("elsewhere/i.sqlite3");
    let options = OpenOptions::new().with_store_option("search_index", index.to_str().unwrap());
    let store = open_with(
        &format!("{}?search_index=off&sync=none", base.display()),
        &options,
    )
    .await
    .unwrap();
    write_and_find(&*store, "gazpacho").await;
    assert!(index.is_file());
    assert!(!base.join(".memory-search").exists());
}

#[tokio::test]
async fn bad_and_unknown_options_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}?search_index=sometimes", dir.path().display());
    let err = open(&url).await.unwrap_err();
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("`search_index` has the invalid value `sometimes`"),
        "{err}"
    );
    let err = open(&format!("{}?search_index=relative/x", dir.path().display()))
        .await
        .unwrap_err();
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
    // An unknown option's error lists search_index among the accepted ones.
    let err = open(&format!("{}?colour=blue", dir.path().display()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("search_index"), "{err}");
    // Stores with an index of their own do not take it.
    let err = open("mem:?search_index=off").await.unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown store option `search_index`"),
        "{err}"
    );
}

/// An encrypted folder store is never wrapped: its search scans its own decrypted reads, and
/// no word of it is on disk in plaintext; an index file named for it is refused.
#[cfg(feature = "encrypted")]
#[tokio::test]
async fn an_encrypted_folder_store_gets_no_index_and_leaves_no_plaintext() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    memory_runner::encrypted::generate_key_file(&key).unwrap();
    let base = dir.path().join("store");
    let options = OpenOptions::new().with_encryption_key_file(&key);
    let store = open_with(base.to_str().unwrap(), &options).await.unwrap();
    assert!(!store.to_string().contains("Indexed"), "{store}");
    write_and_find(&*store, "quetzalcoatlus").await;
    let index = dir.path().join("cache/i.sqlite3");
    let err = open_with(
        base.to_str().unwrap(),
        &options
            .clone()
            .with_store_option("search_index", index.to_str().unwrap()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, OpenError::Unavailable { .. }), "{err:?}");
    let store = open_with(
        base.to_str().unwrap(),
        &options.with_store_option("search_index", "memory"),
    )
    .await
    .unwrap();
    assert!(!store.to_string().contains("Indexed"), "{store}");
    assert!(!dir.path().join("cache").exists());
    assert!(!base.join(".memory-search").exists());
    assert_eq!(
        files_holding(dir.path(), "quetzalcoatlus"),
        Vec::<String>::new()
    );
    assert_eq!(files_holding(dir.path(), "remember"), Vec::<String>::new());
}

/// S3 (moto's server, `MEMORY_TEST_S3_ENDPOINT`): indexed in memory without the
/// environment, in the file `search_index` names otherwise.
#[cfg(feature = "s3")]
#[tokio::test]
async fn an_s3_store_is_indexed() {
    let Ok(endpoint) = std::env::var("MEMORY_TEST_S3_ENDPOINT") else {
        panic!(
            "an_s3_store_is_indexed needs a real S3 API and MEMORY_TEST_S3_ENDPOINT is not \
             set: run it under `scripts/s3-test-server.sh run -- cargo test ...`"
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("s3.sqlite3");
    let prefix = format!("search-index-{}", std::process::id());
    let url =
        format!("s3://memory-local/{prefix}?endpoint={endpoint}&allow_http=true&region=us-east-1");
    let options = OpenOptions::new()
        .with_environment()
        .with_store_option("search_index", index.to_str().unwrap());
    let store = open_with(&url, &options).await.unwrap();
    assert!(store.to_string().starts_with("Indexed(S3("), "{store}");
    write_and_find(&*store, "axolotl").await;
    assert!(index.is_file());
    store.delete(&MemoryPath::root()).await.unwrap();
}

/// `semantic_model` names a folder that must exist (the model is read on the first search).
#[cfg(feature = "semantic")]
#[tokio::test]
async fn semantic_model_names_an_existing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("store");
    let url = format!(
        "{}?semantic_model={}",
        base.display(),
        dir.path().join("missing").display()
    );
    let err = open(&url).await.unwrap_err();
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
    assert!(err.to_string().contains("`semantic_model`"), "{err}");
    let url = format!("{}?semantic_model={}", base.display(), dir.path().display());
    let store = open(&url).await.unwrap();
    assert!(store.to_string().starts_with("Indexed("), "{store}");
    // No model files there: the first search says so, as an error of the index.
    let err = store
        .search(&SearchQuery::new("x").unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, memory_core::Error::Backend { .. }), "{err:?}");
}
