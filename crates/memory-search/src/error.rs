//! The side index's private errors, mapped into [`memory_core::Error`] in one place.

/// The side index refused to open because its folder or one of its files is a symbolic link:
/// the index is never opened through one, so that no text of the store is written where the
/// link points (outside the store). A search of the store fails with this error (the
/// [`memory_core::Error::Backend`]'s source) until the link is removed.
#[derive(Debug, thiserror::Error)]
#[error(
    "the search index's {} is a symbolic link; the index is never written through a link (it \
     would put the memories' text where the link points): remove the link, and the next search \
     builds the index again",
    path.display()
)]
#[non_exhaustive]
pub struct LinkedIndex {
    /// The link: the index folder, the index file or one of its companions (`-wal`, `-shm`,
    /// `-journal`).
    pub path: std::path::PathBuf,
}

impl LinkedIndex {
    pub(crate) fn new(path: impl Into<std::path::PathBuf>) -> Self {
        LinkedIndex { path: path.into() }
    }
}

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
    /// The index folder or one of the index's files is a symbolic link.
    #[error(transparent)]
    Link(#[from] LinkedIndex),
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
        if let IndexError::Link(link) = e {
            // Its own type as the source, for callers to tell it apart.
            return memory_core::Error::backend(BACKEND, link);
        }
        if e.is_busy() {
            memory_core::Error::retryable(BACKEND, e)
        } else {
            memory_core::Error::backend(BACKEND, e)
        }
    }
}
