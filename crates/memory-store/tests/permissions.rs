//! The database and its `-wal`/`-shm` files are private to their owner whatever the umask
//! (a test binary of its own: it sets the process umask).

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;

use memory_store::{CreateStore, MemoryStores};

#[tokio::test]
async fn a_new_database_and_its_journal_files_are_0600_under_umask_0() {
    rustix::process::umask(rustix::fs::Mode::empty());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let engine = MemoryStores::open(&db).await.unwrap();
    let s = engine
        .create_store(CreateStore {
            name: "private".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    engine.create_memory(&s.id, "/a", "x", None).await.unwrap();
    for name in ["stores.db", "stores.db-wal", "stores.db-shm"] {
        let mode = std::fs::metadata(dir.path().join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name} is {:o}", mode & 0o777);
    }
}
