#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod error;
mod options;
mod pool;
mod schema;
mod search;
mod storage;
mod url;
mod writer;

pub use options::{INDEX_BATCH, INDEX_IDLE, IndexMode, SqliteOptions, SyncMode};
pub use storage::SqliteStorage;
pub use url::{SqliteOpenError, URL_OPTIONS, sqlite_url_path};

/// The `PRAGMA application_id` that marks a SQLite file as a memory store (`"MMSQ"` in ASCII).
pub const APPLICATION_ID: i32 = schema::APPLICATION_ID;

/// The schema version (`PRAGMA user_version`) this release writes. Older stores are migrated
/// when opened; newer ones are refused.
pub const SCHEMA_VERSION: i64 = schema::SCHEMA_VERSION;
