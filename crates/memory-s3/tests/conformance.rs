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

/// One bucket (object_store's `InMemory`) opened again: each open a store of its own, with its
/// own cached counter, as separate processes have; read-only through core's `ReadOnly`, as
/// memory-runner opens an S3 store read-only. Its snapshot is every object with its bytes and
/// ETag.
struct Bucket(Arc<InMemory>);

#[memory_core::async_trait]
impl memory_core::conformance::reopen::Reopen for Bucket {
    async fn open(&self) -> Arc<dyn memory_core::Storage> {
        Arc::new(ObjectStoreStorage::new(self.0.clone(), "t").unwrap())
    }
    async fn open_read_only(&self) -> Arc<dyn memory_core::Storage> {
        let store = ObjectStoreStorage::new(self.0.clone(), "t").unwrap();
        Arc::new(memory_core::ReadOnly::new(store))
    }
    async fn snapshot(&self) -> String {
        use futures_util::TryStreamExt as _;
        use object_store::{ObjectStore as _, ObjectStoreExt as _};
        let mut objects: Vec<_> = self.0.list(None).try_collect().await.unwrap();
        objects.sort_by(|a, b| a.location.cmp(&b.location));
        let mut text = String::new();
        for meta in objects {
            let bytes = self
                .0
                .get(&meta.location)
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            text += &format!("{} {:?} {bytes:?}\n", meta.location, meta.e_tag);
        }
        text
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_reopened() {
    memory_core::conformance::reopen::run_all(&Bucket(Arc::new(InMemory::new()))).await;
}
