//! An encrypted store's search: found through the wrapper, and no indexed word on disk in
//! plaintext (folder and SQLite stores, whose native or side indexes never see plaintext).

use std::path::Path;

use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_encrypted::{Encrypted, Key, Keyring};
use memory_fs::{FsOptions, FsStorage};
use memory_sqlite::SqliteStorage;

/// Words that occur nowhere else on the machine's test folders.
const WORDS: [&str; 3] = ["zanzibarquokka", "plinthwhistle", "vorpalmarmalade"];

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

/// Every file below `dir` (any depth) whose bytes hold `word`.
fn files_holding(dir: &Path, word: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
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

async fn write_and_search(store: &dyn Storage) {
    for (i, word) in WORDS.iter().enumerate() {
        let text = format!("# Note {i}\nThe secret word is {word}, with Zoë.\n");
        store
            .write(
                &p(&format!("/memories/notes/{i}.md")),
                text.into_bytes(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    for (i, word) in WORDS.iter().enumerate() {
        let hits = store
            .search(&SearchQuery::new(*word).unwrap())
            .await
            .unwrap();
        assert_eq!(hits.len(), 1, "{store}: {word}");
        assert_eq!(hits[0].path, p(&format!("/memories/notes/{i}.md")));
        assert_eq!(hits[0].lines, [2]);
        assert!(hits[0].snippet.contains(word), "{:?}", hits[0].snippet);
    }
    // Phrases, prefixes and required clauses work on the plaintext too.
    let hits = store
        .search(&SearchQuery::new("+\"secret word\" +plinth*").unwrap())
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, p("/memories/notes/1.md"));
}

fn assert_no_plaintext(dir: &Path) {
    for word in WORDS {
        assert_eq!(
            files_holding(dir, word),
            Vec::<String>::new(),
            "{word} is on disk in plaintext"
        );
    }
    // Nor the note's other words.
    assert!(files_holding(dir, "secret word").is_empty());
}

#[tokio::test]
async fn encrypted_folder_store_search_finds_and_leaves_no_plaintext() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FsStorage::with_options(dir.path(), FsOptions::default().fsync(false)).unwrap();
    let store = Encrypted::new(fs, Keyring::new(Key::generate().unwrap()));
    write_and_search(&store).await;
    assert_no_plaintext(dir.path());
}

#[tokio::test]
async fn encrypted_sqlite_store_search_finds_and_leaves_no_plaintext() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStorage::open(dir.path().join("memory.db")).unwrap();
    let store = Encrypted::new(sqlite, Keyring::new(Key::generate().unwrap()));
    write_and_search(&store).await;
    assert_no_plaintext(dir.path());
}

/// The check above can fail: the same words written without the envelope are on disk.
#[tokio::test]
async fn the_plaintext_check_sees_an_unencrypted_store() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStorage::open(dir.path().join("memory.db")).unwrap();
    write_and_search(&sqlite).await;
    assert!(!files_holding(dir.path(), WORDS[0]).is_empty());
}

/// A search never reaches the inner store's own search (it holds ciphertext): a file the
/// inner store holds in plaintext, behind the envelope's back, is not decryptable, so the
/// search fails on it instead of answering from the inner store.
#[tokio::test]
async fn search_does_not_forward_to_the_inner_store() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FsStorage::with_options(dir.path(), FsOptions::default().fsync(false)).unwrap();
    let store = Encrypted::new(fs, Keyring::new(Key::generate().unwrap()));
    write_and_search(&store).await;
    store
        .inner()
        .write(
            &p("/memories/plain.md"),
            b"zanzibarquokka in plaintext".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let err = store
        .search(&SearchQuery::new("zanzibarquokka").unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            memory_core::Error::Backend {
                backend: "encrypted",
                ..
            }
        ),
        "{err:?}"
    );
}
