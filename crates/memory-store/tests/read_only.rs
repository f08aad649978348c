//! `MemoryStores::open_read_only`: an existing database read without a byte changing on disk,
//! writes refused, and nothing created or migrated.

use std::collections::BTreeMap;
use std::path::Path;

use memory_store::{CreateStore, MemoryStores};

/// Every file in `dir`: its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, std::time::SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let meta = std::fs::metadata(&path).unwrap();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                (std::fs::read(&path).unwrap(), meta.modified().unwrap()),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_read_only_engine_reads_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let engine = MemoryStores::open(&db).await.unwrap();
    let store = engine
        .create_store(CreateStore {
            name: "kept".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    engine
        .create_memory(&store.id, "/a.md", "alpha", None)
        .await
        .unwrap();
    drop(engine);
    let before = snapshot(dir.path());
    assert_eq!(
        before.len(),
        1,
        "the log is checkpointed away: {:?}",
        before.keys()
    );

    let engine = MemoryStores::open_read_only(&db).await.unwrap();
    let got = engine.retrieve_store(&store.id).await.unwrap();
    assert_eq!(got.name, "kept");
    assert!(
        engine
            .create_memory(&store.id, "/b.md", "beta", None)
            .await
            .is_err(),
        "a read-only engine wrote"
    );
    drop(engine);
    assert_eq!(snapshot(dir.path()), before);
}

#[tokio::test]
async fn a_missing_or_older_database_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    assert!(MemoryStores::open_read_only(&missing).await.is_err());
    assert!(!missing.exists(), "a read-only open created the file");

    // A database at an older schema version: refused, not migrated.
    let db = dir.path().join("old.db");
    drop(MemoryStores::open(&db).await.unwrap());
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let before = snapshot(dir.path());
    let err = MemoryStores::open_read_only(&db).await.unwrap_err();
    assert!(err.to_string().contains("older"), "{err}");
    assert_eq!(snapshot(dir.path()), before);
}
