//! `read` and `stat`: a fresh, confined open of the path every time, so a read gives exactly
//! what the path holds at that moment, whatever was written, moved, swapped or mounted since.

use memory_core::{Entry, FileMeta, MemoryPath, Result, StoredFile};

use crate::error::FsError;
use crate::layout::version_of;
use crate::resolve::{Probe, read_whole};
use crate::store::Store;

impl Store {
    pub(crate) fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let (mut file, size) = self.open_file(path)?;
        // Files are only ever replaced by rename, never changed in place, so the open file is
        // one whole version.
        let contents = read_whole(&mut file, size).map_err(|e| FsError::io("read", path, e))?;
        let version = version_of(&contents);
        Ok(StoredFile { contents, version })
    }

    pub(crate) fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        Ok(match self.probe_unlinked(path)? {
            Probe::File(info) => Some(Entry::File(FileMeta {
                path: path.clone(),
                size: info.size,
                modified: info.modified,
            })),
            Probe::Dir if path.is_root() || self.has_file_below(path)? => Some(Entry::Directory),
            _ => None,
        })
    }
}
