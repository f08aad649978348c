//! The one error type every [`Storage`](crate::Storage) returns.
//!
//! Backends map their own errors into it (keeping the detail in `source`); the text the model
//! sees is rendered from it only by [`MemoryTool`](crate::MemoryTool), which never shows a
//! `Backend` error's detail.

use crate::MemoryPath;

/// A boxed error from a backend, kept for the application's logs.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A storage error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No file (or, where a directory is allowed, no directory) at `path`.
    #[error("{path} does not exist")]
    NotFound {
        /// The path looked up.
        path: MemoryPath,
    },
    /// A file or directory already occupies `path`.
    #[error("{path} already exists")]
    AlreadyExists {
        /// The occupied path.
        path: MemoryPath,
    },
    /// `path` cannot be created because its ancestor `parent` is a file.
    #[error("cannot create {path}: {parent} is a file")]
    ParentIsFile {
        /// The path that was to be created.
        path: MemoryPath,
        /// The ancestor that is a file.
        parent: MemoryPath,
    },
    /// A conditional write found another version than the one expected: someone else changed
    /// the file in between.
    #[error("{path} was modified concurrently")]
    Conflict {
        /// The file written.
        path: MemoryPath,
    },
    /// A directory cannot be moved into its own subtree.
    #[error("cannot move {from} into itself ({to})")]
    RenameIntoItself {
        /// The directory to move.
        from: MemoryPath,
        /// The destination below it.
        to: MemoryPath,
    },
    /// The storage refuses to change `path` by a rule of its own (a read-only mount, a path
    /// outside every mount, a store that holds only UTF-8 text); nothing was changed.
    ///
    /// Unlike the other variants' detail, `reason` is shown to the model
    /// ([`MemoryTool`](crate::MemoryTool) answers `Error: Cannot change {path}: {reason}`), so it
    /// must be a fixed phrase that names memory paths only, never a host path or a backend's
    /// message.
    #[error("cannot change {path}: {reason}")]
    Refused {
        /// The path that was to change.
        path: MemoryPath,
        /// Why, for the model (e.g. `/memories/handbook is mounted read-only`).
        reason: String,
    },
    /// A create was refused because the store already holds `max_files` files (the limit the
    /// caller passed to [`Storage::create_within`](crate::Storage::create_within)); nothing was
    /// written.
    #[error("the store is full ({max_files} files)")]
    StoreFull {
        /// The limit in force.
        max_files: usize,
    },
    /// The path, or one of its ancestors, is a symbolic link, which the store never follows
    /// (a folder store; only someone with access to the disk can plant one); nothing was read
    /// or changed.
    ///
    /// [`MemoryTool`](crate::MemoryTool) answers `Error: Path {path} would escape /memories
    /// directory: it passes through a symbolic link, which this store never follows`.
    #[error("{path} passes through a symbolic link, which the store never follows")]
    SymbolicLink {
        /// The path the caller gave (the link may be one of its ancestors).
        path: MemoryPath,
    },
    /// A search engine refused a query: the text the caller gave cannot be searched. Its
    /// `Display` is the reason, for the person or model that wrote the query.
    #[error("invalid search query: {0}")]
    InvalidQuery(#[from] crate::search::QueryError),
    /// The store was opened with `history=off`: it keeps no earlier versions, so there are
    /// none to list, read, restore or redact.
    #[error("history is off for this store (it was opened with history=off)")]
    HistoryOff,
    /// `path` has no revision numbered `number` (never made, or pruned).
    #[error("{path} has no version {number}")]
    NoRevision {
        /// The path asked about.
        path: MemoryPath,
        /// The revision number asked for.
        number: u64,
    },
    /// The revision is there but holds no content to read or restore: it records a deletion,
    /// or its content was redacted.
    #[error("version {number} of {path} holds no content: {}", if *redacted { "it was redacted" } else { "it records a deletion" })]
    RevisionWithoutContent {
        /// The path asked about.
        path: MemoryPath,
        /// The revision number asked for.
        number: u64,
        /// Whether its content was redacted (otherwise it is a deletion).
        redacted: bool,
    },
    /// Redaction was asked for the revision that is the current file, which redaction never
    /// touches: change or delete the file first.
    #[error(
        "version {number} is the current content of {path}: change or delete the file before redacting it"
    )]
    RevisionIsCurrent {
        /// The file.
        path: MemoryPath,
        /// Its current revision's number.
        number: u64,
    },
    /// The backend cannot do this at all.
    #[error("{operation} is not supported by {backend}")]
    Unsupported {
        /// What was asked.
        operation: &'static str,
        /// Which backend refused.
        backend: &'static str,
    },
    /// The backend failed (I/O, database, network, decryption...). The detail is for logs only.
    #[error("{backend} failed: {source}")]
    Backend {
        /// Which backend failed.
        backend: &'static str,
        /// Whether trying again later may succeed (busy database, throttling, timeouts).
        retryable: bool,
        /// What went wrong.
        #[source]
        source: BoxError,
    },
}

