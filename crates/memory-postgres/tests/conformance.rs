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

/// A root in a schema of its own, opened again (each open with its own pool), read-write or
/// read-only; its snapshot is every row of the schema.
struct Root {
    options: String,
    schema: String,
}

#[memory_core::async_trait]
impl memory_core::conformance::reopen::Reopen for Root {
    async fn open(&self) -> Arc<dyn memory_core::Storage> {
        Arc::new(common::open(&self.options).await)
    }
    async fn open_read_only(&self) -> Arc<dyn memory_core::Storage> {
        let url = common::url_with(&self.options);
        let options = memory_core::options::StoreOptions::new();
        Arc::new(
            memory_postgres::PostgresStorage::from_url_read_only(&url, options)
                .await
                .unwrap(),
        )
    }
    async fn snapshot(&self) -> String {
        memory_postgres::testing::dump_schema(&common::admin().await, &self.schema)
            .await
            .join("\n")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_reopened() {
    let schema = common::unique("reopen");
    let root = Root {
        options: format!("schema={schema}&root=r"),
        schema,
    };
    memory_core::conformance::reopen::run_all(&root).await;
}
