//! memory-store's engine rules (memory-store's tests/cases/engine/, the same cases its
//! SQLite test runs) over `PostgresPersistence`, each test on a schema of its own.

#![cfg(feature = "stores")]

mod common;

#[path = "../../memory-store/tests/cases/engine/mod.rs"]
mod cases;

use memory_core::options::StoreOptions as UrlOptions;
use memory_postgres::PostgresPersistence;
use memory_store::{EngineOptions, MemoryStores};

/// A new engine over the engine's tables in a new schema.
async fn engine() -> MemoryStores {
    engine_with(EngineOptions::default()).await
}

/// [`engine`] with `options`.
async fn engine_with(options: EngineOptions) -> MemoryStores {
    let schema = common::unique("engine");
    let p = PostgresPersistence::from_url(
        &common::url_with(&format!("schema={schema}&pool_size=4")),
        UrlOptions::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("cannot open the engine's tables: {e}"));
    MemoryStores::with_options(p, options)
}
