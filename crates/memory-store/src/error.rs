//! [`StoreError`]: the engine's errors, one variant per error type of the hosted API.

use memory_core::BoxError;

/// What a store operation can fail with. Each variant is one `error.type` of the hosted API
/// ([`error_type`](Self::error_type)) with its HTTP status ([`status`](Self::status)).
///
/// The messages of every variant but [`Backend`](Self::Backend) are meant for API clients
/// (they name ids, paths and limits, never host paths); a backend's detail is for logs only.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The request breaks a rule (a bad path, a limit, an archived store...): 400.
    #[error("{message}")]
    InvalidRequest {
        /// What is wrong, for the client.
        message: String,
    },
    /// No such store, memory or version (in this store): 404.
    #[error("{message}")]
    NotFound {
        /// What was not found.
        message: String,
    },
    /// A `content_sha256` precondition (or `expected_content_sha256`) did not hold: 409.
    #[error("{message}")]
    PreconditionFailed {
        /// The expected and the current hash.
        message: String,
    },
    /// The path is taken by another memory, or is its ancestor or descendant: 409.
    #[error("{message}")]
    PathConflict {
        /// What collides.
        message: String,
        /// The memory in the way.
        conflicting_memory_id: String,
        /// Its path.
        conflicting_path: String,
    },
    /// The operation conflicts with the current state (redacting a live memory's head): 409.
    #[error("{message}")]
    Conflict {
        /// Why.
        message: String,
    },
    /// The persistence layer failed. The detail is for logs, not for clients.
    #[error("the memory store backend failed: {source}")]
    Backend {
        /// Whether trying again later may succeed (a busy database).
        retryable: bool,
        /// What went wrong.
        #[source]
        source: BoxError,
    },
}

impl StoreError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        StoreError::InvalidRequest {
            message: message.into(),
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        StoreError::NotFound {
            message: message.into(),
        }
    }

    /// The hosted API's `error.type` for this error.
    pub fn error_type(&self) -> &'static str {
        match self {
            StoreError::InvalidRequest { .. } => "invalid_request_error",
            StoreError::NotFound { .. } => "not_found_error",
            StoreError::PreconditionFailed { .. } => "memory_precondition_failed_error",
            StoreError::PathConflict { .. } => "memory_path_conflict_error",
            StoreError::Conflict { .. } => "conflict_error",
            StoreError::Backend {
                retryable: true, ..
            } => "overloaded_error",
            StoreError::Backend { .. } => "api_error",
        }
    }

    /// The HTTP status the hosted API answers this error with (529 for a busy database, as
    /// the hosted API does when overloaded, so SDKs retry).
    pub fn status(&self) -> u16 {
        match self {
            StoreError::InvalidRequest { .. } => 400,
            StoreError::NotFound { .. } => 404,
            StoreError::PreconditionFailed { .. }
            | StoreError::PathConflict { .. }
            | StoreError::Conflict { .. } => 409,
            StoreError::Backend {
                retryable: true, ..
            } => 529,
            StoreError::Backend { .. } => 500,
        }
    }

    /// Whether trying the same operation again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            StoreError::Backend {
                retryable: true,
                ..
            }
        )
    }
}

/// For callers that speak [`memory_core::Error`]: everything becomes a `Backend` error of
/// `"MemoryStore"` (retryable when a busy database caused it). Layers that know the path
/// (the memory tool bridge) map the semantic variants themselves.
impl From<StoreError> for memory_core::Error {
    fn from(e: StoreError) -> Self {
        if e.is_retryable() {
            memory_core::Error::retryable("MemoryStore", e)
        } else {
            memory_core::Error::backend("MemoryStore", e)
        }
    }
}

/// `Result` with a [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What went wrong inside the SQLite persistence (private; mapped into
/// [`StoreError::Backend`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SqliteError {
    #[error("cannot open the SQLite database {path}: {source}")]
    Open {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path} is not a memory-store database ({why}); refusing to touch it")]
    Foreign { path: String, why: String },
    #[error(
        "{path} has memory-store schema version {found}, newer than the {known} this build knows"
    )]
    TooNew {
        path: String,
        found: i64,
        known: i64,
    },
    #[error("SQLite failed on {path}: {source}")]
    Sqlite {
        path: String,
        busy: bool,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path} holds a damaged row: {what}")]
    BadRow { path: String, what: String },
    #[error("the SQLite worker task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl From<SqliteError> for StoreError {
    fn from(e: SqliteError) -> Self {
        let retryable = matches!(e, SqliteError::Sqlite { busy: true, .. });
        StoreError::Backend {
            retryable,
            source: Box::new(e),
        }
    }
}
