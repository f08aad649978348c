#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

#[cfg(feature = "http")]
mod client;
#[cfg(feature = "stores")]
pub mod dream;
pub mod history;
#[cfg(feature = "search-index")]
mod indexing;
mod options;
mod search_tool;
pub mod store;
mod stores;
#[cfg(feature = "testing")]
pub mod testing;
mod url;

#[cfg(feature = "http")]
pub use client::{
    API_VERSION, ApiError, Client, ClientBuilder, DEFAULT_BASE_URL, MessageStream, RetryPolicy,
};
pub use memory_core::messages::{
    COMPACTION_BETA, CONTEXT_MANAGEMENT_BETA, ClearToolUses, Compact, ContentBlock,
    ContextManagement, DEFAULT_MAX_ITERATIONS, Delta, EndReason, EventHandler, ImageBlock,
    MEMORY_TOOL_NAME, MEMORY_TOOL_TYPE, Memory, Message, MessageAccumulator, MessageResponse,
    MessagesRequest, MessagesTransport, Observed, Role, Run, RunStream, StopReason, StreamError,
    StreamEvent, TextBlock, Tool, ToolCall, ToolResultBlock, ToolRunner, ToolUseBlock, Usage,
    events_of, memory_call_summary,
};
pub use search_tool::SearchTool;
pub use store::{
    BoxError, OpenError, OpenOptions, Refusal, Scheme, StoreUrl, StoreUrlError, compiled_schemes,
    discard_search_index, open, open_url, open_with,
};
#[cfg(feature = "stores")]
pub use store::{open_mount, open_versioned_store};
pub use stores::STORE_API_KEY_VAR;

/// The memory tool and everything below it, so one dependency is enough.
pub use memory_core;

/// The folder backend, [`FsStorage`](memory_fs::FsStorage) (feature `fs`).
#[cfg(feature = "fs")]
pub use memory_fs as fs;

/// The SQLite backend, [`SqliteStorage`](memory_sqlite::SqliteStorage) (feature `sqlite`).
#[cfg(feature = "sqlite")]
pub use memory_sqlite as sqlite;

/// The S3 backend, [`ObjectStoreStorage`](memory_s3::ObjectStoreStorage) and
/// [`S3Options`](memory_s3::S3Options) (feature `s3`).
#[cfg(feature = "s3")]
pub use memory_s3 as s3;

/// Versioned memory stores as storage and several stores mounted under one `/memories`
/// ([`StoreStorage`](memory_mounts::StoreStorage), [`Mounts`](memory_mounts::Mounts), the
/// mount note; feature `stores`).
#[cfg(feature = "stores")]
pub use memory_mounts as mounts;

/// The PostgreSQL backend, [`PostgresStorage`](memory_postgres::PostgresStorage) (feature
/// `postgres`).
#[cfg(feature = "postgres")]
pub use memory_postgres as postgres;

/// The encrypted envelope, [`Encrypted`](memory_encrypted::Encrypted) and
/// [`Keyring`](memory_encrypted::Keyring) (feature `encrypted`).
#[cfg(feature = "encrypted")]
pub use memory_encrypted as encrypted;
