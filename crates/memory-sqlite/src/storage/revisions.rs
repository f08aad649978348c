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

    /// Removes the content of every past revision of every file at or below `dir` (the root:
    /// the whole store's history), keeping their records, with one scrub of the database
    /// (as [`redact_revisions`](memory_core::Storage::redact_revisions) with
    /// [`Redaction::AllPast`] for each file would, scrubbing once instead of once a file).
    /// Returns how many revisions lost their content. The current files are untouched.
    ///
    /// For a store just encrypted in place (`memory rekey --encrypt-plaintext`): with history
    /// on, the plaintext each file held before is a past version until redacted.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use memory_core::{MemoryPath, Storage, WriteMode};
    /// use memory_sqlite::SqliteStorage;
    ///
    /// let store = SqliteStorage::open_in_memory().unwrap();
    /// let path = MemoryPath::parse("/memories/keys.md").unwrap();
    /// store.write(&path, b"sk-secret".to_vec(), WriteMode::Create).await.unwrap();
    /// store.write(&path, b"in the vault".to_vec(), WriteMode::Overwrite).await.unwrap();
    /// assert_eq!(store.redact_all_past(&MemoryPath::root()).await.unwrap(), 1);
    /// assert!(store.read_revision(&path, 1).await.is_err());
    /// # });
    /// ```
    ///
    /// # Errors
    /// [`Error::HistoryOff`], a read-only store's refusal, and those of
    /// [`clear_search_index`](SqliteStorage::clear_search_index) (a retryable one when
    /// another program kept the write-ahead log from being emptied: the redaction stands,
    /// call it again to scrub).
    pub async fn redact_all_past(&self, dir: &MemoryPath) -> Result<u64> {
        self.refuse_if_read_only(dir)?;
        self.history_on()?;
        let dir = dir.clone();
        let in_file = self.inner.file.is_some();
        self.between_writes(move |conn, ctx| {
            scrub(conn, ctx, in_file, |tx, ctx| {
                let mut redacted = 0;
                for path in history::paths_at_or_below(tx, ctx, &dir)? {
                    let mut file = history::file_history(tx, ctx, &path)?;
                    let numbers = file.redact(&path, Redaction::AllPast)?;
                    history::redact(tx, ctx, &path, &numbers)?;
                    redacted += numbers.len() as u64;
                }
                Ok(redacted)
            })
        })
        .await
    }
}
