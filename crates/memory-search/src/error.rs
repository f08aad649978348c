//! The side index's private errors, mapped into [`memory_core::Error`] in one place.

/// What went wrong with the side index.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IndexError {
    /// An SQLite statement failed.
    #[error("the search index could not {operation}: {source}")]
    Sql {
        operation: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    /// A file-system step around the index failed.
    #[error("the search index could not {operation}: {source}")]
    Io {
        operation: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl IndexError {
    /// A mapper for `map_err` naming what was being done.
    pub(crate) fn sql(operation: &'static str) -> impl Fn(rusqlite::Error) -> IndexError + Copy {
        move |source| IndexError::Sql { operation, source }
    }

    /// Whether the index file is damaged or no database (rebuild it).
    pub(crate) fn is_damage(&self) -> bool {
        match self {
            IndexError::Sql { source, .. } => crate::index::is_damage(source),
            _ => false,
        }
    }

    /// Whether another process held the index too long (try again later).
    pub(crate) fn is_busy(&self) -> bool {
        match self {
            IndexError::Sql { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            _ => false,
        }
    }
}

/// The backend name errors of the side index carry.
pub(crate) const BACKEND: &str = "SearchIndex";

impl From<IndexError> for memory_core::Error {
    fn from(e: IndexError) -> Self {
        if e.is_busy() {
            memory_core::Error::retryable(BACKEND, e)
        } else {
            memory_core::Error::backend(BACKEND, e)
        }
    }
}
