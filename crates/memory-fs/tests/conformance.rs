//! The shared storage conformance suite over a store in a temporary folder, in every sync mode
//! and every place the blocking work can run.

use std::sync::Arc;

use memory_core::conformance::storage::run_all;
use memory_fs::{Blocking, FsOptions, FsStorage, SyncMode};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::new(dir.path()).unwrap();
    assert_eq!(storage.to_string(), format!("Fs({})", dir.path().display()));
    run_all(Arc::new(storage)).await;
    // The suite ends with an empty store: no folder is left behind either.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("memories"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left on disk: {left:?}");
    let temps: Vec<_> = std::fs::read_dir(dir.path().join(".memory-tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(temps.is_empty(), "temporary files left: {temps:?}");
}

#[tokio::test]
async fn conformance_without_fsync_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let storage =
        FsStorage::with_options(dir.path(), FsOptions::default().sync(SyncMode::None)).unwrap();
    run_all(Arc::new(storage)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_syncing_data_only_always_inline() {
    let dir = tempfile::tempdir().unwrap();
    let options = FsOptions::default()
        .sync(SyncMode::Data)
        .blocking(Blocking::Inline);
    run_all(Arc::new(
        FsStorage::with_options(dir.path(), options).unwrap(),
    ))
    .await;
}

#[tokio::test]
async fn conformance_always_on_the_blocking_pool() {
    let dir = tempfile::tempdir().unwrap();
    let options = FsOptions::default()
        .sync(SyncMode::None)
        .blocking(Blocking::Spawn);
    run_all(Arc::new(
        FsStorage::with_options(dir.path(), options).unwrap(),
    ))
    .await;
}
