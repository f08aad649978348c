//! Folders: made for a write or a rename, removed when their last file goes, synced so that
//! the names a change made survive a power loss.

use std::io;
use std::path::Path;

use memory_core::options::SyncMode;
use memory_core::{Error, MemoryPath, Result};

use crate::error::FsError;
use crate::layout::{DIR_MODE, is_not_found, rel};
use crate::resolve::Probe;
use crate::store::Store;
use crate::sys;

impl Store {
    /// Creates the missing ancestors of `path` (private: mode 0700 on Unix), returning those
    /// it created, outermost first. `Ok(None)` means a folder vanished meanwhile: start over.
    pub(crate) fn make_parents(&self, path: &MemoryPath) -> Result<Option<Vec<MemoryPath>>> {
        let mut created = Vec::new();
        let builder = sys::private_dir_builder();
        for ancestor in path.ancestors() {
            let r = rel(&ancestor)?;
            let failed = match self.root.create_dir_with(&r, &builder) {
                Ok(()) => {
                    // Explicitly, if the umask took bits off the mode given at creation.
                    if self.chmod_after_create {
                        sys::set_mode(&self.root, &r, DIR_MODE)
                            .map_err(|e| FsError::io("chmod folder", &ancestor, e))?;
                    }
                    created.push(ancestor);
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    match self.probe(&ancestor)? {
                        Probe::Dir => continue,
                        Probe::File(_) => Err(Error::ParentIsFile {
                            path: path.clone(),
                            parent: ancestor,
                        }),
                        Probe::Link => Err(Error::SymbolicLink { path: path.clone() }),
                        Probe::Missing => Ok(None),
                        Probe::Special | Probe::BelowFile(_) | Probe::BelowSpecial(_) => {
                            Err(FsError::NotRegular { path: ancestor }.into())
                        }
                    }
                }
                Err(e) if is_not_found(&e) => Ok(None),
                Err(e) => Err(FsError::io("create folder", &ancestor, e).into()),
            };
            self.prune_created(&created);
            return failed;
        }
        Ok(Some(created))
    }

    /// Removes folders this call created, innermost first, if they are still empty.
    pub(crate) fn prune_created(&self, created: &[MemoryPath]) {
        for dir in created.iter().rev() {
            if let Ok(r) = rel(dir)
                && self.root.remove_dir(r).is_err()
            {
                break;
            }
        }
    }

    /// Removes the folders above `path` that are left empty, up to (not including) the root.
    /// Returns how many it removed.
    pub(crate) fn prune_empty_parents(&self, path: &MemoryPath) -> usize {
        let mut removed = 0;
        for dir in path.ancestors().iter().rev() {
            let Ok(r) = rel(dir) else { break };
            if self.root.remove_dir(r).is_err() {
                break;
            }
            removed += 1;
        }
        removed
    }

    /// Removes a real folder and everything in it, never following a link (links are
    /// removed, not their targets).
    pub(crate) fn remove_tree(&self, dir: &MemoryPath, r: &Path) -> Result<(), FsError> {
        let entries = match self.root.read_dir(r) {
            Ok(entries) => entries,
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) => return Err(FsError::io("list", dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| FsError::io("list", dir, e))?;
            let child = r.join(entry.file_name());
            let is_dir = entry
                .file_type()
                .map(|t| t.is_dir())
                .map_err(|e| FsError::io("stat", dir, e))?;
            let result = if is_dir {
                self.remove_tree(dir, &child).map_err(|e| match e {
                    FsError::Io { source, .. } => source,
                    other => io::Error::other(other.to_string()),
                })
            } else {
                self.root.remove_file(&child)
            };
            match result {
                Ok(()) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(FsError::io("delete", dir, e)),
            }
        }
        match self.root.remove_dir(r) {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(FsError::io("delete folder", dir, e)),
        }
    }

    /// Syncs a folder (with [`SyncMode::Full`] only), so that the names a change made in it
    /// survive a power loss.
    pub(crate) fn sync_dir(&self, dir: &MemoryPath) -> Result<(), FsError> {
        if self.options.sync != SyncMode::Full {
            return Ok(());
        }
        let failed = |e: io::Error| FsError::io("sync folder", dir, e);
        match self.open_folder(dir)? {
            Some(folder) => sys::sync_dir(&folder).map_err(failed),
            None => Err(failed(io::ErrorKind::NotFound.into())),
        }
    }

    /// The innermost ancestor of `path` that is still a folder (at worst the root).
    pub(crate) fn existing_ancestor(&self, path: &MemoryPath) -> MemoryPath {
        let mut current = path.parent();
        while let Some(dir) = current {
            if dir.is_root() || matches!(self.probe(&dir), Ok(Probe::Dir)) {
                return dir;
            }
            current = dir.parent();
        }
        MemoryPath::root()
    }
}
