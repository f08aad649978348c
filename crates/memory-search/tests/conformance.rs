//! memory-core's conformance suite, both tiers and the search checks, over `Indexed` on the
//! folder store, on S3 (moto's server, when `MEMORY_TEST_S3_ENDPOINT` is set) and in memory.

mod common;

use std::sync::Arc;

use memory_core::InMemoryStorage;
use memory_core::conformance::run_all;
use memory_fs::{FsOptions, FsStorage};
use memory_search::{IndexLocation, IndexOptions, Indexed};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_indexed_folder() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FsStorage::with_options(dir.path(), FsOptions::default().fsync(false)).unwrap();
    let store = Indexed::new(fs, IndexOptions::new(IndexLocation::beside(dir.path())));
    assert_eq!(
        store.to_string(),
        format!("Indexed(Fs({}))", dir.path().display())
    );
    run_all(Arc::new(store)).await;
    assert!(
        dir.path().join(".memory-search/index.sqlite3").is_file(),
        "the searches built the index beside memories/"
    );
}

#[tokio::test]
async fn conformance_indexed_folder_current_thread() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FsStorage::with_options(dir.path(), FsOptions::default().fsync(false)).unwrap();
    run_all(Arc::new(Indexed::new(
        fs,
        IndexOptions::new(IndexLocation::beside(dir.path())),
    )))
    .await;
}

#[tokio::test]
async fn conformance_indexed_in_memory() {
    run_all(Arc::new(Indexed::new(
        InMemoryStorage::new(),
        IndexOptions::new(IndexLocation::Memory),
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_indexed_s3() {
    let server = common::s3::S3Server::from_env("conformance_indexed_s3").await;
    let cache = tempfile::tempdir().unwrap();
    let store = Indexed::new(
        server.storage("conformance"),
        IndexOptions::new(IndexLocation::File(cache.path().join("s3.sqlite3")))
            .identity(format!("{}|{}", server.endpoint, server.bucket)),
    );
    run_all(Arc::new(store)).await;
}
