//! [`SqliteStorage`]: the [`Storage`] implementation.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use memory_core::{
    Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode,
};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::error::{JobError, SqliteError};
use crate::options::SqliteOptions;
use crate::pool::{Ctx, Pool};
use crate::schema;

/// A memory store in one SQLite database file.
///
/// Each file of the store is one row of the `files` table, keyed by its normalized path.
/// Directories are implicit (a path with rows below it). Every [`Storage`] call is one SQL
/// transaction run on a blocking thread (`tokio::task::spawn_blocking`) with a connection from a
/// small pool; writes take SQLite's write lock up front (`BEGIN IMMEDIATE`), so any number of
/// tasks and processes can share one database file. Versions are numbers from a counter stored
/// in the database, so a version is never repeated, not even for a path deleted and created
/// again.
///
/// Cloning is cheap: clones share the connection pool.
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
    pool: Pool,
    /// Writers of this process queue here instead of polling SQLite's lock; other processes
    /// are held off by `BEGIN IMMEDIATE` and the busy timeout.
    write_lock: Mutex<()>,
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
    conn.pragma_update(None, "synchronous", options.sync_mode.pragma_value())
        .map_err(|e| ctx.err(e))?;
    Ok(())
}

fn open_file(path: &Path, ctx: &Ctx, options: &SqliteOptions) -> Result<Connection, SqliteError> {
    // No SQLITE_OPEN_URI: a file name is a file name, never `file:...?mode=...` options.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|source| SqliteError::Open {
        path: path.to_owned(),
        source,
    })?;
    configure(&conn, ctx, options)?;
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

    /// [`open`](Self::open) with explicit options.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let ctx = Ctx {
            path: path.clone(),
            busy_timeout: options.busy_timeout,
        };
        let mut first = open_file(&path, &ctx, &options)?;
        schema::prepare(&mut first, &ctx, true)?;
        let connect = {
            let (path, ctx, options) = (path.clone(), ctx.clone(), options.clone());
            Box::new(move || open_file(&path, &ctx, &options))
        };
        let pool = Pool::new(first, options.max_connections, connect);
        tracing::debug!(db = %path.display(), "opened the SQLite memory store");
        Ok(Self::from_parts(ctx, Some(path), options, pool))
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
        let connect_ctx = ctx.clone();
        // The one connection is the database: the pool never opens another.
        let pool = Pool::new(
            conn,
            1,
            Box::new(move || {
                Err(SqliteError::Open {
                    path: connect_ctx.path.clone(),
                    source: rusqlite::Error::InvalidPath(connect_ctx.path.clone()),
                })
            }),
        );
        Ok(Self::from_parts(ctx, None, options, pool))
    }

    fn from_parts(ctx: Ctx, file: Option<PathBuf>, options: SqliteOptions, pool: Pool) -> Self {
        SqliteStorage {
            inner: Arc::new(Inner {
                ctx,
                file,
                options,
                pool,
                write_lock: Mutex::new(()),
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

    /// Runs `job` on a blocking thread with a pooled connection. `write` jobs queue behind the
    /// other writers of this process first.
    async fn run<T, F>(&self, write: bool, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &Ctx) -> Result<T, JobError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let joined = tokio::task::spawn_blocking(move || {
            let _writer = write.then(|| inner.write_lock.lock().unwrap_or_else(|p| p.into_inner()));
            let mut conn = inner.pool.get()?;
            job(&mut conn, &inner.ctx)
        })
        .await;
        match joined {
            // Backend failures are logged once, by the caller that decides what the model sees.
            Ok(result) => result.map_err(Into::into),
            Err(join) => Err(SqliteError::Task(join).into()),
        }
    }
}

/// Bounds of the rows strictly below `dir`: `dir/ < path < dir0` (`'0'` follows `'/'`), a range
/// on the primary-key index that matches whole segments and needs no `LIKE` escaping.
fn below(dir: &MemoryPath) -> (String, String) {
    (format!("{dir}/"), format!("{dir}0"))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn to_time(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn stored_path(ctx: &Ctx, raw: String) -> Result<MemoryPath, SqliteError> {
    MemoryPath::parse(&raw).map_err(|_| SqliteError::BadRow {
        path: ctx.path.clone(),
        stored: raw,
    })
}

/// The version, size and modification time of the file at `path`, if there is one.
fn file_row(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
) -> Result<Option<(i64, u64, i64)>, SqliteError> {
    conn.prepare_cached("SELECT version, size, modified_ms FROM files WHERE path = ?1")
        .and_then(|mut stmt| {
            stmt.query_row([path.as_str()], |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64, r.get(2)?))
            })
            .optional()
        })
        .map_err(|e| ctx.err(e))
}

/// Whether some file lies below `dir` (always true for the root's purposes elsewhere).
fn has_below(conn: &Connection, ctx: &Ctx, dir: &MemoryPath) -> Result<bool, SqliteError> {
    let (lo, hi) = below(dir);
    conn.prepare_cached("SELECT 1 FROM files WHERE path > ?1 AND path < ?2 LIMIT 1")
        .and_then(|mut stmt| stmt.exists(params![lo, hi]))
        .map_err(|e| ctx.err(e))
}

fn is_dir(conn: &Connection, ctx: &Ctx, path: &MemoryPath) -> Result<bool, SqliteError> {
    Ok(path.is_root() || has_below(conn, ctx, path)?)
}

/// The outermost ancestor of `path` that is a file.
fn file_ancestor(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
) -> Result<Option<MemoryPath>, SqliteError> {
    let mut stmt = conn
        .prepare_cached("SELECT 1 FROM files WHERE path = ?1")
        .map_err(|e| ctx.err(e))?;
    for ancestor in path.ancestors() {
        if stmt.exists([ancestor.as_str()]).map_err(|e| ctx.err(e))? {
            return Ok(Some(ancestor));
        }
    }
    Ok(None)
}

/// Takes the next number from the store-wide version counter.
fn next_version(conn: &Connection, ctx: &Ctx) -> Result<i64, SqliteError> {
    conn.prepare_cached(
        "UPDATE counters SET value = value + 1 WHERE name = 'version' RETURNING value",
    )
    .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
    .map_err(|e| ctx.err(e))
}

fn immediate<'c>(
    conn: &'c mut Connection,
    ctx: &Ctx,
) -> Result<rusqlite::Transaction<'c>, SqliteError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| ctx.err(e))
}

