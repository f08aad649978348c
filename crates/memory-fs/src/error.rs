//! [`FsError`]: what can go wrong on disk, mapped into [`memory_core::Error`].
//!
//! The semantic cases (`NotFound`, `AlreadyExists`, `Conflict`, ...) are built directly as core
//! errors carrying only [`MemoryPath`]s; everything here becomes [`memory_core::Error::Backend`],
//! whose detail (which may name host paths) is for logs only.

use std::io;
use std::path::PathBuf;

use memory_core::MemoryPath;

/// The backend name in [`memory_core::Error::Backend`].
pub(crate) const BACKEND: &str = "Fs";

#[derive(Debug, thiserror::Error)]
pub(crate) enum FsError {
    /// The store's folder, its `memories` folder or its lock file cannot be opened or created.
    #[error("cannot open the memory store at {base}: {source}")]
    Open { base: PathBuf, source: io::Error },
    /// An I/O operation on a path inside the store failed.
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: MemoryPath,
        source: io::Error,
    },
    /// The store-wide lock could not be taken or released.
    #[error("cannot lock the memory store: {source}")]
    Lock { source: io::Error },
    /// A path would not map to plain names below the store root (defence in depth: a
    /// [`MemoryPath`] never does).
    #[error("{path} does not map to plain names below the store root")]
    UnsafePath { path: MemoryPath },
    /// A symbolic link or special file is in the way; links are never followed.
    #[error("{path} is a symbolic link or special file, which the store never follows")]
    NotRegular { path: MemoryPath },
    /// The folder of temporary files is not on the file system and mount of `memories/` (for
    /// example `memories/` is a mount point or a link to another disk), so a finished temporary
    /// file could not be moved into place in one step.
    #[error(
        "cannot open the memory store at {base}: {temp_dir} and {memories} are on different file systems or mounts; \
         the store needs both on one mount to write atomically"
    )]
    TempElsewhere {
        base: PathBuf,
        temp_dir: PathBuf,
        memories: PathBuf,
    },
    /// Folders kept disappearing under concurrent deletes.
    #[error("{path}: folders kept vanishing under concurrent deletes ({attempts} attempts)")]
    Vanished { path: MemoryPath, attempts: usize },
    /// A past version's content file is missing or does not hold the bytes its record
    /// describes (removed or changed by another program).
    #[error(
        "version {number} of {path} lost its content: its file in the store's history folder is missing or changed"
    )]
    LostVersion { path: MemoryPath, number: u64 },
    /// A blocking task panicked or was cancelled.
    #[error("a blocking file-system task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

impl FsError {
    pub(crate) fn io(op: &'static str, path: &MemoryPath, source: io::Error) -> Self {
        FsError::Io {
            op,
            path: path.clone(),
            source,
        }
    }
}

impl From<FsError> for memory_core::Error {
    fn from(e: FsError) -> Self {
        match e {
            FsError::Vanished { .. } => memory_core::Error::retryable(BACKEND, e),
            FsError::Io { ref source, .. }
                if matches!(
                    source.kind(),
                    io::ErrorKind::Interrupted
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                ) =>
            {
                memory_core::Error::retryable(BACKEND, e)
            }
            _ => memory_core::Error::backend(BACKEND, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fs_error_is_a_backend_error() {
        let path = MemoryPath::parse("/memories/a").unwrap();
        let e: memory_core::Error = FsError::io(
            "read",
            &path,
            io::Error::new(io::ErrorKind::PermissionDenied, "denied"),
        )
        .into();
        assert!(matches!(
            e,
            memory_core::Error::Backend {
                backend: "Fs",
                retryable: false,
                ..
            }
        ));
        let e: memory_core::Error = FsError::Vanished { path, attempts: 3 }.into();
        assert!(e.is_retryable());
    }
}
