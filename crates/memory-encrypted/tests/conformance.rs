//! The shared conformance suite (storage level and command level), over the wrapper.

use std::sync::Arc;

use memory_core::InMemoryStorage;
use memory_encrypted::{Encrypted, Key, Keyring};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance() {
    let keyring = Keyring::new(Key::generate().unwrap());
    let store = Encrypted::new(InMemoryStorage::new(), keyring);
    memory_core::conformance::run_all(Arc::new(store)).await;
}
