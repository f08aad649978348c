//! The shared storage conformance suite over a store in a temporary folder.

use std::sync::Arc;

use memory_core::conformance::storage::run_all;
use memory_fs::{FsOptions, FsStorage};

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
}

#[tokio::test]
async fn conformance_without_fsync_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::with_options(dir.path(), FsOptions::default().fsync(false)).unwrap();
    run_all(Arc::new(storage)).await;
}
