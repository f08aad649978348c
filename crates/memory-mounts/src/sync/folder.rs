//! The folder side of a sync: the plain files under DIR, hashed, read, written and removed
//! without ever following a symbolic link out of it.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use cap_fs_ext::{DirExt as _, FollowSymlinks, OpenOptionsFollowExt as _};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use sha2::{Digest, Sha256};

/// The reserved file at the folder's root naming the store it mirrors, as Anthropic's SDK
/// writes it (`MARKER_PATH` of `anthropic/lib/tools/_memories.py`). Never itself synced.
pub const MARKER_FILE: &str = ".anthropic-memory-store";

/// The version line of the marker the SDK writes.
const MARKER_VERSION: u32 = 1;

/// Temporary files of an atomic write start so; a scan skips them (a crashed write's leftover
/// is never uploaded).
const TEMP_PREFIX: &str = ".memory-sync-";

/// The marker's exact bytes for `store_id` (`version 1\n<id>`, no trailing newline).
pub fn marker_bytes(store_id: &str) -> Vec<u8> {
    format!("version {MARKER_VERSION}\n{store_id}").into_bytes()
}

/// Lowercase hex SHA-256 of `bytes`, as the store's `content_sha256`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What a scan found at the marker's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Marker {
    /// No marker file.
    Missing,
    /// A marker naming this store.
    Ours,
    /// Something else: another store's marker, or other bytes.
    Foreign,
}

/// One scan of the folder: every regular file's SHA-256 by relative path (`a/b.md`), and the
/// marker.
#[derive(Debug)]
pub(crate) struct Scan {
    pub(crate) files: BTreeMap<String, String>,
    pub(crate) marker: Marker,
    /// Entries left out: symbolic links, names that are not UTF-8.
    pub(crate) skipped: Vec<String>,
}

/// The folder a sync mirrors the store into, opened as a capability: every path is resolved
/// inside it (cap-std), so no `..`, absolute path or symbolic link takes a read or a write
/// outside it.
#[derive(Debug)]
pub(crate) struct Folder {
    root: PathBuf,
    dir: Dir,
}

impl Folder {
    /// The folder at `root`, created when missing (with its parents).
    pub(crate) fn open(root: &Path) -> io::Result<Folder> {
        match std::fs::metadata(root) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} is not a folder", root.display()),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir_all(root)?,
            Err(e) => return Err(e),
        }
        let root = std::fs::canonicalize(root)?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority())?;
        Ok(Folder { root, dir })
    }

    /// The folder's canonical path.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Hashes every regular file below the root. Symbolic links are neither followed nor
    /// listed; the marker is checked against `store_id` and left out of `files`.
    pub(crate) fn scan(&self, store_id: &str) -> io::Result<Scan> {
        let mut scan = Scan {
            files: BTreeMap::new(),
            marker: Marker::Missing,
            skipped: Vec::new(),
        };
        let mut pending = vec![(self.dir.try_clone()?, String::new())];
        while let Some((dir, prefix)) = pending.pop() {
            for entry in dir.entries()? {
                let entry = entry?;
                let Ok(name) = entry.file_name().into_string() else {
                    scan.skipped.push(format!(
                        "{prefix}{} (the name is not UTF-8)",
                        entry.file_name().to_string_lossy()
                    ));
                    continue;
                };
                let rel = format!("{prefix}{name}");
                let kind = match entry.file_type() {
                    Ok(kind) => kind,
                    // Removed while we walked: a listing is a snapshot, not a lock.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                };
                if kind.is_symlink() {
                    scan.skipped.push(format!("{rel} (a symbolic link)"));
                } else if kind.is_dir() {
                    match dir.open_dir_nofollow(&name) {
                        Ok(sub) => pending.push((sub, format!("{rel}/"))),
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e),
                    }
                } else if kind.is_file() {
                    if name.starts_with(TEMP_PREFIX) && name.ends_with(".tmp") {
                        continue;
                    }
                    let Some(bytes) = read_no_follow(&dir, &name, &rel)? else {
                        continue;
                    };
                    if rel == MARKER_FILE {
                        scan.marker = if bytes == marker_bytes(store_id) {
                            Marker::Ours
                        } else {
                            Marker::Foreign
                        };
                    } else {
                        scan.files.insert(rel, sha256_hex(&bytes));
                    }
                }
            }
        }
        Ok(scan)
    }

    /// The bytes of the regular file at `rel`; `None` when nothing is there.
    pub(crate) fn read(&self, rel: &str) -> io::Result<Option<Vec<u8>>> {
        read_no_follow(&self.dir, check_rel(rel)?, rel)
    }

    /// The SHA-256 of the file at `rel` now; `None` when it is absent.
    pub(crate) fn hash(&self, rel: &str) -> io::Result<Option<String>> {
        Ok(self.read(rel)?.map(|bytes| sha256_hex(&bytes)))
    }

    /// Whether anything (a file, a folder, a link) is at `rel`.
    pub(crate) fn exists(&self, rel: &str) -> io::Result<bool> {
        match self.dir.symlink_metadata(check_rel(rel)?) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Writes `bytes` to `rel` atomically: a temporary file beside it, flushed to disk, renamed
    /// over it, and the folder flushed. Missing folders below the root are created.
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let rel = check_rel(rel)?;
        let parent = rel.rsplit_once('/').map(|(parent, _)| parent);
        if let Some(parent) = parent {
            self.dir.create_dir_all(parent)?;
        }
        let temp_name = format!("{TEMP_PREFIX}{}.tmp", random_suffix()?);
        let temp = match parent {
            Some(parent) => format!("{parent}/{temp_name}"),
            None => temp_name,
        };
        let written = (|| {
            let mut file = self.dir.open_with(
                &temp,
                cap_std::fs::OpenOptions::new().write(true).create_new(true),
            )?;
            file.write_all(bytes)?;
            file.sync_all()?;
            self.dir.rename(&temp, &self.dir, rel)
        })();
        if written.is_err() {
            let _ = self.dir.remove_file(&temp);
        }
        written?;
        self.sync_folder(parent);
        Ok(())
    }

    /// Removes the file at `rel` (nothing there is fine).
    pub(crate) fn remove(&self, rel: &str) -> io::Result<()> {
        let rel = check_rel(rel)?;
        match self.dir.remove_file(rel) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.sync_folder(rel.rsplit_once('/').map(|(parent, _)| parent));
        Ok(())
    }

    /// Flushes a folder's entries (a rename or a removal in it) to disk where the platform
    /// can; best effort, as the write itself already happened.
    fn sync_folder(&self, parent: Option<&str>) {
        #[cfg(unix)]
        {
            let dir = match parent {
                Some(parent) => self.dir.open_dir_nofollow(parent),
                None => self.dir.try_clone(),
            };
            if let Ok(dir) = dir {
                let _ = rustix::fs::fsync(&dir);
            }
        }
        #[cfg(not(unix))]
        let _ = parent;
    }
}

