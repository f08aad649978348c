//! Temporary files: every write fills a new one in the folder of temporary files beside
//! `memories/` and then moves it into place. Each is a fresh file the store creates (never
//! one that was there, never through a link), mode 0600 on Unix, and each is either moved
//! into place or removed before the write returns, so nothing a write replaced or removed is
//! ever kept under a temporary name (history keeps it in its own folder, see `history/`).

use std::io::{self, Write as _};
use std::time::{Duration, SystemTime};

use memory_core::MemoryPath;
use memory_core::options::SyncMode;

use crate::error::FsError;
use crate::layout::{FILE_MODE, is_temp_name, temp_name};
use crate::store::Store;
use crate::sys;

#[cfg(test)]
thread_local! {
    /// Makes the current (blocking) thread fail writing temporary files, for the tests of a
    /// failed write.
    pub(crate) static FAIL_TEMP_WRITES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Store {
    /// Writes and syncs a new temporary file holding `contents` and returns its name in the
    /// folder of temporary files. A failed write removes its file.
    pub(crate) fn write_temp(&self, path: &MemoryPath, contents: &[u8]) -> Result<String, FsError> {
        let temp = temp_name();
        let mut file = self
            .temp
            .open_with(&temp, &sys::new_file_options())
            .map_err(|e| FsError::io("create temporary file for", path, e))?
            .into_std();
        match self.fill_temp(path, &mut file, contents) {
            Ok(()) => Ok(temp),
            Err(e) => {
                drop(file);
                self.remove_temp(&temp);
                Err(e)
            }
        }
    }

    fn fill_temp(
        &self,
        path: &MemoryPath,
        file: &mut std::fs::File,
        contents: &[u8],
    ) -> Result<(), FsError> {
        let failed = |e| FsError::io("write temporary file for", path, e);
        #[cfg(test)]
        if FAIL_TEMP_WRITES.with(std::cell::Cell::get) {
            return Err(failed(io::Error::other("injected test failure")));
        }
        if self.chmod_after_create {
            sys::set_file_mode(file, FILE_MODE).map_err(failed)?;
        }
        file.write_all(contents).map_err(failed)?;
        match self.options.sync {
            SyncMode::Full => file.sync_all(),
            SyncMode::Data => file.sync_data(),
            SyncMode::None => Ok(()),
        }
        .map_err(|e| FsError::io("sync temporary file for", path, e))
    }

    /// Removes the temporary file `name`. A file already gone is fine (another process's open
    /// took it for stale); one that cannot be removed stays behind as a stale temporary file
    /// for a later open to remove.
    pub(crate) fn remove_temp(&self, name: &str) {
        match self.temp.remove_file(name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(error = %e, name, "memory-fs: cannot remove a temporary file"),
        }
    }

    /// Removes temporary files older than the configured age from the folder of temporary
    /// files (never anything in `memories/`); returns how many.
    pub(crate) fn remove_stale_temps(&self) -> usize {
        let Ok(entries) = self.temp.entries() else {
            return 0;
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !entry.file_type().is_ok_and(|t| t.is_file())
                || !name.to_str().is_some_and(is_temp_name)
            {
                continue;
            }
            let age = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| now.duration_since(t.into_std()).ok())
                .unwrap_or(Duration::ZERO);
            if age >= self.options.stale_temp_age && self.temp.remove_file(&name).is_ok() {
                removed += 1;
            }
        }
        removed
    }
}
