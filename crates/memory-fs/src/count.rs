//! The file count, kept in [`COUNT_FILE`](crate::layout::COUNT_FILE) beside `memories/` so that
//! no create lists the store. Every method here runs under the store lock.

use std::sync::atomic::Ordering;

use memory_core::{Error, MemoryPath, Result};

use crate::error::FsError;
use crate::layout::{COUNT_DIGITS, is_legacy_temp_name};
use crate::store::Store;
use crate::sys;

impl Store {
    /// Counts the files by a walk and stores the count. Also logs files named like the
    /// temporary files of earlier versions (which kept them inside `memories/`): they are
    /// ordinary memories now, listed and counted, never deleted by the store, so the operator
    /// may want to look at them.
    pub(crate) fn recount(&self) -> Result<usize, FsError> {
        let mut files = 0usize;
        let mut legacy = 0usize;
        self.walk(&MemoryPath::root(), false, &mut |path, _| {
            files += 1;
            if path.name().is_some_and(is_legacy_temp_name) {
                legacy += 1;
            }
            true
        })?;
        if legacy > 0 {
            tracing::info!(
                base = %self.base.display(),
                files = legacy,
                "memory-fs: files named like the temporary files of earlier versions are in the store; \
                 they are kept and listed as ordinary memories (delete them if a crash left them)"
            );
        }
        self.store_count(files);
        Ok(files)
    }

    /// The stored count, or a walk's if it cannot be read.
    pub(crate) fn count(&self) -> Result<usize, FsError> {
        if !self.count_stale.load(Ordering::Relaxed)
            && let Some(n) = self.read_count()
        {
            return Ok(n);
        }
        self.recount()
    }

    fn read_count(&self) -> Option<usize> {
        let mut buf = [0u8; COUNT_DIGITS + 1];
        sys::read_exact_at(self.count.as_ref()?, &mut buf, 0).ok()?;
        let n = std::str::from_utf8(&buf[..COUNT_DIGITS])
            .ok()?
            .parse()
            .ok()?;
        self.seen_count.store(n, Ordering::Relaxed);
        Some(n)
    }

    pub(crate) fn store_count(&self, files: usize) {
        self.seen_count.store(files, Ordering::Relaxed);
        // A read-only store keeps no count: every count is a walk.
        let Some(count) = &self.count else { return };
        let text = format!("{files:0width$}\n", width = COUNT_DIGITS);
        match sys::write_all_at(count, text.as_bytes(), 0) {
            Ok(()) => self.count_stale.store(false, Ordering::Relaxed),
            Err(e) => {
                // The write it counts is done; the next count in this process walks instead,
                // and every store recounts when it opens.
                tracing::warn!(error = %e, "memory-fs: cannot update the file count");
                self.count_stale.store(true, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn add_to_count(&self, added: usize, removed: usize) {
        match self.count() {
            Ok(n) => self.store_count((n + added).saturating_sub(removed)),
            Err(e) => {
                tracing::warn!(error = %e, "memory-fs: cannot count the files");
                self.count_stale.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Refuses a create in a store that holds `max_files` files. The count is confirmed by a
    /// walk before refusing, so files removed by hand never make a store look full.
    /// Returns the count it checked.
    pub(crate) fn check_room(&self, max_files: usize) -> Result<usize> {
        let mut count = self.count()?;
        if count >= max_files {
            count = self.recount()?;
            if count >= max_files {
                return Err(Error::StoreFull { max_files });
            }
        }
        Ok(count)
    }

    /// The number of files, for [`Storage::file_count`](memory_core::Storage::file_count).
    pub(crate) fn file_count(&self) -> Result<usize> {
        let _locked = self.lock()?;
        Ok(self.count()?)
    }
}