/// `rel` when it names a file below the root in the store's terms: `/`-separated, no empty,
/// `.` or `..` segment, no backslash or NUL; on Windows, no name Windows cannot hold (a
/// memory `/con.md` would open the console device).
fn check_rel(rel: &str) -> io::Result<&str> {
    let bad = rel.is_empty()
        || rel.contains(['\\', '\0'])
        || rel
            .split('/')
            .any(|segment| segment.is_empty() || segment == "." || segment == "..");
    if bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{rel:?} cannot be a file below the folder"),
        ));
    }
    if cfg!(windows)
        && let Some(why) = rel.split('/').find_map(memory_core::windows_name_problem)
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{rel:?} cannot be a file here: {why}"),
        ));
    }
    Ok(rel)
}

/// The bytes of the regular file `path` of `dir`, not following a symbolic link at its name
/// (a link is an error); `None` when nothing is there.
fn read_no_follow(dir: &Dir, path: &str, rel: &str) -> io::Result<Option<Vec<u8>>> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    let mut file = match dir.open_with(path, &options) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{rel} is not a regular file"),
        ));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

fn random_suffix() -> io::Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_hashes_files_and_checks_the_marker() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::open(&dir.path().join("sync")).unwrap();
        folder.write("a/b.md", b"hello").unwrap();
        folder
            .write(MARKER_FILE, &marker_bytes("memstore_1"))
            .unwrap();
        let scan = folder.scan("memstore_1").unwrap();
        assert_eq!(scan.marker, Marker::Ours);
        assert_eq!(
            scan.files.get("a/b.md").map(String::as_str),
            Some("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        );
        assert_eq!(scan.files.len(), 1);
        assert_eq!(folder.scan("memstore_2").unwrap().marker, Marker::Foreign);
    }

    #[test]
    fn paths_that_leave_the_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::open(dir.path()).unwrap();
        for rel in ["../x.md", "a/../../x.md", "/x.md", "a//b.md", "a\\b.md", ""] {
            assert!(folder.write(rel, b"x").is_err(), "{rel}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn links_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "secret").unwrap();
        let folder = Folder::open(&dir.path().join("sync")).unwrap();
        std::os::unix::fs::symlink(outside.path(), folder.root().join("out")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            folder.root().join("link.md"),
        )
        .unwrap();
        let scan = folder.scan("memstore_1").unwrap();
        assert!(scan.files.is_empty(), "{:?}", scan.files);
        assert_eq!(scan.skipped.len(), 2);
        assert!(folder.write("out/new.md", b"x").is_err());
        assert!(folder.read("link.md").is_err());
        assert!(!outside.path().join("new.md").exists());
    }
}
