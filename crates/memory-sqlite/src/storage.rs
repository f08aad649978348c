//! [`SqliteStorage`]: the [`Storage`] implementation.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use memory_core::history::{Change, Redaction, Revision};
use memory_core::search::{SearchHit, SearchQuery};
use memory_core::{
    Capabilities, Entry, Error, FileMeta, Listing, MemoryPath, Result, Storage, StoredFile,
    Version, WriteMode,
};
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{JobError, SqliteError};
use crate::options::{IndexMode, SqliteOptions, synchronous_pragma};
use crate::pool::{Ctx, Pool};
use crate::schema;
use crate::search::{has_stale, index_stale, search_rows};
use crate::writer::{Job, Pending, ReadJob, WriteJob, Writer};

mod change;
mod clear;
mod history;
mod revisions;
mod rows;

use change::Changing;
pub(crate) use rows::{below, blob, memory_path};
use rows::{check_create, count_files, file_row, insert, is_dir, to_time};

/// A memory store in one SQLite database file.
///
/// Each file of the store is one row of the `files` table, keyed by its normalized path.
/// Directories are implicit (a path with rows below it). Every [`Storage`] call is one SQL
/// transaction. Writes go to the store's writer thread, which commits the writes queued at the
/// same moment together (group commit: one flush for many writers, each still told its own
/// result) and takes SQLite's write lock up front (`BEGIN IMMEDIATE`), so any number of tasks
/// and processes can share one database file. Reads run on the calling task when a pooled
/// connection is free (see [`SqliteOptions::inline_reads`]), else on tokio's blocking pool.
/// Versions are numbers from a counter stored in the database, so a version is never
/// repeated, not even for a path deleted and created again.
///
/// Cloning is cheap: clones share the connections and the writer thread.
///
/// `Display` is `Sqlite(<path>)` (or `Sqlite(:memory:)`), for logs.
#[derive(Clone)]
pub struct SqliteStorage {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Ctx,
    file: Option<PathBuf>,
    options: SqliteOptions,
    /// Connections for reads; `None` for an in-memory store, whose one connection is the
    /// writer's.
    pool: Option<Pool>,
    /// The writer thread.
    writer: Writer,
    /// What every change needs besides its arguments (the history options, the index mode).
    changing: Arc<Changing>,
}

impl fmt::Debug for SqliteStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStorage")
            .field("path", &self.inner.ctx.path)
            .field("options", &self.inner.options)
            .field("pool", &self.inner.pool)
            .finish()
    }
}

impl fmt::Display for SqliteStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sqlite({})", self.inner.ctx.path.display())
    }
}

fn configure(conn: &Connection, ctx: &Ctx, options: &SqliteOptions) -> Result<(), SqliteError> {
    conn.busy_timeout(options.busy_timeout)
        .map_err(|e| ctx.err(e))?;
    conn.pragma_update(None, "synchronous", synchronous_pragma(options.sync))
        .map_err(|e| ctx.err(e))?;
    Ok(())
}

/// Creates the database file private to its owner ([`memory_sqlite_conn::create_private`]).
/// A file that could not be created (a missing folder, no permission) is SQLite's open to
/// report, as it always has been; one created but not made private is an error here.
fn create_private(path: &Path) -> Result<(), SqliteError> {
    match memory_sqlite_conn::create_private(path) {
        Err(source) if path.exists() => Err(SqliteError::CreateFile {
            path: path.to_owned(),
            source,
        }),
        _ => Ok(()),
    }
}

fn open_file(path: &Path, ctx: &Ctx, options: &SqliteOptions) -> Result<Connection, SqliteError> {
    create_private(path)?;
    let conn = memory_sqlite_conn::open_read_write(path, memory_sqlite_conn::Links::Follow)
        .map_err(|source| SqliteError::Open {
            path: path.to_owned(),
            source,
        })?;
    configure(&conn, ctx, options)?;
    Ok(conn)
}

/// Opens `path` read-only, changing nothing in its folder (immutable while no `-wal` file
/// exists: [`memory_sqlite_conn::open_read_only`]).
fn open_file_read_only(
    path: &Path,
    ctx: &Ctx,
    options: &SqliteOptions,
) -> Result<Connection, SqliteError> {
    let conn = memory_sqlite_conn::open_read_only(path).map_err(|source| SqliteError::Open {
        path: path.to_owned(),
        source,
    })?;
    conn.busy_timeout(options.busy_timeout)
        .map_err(|e| ctx.err(e))?;
    Ok(conn)
}

