//! The store's history (memory-core's [`history`](memory_core::history)): the table
//! `history`, written by the same statement or transaction as each change
//! ([`HistorySql`]), and the four history methods of [`Storage`](memory_core::Storage).

use std::sync::Arc;
use std::time::SystemTime;

use deadpool_postgres::GenericClient;
use memory_core::history::{
    Change, FileHistory, HistoryOptions, Redaction, Revision, newest_first, sha256_hex,
};
use memory_core::{Error, MemoryPath, Result, Version};
use tokio_postgres::Row;

use super::history_sql::HistorySql;
use super::words::tsvector;
use super::{PostgresStorage, below, size_of};
use crate::error::{self, BadRow, backend};

/// How often a change that lost a race to another writer of the same file is tried again on
/// a fresh snapshot before the store gives up with a retryable error.
const RACE_TRIES: usize = 1_000;

/// How long a redaction waits for the snapshots taken before it to end before it vacuums.
const SNAPSHOT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The store's history options and the statements they give.
pub(super) struct History {
    pub(super) options: HistoryOptions,
    pub(super) sql: HistorySql,
}

impl History {
    pub(super) fn new(schema: &str, options: HistoryOptions) -> Arc<Self> {
        Arc::new(History {
            sql: HistorySql::new(schema, &options),
            options,
        })
    }
}

/// What a version-checked change of one existing row did.
pub(super) enum Outcome {
    /// It happened; the file's new version (none for a deletion).
    Done(Option<i64>),
    /// The row changed between the statement's snapshot and its lock: run it again.
    Raced,
    /// There was no row.
    Absent,
}

fn lost_the_race(path: &MemoryPath) -> Error {
    Error::retryable(
        error::BACKEND,
        format!("{path} kept changing under {RACE_TRIES} attempts to change it; try again"),
    )
}

