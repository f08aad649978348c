//! memory-core's conformance suite, both tiers (storage primitives, then the six commands
//! against golden outputs), on `SqliteStorage`, file-backed and in memory.

use std::sync::Arc;

use memory_core::conformance::run_all;
use memory_sqlite::SqliteStorage;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_file_backed() {
    let dir = tempfile::tempdir().unwrap();
    run_all(Arc::new(
        SqliteStorage::open(dir.path().join("memory.db")).unwrap(),
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_in_memory() {
    run_all(Arc::new(SqliteStorage::open_in_memory().unwrap())).await;
}

#[tokio::test]
async fn conformance_file_backed_current_thread() {
    let dir = tempfile::tempdir().unwrap();
    run_all(Arc::new(
        SqliteStorage::open(dir.path().join("memory.db")).unwrap(),
    ))
    .await;
}

/// A SQLite store opened again on its file, read-write or read-only.
struct Database(tempfile::TempDir);

impl Database {
    fn path(&self) -> std::path::PathBuf {
        self.0.path().join("memory.db")
    }
}

#[memory_core::async_trait]
impl memory_core::conformance::reopen::Reopen for Database {
    async fn open(&self) -> Arc<dyn memory_core::Storage> {
        Arc::new(SqliteStorage::open(self.path()).unwrap())
    }
    async fn open_read_only(&self) -> Arc<dyn memory_core::Storage> {
        let options = memory_sqlite::SqliteOptions::default().read_only(true);
        Arc::new(SqliteStorage::open_with(self.path(), options).unwrap())
    }
    /// The folder holding the database: no `-wal` or `-shm` file may appear beside it.
    async fn snapshot(&self) -> String {
        memory_core::conformance::reopen::folder_snapshot(self.0.path())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_reopened() {
    memory_core::conformance::reopen::run_all(&Database(tempfile::tempdir().unwrap())).await;
}