impl SqliteStorage {
    /// Opens the memory store in the SQLite file at `path`, creating the file if it does not
    /// exist, with the default [`SqliteOptions`].
    ///
    /// The file is checked before anything is written to it: a database of another
    /// application, a file that is not SQLite (or is corrupt) or a store written by a newer
    /// release of this crate is refused with an error and left untouched. A new or empty file
    /// gets the schema; an older store is migrated, once. The database is switched to WAL mode.
    ///
    /// This blocks (it reads the file, and may wait up to the busy timeout for another process
    /// to release it); inside async code call it through `tokio::task::spawn_blocking` or before
    /// the work starts.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// [`open`](Self::open) with explicit options; with [`SqliteOptions::read_only`], the
    /// file is only read.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let ctx = Ctx {
            path: path.clone(),
            busy_timeout: options.busy_timeout,
        };
        if options.read_only {
            return Self::open_read_only(path, ctx, options);
        }
        let mut first = open_file(&path, &ctx, &options)?;
        schema::prepare(&mut first, &ctx, true)?;
        let writer = Writer::start(
            open_file(&path, &ctx, &options)?,
            ctx.clone(),
            options.index == IndexMode::Batched,
        )?;
        let connect = {
            let (path, ctx, options) = (path.clone(), ctx.clone(), options.clone());
            Box::new(move || open_file(&path, &ctx, &options))
        };
        let pool = Pool::new(first, options.max_connections, connect);
        tracing::debug!(db = %path.display(), "opened the SQLite memory store");
        Ok(Self::from_parts(
            ctx,
            Some(path),
            options,
            Some(pool),
            writer,
        ))
    }

    /// Opens the file read-only: no file created, no schema change, no journal-mode switch,
    /// and (through [`open_file_read_only`]) no `-wal` or `-shm` file.
    fn open_read_only(path: PathBuf, ctx: Ctx, options: SqliteOptions) -> Result<Self> {
        let first = open_file_read_only(&path, &ctx, &options)?;
        schema::check_current(&first, &ctx)?;
        // Never sent a write (every change is refused first); a write would fail read-only.
        let writer = Writer::start(
            open_file_read_only(&path, &ctx, &options)?,
            ctx.clone(),
            false,
        )?;
        let connect = {
            let (path, ctx, options) = (path.clone(), ctx.clone(), options.clone());
            Box::new(move || open_file_read_only(&path, &ctx, &options))
        };
        let pool = Pool::new(first, options.max_connections, connect);
        tracing::debug!(db = %path.display(), "opened the SQLite memory store read-only");
        Ok(Self::from_parts(
            ctx,
            Some(path),
            options,
            Some(pool),
            writer,
        ))
    }

    /// Refuses a change of a store opened read-only.
    fn refuse_if_read_only(&self, path: &MemoryPath) -> Result<()> {
        if self.inner.options.read_only {
            return Err(memory_core::read_only_refusal(&MemoryPath::root(), path));
        }
        Ok(())
    }

    /// A store in a private in-memory database: nothing touches the disk and everything is
    /// gone when the last clone is dropped. For tests and throwaway sessions.
    pub fn open_in_memory() -> Result<Self> {
        let options = SqliteOptions::default().max_connections(1);
        let ctx = Ctx {
            path: PathBuf::from(":memory:"),
            busy_timeout: options.busy_timeout,
        };
        let mut conn = Connection::open_in_memory().map_err(|source| SqliteError::Open {
            path: ctx.path.clone(),
            source,
        })?;
        configure(&conn, &ctx, &options)?;
        schema::prepare(&mut conn, &ctx, false)?;
        // The one connection is the database: the writer thread owns it and runs the reads too.
        let writer = Writer::start(conn, ctx.clone(), options.index == IndexMode::Batched)?;
        Ok(Self::from_parts(ctx, None, options, None, writer))
    }

    fn from_parts(
        ctx: Ctx,
        file: Option<PathBuf>,
        options: SqliteOptions,
        pool: Option<Pool>,
        writer: Writer,
    ) -> Self {
        let changing = Arc::new(Changing {
            history: options.history.clone(),
            index: options.index == IndexMode::Write,
        });
        SqliteStorage {
            inner: Arc::new(Inner {
                ctx,
                file,
                options,
                pool,
                writer,
                changing,
            }),
        }
    }

    /// The database file, or `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.inner.file.as_deref()
    }

    /// The options this store was opened with.
    pub fn options(&self) -> &SqliteOptions {
        &self.inner.options
    }

    fn writer_gone(&self) -> Error {
        SqliteError::WriterGone {
            path: self.inner.ctx.path.clone(),
        }
        .into()
    }

    /// Runs `job` in the writer thread's next transaction (in a savepoint of its own) and
    /// answers once that transaction is committed.
    async fn write_job<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Ctx) -> Result<T, JobError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let pending: WriteJob = Box::new(Pending { job, reply });
        if self.inner.writer.send(Job::Write(pending)).is_err() {
            return Err(self.writer_gone());
        }
        match answer.await {
            // Backend failures are logged once, by the caller that decides what the model sees.
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(self.writer_gone()),
        }
    }

    /// Runs a read: on the calling task when a pooled connection is free and inline reads
    /// are on, else on a blocking thread (an in-memory store: on the writer thread).
    async fn read_job<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &Ctx) -> Result<T, JobError> + Send + 'static,
    {
        let inner = &self.inner;
        let Some(pool) = &inner.pool else {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let read: ReadJob = Box::new(move |conn, ctx| {
                let _ = reply.send(job(conn, ctx));
            });
            if inner.writer.send(Job::Read(read)).is_err() {
                return Err(self.writer_gone());
            }
            return match answer.await {
                Ok(result) => result.map_err(Into::into),
                Err(_) => Err(self.writer_gone()),
            };
        };
        if inner.options.inline_reads
            && let Some(mut conn) = pool.try_idle()
        {
            return job(&mut conn, &inner.ctx).map_err(Into::into);
        }
        let inner = Arc::clone(&self.inner);
        let joined = tokio::task::spawn_blocking(move || {
            let pool = inner.pool.as_ref().expect("a file-backed store has a pool");
            let mut conn = pool.get()?;
            job(&mut conn, &inner.ctx)
        })
        .await;
        match joined {
            Ok(result) => result.map_err(Into::into),
            Err(join) => Err(SqliteError::Task(join).into()),
        }
    }
}

