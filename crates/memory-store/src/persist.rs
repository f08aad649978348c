//! The persistence trait: what the engine needs from a database.
//!
//! The engine decides every rule; a backend only runs transactions and the row operations of
//! [`Tx`]. Methods are blocking: the engine calls them on `tokio::task::spawn_blocking` threads.

use std::fmt;
use std::sync::Arc;

use crate::Timestamp;
use crate::error::{Result, StoreError};
use crate::model::{Memory, MemoryVersion, Operation, Store};

/// A database the engine can keep stores in.
///
/// # Behavior
///
/// - [`write`](Self::write) runs its job in one transaction. Its writes become visible all
///   at once when it returns `Ok`, or not at all when it returns `Err` (or panics, or the
///   connection is lost).
/// - Write jobs that read the same store with [`Tx::store`] are serialised (across handles and
///   processes): from that read on, the job sees every write of the jobs before it and holds
///   the store until it ends. Every engine write that changes a store's memories or versions
///   reads the store first, so a rule that spans rows of one store (the memory limit, the
///   path-occupancy rule, preconditions) holds. A backend may serialise more (SQLite
///   serialises every write to the file); PostgreSQL locks the store's row, so writes to
///   different stores run side by side.
/// - [`read`](Self::read) runs its job on one consistent snapshot; the job must not write.
/// - `Display` names the database for messages (a path, or host, port and database), never a
///   password.
pub trait Persistence: Send + Sync + fmt::Debug + fmt::Display + 'static {
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
    /// Only the stores of this workspace (`None`: the default workspace).
    pub workspace: Option<String>,
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
    /// The store with this id. In a write job, this also takes the store: later write jobs
    /// reading it wait until this one ends (see [`Persistence`]).
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

/// Object-safe form of [`Persistence`], for [`AnyPersistence`].
trait ErasedPersistence: Send + Sync + fmt::Debug + fmt::Display + 'static {
    fn read_erased(&self, job: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()>;
    fn write_erased(&self, job: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()>;
}

impl<P: Persistence> ErasedPersistence for P {
    fn read_erased(&self, job: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        self.read(job)
    }

    fn write_erased(&self, job: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        self.write(job)
    }
}

/// Any [`Persistence`] behind one type: the default of
/// [`MemoryStores`](crate::MemoryStores), so that a server, a mount or a tool takes an engine
/// over SQLite or over another database (memory-postgres' `PostgresPersistence`) alike.
///
/// Make one with [`AnyPersistence::new`] (or `From` a [`SqlitePersistence`](crate::SqlitePersistence)).
/// It behaves exactly as the persistence it holds; `Debug` and `Display` are that one's.
/// Cloning is cheap (the persistence is shared).
#[derive(Clone)]
pub struct AnyPersistence(Arc<dyn ErasedPersistence>);

impl AnyPersistence {
    /// `persistence` behind the common type.
    pub fn new(persistence: impl Persistence) -> Self {
        AnyPersistence(Arc::new(persistence))
    }

    pub(crate) fn from_shared<P: Persistence>(persistence: Arc<P>) -> Self {
        AnyPersistence(persistence)
    }
}

impl fmt::Debug for AnyPersistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for AnyPersistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// Runs a `FnOnce` job through the erased `FnMut` form and hands back its value.
fn erased<T, F>(
    run: impl FnOnce(&mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()>,
    job: F,
) -> Result<T>
where
    F: FnOnce(&mut dyn Tx) -> Result<T>,
{
    let mut job = Some(job);
    let mut out = None;
    run(&mut |tx| {
        // A persistence calls its job once; a second call has nothing to run.
        let job = job.take().ok_or_else(ran_twice)?;
        out = Some(job(tx)?);
        Ok(())
    })?;
    out.ok_or_else(ran_twice)
}

#[derive(Debug, thiserror::Error)]
#[error("the persistence ran a transaction job other than once")]
struct RanTwice;

fn ran_twice() -> StoreError {
    StoreError::Backend {
        retryable: false,
        source: Box::new(RanTwice),
    }
}

impl Persistence for AnyPersistence {
    fn read<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        erased(|j| self.0.read_erased(j), job)
    }

    fn write<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        erased(|j| self.0.write_erased(j), job)
    }
}