impl Error {
    /// A backend failure that will not go away by retrying.
    pub fn backend(backend: &'static str, source: impl Into<BoxError>) -> Self {
        Error::Backend {
            backend,
            retryable: false,
            source: source.into(),
        }
    }

    /// A temporary backend failure (busy, throttled, timed out).
    pub fn retryable(backend: &'static str, source: impl Into<BoxError>) -> Self {
        Error::Backend {
            backend,
            retryable: true,
            source: source.into(),
        }
    }

    /// The same error with every memory path it names passed through `f` (and nothing else
    /// changed): how a wrapper that shows its inner store at other paths ([`Prefixed`], a
    /// mount table) reports the inner store's errors at the paths its caller used.
    ///
    /// [`Prefixed`]: crate::Prefixed
    ///
    /// ```
    /// use memory_core::{Error, MemoryPath};
    /// let inner = MemoryPath::parse("/memories/users/alice/a.md").unwrap();
    /// let e = Error::NotFound { path: inner };
    /// let e = e.map_paths(|p| p.rebase(&MemoryPath::parse("/memories/users/alice").unwrap(), &MemoryPath::root()).unwrap());
    /// assert_eq!(e.to_string(), "/memories/a.md does not exist");
    /// ```
    #[must_use]
    pub fn map_paths(self, mut f: impl FnMut(MemoryPath) -> MemoryPath) -> Error {
        match self {
            Error::NotFound { path } => Error::NotFound { path: f(path) },
            Error::AlreadyExists { path } => Error::AlreadyExists { path: f(path) },
            Error::ParentIsFile { path, parent } => Error::ParentIsFile {
                path: f(path),
                parent: f(parent),
            },
            Error::Conflict { path } => Error::Conflict { path: f(path) },
            Error::RenameIntoItself { from, to } => Error::RenameIntoItself {
                from: f(from),
                to: f(to),
            },
            Error::Refused { path, reason } => Error::Refused {
                path: f(path),
                reason,
            },
            Error::SymbolicLink { path } => Error::SymbolicLink { path: f(path) },
            Error::NoRevision { path, number } => Error::NoRevision {
                path: f(path),
                number,
            },
            Error::RevisionWithoutContent {
                path,
                number,
                redacted,
            } => Error::RevisionWithoutContent {
                path: f(path),
                number,
                redacted,
            },
            Error::RevisionIsCurrent { path, number } => Error::RevisionIsCurrent {
                path: f(path),
                number,
            },
            other @ (Error::HistoryOff
            | Error::StoreFull { .. }
            | Error::InvalidQuery(_)
            | Error::Unsupported { .. }
            | Error::Backend { .. }) => other,
        }
    }

    /// Whether trying the same operation again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Error::Conflict { .. }
                | Error::Backend {
                    retryable: true,
                    ..
                }
        )
    }
}

/// `Result` with a storage [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
