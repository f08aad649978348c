//! The shared conformance suite (storage level and command level), over the wrapper around
//! each backend of the workspace.

use std::sync::Arc;

use memory_core::InMemoryStorage;
use memory_encrypted::{Encrypted, Key, Keyring};
use memory_fs::FsStorage;
use memory_sqlite::SqliteStorage;

fn keyring() -> Keyring {
    Keyring::new(Key::generate().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance() {
    let store = Encrypted::new(InMemoryStorage::new(), keyring());
    memory_core::conformance::run_all(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_over_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let inner = SqliteStorage::open(dir.path().join("memory.db")).unwrap();
    let store = Encrypted::new(inner, keyring());
    assert!(
        store.to_string().starts_with("Encrypted(Sqlite("),
        "{store}"
    );
    memory_core::conformance::run_all(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_over_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let inner = FsStorage::new(dir.path()).unwrap();
    let store = Encrypted::new(inner, keyring());
    assert!(store.to_string().starts_with("Encrypted(Fs("), "{store}");
    memory_core::conformance::run_all(Arc::new(store)).await;
}

/// History through the envelope, over an inner store that keeps it.
struct FreshEncrypted;

#[memory_core::async_trait]
impl memory_core::conformance::history::OpenHistory for FreshEncrypted {
    async fn open(
        &self,
        options: memory_core::history::HistoryOptions,
    ) -> Arc<dyn memory_core::Storage> {
        let inner = InMemoryStorage::with_history(options);
        Arc::new(Encrypted::new(inner, keyring()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_conformance() {
    memory_core::conformance::history::run_all(&FreshEncrypted).await;
}