#[async_trait]
impl Storage for SqliteStorage {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let path = path.clone();
        self.read_job(move |conn, ctx| {
            let row = conn
                .prepare_cached("SELECT contents, version FROM files WHERE path = ?1")
                .and_then(|mut stmt| {
                    stmt.query_row([path.as_str()], |r| {
                        Ok((blob(r.get_ref(0)?)?, r.get::<_, i64>(1)?))
                    })
                    .optional()
                })
                .map_err(|e| ctx.err(e))?;
            match row {
                Some((contents, version)) => Ok(StoredFile {
                    contents,
                    version: Version::new(version.to_string()),
                }),
                None => Err(Error::NotFound { path }.into()),
            }
        })
        .await
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let path = path.clone();
        self.read_job(move |conn, ctx| {
            // One read transaction: both lookups see the same snapshot.
            let tx = conn.transaction().map_err(|e| ctx.err(e))?;
            let entry = if let Some((_, size, modified)) = file_row(&tx, ctx, &path)? {
                Some(Entry::File(FileMeta {
                    path,
                    size,
                    modified: Some(to_time(modified)),
                }))
            } else if is_dir(&tx, ctx, &path)? {
                Some(Entry::Directory)
            } else {
                None
            };
            tx.commit().map_err(|e| ctx.err(e))?;
            Ok(entry)
        })
        .await
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        let (path, how) = (path.clone(), Arc::clone(&self.inner.changing));
        self.write_job(move |tx, ctx| change::write(tx, ctx, &how, path, &contents, mode, false))
            .await
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(path)?;
        let (path, how) = (path.clone(), Arc::clone(&self.inner.changing));
        self.write_job(move |tx, ctx| change::delete(tx, ctx, &how, path))
            .await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        Ok(self.listing(dir).await?.entries)
    }

    /// Rows below `/memories/` whose path is not a memory path (a `..`, `.` or empty segment,
    /// a control character...), put there by some other tool, are left out of the listing and
    /// counted (one warning per listing that meets some), so `view`, export and directory
    /// commands keep working; they still count toward the file limit, and a directory rename
    /// or delete takes them along.
    async fn listing(&self, dir: &MemoryPath) -> Result<Listing> {
        let dir = dir.clone();
        self.read_job(move |conn, ctx| {
            let (lo, hi) = below(&dir);
            let rows = conn
                .prepare_cached(
                    "SELECT path, size, modified_ms FROM files
                     WHERE path > ?1 AND path < ?2 ORDER BY path",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(params![lo, hi], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, i64>(2)?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| ctx.err(e))?;
            let mut out = Vec::with_capacity(rows.len());
            let mut skipped = 0u64;
            let mut example = None;
            for (raw, size, modified) in rows {
                match memory_path(&raw) {
                    Some(path) => out.push(FileMeta {
                        path,
                        size: size.max(0) as u64,
                        modified: Some(to_time(modified)),
                    }),
                    None => {
                        skipped += 1;
                        example.get_or_insert(raw);
                    }
                }
            }
            if skipped > 0 {
                tracing::warn!(
                    db = %ctx.path.display(),
                    dir = %dir,
                    skipped,
                    example = ?example.unwrap_or_default(),
                    "skipped rows whose paths are not memory paths (written by another tool?)"
                );
            }
            Ok(Listing {
                entries: out,
                skipped,
            })
        })
        .await
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(from)?;
        let (from, to) = (from.clone(), to.clone());
        let how = Arc::clone(&self.inner.changing);
        self.write_job(move |tx, ctx| change::rename(tx, ctx, &how, from, to))
            .await
    }

    /// One row read: the count the schema's triggers keep (no scan of the store).
    async fn file_count(&self) -> Result<usize> {
        self.read_job(|conn, ctx| Ok(count_files(conn, ctx)?)).await
    }

    /// The checks, the count and the insert in one `BEGIN IMMEDIATE` transaction: exact
    /// across tasks and processes.
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        let (path, how) = (path.clone(), Arc::clone(&self.inner.changing));
        self.write_job(move |tx, ctx| {
            if path.is_root() {
                return Err(Error::AlreadyExists { path }.into());
            }
            check_create(tx, ctx, &path)?;
            if count_files(tx, ctx)? >= max_files {
                return Err(Error::StoreFull { max_files }.into());
            }
            let number = match how.history.enabled {
                true => Some(history::last_number(tx, ctx, path.as_str())? + 1),
                false => None,
            };
            let version = insert(tx, ctx, &path, &contents, how.index, number)?;
            if let Some(number) = number {
                let record =
                    history::Record::of(path.as_str(), number, Change::Created, Some(&contents));
                history::record(tx, ctx, &how.history, record, history::Aging::LookUp)?;
            }
            Ok(Version::new(version.to_string()))
        })
        .await
    }

    /// FTS5 in the same database: first indexes any row another program changed (the
    /// triggers marked it), then finds the candidates in FTS5 and ranks them with
    /// memory-core's `Ranker`, as every store ranks.
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if self.read_job(|conn, ctx| Ok(has_stale(conn, ctx)?)).await? {
            if self.inner.options.read_only {
                // A read-only store cannot index the rows changed behind its back: the scan
                // over its reads answers instead, exact at the cost of reading every file.
                return memory_core::search::scan(self, query).await;
            }
            let indexed = self.write_job(|tx, ctx| Ok(index_stale(tx, ctx)?)).await?;
            tracing::debug!(db = %self.inner.ctx.path.display(), indexed, "indexed rows changed behind the store's back");
        }
        let query = query.clone();
        self.read_job(move |conn, ctx| Ok(search_rows(conn, ctx, &query)?))
            .await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::FULL
    }

    /// One `UPDATE` of the row's `modified_ms` (content and version unchanged).
    async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        self.refuse_if_read_only(path)?;
        let path = path.clone();
        let ms = modified
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        self.write_job(move |tx, ctx| {
            let changed = tx
                .prepare_cached("UPDATE files SET modified_ms = ?2 WHERE path = ?1")
                .and_then(|mut s| s.execute(params![path.as_str(), ms]))
                .map_err(|e| ctx.err(e))?;
            if changed == 0 {
                return Err(Error::NotFound { path }.into());
            }
            Ok(true)
        })
        .await
    }

    /// The path's rows of the `history` table (an index range), newest first; a folder's,
    /// every file's below it.
    async fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.revisions_of(path).await
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.revision_content(path, number).await
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.restore_as(path, number, contents).await
    }

    /// Also scrubs the database (`secure_delete`, `VACUUM`, the search index rebuilt, the
    /// write-ahead log truncated): as long as a `VACUUM`. A retryable error when another
    /// program kept the log from being emptied: the redaction is done, call it again to
    /// scrub.
    /// `AllPast` redacts the revisions at or below `path` (a file's; a folder's files') with
    /// one scrub of the database.
    async fn redact_revisions(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        match which {
            Redaction::AllPast => self.redact_all_past(path).await,
            Redaction::Revision(_) => self.redact_past(path, which).await,
        }
    }
}
