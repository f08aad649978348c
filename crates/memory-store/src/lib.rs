#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod api;
pub mod archive;
mod cursor;
mod engine;
mod error;
mod id;
mod model;
mod persist;
mod sqlite;
mod time;
mod validate;
mod wire;

pub use api::{Acting, StoresApi};
pub use engine::{
    DEFAULT_MAX_MEMORIES_PER_STORE, DEFAULT_PAGE_SIZE, EngineOptions, MAX_FULL_PAGE_SIZE,
    MAX_PAGE_SIZE, MemoryStores,
};
pub use error::{Reason, Result, StoreError};
pub use id::{MEMORY_PREFIX, STORE_PREFIX, VERSION_PREFIX};
pub use model::{
    Actor, CreateStore, DeletedMemory, DeletedStore, ListMemories, ListStores, ListVersions,
    Memory, MemoryListItem, MemoryPrefix, MemoryVersion, Operation, Page, Precondition, Store,
    UpdateMemory, UpdateStore, View,
};
pub use persist::{AnyPersistence, MemoryScan, Persistence, StoreScan, Tx, VersionScan};
pub use sqlite::{APPLICATION_ID, SCHEMA_VERSION, SqlitePersistence};
pub use time::{Timestamp, TimestampError};
pub use validate::{
    MAX_CONTENT_BYTES, MAX_DESCRIPTION_CHARS, MAX_METADATA_KEY_CHARS, MAX_METADATA_PAIRS,
    MAX_METADATA_VALUE_CHARS, MAX_NAME_CHARS, MAX_PATH_BYTES, MAX_PATH_SEGMENTS,
    is_valid_workspace_id, validate_path,
};
pub use wire::{CreateMemory, ErrorBody, ErrorEnvelope};
