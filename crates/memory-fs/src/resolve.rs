//! Finding what a memory path names, never through a symbolic link.
//!
//! The portable path, which every platform runs: from the root's handle, each folder on the
//! way is opened relative to the one before by a single name, refusing a link
//! (`open_dir_nofollow`), and the last name is looked at or opened relative to its folder,
//! again refusing a link. No path is resolved twice and no link is ever followed, even one
//! swapped in meanwhile. On Linux, [`Fast::open`](crate::sys::Fast::open) answers most of these
//! questions with one `openat2` call; where it cannot, the portable path decides.

use std::io;
use std::ops::Deref;

use cap_fs_ext::DirExt as _;
use cap_std::fs::Dir;
use memory_core::{Error, MemoryPath, Result};

use crate::error::FsError;
use crate::layout::{FileInfo, is_not_found};
use crate::store::Store;
use crate::sys::{self, Beneath, Open};

/// What a path is, found without following any link.
#[derive(Debug)]
pub(crate) enum Probe {
    /// Nothing there (or an ancestor is missing).
    Missing,
    /// A regular file, with its size and modification time.
    File(FileInfo),
    /// A real folder (which may or may not hold files).
    Dir,
    /// A special file (a FIFO, a socket, a device): never opened nor shown.
    Special,
    /// The path or one of its ancestors is a symbolic link: never followed nor shown.
    Link,
    /// An ancestor is a regular file.
    BelowFile(MemoryPath),
    /// An ancestor is a special file.
    BelowSpecial(MemoryPath),
}

/// A folder of the store, opened: the root through the store's own handle, or one below it.
#[derive(Debug)]
pub(crate) enum Folder<'a> {
    Root(&'a Dir),
    Below(Dir),
}

impl Deref for Folder<'_> {
    type Target = Dir;

    fn deref(&self) -> &Dir {
        match self {
            Folder::Root(dir) => dir,
            Folder::Below(dir) => dir,
        }
    }
}

/// Where walking down to a path's folder ended.
enum Reached<'a> {
    /// At the folder holding the path's last name.
    Folder(Folder<'a>),
    /// Before it: an ancestor is missing, a link, or not a folder.
    Stopped(Probe),
}

/// What a name in an open folder is, without following a link.
fn look(folder: &Dir, name: &str, path: &MemoryPath) -> Result<Probe, FsError> {
    match folder.symlink_metadata(name) {
        Ok(meta) if meta.is_file() => Ok(Probe::File(FileInfo::from_meta(&meta))),
        Ok(meta) if meta.is_dir() => Ok(Probe::Dir),
        Ok(meta) if meta.file_type().is_symlink() => Ok(Probe::Link),
        Ok(_) => Ok(Probe::Special),
        Err(e) if is_not_found(&e) => Ok(Probe::Missing),
        Err(e) => Err(FsError::io("stat", path, e)),
    }
}