impl PostgresStorage {
    /// This store with its history kept as `options` say ([`HistoryOptions::off`] for none),
    /// instead of the store options it was opened with (`history`, `history_days`,
    /// `history_max`, `history_session`). Clones made before keep their options.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use memory_core::history::HistoryOptions;
    /// use memory_core::options::StoreOptions;
    /// use memory_postgres::PostgresStorage;
    ///
    /// let store = PostgresStorage::from_url("postgres://memory@db.local/memory", StoreOptions::new())
    ///     .await?
    ///     .with_history(HistoryOptions::default().with_max_per_file(10).with_session("sess_1"));
    /// assert_eq!(store.history_options().max_per_file, Some(10));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_history(mut self, options: HistoryOptions) -> Self {
        self.history = History::new(&self.inner.settings.schema, options);
        self
    }

    /// How this store keeps history.
    pub fn history_options(&self) -> &HistoryOptions {
        &self.history.options
    }

    /// Whether changes are recorded.
    pub(super) fn recording(&self) -> bool {
        self.history.options.enabled
    }

    fn check_history_on(&self) -> Result<()> {
        if self.recording() {
            Ok(())
        } else {
            Err(Error::HistoryOff)
        }
    }

    fn session(&self) -> Option<&str> {
        self.history.options.session.as_deref()
    }

    /// The compare-and-swap edit, with its revision: the new version, or `None` when the file
    /// is not at `expected` (or is not there).
    pub(super) async fn compare_and_swap_recorded<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
        contents: &[u8],
        expected: i64,
    ) -> Result<Option<i64>> {
        let stmt = client
            .prepare_cached(&self.history.sql.compare_and_swap)
            .await
            .map_err(backend)?;
        let row = client
            .query_opt(
                &stmt,
                &[
                    &self.root_param(),
                    &path.as_str(),
                    &contents,
                    &size_of(contents),
                    &expected,
                    &tsvector(contents),
                    &sha256_hex(contents),
                    &self.session(),
                ],
            )
            .await
            .map_err(backend)?;
        Ok(row.map(|row| row.get(0)))
    }

    /// Replaces the existing file at `path`, recorded as `change`, trying again while other
    /// writers change it: its new version, or `None` when there is no file.
    pub(super) async fn replace_recorded<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
        contents: &[u8],
        change: Change,
    ) -> Result<Option<i64>> {
        for _ in 0..RACE_TRIES {
            match self.replace_once(client, path, contents, change).await? {
                Outcome::Done(v) => return Ok(v),
                Outcome::Raced => tokio::task::yield_now().await,
                Outcome::Absent => return Ok(None),
            }
        }
        Err(lost_the_race(path))
    }

    async fn replace_once<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
        contents: &[u8],
        change: Change,
    ) -> Result<Outcome> {
        let stmt = client
            .prepare_cached(&self.history.sql.replace)
            .await
            .map_err(backend)?;
        let row = client
            .query_one(
                &stmt,
                &[
                    &self.root_param(),
                    &path.as_str(),
                    &contents,
                    &size_of(contents),
                    &tsvector(contents),
                    &sha256_hex(contents),
                    &change.as_str(),
                    &self.session(),
                ],
            )
            .await
            .map_err(backend)?;
        let (new, existed): (Option<i64>, bool) = (row.get(0), row.get(1));
        Ok(match (new, existed) {
            (Some(v), _) => Outcome::Done(Some(v)),
            (None, true) => Outcome::Raced,
            (None, false) => Outcome::Absent,
        })
    }

    /// Under the root's lock (`tx`), after the path checks: creates the file (or, with
    /// `overwrite`, replaces it if it is there), recorded as `restored` or as a creation or an
    /// edit. `None`: the file exists and `overwrite` is off.
    pub(super) async fn create_or_replace_recorded<C: GenericClient>(
        &self,
        tx: &C,
        path: &MemoryPath,
        contents: &[u8],
        overwrite: bool,
        restored: bool,
    ) -> Result<Option<i64>> {
        let stmt = tx
            .prepare_cached(&self.history.sql.create)
            .await
            .map_err(backend)?;
        let created = if restored {
            Change::Restored
        } else {
            Change::Created
        };
        let modified = if restored {
            Change::Restored
        } else {
            Change::Modified
        };
        for _ in 0..RACE_TRIES {
            let row = tx
                .query_opt(
                    &stmt,
                    &[
                        &self.root_param(),
                        &path.as_str(),
                        &contents,
                        &size_of(contents),
                        &tsvector(contents),
                        &sha256_hex(contents),
                        &created.as_str(),
                        &self.session(),
                    ],
                )
                .await
                .map_err(backend)?;
            if let Some(row) = row {
                return Ok(Some(row.get(0)));
            }
            if !overwrite {
                return Ok(None);
            }
            // The file is there; an edit may race this replace, a delete may remove it first
            // (then the create runs again: nothing else creates under the root's lock).
            if let Outcome::Done(v) = self.replace_once(tx, path, contents, modified).await? {
                return Ok(v);
            }
        }
        Err(lost_the_race(path))
    }

    /// Deletes the file at `path` with its revision: whether there was one.
    pub(super) async fn delete_file_recorded<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
    ) -> Result<bool> {
        let stmt = client
            .prepare_cached(&self.history.sql.delete_file)
            .await
            .map_err(backend)?;
        for _ in 0..RACE_TRIES {
            let row = client
                .query_one(
                    &stmt,
                    &[&self.root_param(), &path.as_str(), &self.session()],
                )
                .await
                .map_err(backend)?;
            let (deleted, existed): (bool, bool) = (row.get(0), row.get(1));
            match (deleted, existed) {
                (true, _) => return Ok(true),
                (false, true) => tokio::task::yield_now().await,
                (false, false) => return Ok(false),
            }
        }
        Err(lost_the_race(path))
    }

    /// Deletes every file below `dir` in one transaction, a revision each: how many there
    /// were. The files' rows are locked first, so no edit races the deletes; each is the
    /// statement of a file's delete, whose history reads go by the path's key.
    pub(super) async fn delete_below_recorded(
        &self,
        client: &mut deadpool_postgres::Object,
        dir: &MemoryPath,
    ) -> Result<u64> {
        let (lo, hi) = below(dir);
        let tx = client.transaction().await.map_err(backend)?;
        let stmt = tx
            .prepare_cached(&self.history.sql.files_below)
            .await
            .map_err(backend)?;
        let rows = tx
            .query(&stmt, &[&self.root_param(), &lo, &hi])
            .await
            .map_err(backend)?;
        let delete = tx
            .prepare_cached(&self.history.sql.delete_file)
            .await
            .map_err(backend)?;
        for row in &rows {
            let path: String = row.get(0);
            let deleted: bool = tx
                .query_one(&delete, &[&self.root_param(), &path, &self.session()])
                .await
                .map_err(backend)?
                .get(0);
            if !deleted {
                // Cannot happen with the rows locked; roll back rather than delete part.
                return Err(Error::retryable(
                    error::BACKEND,
                    format!("{path} changed while {dir} was deleted; rolled back"),
                ));
            }
        }
        tx.commit().await.map_err(backend)?;
        Ok(rows.len() as u64)
    }

    /// In a rename's transaction, before the files move (their rows locked): each source's
    /// newest revision keeps the content, which is a past revision's once the move adds one.
    pub(super) async fn keep_before_move<C: GenericClient>(
        &self,
        tx: &C,
        sources: &[String],
    ) -> Result<()> {
        let stmt = tx
            .prepare_cached(&self.history.sql.keep_before_move)
            .await
            .map_err(backend)?;
        for source in sources {
            tx.execute(&stmt, &[&self.root_param(), source])
                .await
                .map_err(backend)?;
        }
        Ok(())
    }

    /// In a rename's transaction, after the files moved: each source's history moves to its
    /// target, renumbered after the target's own, and a `renamed` revision is added. A
    /// statement per file, each reading the history by the path's key.
    pub(super) async fn record_moves<C: GenericClient>(
        &self,
        tx: &C,
        sources: &[String],
        targets: &[String],
    ) -> Result<()> {
        let sql = &self.history.sql;
        let moved = tx
            .prepare_cached(&sql.move_history)
            .await
            .map_err(backend)?;
        let renamed = tx
            .prepare_cached(&sql.record_renamed)
            .await
            .map_err(backend)?;
        for (source, target) in sources.iter().zip(targets) {
            tx.execute(&moved, &[&self.root_param(), source, target])
                .await
                .map_err(backend)?;
            tx.query_one(
                &renamed,
                &[&self.root_param(), target, source, &self.session()],
            )
            .await
            .map_err(backend)?;
        }
        Ok(())
    }

    fn bad_row(&self, stored: String) -> Error {
        Error::backend(
            error::BACKEND,
            BadRow {
                schema: self.inner.settings.schema.clone(),
                root: self.inner.settings.root.clone(),
                stored,
            },
        )
    }

    /// A revision from the columns `number, change, at_path, old_path, time, size, sha256,
    /// session, redacted` starting at `at`.
    fn revision(&self, row: &Row, at: usize) -> Result<Revision> {
        let number: i64 = row.get(at);
        let change: String = row.get(at + 1);
        let change = Change::parse(&change).ok_or_else(|| self.bad_row(change))?;
        let old_path: Option<String> = row.get(at + 3);
        let size: i64 = row.get(at + 5);
        Ok(Revision {
            number: u64::try_from(number).unwrap_or(0),
            change,
            path: self.stored_path(row.get(at + 2))?,
            old_path: old_path.map(|p| self.stored_path(p)).transpose()?,
            time: row.get::<_, SystemTime>(at + 4),
            size: u64::try_from(size).unwrap_or(0),
            sha256: row.get(at + 6),
            session: row.get(at + 7),
            redacted: row.get(at + 8),
        })
    }

    async fn revisions_of<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
    ) -> Result<Vec<Revision>> {
        let stmt = client
            .prepare_cached(&self.history.sql.of_path)
            .await
            .map_err(backend)?;
        let rows = client
            .query(&stmt, &[&self.root_param(), &path.as_str()])
            .await
            .map_err(backend)?;
        rows.iter().map(|row| self.revision(row, 0)).collect()
    }

    /// [`Storage::history`](memory_core::Storage::history): the path's own revisions, or
    /// those of every file below it.
    pub(super) async fn history_of(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.check_history_on()?;
        let client = self.client().await?;
        let own = self.revisions_of(&client, path).await?;
        if !own.is_empty() {
            return Ok(own);
        }
        let stmt = client
            .prepare_cached(&self.history.sql.below)
            .await
            .map_err(backend)?;
        let (lo, hi) = below(path);
        let rows = client
            .query(&stmt, &[&self.root_param(), &lo, &hi])
            .await
            .map_err(backend)?;
        let mut revisions = rows
            .iter()
            .map(|row| self.revision(row, 1))
            .collect::<Result<Vec<_>>>()?;
        newest_first(&mut revisions);
        Ok(revisions)
    }

    /// [`Storage::read_revision`](memory_core::Storage::read_revision).
    pub(super) async fn revision_content(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.check_history_on()?;
        let missing = || Error::NoRevision {
            path: path.clone(),
            number,
        };
        let n = i64::try_from(number).map_err(|_| missing())?;
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&self.history.sql.read)
            .await
            .map_err(backend)?;
        let row = client
            .query_opt(&stmt, &[&self.root_param(), &path.as_str(), &n])
            .await
            .map_err(backend)?
            .ok_or_else(missing)?;
        let (change, redacted, contents): (String, bool, Option<Vec<u8>>) =
            (row.get(0), row.get(1), row.get(2));
        match contents {
            Some(contents) if !redacted && change != Change::Deleted.as_str() => Ok(contents),
            // A deletion, a redaction, or (only after a change made with `history=off`) a
            // revision whose content was never kept.
            _ => Err(Error::RevisionWithoutContent {
                path: path.clone(),
                number,
                redacted,
            }),
        }
    }

    /// [`Storage::write_restored`](memory_core::Storage::write_restored).
    pub(super) async fn restore_content(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        self.check_history_on()?;
        let missing = || Error::NoRevision {
            path: path.clone(),
            number,
        };
        let n = i64::try_from(number).map_err(|_| missing())?;
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&self.history.sql.exists)
            .await
            .map_err(backend)?;
        let exists: bool = client
            .query_one(&stmt, &[&self.root_param(), &path.as_str(), &n])
            .await
            .map_err(backend)?
            .get(0);
        drop(client);
        if !exists {
            return Err(missing());
        }
        let v = self.write_locked(path, contents, true, None, true).await?;
        Ok(v)
    }

    /// Waits (up to [`SNAPSHOT_WAIT`]) until no other session of the database holds a snapshot
    /// from before transaction `xid` committed: such a snapshot still sees the row versions
    /// that held the redacted bytes, and `VACUUM (FULL)` copies what a snapshot can see. Only
    /// the sessions `pg_stat_activity` shows this user are seen (its own, or all with
    /// `pg_read_all_stats`); a standby's feedback is not.
    async fn wait_for_older_snapshots(
        &self,
        client: &deadpool_postgres::Object,
        xid: i64,
    ) -> Result<()> {
        let started = std::time::Instant::now();
        loop {
            let older: bool = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                     WHERE datname = current_database() AND pid <> pg_backend_pid()
                       AND backend_xmin IS NOT NULL
                       AND age(backend_xmin) >= age(($1 % 4294967296)::text::xid))",
                    &[&xid],
                )
                .await
                .map_err(backend)?
                .get(0);
            if !older {
                return Ok(());
            }
            if started.elapsed() >= SNAPSHOT_WAIT {
                tracing::warn!(
                    store = %self,
                    "a session holds a snapshot from before the redaction: VACUUM (FULL) keeps \
                     the row versions it can see; run VACUUM (FULL) on the history and files \
                     tables again once it has ended"
                );
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// [`Storage::redact_revisions`](memory_core::Storage::redact_revisions): the content,
    /// digest and `redacted` flag in one transaction, then `VACUUM (FULL)` of the history and
    /// files tables, so that no dead row version keeps the bytes in the tables' files.
    pub(super) async fn redact(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.refuse_if_read_only(path)?;
        self.check_history_on()?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let mut file = FileHistory::from_revisions(self.revisions_of(&tx, path).await?);
        let numbers: Vec<i64> = file
            .redact(path, which)?
            .into_iter()
            .filter_map(|n| i64::try_from(n).ok())
            .collect();
        if numbers.is_empty() {
            tx.rollback().await.map_err(backend)?;
            return Ok(0);
        }
        let stmt = tx
            .prepare_cached(&self.history.sql.redact)
            .await
            .map_err(backend)?;
        let redacted = tx
            .execute(&stmt, &[&self.root_param(), &path.as_str(), &numbers])
            .await
            .map_err(backend)?;
        let xid: i64 = tx
            .query_one("SELECT txid_current()", &[])
            .await
            .map_err(backend)?
            .get(0);
        tx.commit().await.map_err(backend)?;
        self.wait_for_older_snapshots(&client, xid).await?;
        // VACUUM runs outside a transaction. A failure here leaves the content unreadable
        // through the store, but its bytes may still be in dead rows: say so.
        client
            .batch_execute(&self.history.sql.vacuum)
            .await
            .map_err(|e| {
                Error::backend(
                    error::BACKEND,
                    format!(
                        "the versions of {path} were redacted, but VACUUM (FULL) of the history \
                         and files tables failed, so their old bytes may remain in the tables' \
                         dead rows until it runs: {e}"
                    ),
                )
            })?;
        Ok(redacted)
    }
}
