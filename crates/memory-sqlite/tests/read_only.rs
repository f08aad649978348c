//! Read-only opens beside a writer and of files that are no store yet. That a read-only open
//! leaves the folder byte for byte as it was (no `-wal` or `-shm` file beside the database) and
//! refuses every change is the conformance suite's `reopen` check (tests/conformance.rs).

use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::{SqliteOptions, SqliteStorage};

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

fn read_only() -> SqliteOptions {
    SqliteOptions::default().read_only(true)
}

#[tokio::test]
async fn a_read_only_open_beside_a_writer_reads_its_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let writer = SqliteStorage::open(&db).unwrap();
    writer
        .write(&p("/memories/one.md"), b"1".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let reader = SqliteStorage::open_with(&db, read_only()).unwrap();
    assert_eq!(
        reader.read(&p("/memories/one.md")).await.unwrap().contents,
        b"1"
    );
    writer
        .write(&p("/memories/two.md"), b"2".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        reader.read(&p("/memories/two.md")).await.unwrap().contents,
        b"2"
    );
}

#[tokio::test]
async fn a_read_only_open_creates_and_migrates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    assert!(SqliteStorage::open_with(&missing, read_only()).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // An empty file is not a store yet: refused, left empty.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = SqliteStorage::open_with(&empty, read_only()).unwrap_err();
    assert!(err.to_string().contains("without read-only"), "{err}");
    assert_eq!(std::fs::read(&empty).unwrap(), b"");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
