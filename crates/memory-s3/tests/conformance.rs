//! memory-core's conformance suite, both tiers (storage primitives, then the six commands
//! against golden outputs), on `ObjectStoreStorage`:
//!
//! - over object_store's `InMemory`, always (no network);
//! - over S3 against a real S3 API (moto's server, started by `scripts/s3-test-server.sh`)
//!   when `MEMORY_TEST_S3_ENDPOINT` is set, in a fresh bucket per run.

use memory_s3::testing as common;

use std::sync::Arc;

use memory_core::conformance::run_all;
use memory_s3::ObjectStoreStorage;
use object_store::memory::InMemory;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_in_memory_object_store() {
    let storage = ObjectStoreStorage::new(Arc::new(InMemory::new()), "tenant/a").unwrap();
    run_all(Arc::new(storage)).await;
}

#[tokio::test]
async fn conformance_in_memory_object_store_no_prefix_current_thread() {
    let storage = ObjectStoreStorage::new(Arc::new(InMemory::new()), "").unwrap();
    run_all(Arc::new(storage)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_s3() {
    let server = common::S3Server::from_env("conformance_s3").await;
    let storage = server.storage("conformance");
    assert_eq!(
        storage.to_string(),
        format!("S3(s3://{}/conformance)", server.bucket)
    );
    run_all(Arc::new(storage)).await;
}
