//! The persistence trait: what the engine needs from a database.
//!
//! The engine decides every rule; a backend only runs transactions and the row operations of
//! [`Tx`]. Methods are blocking: the engine calls them on `tokio::task::spawn_blocking` threads.

use crate::Timestamp;
use crate::error::Result;
use crate::model::{Memory, MemoryVersion, Operation, Store};

/// A database the engine can keep stores in.
///
/// # Behavior
///
/// - [`write`](Self::write) runs its job in one transaction that is serialised with every other
///   write to the same database (across handles and processes): the job's reads see every
///   earlier write, and its writes become visible all at once when it returns `Ok`, or not at
///   all when it returns `Err` (or panics).
/// - [`read`](Self::read) runs its job on one consistent snapshot; the job must not write.
pub trait Persistence: Send + Sync + std::fmt::Debug + 'static {
    /// Runs `job` in a read transaction.
    fn read<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>;

    /// Runs `job` in a write transaction, committed if it returns `Ok`.
    fn write<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>;
}

/// Which stores [`Tx::stores`] returns: newest first (`created_at` desc, then `id` desc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreScan {
    /// `created_at >= this`.
    pub created_at_gte: Option<Timestamp>,
    /// `created_at <= this`.
    pub created_at_lte: Option<Timestamp>,
    /// Include archived stores.
    pub include_archived: bool,
    /// Only stores strictly after this `(created_at, id)` in the order (a page cursor).
    pub after: Option<(Timestamp, String)>,
    /// Most rows.
    pub limit: usize,
}

/// Which memories [`Tx::memories`] returns: in byte order of `path`, within
/// `lower .. upper`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryScan {
    /// The lower bound on `path`.
    pub lower: String,
    /// Whether a path equal to `lower` is included.
    pub lower_inclusive: bool,
    /// The exclusive upper bound on `path`.
    pub upper: String,
    /// Most rows.
    pub limit: usize,
    /// Whether to load `content` (otherwise it is `None`).
    pub with_content: bool,
}

/// Which versions [`Tx::versions`] returns: newest first (`created_at` desc, then `id` desc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionScan {
    /// Only this memory's versions.
    pub memory_id: Option<String>,
    /// Only this operation.
    pub operation: Option<Operation>,
    /// Only versions whose `created_by` is each of these (`type`, id) pairs; an `api_actor`
    /// pair also matches the session versions sent with that key.
    pub created_by: Vec<(&'static str, String)>,
    /// `created_at >= this`.
    pub created_at_gte: Option<Timestamp>,
    /// `created_at <= this`.
    pub created_at_lte: Option<Timestamp>,
    /// Only versions strictly after this `(created_at, id)` in the order (a page cursor).
    pub after: Option<(Timestamp, String)>,
    /// Most rows.
    pub limit: usize,
    /// Whether to load `content` (otherwise it is `None`).
    pub with_content: bool,
}

/// The row operations of one transaction. Ids are only looked up within the given store.
pub trait Tx {
    /// The store with this id.
    fn store(&mut self, id: &str) -> Result<Option<Store>>;
    /// Inserts or replaces a store.
    fn put_store(&mut self, store: &Store) -> Result<()>;
    /// Deletes a store with all its memories and versions; whether it existed.
    fn delete_store(&mut self, id: &str) -> Result<bool>;
    /// Stores, newest first.
    fn stores(&mut self, scan: &StoreScan) -> Result<Vec<Store>>;

    /// The memory with this id, with its content.
    fn memory(&mut self, store_id: &str, id: &str) -> Result<Option<Memory>>;
    /// The memory at exactly this path, with its content.
    fn memory_at(&mut self, store_id: &str, path: &str) -> Result<Option<Memory>>;
    /// Memories in path order.
    fn memories(&mut self, store_id: &str, scan: &MemoryScan) -> Result<Vec<Memory>>;
    /// How many memories the store holds.
    fn count_memories(&mut self, store_id: &str) -> Result<u64>;
    /// Inserts or replaces a memory (by id); `content` must be `Some`.
    fn put_memory(&mut self, memory: &Memory) -> Result<()>;
    /// Deletes a memory (its versions stay).
    fn delete_memory(&mut self, store_id: &str, id: &str) -> Result<()>;

    /// The version with this id, with its content.
    fn version(&mut self, store_id: &str, id: &str) -> Result<Option<MemoryVersion>>;
    /// Inserts or replaces a version (by id).
    fn put_version(&mut self, version: &MemoryVersion) -> Result<()>;
    /// Versions, newest first.
    fn versions(&mut self, store_id: &str, scan: &VersionScan) -> Result<Vec<MemoryVersion>>;
}
