//! Listings: walking the regular files below a folder, by folder handles, never following a
//! link. Links, special files and names no [`MemoryPath`] can hold are skipped.

use cap_fs_ext::DirExt as _;
use cap_std::fs::Dir;
use memory_core::{FileMeta, MemoryPath, Result};

use crate::error::FsError;
use crate::layout::{FileInfo, is_not_found};
use crate::resolve::Probe;
use crate::store::Store;
use crate::sys::{Beneath, Open};

/// What a walk calls for each file: its path and (when asked for) its size and time; `false`
/// stops the walk.
pub(crate) type Visit<'a> = dyn FnMut(MemoryPath, Option<FileInfo>) -> bool + 'a;

impl Store {
    /// Visits the regular files below the real folder `dir`, depth first; returns `false` if
    /// `visit` stopped it. With `with_info`, each file comes with its size and modification
    /// time; without, the folder entry's type is enough.
    pub(crate) fn walk(
        &self,
        dir: &MemoryPath,
        with_info: bool,
        visit: &mut Visit<'_>,
    ) -> Result<bool, FsError> {
        if self.unrepresentable(dir).is_some() {
            return Ok(true);
        }
        if let Some(fast) = &self.fast {
            match fast.open(&self.root, dir, Open::Folder)? {
                Beneath::Opened(folder) => return fast.walk(folder, dir, with_info, visit),
                Beneath::Link | Beneath::Missing | Beneath::BelowNonDir => return Ok(true),
                Beneath::Walk => {}
            }
        }
        match self.open_folder(dir)? {
            Some(folder) => walk_portable(&folder, dir, with_info, visit),
            None => Ok(true),
        }
    }

    pub(crate) fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        if !matches!(self.probe_unlinked(dir)?, Probe::Dir) {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        self.walk(dir, true, &mut |path, info| {
            if let Some(info) = info {
                out.push(FileMeta {
                    path,
                    size: info.size,
                    modified: info.modified,
                });
            }
            true
        })?;
        out.sort_unstable_by(|a, b| a.path.as_str().cmp(b.path.as_str()));
        Ok(out)
    }

    /// Whether any regular file lies below the folder `dir`.
    pub(crate) fn has_file_below(&self, dir: &MemoryPath) -> Result<bool, FsError> {
        let mut found = false;
        self.walk(dir, false, &mut |_, _| {
            found = true;
            false
        })?;
        Ok(found)
    }
}

/// The walk every platform has: cap-std's folder entries, each subfolder opened relative to
/// its parent by one name, refusing a link.
fn walk_portable(
    folder: &Dir,
    dir: &MemoryPath,
    with_info: bool,
    visit: &mut Visit<'_>,
) -> Result<bool, FsError> {
    let entries = match folder.entries() {
        Ok(entries) => entries,
        Err(e) if is_not_found(&e) => return Ok(true),
        Err(e) => return Err(FsError::io("list", dir, e)),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            // The folder was removed while it was read: nothing more in it.
            Err(e) if is_not_found(&e) => break,
            Err(e) => return Err(FsError::io("list", dir, e)),
        };
        let name = entry.file_name();
        let Some(child) = name.to_str().and_then(|name| dir.join(name).ok()) else {
            tracing::debug!(dir = %dir, "memory-fs: skipping a name no memory path can hold");
            continue;
        };
        let file_type = match entry.file_type() {
            Ok(file_type) => file_type,
            Err(e) if is_not_found(&e) => continue,
            Err(e) => return Err(FsError::io("stat", &child, e)),
        };
        if file_type.is_dir() {
            let sub = match folder.open_dir_nofollow(&name) {
                Ok(sub) => sub,
                // Gone, or replaced by a link or a file since it was listed.
                Err(e) if is_not_found(&e) => continue,
                Err(e) => match folder.symlink_metadata(&name) {
                    Ok(meta) if meta.is_dir() => return Err(FsError::io("list", &child, e)),
                    _ => continue,
                },
            };
            if !walk_portable(&sub, &child, with_info, visit)? {
                return Ok(false);
            }
        } else if file_type.is_file() {
            let info = if with_info {
                match entry.metadata() {
                    Ok(meta) => Some(FileInfo::from_meta(&meta)),
                    Err(e) if is_not_found(&e) => continue,
                    Err(e) => return Err(FsError::io("stat", &child, e)),
                }
            } else {
                None
            };
            if !visit(child, info) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
