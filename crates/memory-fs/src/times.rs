//! `set_modified`: a file's modification time set without changing its content, for
//! `memory copy` and `memory import`, which keep each file's age.

use std::time::SystemTime;

use memory_core::{MemoryPath, Result};

use crate::error::FsError;
use crate::store::Store;
use crate::sys;

impl Store {
    /// Sets the modification (and access) time of the regular file at `path`, opened as a
    /// read opens it (never through a link), under the store lock so that no write replaces
    /// the file between the open and the change.
    pub(crate) fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        self.refuse_if_read_only(path)?;
        let _locked = self.lock()?;
        let (file, _) = self.open_file_with(path, &sys::times_options())?;
        let times = std::fs::FileTimes::new()
            .set_accessed(modified)
            .set_modified(modified);
        file.set_times(times)
            .map_err(|e| FsError::io("set the modification time of", path, e))?;
        Ok(true)
    }
}
