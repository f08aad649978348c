//! What the store keeps on disk and what it calls it: the names beside `memories/`, the
//! temporary files' names, file and folder modes, and how a memory path becomes a path below
//! the store's root. Nothing here touches the disk.

use std::io;
use std::path::{Component, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use memory_core::{MemoryPath, Version, windows_name_problem};
use sha2::{Digest, Sha256};

use crate::error::FsError;

/// Mode of every file the store writes (on Unix; Windows gives files its default ACL).
pub(crate) const FILE_MODE: u32 = 0o600;
/// Mode of every folder the store creates (on Unix; Windows gives folders its default ACL).
pub(crate) const DIR_MODE: u32 = 0o700;
/// The folder of memories inside the base folder, as the official SDKs lay it out.
pub(crate) const MEMORIES: &str = "memories";
/// The lock file, beside (not inside) the `memories` folder.
pub(crate) const LOCK_FILE: &str = ".memories.lock";
/// The file count, beside the lock file: the number of files in `memories/`, kept under the
/// lock by every writer and recounted by a walk whenever a store opens.
pub(crate) const COUNT_FILE: &str = ".memories.count";
/// The count is written as this many decimal digits and a newline, always the same length, so
/// that one positioned write replaces it whole.
pub(crate) const COUNT_DIGITS: usize = 20;

/// The folder of temporary files, beside (not inside) the `memories` folder, so that no memory
/// path can reach a temporary file and no name inside `memories/` is reserved. It is on the same
/// file system as `memories/` (checked when the store opens), so a finished temporary file moves
/// into place with one rename.
pub(crate) const TEMP_DIR: &str = ".memory-tmp";

/// The folder of each file's earlier versions, beside (not inside) the `memories` folder like
/// [`TEMP_DIR`], so that no memory path reaches history (see `history/mod.rs`).
pub(crate) const HISTORY_DIR: &str = ".memory-history";

/// Temporary files are `<32 hex digits>.tmp` inside [`TEMP_DIR`]: with 128 bits of randomness
/// two writers never pick the same name.
const TEMP_SUFFIX: &str = ".tmp";
const TEMP_HEX: usize = 32;

/// How often a write starts over when folders vanish under a concurrent delete.
pub(crate) const MAX_ATTEMPTS: usize = 8;

/// Whether `name` is one of the store's temporary files (in [`TEMP_DIR`]).
pub(crate) fn is_temp_name(name: &str) -> bool {
    name.strip_suffix(TEMP_SUFFIX).is_some_and(|hex| {
        hex.len() == TEMP_HEX
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The name temporary files had inside `memories/` before they moved to [`TEMP_DIR`]: such files
/// are ordinary memories now (a file of that name may be a user's memory, renamed there by an
/// earlier version), so they are only pointed out in the log when the store opens.
pub(crate) fn is_legacy_temp_name(name: &str) -> bool {
    name.strip_prefix(".memory-tmp-").is_some_and(is_temp_name)
}

/// A fresh temporary file name, unique across threads and processes.
pub(crate) fn temp_name() -> String {
    // What tells this process apart from every other writer, worked out once (the process id
    // and the time it first wrote); the counter tells this process's names apart.
    static PROCESS: OnceLock<[u8; 32]> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let process = PROCESS.get_or_init(|| {
        let mut hasher = Sha256::new();
        hasher.update(std::process::id().to_le_bytes());
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        hasher.update(now.as_nanos().to_le_bytes());
        hasher.update(format!("{:?}", std::thread::current().id()).as_bytes());
        hasher.finalize().into()
    });
    let mut hasher = Sha256::new();
    hasher.update(process);
    hasher.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let digest = hex::encode(hasher.finalize());
    format!("{}{TEMP_SUFFIX}", &digest[..TEMP_HEX])
}

/// The version of some content: the hex SHA-256 of its bytes.
pub(crate) fn version_of(contents: &[u8]) -> Version {
    Version::new(hex::encode(Sha256::digest(contents)))
}

/// The path relative to the root, made only of plain names; `.` for the root.
pub(crate) fn rel(path: &MemoryPath) -> Result<PathBuf, FsError> {
    let mut out = PathBuf::new();
    for segment in path.segments() {
        out.push(segment);
    }
    if out.as_os_str().is_empty() {
        return Ok(PathBuf::from("."));
    }
    if out.components().count() != path.segments().count()
        || !out.components().all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(FsError::UnsafePath { path: path.clone() });
    }
    Ok(out)
}

/// Whether an error says the path (or an ancestor of it) is not there.
pub(crate) fn is_not_found(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The first name on `path` Windows cannot hold, and why (see
/// [`windows_name_problem`](memory_core::windows_name_problem)).
pub(crate) fn windows_path_problem(path: &MemoryPath) -> Option<&'static str> {
    path.segments().find_map(windows_name_problem)
}

/// What the store knows about a regular file without reading it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileInfo {
    pub(crate) size: u64,
    pub(crate) modified: Option<SystemTime>,
}

impl FileInfo {
    pub(crate) fn from_meta(meta: &cap_std::fs::Metadata) -> Self {
        FileInfo {
            size: meta.len(),
            modified: meta.modified().ok().map(|t| t.into_std()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_and_unique() {
        let a = temp_name();
        let b = temp_name();
        assert_ne!(a, b);
        assert!(is_temp_name(&a), "{a}");
        assert!(a.len() < 64);
        for other in [
            ".tmp",
            "0123456789abcdef0123456789abcdef.tmp.md",
            "0123456789ABCDEF0123456789ABCDEF.tmp",
            "0123456789abcdef0123456789abcde.tmp",
            "notes.tmp",
        ] {
            assert!(!is_temp_name(other), "{other}");
        }
        assert!(is_temp_name("0123456789abcdef0123456789abcdef.tmp"));
        assert!(is_legacy_temp_name(
            ".memory-tmp-0123456789abcdef0123456789abcdef.tmp"
        ));
        assert!(!is_legacy_temp_name(&a));
    }

    #[test]
    fn a_path_is_refused_for_its_first_name_windows_cannot_hold() {
        let path = MemoryPath::parse("/memories/ok/CON/x.md").unwrap();
        assert_eq!(
            windows_path_problem(&path),
            Some("Windows reserves this name for a device")
        );
        assert_eq!(windows_path_problem(&MemoryPath::root()), None);
    }

    #[test]
    fn relative_paths_are_plain_names() {
        let p = MemoryPath::parse("/memories/a b/c.md").unwrap();
        assert_eq!(rel(&p).unwrap(), PathBuf::from("a b").join("c.md"));
        assert_eq!(rel(&MemoryPath::root()).unwrap(), PathBuf::from("."));
        let dots = MemoryPath::parse("/memories/.../x").unwrap();
        assert_eq!(rel(&dots).unwrap(), PathBuf::from("...").join("x"));
    }

    #[test]
    fn versions_are_content_hashes() {
        assert_eq!(version_of(b"a"), version_of(b"a"));
        assert_ne!(version_of(b"a"), version_of(b"b"));
        assert_eq!(version_of(b"").as_str().len(), 64);
    }
}
