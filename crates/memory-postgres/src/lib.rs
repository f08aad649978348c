#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod config;
mod error;
mod identity;
mod pool;
mod schema;
mod storage;
#[cfg(feature = "stores")]
mod stores;
#[cfg(feature = "testing")]
pub mod testing;
mod tls;

pub use error::PostgresOpenError;
#[cfg(feature = "stores")]
pub use identity::engine_identity;
pub use identity::{StoreIdentity, store_identity};
pub use storage::PostgresStorage;
#[cfg(feature = "stores")]
pub use stores::{PostgresPersistence, ReadOnlyEngine, STORES_ACCEPTED_OPTIONS};

/// The schema version this release writes (the number of migrations it knows). Older schemas
/// are migrated when opened; newer ones are refused with [`PostgresOpenError::SchemaTooNew`].
/// A read-only open (`from_url_read_only`) reads only a schema at exactly this version.
pub const SCHEMA_VERSION: i32 = schema::SCHEMA_VERSION;

/// The options a `postgres://` store URL accepts.
pub const ACCEPTED_OPTIONS: &[&str] = config::ACCEPTED;
