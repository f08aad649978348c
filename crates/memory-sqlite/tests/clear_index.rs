//! `SqliteStorage::clear_search_index` (issue 28): once a store's files are replaced by
//! envelopes (`memory rekey --encrypt-plaintext`), no word of the old plaintext is left in the
//! database's files: not in FTS5's pages, not in freed pages, not in the write-ahead log.

use std::path::Path;

use memory_core::history::HistoryOptions;
use memory_core::search::SearchQuery;
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_sqlite::{IndexMode, SqliteOptions, SqliteStorage};

const WORD: &[u8] = b"zanzibarquokka";

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

/// The database file and its companions that hold `WORD`.
fn files_with_word(db: &Path) -> Vec<String> {
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .filter_map(|suffix| {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            let bytes = std::fs::read(&name).ok()?;
            bytes
                .windows(WORD.len())
                .any(|w| w == WORD)
                .then(|| name.to_string_lossy().into_owned())
        })
        .collect()
}

async fn hits(store: &SqliteStorage, word: &str) -> usize {
    store
        .search(&SearchQuery::new(word).unwrap())
        .await
        .unwrap()
        .len()
}

/// Bytes that are no UTF-8 text, as an envelope is (it starts with 0x89).
fn envelope_like(i: u8) -> Vec<u8> {
    let mut bytes = vec![0x89, b'M', b'E', b'M'];
    bytes.extend((0..200u8).map(|b| b.wrapping_mul(31).wrapping_add(i)));
    bytes
}

#[tokio::test]
async fn clearing_leaves_no_word_of_the_old_text_in_the_files() {
    for mode in [IndexMode::Write, IndexMode::Batched, IndexMode::Search] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("store.sqlite3");
        // Without history: with it, the replaced plaintext is kept as past versions on
        // purpose (redaction removes those, see tests/history.rs).
        let options = SqliteOptions::default()
            .index(mode)
            .history(HistoryOptions::off());
        let store = SqliteStorage::open_with(&db, options).unwrap();
        let notes = ["/memories/a.md", "/memories/d/b.md", "/memories/gone.md"];
        for (i, path) in notes.iter().enumerate() {
            let text = format!("note {i}: the zanzibarquokka hides here\n").repeat(20);
            store
                .write(&p(path), text.into_bytes(), WriteMode::Create)
                .await
                .unwrap();
        }
        assert_eq!(hits(&store, "zanzibarquokka").await, 3, "{mode:?}");
        // Encrypted in place, as rekey does; one deleted.
        for (i, path) in notes[..2].iter().enumerate() {
            let file = store.read(&p(path)).await.unwrap();
            store
                .write(
                    &p(path),
                    envelope_like(i as u8),
                    WriteMode::Update(file.version),
                )
                .await
                .unwrap();
        }
        store.delete(&p(notes[2])).await.unwrap();
        assert_eq!(hits(&store, "zanzibarquokka").await, 0, "{mode:?}");
        // What this fixes: the rows are envelopes, yet the files still hold the word.
        assert!(
            !files_with_word(&db).is_empty(),
            "{mode:?}: nothing to clear?"
        );

        store.clear_search_index().await.unwrap();
        assert_eq!(files_with_word(&db), Vec::<String>::new(), "{mode:?}");

        // The store and its search still work, and stay clean.
        assert_eq!(hits(&store, "zanzibarquokka").await, 0, "{mode:?}");
        assert_eq!(
            store.read(&p(notes[0])).await.unwrap().contents,
            envelope_like(0)
        );
        store
            .write(
                &p("/memories/new.md"),
                b"rollback".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        assert_eq!(hits(&store, "rollback").await, 1, "{mode:?}");
        drop(store);
        assert_eq!(files_with_word(&db), Vec::<String>::new(), "{mode:?}");
    }
}

#[tokio::test]
async fn a_plaintext_file_left_is_indexed_again_after_clearing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite3");
    let store = SqliteStorage::open(&db).unwrap();
    store
        .write(
            &p("/memories/a.md"),
            b"rollback".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    store.clear_search_index().await.unwrap();
    // Every row was marked: the search indexes it again before answering.
    assert_eq!(hits(&store, "rollback").await, 1);
}

#[tokio::test]
async fn a_read_only_store_refuses_to_clear() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite3");
    drop(SqliteStorage::open(&db).unwrap());
    let store = SqliteStorage::open_with(&db, SqliteOptions::default().read_only(true)).unwrap();
    assert!(matches!(
        store.clear_search_index().await,
        Err(Error::Refused { .. })
    ));
}
