//! The conformance suite against the example backend: every behaviour `Storage` documents,
//! and the command-level golden outputs through `MemoryTool`.

use std::sync::Arc;

use example_map_backend::MapStorage;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_map_backend_keeps_the_contract() {
    memory_core::conformance::run_all(Arc::new(MapStorage::default())).await;
}