fn blob(value: ValueRef<'_>) -> rusqlite::Result<Vec<u8>> {
    match value {
        ValueRef::Blob(b) | ValueRef::Text(b) => Ok(b.to_vec()),
        other => Err(rusqlite::Error::InvalidColumnType(
            0,
            "contents".to_owned(),
            other.data_type(),
        )),
    }
}

#[async_trait]
impl Storage for SqliteStorage {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let path = path.clone();
        self.run(false, move |conn, ctx| {
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
        self.run(false, move |conn, ctx| {
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
        let path = path.clone();
        self.run(true, move |conn, ctx| {
            let tx = immediate(conn, ctx)?;
            if let Some(parent) = file_ancestor(&tx, ctx, &path)? {
                return Err(Error::ParentIsFile { path, parent }.into());
            }
            if is_dir(&tx, ctx, &path)? {
                return Err(match mode {
                    WriteMode::Update(_) => Error::NotFound { path },
                    _ => Error::AlreadyExists { path },
                }
                .into());
            }
            let version = next_version(&tx, ctx)?;
            let now = now_ms();
            let size = i64::try_from(contents.len()).unwrap_or(i64::MAX);
            let changed = match &mode {
                // Create-if-absent in one statement.
                WriteMode::Create => tx
                    .prepare_cached(
                        "INSERT INTO files (path, contents, size, version, created_ms, modified_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?5)
                         ON CONFLICT (path) DO NOTHING",
                    )
                    .and_then(|mut s| s.execute(params![path.as_str(), contents, size, version, now])),
                WriteMode::Overwrite => tx
                    .prepare_cached(
                        "INSERT INTO files (path, contents, size, version, created_ms, modified_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?5)
                         ON CONFLICT (path) DO UPDATE SET contents = excluded.contents,
                             size = excluded.size, version = excluded.version,
                             modified_ms = excluded.modified_ms",
                    )
                    .and_then(|mut s| s.execute(params![path.as_str(), contents, size, version, now])),
                // Compare-and-swap on the version, in one statement. A token this backend never
                // issued matches no row.
                WriteMode::Update(expected) => match expected.as_str().parse::<i64>() {
                    Ok(expected) => tx
                        .prepare_cached(
                            "UPDATE files SET contents = ?2, size = ?3, version = ?4, modified_ms = ?5
                             WHERE path = ?1 AND version = ?6",
                        )
                        .and_then(|mut s| {
                            s.execute(params![path.as_str(), contents, size, version, now, expected])
                        }),
                    Err(_) => Ok(0),
                },
            }
            .map_err(|e| ctx.err(e))?;
            if changed == 0 {
                let exists = file_row(&tx, ctx, &path)?.is_some();
                return Err(match (mode, exists) {
                    (WriteMode::Update(_), false) => Error::NotFound { path },
                    (WriteMode::Update(_), true) => Error::Conflict { path },
                    _ => Error::AlreadyExists { path },
                }
                .into());
            }
            tx.commit().map_err(|e| ctx.err(e))?;
            Ok(Version::new(version.to_string()))
        })
        .await
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let path = path.clone();
        self.run(true, move |conn, ctx| {
            let tx = immediate(conn, ctx)?;
            let removed = tx
                .prepare_cached("DELETE FROM files WHERE path = ?1")
                .and_then(|mut s| s.execute([path.as_str()]))
                .map_err(|e| ctx.err(e))?;
            if removed == 0 {
                let (lo, hi) = below(&path);
                let removed = tx
                    .prepare_cached("DELETE FROM files WHERE path > ?1 AND path < ?2")
                    .and_then(|mut s| s.execute(params![lo, hi]))
                    .map_err(|e| ctx.err(e))?;
                if removed == 0 && !path.is_root() {
                    return Err(Error::NotFound { path }.into());
                }
            }
            tx.commit().map_err(|e| ctx.err(e))?;
            Ok(())
        })
        .await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let dir = dir.clone();
        self.run(false, move |conn, ctx| {
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
            for (raw, size, modified) in rows {
                out.push(FileMeta {
                    path: stored_path(ctx, raw)?,
                    size: size.max(0) as u64,
                    modified: Some(to_time(modified)),
                });
            }
            Ok(out)
        })
        .await
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let (from, to) = (from.clone(), to.clone());
        self.run(true, move |conn, ctx| {
            let tx = immediate(conn, ctx)?;
            let sources: Vec<MemoryPath> = if file_row(&tx, ctx, &from)?.is_some() {
                vec![from.clone()]
            } else {
                let (lo, hi) = below(&from);
                let raw = tx
                    .prepare_cached(
                        "SELECT path FROM files WHERE path > ?1 AND path < ?2 ORDER BY path",
                    )
                    .and_then(|mut stmt| {
                        stmt.query_map(params![lo, hi], |r| r.get::<_, String>(0))?
                            .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| ctx.err(e))?;
                raw.into_iter()
                    .map(|p| stored_path(ctx, p))
                    .collect::<Result<_, _>>()?
            };
            if sources.is_empty() {
                return Err(Error::NotFound { path: from }.into());
            }
            if to.starts_with(&from) {
                return Err(Error::RenameIntoItself { from, to }.into());
            }
            if file_row(&tx, ctx, &to)?.is_some() || is_dir(&tx, ctx, &to)? {
                return Err(Error::AlreadyExists { path: to }.into());
            }
            if let Some(parent) = file_ancestor(&tx, ctx, &to)? {
                return Err(Error::ParentIsFile { path: to, parent }.into());
            }
            // Moved files get a new version: a compare-and-swap prepared before the move must
            // not succeed on a file that has since been moved away and back.
            let version = next_version(&tx, ctx)?;
            {
                let mut update = tx
                    .prepare_cached("UPDATE files SET path = ?2, version = ?3 WHERE path = ?1")
                    .map_err(|e| ctx.err(e))?;
                for source in &sources {
                    let target =
                        source
                            .rebase(&from, &to)
                            .ok_or_else(|| SqliteError::RenameTooLong {
                                source_path: source.to_string(),
                                to: to.to_string(),
                            })?;
                    update
                        .execute(params![source.as_str(), target.as_str(), version])
                        .map_err(|e| ctx.err(e))?;
                }
            }
            tx.commit().map_err(|e| ctx.err(e))?;
            Ok(())
        })
        .await
    }
}
