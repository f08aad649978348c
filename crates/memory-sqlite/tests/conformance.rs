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
