//! The history methods of [`SqliteStorage`]: the log, a revision's content, a restore, and
//! redaction (with the scrub that makes the redacted bytes truly gone).

use std::sync::Arc;

use memory_core::history::{Redaction, Revision};
use memory_core::{Error, MemoryPath, Result, Version, WriteMode};

use super::clear::scrub;
use super::{SqliteStorage, change, history};

impl SqliteStorage {
    /// [`Error::HistoryOff`] for a store opened with `history=off`.
    fn history_on(&self) -> Result<()> {
        if self.inner.options.history.enabled {
            Ok(())
        } else {
            Err(Error::HistoryOff)
        }
    }

    /// [`Storage::history`](memory_core::Storage::history): one read transaction over the
    /// path's rows (an index range), or those below it.
    pub(super) async fn revisions_of(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.history_on()?;
        let path = path.clone();
        self.read_job(move |conn, ctx| {
            let tx = conn.transaction().map_err(|e| ctx.err(e))?;
            let revisions = history::revisions(&tx, ctx, &path)?;
            tx.commit().map_err(|e| ctx.err(e))?;
            Ok(revisions)
        })
        .await
    }

    /// [`Storage::read_revision`](memory_core::Storage::read_revision): one statement.
    pub(super) async fn revision_content(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.history_on()?;
        let path = path.clone();
        self.read_job(move |conn, ctx| history::read(conn, ctx, &path, number))
            .await
    }

    /// [`Storage::write_restored`](memory_core::Storage::write_restored): an overwrite
    /// recorded as `restored`, in one transaction with the check that the revision exists.
    pub(super) async fn restore_as(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        self.history_on()?;
        let (path, how) = (path.clone(), Arc::clone(&self.inner.changing));
        self.write_job(move |tx, ctx| {
            if !history::exists(tx, ctx, &path, number)? {
                return Err(Error::NoRevision { path, number }.into());
            }
            change::write(tx, ctx, &how, path, &contents, WriteMode::Overwrite, true)
        })
        .await
    }

    /// [`Storage::redact_revisions`](memory_core::Storage::redact_revisions): the revisions'
    /// content and digest set to NULL, then the database scrubbed as
    /// [`clear_search_index`](SqliteStorage::clear_search_index) scrubs it (`secure_delete`,
    /// the search index emptied and rebuilt later, `VACUUM`, the write-ahead log checkpointed
    /// and truncated), so that no copy of the bytes stays in the file's pages, its free pages,
    /// the search index or the `-wal` file.
    pub(super) async fn redact_past(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.refuse_if_read_only(path)?;
        self.history_on()?;
        let path = path.clone();
        let in_file = self.inner.file.is_some();
        self.between_writes(move |conn, ctx| {
            if history::file_history(conn, ctx, &path)?.is_empty() {
                return match which {
                    Redaction::Revision(number) => Err(Error::NoRevision { path, number }.into()),
                    Redaction::AllPast => Ok(0),
                };
            }
            scrub(conn, ctx, in_file, |tx, ctx| {
                // Read again in the scrub's write transaction: what is redacted is what is there.
                let mut file = history::file_history(tx, ctx, &path)?;
                let numbers = file.redact(&path, which)?;
                history::redact(tx, ctx, &path, &numbers)?;
                Ok(numbers.len() as u64)
            })
        })
        .await
    }
}
