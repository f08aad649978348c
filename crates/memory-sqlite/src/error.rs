//! The crate's private error enum and its mapping into [`memory_core::Error`].
//!
//! Messages here name the database file and SQLite's own text: they are for the application's
//! log and for an operator, never for the model (memory-core renders every tool-facing text).

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::ErrorCode;

/// The name this backend gives in [`memory_core::Error::Backend`].
pub(crate) const BACKEND: &str = "Sqlite";

/// What went wrong inside this backend.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SqliteError {
    /// SQLite could not open the file at all (missing folder, no permission...).
    #[error("cannot open the SQLite database {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The new database file was created but could not be made private to its owner (0600 on
    /// unix; elsewhere the file keeps the platform's default permissions, so this is rare).
    #[error("cannot make the new SQLite database {path} private to its owner: {source}")]
    CreateFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not a SQLite database, or its pages are damaged.
    #[error("{path} is not a SQLite database or is corrupt: {source}")]
    Corrupt {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// A SQLite database that another application marked as its own.
    #[error(
        "{path} is a SQLite database of another application (application_id {application_id:#010x}), not a memory store; refusing to touch it"
    )]
    ForeignApplication { path: PathBuf, application_id: i32 },
    /// A SQLite database with tables but no application id: someone else's schema.
    #[error(
        "{path} is a SQLite database that already holds tables of another application ({tables}), not a memory store; refusing to touch it"
    )]
    ForeignSchema { path: PathBuf, tables: String },
    /// A memory store written by a newer release of this crate.
    #[error(
        "{path} has memory-sqlite schema version {found}, newer than the {known} this build knows; upgrade memory-sqlite"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// Another connection held the database locked for longer than the busy timeout.
    /// A read-only open found a store that needs its schema created or upgraded first.
    #[error(
        "{path} holds memory store schema {version}, not this release's; open it once \
         without read-only to create or upgrade the schema"
    )]
    NeedsUpgrade { path: PathBuf, version: i64 },
    #[error("{path} stayed locked by another connection for longer than {timeout:?}: {source}")]
    Busy {
        path: PathBuf,
        timeout: Duration,
        #[source]
        source: rusqlite::Error,
    },
    /// The write-ahead log could not be emptied (`wal_checkpoint(TRUNCATE)`) because another
    /// connection was reading the database: its older pages may still hold what was deleted.
    #[error(
        "could not empty the write-ahead log of {path}: another connection (another program \
         with the store open) kept reading it; close it and try again"
    )]
    CheckpointBusy { path: PathBuf },
    /// Any other SQLite failure.
    #[error("SQLite failed on {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// A past revision whose content is not in the history: the file's row was replaced
    /// while history was off, or deleted or rewritten by another program, before this
    /// library could keep it.
    #[error(
        "version {number} of {file} in {path} has no stored content (the file was changed \
         while history was off, or by another program, before the store could keep it); \
         read another version"
    )]
    RevisionLost {
        path: PathBuf,
        file: String,
        number: u64,
    },
    /// A rename whose destination paths would break a path rule.
    #[error("cannot move {source_path} below {to}: the path would be too long or too deep")]
    RenameTooLong { source_path: String, to: String },
    /// The blocking task running the query panicked or was cancelled.
    #[error("the SQLite worker task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The store's writer thread could not be started.
    #[error("cannot start the SQLite writer thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The writer thread stopped (a write panicked) before it answered.
    #[error("the SQLite writer thread of {path} stopped before answering")]
    WriterGone { path: PathBuf },
    /// SQLite rolled back a whole batch of writes after one of them failed (a full disk, an
    /// I/O error).
    #[error("SQLite rolled back the transaction on {path} after a failed write")]
    BatchRolledBack { path: PathBuf },
    /// The batch this write was part of could not be started or committed: the same failure
    /// for every write in it.
    #[error("{shared}")]
    Batch {
        retryable: bool,
        shared: std::sync::Arc<SqliteError>,
    },
}

impl SqliteError {
    /// Classifies a rusqlite error raised while working on the database at `path`.
    pub(crate) fn classify(path: PathBuf, timeout: Duration, source: rusqlite::Error) -> Self {
        match source.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => SqliteError::Busy {
                path,
                timeout,
                source,
            },
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                SqliteError::Corrupt { path, source }
            }
            _ => SqliteError::Sqlite { path, source },
        }
    }

    /// Whether trying again later may succeed.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(
            self,
            SqliteError::Busy { .. }
                | SqliteError::CheckpointBusy { .. }
                | SqliteError::Batch {
                    retryable: true,
                    ..
                }
        )
    }
}

impl From<SqliteError> for memory_core::Error {
    fn from(e: SqliteError) -> Self {
        if e.is_retryable() {
            memory_core::Error::retryable(BACKEND, e)
        } else {
            memory_core::Error::backend(BACKEND, e)
        }
    }
}

/// A storage-level outcome of one blocking job: either a semantic storage error decided inside
/// the transaction (not found, conflict...), or a backend failure.
#[derive(Debug)]
pub(crate) enum JobError {
    /// A result the contract names ([`memory_core::Error::NotFound`] and friends).
    Storage(memory_core::Error),
    /// SQLite (or the task) failed.
    Backend(SqliteError),
}

impl From<memory_core::Error> for JobError {
    fn from(e: memory_core::Error) -> Self {
        JobError::Storage(e)
    }
}

impl From<SqliteError> for JobError {
    fn from(e: SqliteError) -> Self {
        JobError::Backend(e)
    }
}

impl From<JobError> for memory_core::Error {
    fn from(e: JobError) -> Self {
        match e {
            JobError::Storage(e) => e,
            JobError::Backend(e) => e.into(),
        }
    }
}
