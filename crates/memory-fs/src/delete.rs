//! `delete`: a file by one unlink in its folder, a folder with everything in it; folders left
//! empty go too, and the folder that changed is synced.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use memory_core::options::SyncMode;
use memory_core::{Error, MemoryPath, Result};

use crate::error::FsError;
use crate::layout::{is_not_found, rel};
use crate::resolve::Probe;
use crate::store::Store;
use crate::sys;

impl Store {
    pub(crate) fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(path)?;
        let _locked = self.lock()?;
        let doomed = self.before_delete(path)?;
        let result = self.delete_locked(path);
        self.after_delete(doomed);
        if result.is_err()
            && !matches!(
                result,
                Err(Error::NotFound { .. } | Error::SymbolicLink { .. })
            )
        {
            // A delete that failed part-way may have removed some files.
            if let Err(e) = self.recount() {
                tracing::warn!(error = %e, "memory-fs: cannot count the files");
                self.count_stale.store(true, Ordering::Relaxed);
            }
        }
        result
    }

    fn delete_locked(&self, path: &MemoryPath) -> Result<()> {
        if path.is_root() {
            return self.delete_everything();
        }
        if self.unrepresentable(path).is_some() {
            // Windows would find another file under the name it shortens this one to.
            return Err(Error::NotFound { path: path.clone() });
        }
        if self.delete_file_in_folder(path)? {
            return Ok(());
        }
        let r = rel(path)?;
        match self.probe_unlinked(path)? {
            Probe::File(_) => match self.root.remove_file(&r) {
                Ok(()) => self.add_to_count(0, 1),
                Err(e) if is_not_found(&e) => {
                    return Err(Error::NotFound { path: path.clone() });
                }
                Err(e) => return Err(FsError::io("delete", path, e).into()),
            },
            Probe::Dir => {
                let mut files = 0usize;
                self.walk(path, false, &mut |_, _| {
                    files += 1;
                    true
                })?;
                if files == 0 {
                    return Err(Error::NotFound { path: path.clone() });
                }
                self.remove_tree(path, &r)?;
                self.add_to_count(0, files);
            }
            _ => return Err(Error::NotFound { path: path.clone() }),
        }
        self.prune_empty_parents(path);
        self.sync_dir(&self.existing_ancestor(path))?;
        Ok(())
    }

    /// Deletes everything in `memories/` (the folder itself stays).
    fn delete_everything(&self) -> Result<()> {
        let root = MemoryPath::root();
        let entries = self
            .root
            .entries()
            .map_err(|e| FsError::io("list", &root, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| FsError::io("list", &root, e))?;
            let name = PathBuf::from(entry.file_name());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                self.remove_tree(&root, &name)?;
            } else {
                match self.root.remove_file(&name) {
                    Err(e) if !is_not_found(&e) => {
                        return Err(FsError::io("delete", &root, e).into());
                    }
                    _ => {}
                }
            }
        }
        self.store_count(0);
        self.sync_dir(&root)?;
        Ok(())
    }

    /// Deletes `path` if it is a regular file, through one handle on its folder: a look at
    /// the name, the unlink, and the sync of that same folder. `Ok(false)` when it is
    /// anything else: the caller probes the path and tells why.
    fn delete_file_in_folder(&self, path: &MemoryPath) -> Result<bool> {
        let (Some(name), Some(parent)) = (path.name(), path.parent()) else {
            return Ok(false);
        };
        let Some(folder) = self.open_folder(&parent)? else {
            return Ok(false);
        };
        match folder.symlink_metadata(name) {
            Ok(meta) if meta.is_file() => {}
            _ => return Ok(false),
        }
        match folder.remove_file(name) {
            Ok(()) => {}
            Err(e) if is_not_found(&e) => return Err(Error::NotFound { path: path.clone() }),
            Err(e) => return Err(FsError::io("delete", path, e).into()),
        }
        self.add_to_count(0, 1);
        if self.prune_empty_parents(path) == 0 {
            // The folder stays: sync it through the handle already open.
            if self.options.sync == SyncMode::Full {
                sys::sync_dir(&folder).map_err(|e| FsError::io("sync folder", &parent, e))?;
            }
        } else {
            drop(folder);
            self.sync_dir(&self.existing_ancestor(path))?;
        }
        Ok(true)
    }
}
