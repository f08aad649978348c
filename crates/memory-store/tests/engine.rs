//! The engine's rules (tests/cases/engine/) over in-memory SQLite, and what only a SQLite
//! file shows.

#[path = "cases/engine/mod.rs"]
mod cases;

use cases::store;
use memory_store::{EngineOptions, MemoryStores};

/// A new engine over a private in-memory database.
async fn engine() -> MemoryStores {
    MemoryStores::open_in_memory().unwrap()
}

/// [`engine`] with `options`.
async fn engine_with(options: EngineOptions) -> MemoryStores {
    MemoryStores::with_options(
        memory_store::SqlitePersistence::open_in_memory().unwrap(),
        options,
    )
}

#[tokio::test]
async fn reopened_file_keeps_everything_and_refuses_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let (s, m) = {
        let e = MemoryStores::open(&db).await.unwrap();
        let s = store(&e).await;
        let m = e.create_memory(&s, "/x", "persisted", None).await.unwrap();
        (s, m)
    };
    let e = MemoryStores::open(&db).await.unwrap();
    assert_eq!(e.retrieve_memory(&s, &m.id).await.unwrap(), m);
    let junk = dir.path().join("junk.db");
    std::fs::write(
        &junk,
        b"not a database at all, just some bytes that are long enough........",
    )
    .unwrap();
    assert!(MemoryStores::open(&junk).await.is_err());
    assert!(std::fs::read(&junk).unwrap().starts_with(b"not a database"));
    // A file with SQLite's header but garbage pages: refused, left as it was.
    let damaged = dir.path().join("damaged.db");
    let mut header = b"SQLite format 3\0".to_vec();
    header.resize(4096, 0xAB);
    std::fs::write(&damaged, &header).unwrap();
    assert!(MemoryStores::open(&damaged).await.is_err());
    assert_eq!(std::fs::read(&damaged).unwrap(), header);
}

#[tokio::test]
async fn stores_made_before_workspaces_belong_to_the_default_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let s = store(&MemoryStores::open(&db).await.unwrap()).await;
    // Back to schema version 2, the last without workspaces.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "DROP INDEX stores_by_workspace;
             ALTER TABLE stores DROP COLUMN workspace_id;
             PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let e = MemoryStores::open(&db).await.unwrap();
    assert_eq!(e.retrieve_store(&s).await.unwrap().workspace_id, None);
    let listed = e.list_stores(Default::default()).await.unwrap();
    assert_eq!(listed.data.len(), 1);
    let other = e.in_workspace(Some("wrkspc_x".into()));
    assert!(other.retrieve_store(&s).await.is_err());
    assert!(
        other
            .list_stores(Default::default())
            .await
            .unwrap()
            .data
            .is_empty()
    );
}
