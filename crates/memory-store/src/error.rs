//! [`StoreError`]: the engine's errors, one variant per error type of the hosted API.

use memory_core::BoxError;
use serde::{Deserialize, Serialize};

/// Why the engine refused a request, as data: what a caller branches on (the memory tool's
/// bridge words its own text from it), never the message. Carried by
/// [`StoreError::reason`], and by `memory serve` as the `reason` field of the error body (an
/// extension beside the hosted API's `type` and `message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// The store is archived: its memories can be read, deleted and redacted, not created or
    /// changed, and the store cannot be updated.
    StoreArchived,
    /// The store holds its maximum number of memories.
    StoreFull,
    /// The content is over 102,400 bytes.
    ContentTooLarge,
    /// The path breaks a rule of its shape: a leading `/`, 1 to 20 segments, no empty, `.`
    /// or `..` segment, at most 1,024 bytes.
    PathInvalid,
    /// The path holds a control character.
    PathControlCharacter,
    /// The path holds a Unicode format character (or U+2028/U+2029).
    PathFormatCharacter,
    /// The path is not in Unicode normalization form C.
    PathNotNfc,
    /// A `content_sha256` precondition (or `expected_content_sha256`) did not hold.
    PreconditionFailed,
    /// The path is taken, or is an ancestor or descendant of another memory's path.
    PathConflict,
    /// The version is the head of a live memory and cannot be redacted.
    HeadVersion,
    /// No such store, memory or version.
    NotFound,
    /// Any other invalid parameter (a limit, a page token, a name, metadata, a hash...).
    InvalidParameter,
    /// The persistence layer failed.
    Backend,
    /// A reason this build does not know (sent by a newer server).
    #[serde(other)]
    Unknown,
}

impl Reason {
    /// The name on the wire (`store_archived`...).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::StoreArchived => "store_archived",
            Reason::StoreFull => "store_full",
            Reason::ContentTooLarge => "content_too_large",
            Reason::PathInvalid => "path_invalid",
            Reason::PathControlCharacter => "path_control_character",
            Reason::PathFormatCharacter => "path_format_character",
            Reason::PathNotNfc => "path_not_nfc",
            Reason::PreconditionFailed => "precondition_failed",
            Reason::PathConflict => "path_conflict",
            Reason::HeadVersion => "head_version",
            Reason::NotFound => "not_found",
            Reason::InvalidParameter => "invalid_parameter",
            Reason::Backend => "backend",
            Reason::Unknown => "unknown",
        }
    }
}

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
        /// Which rule, as data.
        reason: Reason,
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
        /// Which state, as data.
        reason: Reason,
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
        Self::refused(Reason::InvalidParameter, message)
    }

    /// An [`InvalidRequest`](Self::InvalidRequest) for `reason`.
    pub fn refused(reason: Reason, message: impl Into<String>) -> Self {
        StoreError::InvalidRequest {
            message: message.into(),
            reason,
        }
    }

    /// Why, as data: the [`Reason`] of every variant.
    pub fn reason(&self) -> Reason {
        match self {
            StoreError::InvalidRequest { reason, .. } | StoreError::Conflict { reason, .. } => {
                *reason
            }
            StoreError::NotFound { .. } => Reason::NotFound,
            StoreError::PreconditionFailed { .. } => Reason::PreconditionFailed,
            StoreError::PathConflict { .. } => Reason::PathConflict,
            StoreError::Backend { .. } => Reason::Backend,
        }
    }

    /// Whether the same request can only fail the same way again (every 4xx: a broken rule,
    /// a conflict with the current state). `memory serve` sends `x-should-retry: false` with
    /// these, so SDKs do not resend a deterministic 409.
    pub fn is_deterministic(&self) -> bool {
        !matches!(self, StoreError::Backend { .. })
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
    #[error("cannot create the SQLite database {path}: {source}")]
    Create {
        path: String,
        #[source]
        source: std::io::Error,
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
    #[error(
        "{path} has memory-store schema version {found}, older than the {known} this build \
         reads; a read-only open cannot migrate it (open it once read-write, e.g. with `memory serve`)"
    )]
    NeedsMigration {
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
