//! What a pass did ([`SyncReport`]), and why a sync could not run ([`SyncError`]).

use std::io;
use std::path::PathBuf;

use memory_store::StoreError;
use serde::Serialize;

/// A file the folder kept because its edit lost to the store's version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The memory whose store version won (`/a.md`).
    pub path: String,
    /// Where the folder's text was kept (`/a.md.conflict-20261203T171500Z`).
    pub kept_as: String,
}

/// A path a pass could not sync, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unsynced {
    /// The memory path (`/a.md`).
    pub path: String,
    /// Why, for a person.
    pub reason: String,
}

/// What one pass did. Paths are memory paths (`/a/b.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// Written to the folder from the store.
    pub pulled: Vec<String>,
    /// Uploaded to the store (created or updated).
    pub pushed: Vec<String>,
    /// Removed from the folder because the store deleted them.
    pub deleted_local: Vec<String>,
    /// Deleted on the store because the folder deleted them.
    pub deleted_remote: Vec<String>,
    /// Edits that lost to the store's version, and where they were kept.
    pub conflicts: Vec<Conflict>,
    /// Deleted in the folder, waiting for the delay (or the per-pass cap) before the store
    /// deletes them too.
    pub pending_deletes: Vec<String>,
    /// With [`DeleteMode::LogOnly`](super::DeleteMode::LogOnly): what
    /// [`DeleteMode::Enabled`](super::DeleteMode::Enabled) would delete now.
    pub would_delete: Vec<String>,
    /// Files the store refused (too large, not UTF-8, a path it does not take); retried once
    /// they change.
    pub refused: Vec<Unsynced>,
    /// Paths that failed this pass (the store or the disk failed); retried next pass.
    pub failed: Vec<Unsynced>,
    /// Things a person should know that did not stop the pass.
    pub warnings: Vec<String>,
    /// Set when the pass downloaded the whole store instead of merging, and why (a first sync,
    /// a wiped folder).
    pub recovered: Option<String>,
    /// Set when the pass did nothing because the folder cannot be trusted, and why.
    pub blocked: Option<String>,
}

impl SyncReport {
    /// Whether the pass did all it set out to: not blocked, no path failed.
    pub fn is_success(&self) -> bool {
        self.blocked.is_none() && self.failed.is_empty()
    }

    /// Whether the pass moved nothing in either direction.
    pub fn is_quiet(&self) -> bool {
        self.pulled.is_empty()
            && self.pushed.is_empty()
            && self.deleted_local.is_empty()
            && self.deleted_remote.is_empty()
            && self.conflicts.is_empty()
    }
}

/// Why a sync could not start or a pass could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The folder cannot be opened, created or read.
    #[error("cannot use the folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// The state file cannot be read or written.
    #[error("cannot use the sync state {path}: {source}")]
    State {
        /// The state file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// Another sync of the same folder and store holds the state.
    #[error("another `memory sync` of this folder and store is running (it holds {path})")]
    Busy {
        /// The state file it holds.
        path: PathBuf,
    },
    /// The store failed (listing it, reading it).
    #[error("the memory store failed: {0}")]
    Store(#[from] StoreError),
}
