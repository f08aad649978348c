//! A store opened read-only changes nothing on disk: no file created, no schema change, no
//! `-wal` or `-shm` file left beside the database; every change is refused.

use std::collections::BTreeMap;
use std::path::Path;

use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_sqlite::{SqliteOptions, SqliteStorage};

/// Every file of `dir` (hidden ones included): its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, std::time::SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            (
                entry.file_name().to_string_lossy().into_owned(),
                (
                    std::fs::read(entry.path()).unwrap(),
                    meta.modified().unwrap(),
                ),
            )
        })
        .collect()
}

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

fn read_only() -> SqliteOptions {
    SqliteOptions::default().read_only(true)
}

#[tokio::test]
async fn a_read_only_open_leaves_the_folder_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    {
        let store = SqliteStorage::open(&db).unwrap();
        store
            .write(
                &p("/memories/tea.md"),
                b"green\n".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        store
            .write(&p("/memories/a/b.md"), b"b".to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    let before = snapshot(dir.path());
    assert_eq!(before.keys().collect::<Vec<_>>(), ["memory.db"]);
    let store = SqliteStorage::open_with(&db, read_only()).unwrap();
    assert_eq!(
        store.read(&p("/memories/tea.md")).await.unwrap().contents,
        b"green\n"
    );
    assert_eq!(store.list(&p("/memories")).await.unwrap().len(), 2);
    assert_eq!(store.file_count().await.unwrap(), 2);
    for refused in [
        store
            .write(&p("/memories/new.md"), b"x".to_vec(), WriteMode::Create)
            .await
            .map(|_| ()),
        store
            .create_within(&p("/memories/new.md"), b"x".to_vec(), 10)
            .await
            .map(|_| ()),
        store.delete(&p("/memories/tea.md")).await,
        store
            .rename(&p("/memories/tea.md"), &p("/memories/t.md"))
            .await,
    ] {
        assert!(
            matches!(&refused, Err(Error::Refused { reason, .. }) if reason == "/memories is read-only"),
            "{refused:?}"
        );
    }
    drop(store);
    assert_eq!(snapshot(dir.path()), before);
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