/// Reads a whole file whose size its metadata gave. The store replaces files by rename, never
/// in place, so the size holds and one read usually gets everything, without the extra read
/// that finds the end; a file another program changes in place meanwhile is read to its end.
pub(crate) fn read_whole(file: &mut std::fs::File, size: u64) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let size = usize::try_from(size).unwrap_or(0);
    let mut contents = vec![0u8; size];
    let mut filled = 0;
    while filled < size {
        match file.read(&mut contents[filled..]) {
            Ok(0) => {
                // Shorter than it was: what is there is the file.
                contents.truncate(filled);
                return Ok(contents);
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if size == 0 {
        // An empty size may also be a file that grew since: read whatever is there.
        file.read_to_end(&mut contents)?;
    }
    Ok(contents)
}

impl Store {
    /// Walks from the root to the folder holding `path`'s last name, one name at a time.
    fn reach(&self, path: &MemoryPath) -> Result<Reached<'_>, FsError> {
        let mut folder = Folder::Root(&self.root);
        for ancestor in path.ancestors() {
            let name = ancestor.name().unwrap_or_default();
            match folder.open_dir_nofollow(name) {
                Ok(dir) => folder = Folder::Below(dir),
                // Not there (looking now could find one made meanwhile, too late for us).
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok(Reached::Stopped(Probe::Missing));
                }
                Err(e) => {
                    let probe = match look(&folder, name, &ancestor)? {
                        Probe::Missing => Probe::Missing,
                        Probe::Link => Probe::Link,
                        Probe::File(_) => Probe::BelowFile(ancestor),
                        Probe::Special => Probe::BelowSpecial(ancestor),
                        // A real folder that could not be opened (no permission, or a folder
                        // swapped in just now): that error.
                        Probe::Dir | Probe::BelowFile(_) | Probe::BelowSpecial(_) => {
                            return Err(FsError::io("open folder", &ancestor, e));
                        }
                    };
                    return Ok(Reached::Stopped(probe));
                }
            }
        }
        Ok(Reached::Folder(folder))
    }

    /// What `path` is.
    pub(crate) fn probe(&self, path: &MemoryPath) -> Result<Probe, FsError> {
        let Some(name) = path.name() else {
            return Ok(Probe::Dir);
        };
        if self.unrepresentable(path).is_some() {
            return Ok(Probe::Missing);
        }
        if let Some(fast) = &self.fast {
            // One openat2 answers every case but "an ancestor is not a folder" (ENOTDIR),
            // where the walk below names that ancestor.
            match fast.open(&self.root, path, Open::Look)? {
                Beneath::Opened(file) => {
                    let meta = file.metadata().map_err(|e| FsError::io("stat", path, e))?;
                    return Ok(if meta.is_file() {
                        Probe::File(FileInfo {
                            size: meta.len(),
                            modified: meta.modified().ok(),
                        })
                    } else if meta.is_dir() {
                        Probe::Dir
                    } else if meta.file_type().is_symlink() {
                        Probe::Link
                    } else {
                        Probe::Special
                    });
                }
                Beneath::Link => return Ok(Probe::Link),
                Beneath::Missing => return Ok(Probe::Missing),
                Beneath::BelowNonDir | Beneath::Walk => {}
            }
        }
        match self.reach(path)? {
            Reached::Stopped(probe) => Ok(probe),
            Reached::Folder(folder) => look(&folder, name, path),
        }
    }

    /// [`probe`](Self::probe) for a command's own path: a symbolic link on the way is the
    /// command's error ([`Error::SymbolicLink`]).
    pub(crate) fn probe_unlinked(&self, path: &MemoryPath) -> Result<Probe> {
        match self.probe(path)? {
            Probe::Link => Err(Error::SymbolicLink { path: path.clone() }),
            other => Ok(other),
        }
    }

    /// The real folder `dir`, opened, or `None` when it is not one (missing, a link, below a
    /// file or a special file).
    pub(crate) fn open_folder(&self, dir: &MemoryPath) -> Result<Option<Folder<'_>>, FsError> {
        let Some(name) = dir.name() else {
            return Ok(Some(Folder::Root(&self.root)));
        };
        if self.unrepresentable(dir).is_some() {
            return Ok(None);
        }
        if let Some(fast) = &self.fast {
            match fast.open(&self.root, dir, Open::Folder)? {
                Beneath::Opened(file) => {
                    return Ok(Some(Folder::Below(Dir::from_std_file(file))));
                }
                Beneath::Link | Beneath::Missing | Beneath::BelowNonDir => return Ok(None),
                Beneath::Walk => {}
            }
        }
        let Reached::Folder(parent) = self.reach(dir)? else {
            return Ok(None);
        };
        match parent.open_dir_nofollow(name) {
            Ok(folder) => Ok(Some(Folder::Below(folder))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => match look(&parent, name, dir)? {
                Probe::Dir => Err(FsError::io("open folder", dir, e)),
                _ => Ok(None),
            },
        }
    }

    /// The regular file at `path`, opened for reading, with its size: [`Error::NotFound`]
    /// for anything else, [`Error::SymbolicLink`] for a path through a link.
    pub(crate) fn open_file(&self, path: &MemoryPath) -> Result<(std::fs::File, u64)> {
        self.open_file_with(path, &sys::read_options())
    }

    /// [`open_file`](Self::open_file), the portable path opening with `options` (which must
    /// not follow a link); Linux's fast path always opens for reading.
    pub(crate) fn open_file_with(
        &self,
        path: &MemoryPath,
        options: &cap_std::fs::OpenOptions,
    ) -> Result<(std::fs::File, u64)> {
        let not_found = || Error::NotFound { path: path.clone() };
        let Some(name) = path.name() else {
            return Err(not_found());
        };
        if self.unrepresentable(path).is_some() {
            return Err(not_found());
        }
        let regular = |file: std::fs::File| {
            let meta = file.metadata().map_err(|e| FsError::io("stat", path, e))?;
            if meta.is_file() {
                Ok((file, meta.len()))
            } else {
                Err(not_found())
            }
        };
        if let Some(fast) = &self.fast {
            match fast.open(&self.root, path, Open::Read)? {
                Beneath::Opened(file) => return regular(file),
                Beneath::Link => return Err(Error::SymbolicLink { path: path.clone() }),
                Beneath::Missing | Beneath::BelowNonDir => return Err(not_found()),
                Beneath::Walk => {}
            }
        }
        let folder = match self.reach(path)? {
            Reached::Folder(folder) => folder,
            Reached::Stopped(Probe::Link) => {
                return Err(Error::SymbolicLink { path: path.clone() });
            }
            Reached::Stopped(_) => return Err(not_found()),
        };
        // Looked at first, so that a FIFO or device is never opened (on Windows a read cannot
        // be made non-blocking); the open refuses a link swapped in since.
        match look(&folder, name, path)? {
            Probe::File(_) => {}
            Probe::Link => return Err(Error::SymbolicLink { path: path.clone() }),
            _ => return Err(not_found()),
        }
        match folder.open_with(name, options) {
            Ok(file) => regular(file.into_std()),
            Err(e) => match look(&folder, name, path)? {
                Probe::Link => Err(Error::SymbolicLink { path: path.clone() }),
                Probe::File(_) => Err(FsError::io("open", path, e).into()),
                _ => Err(not_found()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_reads_trust_the_size_but_not_blindly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"hello world").unwrap();
        let open = || std::fs::File::open(&path).unwrap();
        assert_eq!(read_whole(&mut open(), 11).unwrap(), b"hello world");
        // Shrunk since the size was taken: what is there.
        assert_eq!(read_whole(&mut open(), 64).unwrap(), b"hello world");
        // Grown from empty since: everything.
        assert_eq!(read_whole(&mut open(), 0).unwrap(), b"hello world");
    }
}
