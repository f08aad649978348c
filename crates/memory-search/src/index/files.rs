//! The index's own files on disk: no symbolic link at the index folder or its files, the folder
//! and the file private to their owner.

use std::path::{Path, PathBuf};

use crate::error::{IndexError, LinkedIndex};

/// The suffixes of the index file's companions SQLite creates beside it.
pub(super) const COMPANIONS: [&str; 4] = ["", "-wal", "-shm", "-journal"];

/// Checks that neither the index folder nor the index file (nor its `-wal`, `-shm` and
/// `-journal` companions) is a symbolic link, creating the folder if missing, and returns the
/// file's path with the folders above the index folder resolved (on Unix), for an open with
/// `SQLITE_OPEN_NOFOLLOW`, which refuses a link anywhere in the path. The folders above the
/// index folder (the store's own path) may be links: they are the user's to choose; the index
/// folder and its files are the index's own, and a link there would send the memories' text
/// outside the store.
pub(super) fn unlinked_path(path: &Path) -> Result<PathBuf, IndexError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    refuse_link(dir)?;
    create_private_dir(dir)?;
    // Created by another process meanwhile, as a link?
    refuse_link(dir)?;
    for suffix in COMPANIONS {
        refuse_link(&with_suffix(path, suffix))?;
    }
    resolved_above(dir, path)
}

/// `path` (a file in `dir`) with `dir`'s parent folders resolved to their real location.
#[cfg(unix)]
fn resolved_above(dir: &Path, path: &Path) -> Result<PathBuf, IndexError> {
    let (Some(name), Some(file)) = (dir.file_name(), path.file_name()) else {
        return Ok(path.to_owned());
    };
    let above = match dir.parent() {
        Some(above) if !above.as_os_str().is_empty() => above,
        _ => Path::new("."),
    };
    let above = std::fs::canonicalize(above).map_err(|source| IndexError::Io {
        operation: "find the index folder",
        source,
    })?;
    Ok(above.join(name).join(file))
}

/// Elsewhere (Windows) SQLite's `NOFOLLOW` is not applied; the path is used as given, after
/// the link checks.
#[cfg(not(unix))]
fn resolved_above(_dir: &Path, path: &Path) -> Result<PathBuf, IndexError> {
    Ok(path.to_owned())
}

/// `path` with `suffix` appended to its file name (`index.sqlite3-wal`).
pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Refuses `path` when it is a symbolic link (not following it to look); a missing path is
/// fine.
fn refuse_link(path: &Path) -> Result<(), IndexError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(IndexError::Link(LinkedIndex::new(path))),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(IndexError::Io {
            operation: "inspect the index's files",
            source,
        }),
    }
}

/// Whether SQLite refused to open the file because of a symbolic link in its path
/// (`SQLITE_CANTOPEN_SYMLINK`, from `SQLITE_OPEN_NOFOLLOW`).
pub(super) fn is_link_refusal(e: &rusqlite::Error) -> bool {
    const CANTOPEN_SYMLINK: std::ffi::c_int = rusqlite::ffi::SQLITE_CANTOPEN | (6 << 8);
    matches!(e, rusqlite::Error::SqliteFailure(failure, _) if failure.extended_code == CANTOPEN_SYMLINK)
}

/// Creates the index folder (and its parents) with mode 0700 on unix, readable by its owner
/// only. On other platforms (Windows) the folder gets the platform's default permissions,
/// those it inherits from its parent.
fn create_private_dir(dir: &Path) -> Result<(), IndexError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => Ok(()),
        Err(source) => Err(IndexError::Io {
            operation: "create the index folder",
            source,
        }),
    }
}

/// Makes the index file readable and writable by its owner only
/// ([`memory_sqlite_conn::make_private`]: 0600 on unix, nothing elsewhere).
pub(super) fn make_private(path: &Path) -> Result<(), IndexError> {
    memory_sqlite_conn::make_private(path).map_err(|source| IndexError::Io {
        operation: "restrict the index file",
        source,
    })
}
