//! [`SqliteStorage::clear_search_index`]: the search index emptied, and the database's files
//! scrubbed of the words it held.

use memory_core::{MemoryPath, Result};
use rusqlite::Connection;

use super::SqliteStorage;
use crate::error::{JobError, SqliteError};
use crate::pool::Ctx;
use crate::writer::{Job, ReadJob};

impl SqliteStorage {
    /// Empties the search index (FTS5's `delete-all`) and scrubs the database's files of
    /// every word it held, and of anything else deleted or overwritten before: the
    /// connection deletes securely (`secure_delete`), the database is rebuilt (`VACUUM`), and
    /// the write-ahead log is checkpointed and truncated to nothing
    /// (`wal_checkpoint(TRUNCATE)`). Every file is marked for indexing again, so a later
    /// search of the store indexes what is then readable as text (nothing, for an encrypted
    /// store's envelopes).
    ///
    /// For a store that has just been encrypted (`memory rekey --encrypt-plaintext`): its
    /// rows then hold envelopes, but the index's pages, the freed pages of the old contents
    /// and the write-ahead log still held the plaintext. Takes as long as a `VACUUM`, which
    /// needs free disk space about the size of the database.
    ///
    /// # Errors
    /// [`Error::Refused`](memory_core::Error::Refused) for a store opened read-only; a
    /// retryable [`Error::Backend`](memory_core::Error::Backend) when another connection kept
    /// the write-ahead log from being emptied (another program with the store open: close it
    /// and call this again); other backend failures.
    pub async fn clear_search_index(&self) -> Result<()> {
        if self.inner.options.read_only {
            let root = MemoryPath::root();
            return Err(memory_core::read_only_refusal(&root, &root));
        }
        let in_file = self.inner.file.is_some();
        self.between_writes(move |conn, ctx| scrub(conn, ctx, in_file, |_, _| Ok(())))
            .await
    }

    /// Runs `job` on the writer's own connection, between its transactions: no other write
    /// of this store is in flight, and `job` may run statements that cannot run inside a
    /// transaction (`VACUUM`).
    pub(super) async fn between_writes<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &Ctx) -> std::result::Result<T, JobError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: ReadJob = Box::new(move |conn, ctx| {
            let _ = reply.send(job(conn, ctx));
        });
        if self.inner.writer.send(Job::Read(job)).is_err() {
            return Err(self.writer_gone());
        }
        match answer.await {
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(self.writer_gone()),
        }
    }
}

/// [`SqliteStorage::clear_search_index`] on `conn`, after `first` (run in the transaction
/// that empties the index; its error undoes both and scrubs nothing); `in_file`: the
/// database is a file (with a write-ahead log to empty).
pub(super) fn scrub<T>(
    conn: &mut Connection,
    ctx: &Ctx,
    in_file: bool,
    first: impl FnOnce(&Connection, &Ctx) -> Result<T, JobError>,
) -> Result<T, JobError> {
    let was: i64 = conn
        .pragma_query_value(None, "secure_delete", |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    conn.pragma_update(None, "secure_delete", 1)
        .map_err(|e| ctx.err(e))?;
    let cleared = clear_and_vacuum(conn, ctx, in_file, first);
    // The writer's later writes need no secure delete: back to what it was.
    let restored = conn
        .pragma_update(None, "secure_delete", was)
        .map_err(|e| ctx.err(e));
    match (cleared, restored) {
        (Ok(value), Ok(())) => Ok(value),
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(e.into()),
    }
}

fn clear_and_vacuum<T>(
    conn: &mut Connection,
    ctx: &Ctx,
    in_file: bool,
    first: impl FnOnce(&Connection, &Ctx) -> Result<T, JobError>,
) -> Result<T, JobError> {
    // Every file marked again for indexing, in the transaction that empties the index, so the
    // index is never wrong; again after VACUUM, which may renumber the files' rowids.
    const MARK_ALL: &str = "DELETE FROM search_stale;
         INSERT INTO search_stale (id) SELECT rowid FROM files;";
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|e| ctx.err(e))?;
    let value = first(&tx, ctx)?;
    tx.execute_batch("INSERT INTO search (search) VALUES ('delete-all');")
        .and_then(|()| tx.execute_batch(MARK_ALL))
        .map_err(|e| ctx.err(e))?;
    tx.commit().map_err(|e| ctx.err(e))?;
    conn.execute_batch("VACUUM").map_err(|e| ctx.err(e))?;
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|e| ctx.err(e))?;
    tx.execute_batch(MARK_ALL).map_err(|e| ctx.err(e))?;
    tx.commit().map_err(|e| ctx.err(e))?;
    if !in_file {
        return Ok(value);
    }
    let busy: i64 = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    if busy != 0 {
        return Err(SqliteError::CheckpointBusy {
            path: ctx.path.clone(),
        }
        .into());
    }
    Ok(value)
}
