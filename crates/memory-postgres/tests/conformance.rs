//! memory-core's conformance suite, both tiers (storage primitives, then the six commands
//! against golden outputs), on `PostgresStorage` against a real server, each run in a root or
//! a schema of its own.

mod common;

use std::sync::Arc;

use memory_core::conformance::run_all;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_fresh_root() {
    run_all(Arc::new(common::fresh_root().await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_fresh_schema() {
    let schema = common::unique("schema");
    let storage = common::open(&format!("schema={schema}")).await;
    assert_eq!(storage.root(), "default");
    run_all(Arc::new(storage)).await;
}

#[tokio::test]
async fn conformance_current_thread_sync_none() {
    let root = common::unique("root");
    let storage = common::open(&format!(
        "schema={}&root={root}&sync=none&pool_size=2",
        common::SHARED_SCHEMA
    ))
    .await;
    run_all(Arc::new(storage)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_over_tls() {
    let ca = common::script_var("MEMORY_TEST_POSTGRES_CA");
    let root = common::unique("root");
    let storage = common::open(&format!(
        "schema={}&root={root}&sslmode=verify-full&sslrootcert={ca}",
        common::SHARED_SCHEMA
    ))
    .await;
    run_all(Arc::new(storage)).await;
}
