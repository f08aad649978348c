//! [`SqlitePersistence`]: the embedded default [`Persistence`], one SQLite file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Result, SqliteError};
use crate::persist::{Persistence, Tx};

mod tx;
use tx::SqliteTx;

/// `PRAGMA application_id` of a memory-store database: `"MMVS"` in ASCII.
pub const APPLICATION_ID: i32 = 0x4D4D_5653;

/// `MIGRATIONS[i]` takes schema version `i` to `i + 1`. Never edit a shipped migration.
const MIGRATIONS: &[&str] = &[
    // 1: stores, memories (unique path per store, byte order) and versions.
    "CREATE TABLE stores (
         id          TEXT    NOT NULL PRIMARY KEY,
         name        TEXT    NOT NULL,
         description TEXT    NOT NULL,
         metadata    TEXT    NOT NULL,
         created_at  INTEGER NOT NULL,
         updated_at  INTEGER NOT NULL,
         archived_at INTEGER
     );
     CREATE INDEX stores_by_created ON stores (created_at, id);
     CREATE TABLE memories (
         store_id           TEXT    NOT NULL,
         id                 TEXT    NOT NULL,
         path               TEXT    NOT NULL COLLATE BINARY,
         content            TEXT    NOT NULL,
         content_sha256     TEXT    NOT NULL,
         content_size_bytes INTEGER NOT NULL,
         memory_version_id  TEXT    NOT NULL,
         created_at         INTEGER NOT NULL,
         updated_at         INTEGER NOT NULL,
         PRIMARY KEY (store_id, id),
         UNIQUE (store_id, path)
     );
     CREATE TABLE versions (
         store_id           TEXT    NOT NULL,
         id                 TEXT    NOT NULL,
         memory_id          TEXT    NOT NULL,
         operation          TEXT    NOT NULL,
         created_at         INTEGER NOT NULL,
         created_by_type    TEXT,
         created_by_id      TEXT,
         path               TEXT,
         content            TEXT,
         content_sha256     TEXT,
         content_size_bytes INTEGER,
         redacted_at        INTEGER,
         redacted_by_type   TEXT,
         redacted_by_id     TEXT,
         PRIMARY KEY (store_id, id)
     );
     CREATE INDEX versions_by_created ON versions (store_id, created_at, id);
     CREATE INDEX versions_by_memory ON versions (store_id, memory_id, created_at, id);",
    // 2: the API key that sent a session's write (and redaction), beside the session.
    "ALTER TABLE versions ADD COLUMN created_by_key_id TEXT;
     ALTER TABLE versions ADD COLUMN redacted_by_key_id TEXT;",
    // 3: the workspace a store belongs to ('' for the default workspace, where every store
    // made before workspaces were kept apart stays).
    "ALTER TABLE stores ADD COLUMN workspace_id TEXT NOT NULL DEFAULT '';
     CREATE INDEX stores_by_workspace ON stores (workspace_id, created_at, id);",
];

/// The schema version (`PRAGMA user_version`) this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Memory stores in one SQLite database file (WAL mode; writes take the lock up front with
/// `BEGIN IMMEDIATE`, so several handles and processes can share the file).
///
/// Opening checks the file first: a database of another application, a file that is not
/// SQLite or a schema newer than this build is refused and left untouched.
pub struct SqlitePersistence {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
    freed: Condvar,
    /// Connections that exist (idle or lent).
    open: Mutex<usize>,
    max: usize,
    in_memory: bool,
    /// Opened by [`SqlitePersistence::open_read_only`]: every connection is read-only.
    read_only: bool,
    write_lock: Mutex<()>,
}

impl fmt::Debug for SqlitePersistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlitePersistence")
            .field("path", &self.path)
            .field("max_connections", &self.max)
            .finish_non_exhaustive()
    }
}

/// `sqlite:PATH`.
impl fmt::Display for SqlitePersistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sqlite:{}", self.path.display())
    }
}

impl From<SqlitePersistence> for crate::persist::AnyPersistence {
    fn from(p: SqlitePersistence) -> Self {
        crate::persist::AnyPersistence::new(p)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SqlitePersistence {
    /// Opens (creating if needed) the database at `path`. Blocking: call it before the async
    /// work starts or through `spawn_blocking`.
    ///
    /// A new database file is created readable and writable by its owner only (0600 on
    /// Unix, whatever the umask); SQLite gives its `-wal` and `-shm` files the same mode.
    /// Several processes may open the same new file at once: creating the schema is one
    /// transaction that each of them either runs or finds done.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        create_private(&path)?;
        let mut first = Self::connect(&path, false)?;
        prepare(&mut first, &path, true)?;
        Ok(Self::from_first(path, first, 4, false))
    }

    /// Opens the existing database at `path` so that nothing on disk changes: no file is
    /// created, no table created or migrated (a database at another schema version is
    /// refused), and every connection is read-only. While no `-wal` file exists (no process
    /// has the database open, every commit is in the main file) the file is read as immutable,
    /// because a read-only connection to a WAL database would otherwise create `-wal` and
    /// `-shm` files and leave them behind. Blocking, as [`open`](Self::open). Writes through
    /// an engine over it fail; put a read-only policy in front to refuse them in words.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let first = connect_read_only(&path)?;
        check_current(&first, &path)?;
        let mut persistence = Self::from_first(path, first, 4, false);
        persistence.read_only = true;
        Ok(persistence)
    }

    /// A private in-memory database, gone when dropped. For tests.
    pub fn open_in_memory() -> Result<Self> {
        let path = PathBuf::from(":memory:");
        let mut first = Self::connect(&path, true)?;
        prepare(&mut first, &path, false)?;
        Ok(Self::from_first(path, first, 1, true))
    }

    fn from_first(path: PathBuf, first: Connection, max: usize, in_memory: bool) -> Self {
        SqlitePersistence {
            path,
            pool: Mutex::new(vec![first]),
            freed: Condvar::new(),
            open: Mutex::new(1),
            max,
            in_memory,
            read_only: false,
            write_lock: Mutex::new(()),
        }
    }

    /// The database file (`:memory:` for an in-memory database).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn connect(path: &Path, in_memory: bool) -> Result<Connection, SqliteError> {
        let open_err = |source| SqliteError::Open {
            path: path.display().to_string(),
            source,
        };
        let conn = if in_memory {
            Connection::open_in_memory().map_err(open_err)?
        } else {
            memory_sqlite_conn::open_read_write(path, memory_sqlite_conn::Links::Follow)
                .map_err(open_err)?
        };
        let ctx = Ctx(path);
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(|e| ctx.err(e))?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| ctx.err(e))?;
        Ok(conn)
    }

    fn take(&self) -> Result<Connection, SqliteError> {
        let mut idle = lock(&self.pool);
        loop {
            if let Some(conn) = idle.pop() {
                return Ok(conn);
            }
            {
                let mut open = lock(&self.open);
                if *open < self.max && !self.in_memory {
                    *open += 1;
                    drop(open);
                    drop(idle);
                    let conn = if self.read_only {
                        connect_read_only(&self.path)
                    } else {
                        Self::connect(&self.path, false)
                    };
                    return conn.inspect_err(|_| {
                        *lock(&self.open) -= 1;
                        self.freed.notify_one();
                    });
                }
            }
            idle = self.freed.wait(idle).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn give_back(&self, conn: Connection) {
        lock(&self.pool).push(conn);
        self.freed.notify_one();
    }

    fn run<T, F>(&self, write: bool, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        let _writer = write.then(|| lock(&self.write_lock));
        let mut conn = self.take()?;
        let result = (|| {
            let ctx = Ctx(&self.path);
            let behavior = if write {
                TransactionBehavior::Immediate
            } else {
                TransactionBehavior::Deferred
            };
            let tx = conn
                .transaction_with_behavior(behavior)
                .map_err(|e| ctx.err(e))?;
            let mut rows = SqliteTx { tx: &tx, ctx };
            let value = job(&mut rows)?;
            if write {
                tx.commit().map_err(|e| ctx.err(e))?;
            }
            // A read transaction is rolled back (it changed nothing) when `tx` drops.
            Ok(value)
        })();
        self.give_back(conn);
        result
    }
}

impl Persistence for SqlitePersistence {
    fn read<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        self.run(false, job)
    }

    fn write<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        self.run(true, job)
    }
}

#[derive(Clone, Copy)]
struct Ctx<'a>(&'a Path);

impl Ctx<'_> {
    fn err(self, source: rusqlite::Error) -> SqliteError {
        use rusqlite::ErrorCode;
        let busy = matches!(
            source.sqlite_error_code(),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        );
        SqliteError::Sqlite {
            path: self.0.display().to_string(),
            busy,
            source,
        }
    }

    fn bad(self, what: impl Into<String>) -> SqliteError {
        SqliteError::BadRow {
            path: self.0.display().to_string(),
            what: what.into(),
        }
    }
}

/// Creates `path` as an empty file only its owner can read and write, unless something is
/// there already ([`memory_sqlite_conn::create_private`]).
fn create_private(path: &Path) -> Result<(), SqliteError> {
    memory_sqlite_conn::create_private(path).map_err(|source| SqliteError::Create {
        path: path.display().to_string(),
        source,
    })
}

/// [`prepare_once`], tried again while another handle holds the file: opening a new file from
/// many processes at once, one of them switching it to WAL or creating the schema can make the
/// others' first statements answer "database is locked" before the busy timeout applies (a
/// journal-mode change and a read that must upgrade do not wait). Bounded: 10 s in all.
/// A read-only connection to `path` (see [`SqlitePersistence::open_read_only`]): immutable
/// while no `-wal` file exists beside it ([`memory_sqlite_conn::open_read_only`]).
fn connect_read_only(path: &Path) -> Result<Connection, SqliteError> {
    let conn = memory_sqlite_conn::open_read_only(path).map_err(|source| SqliteError::Open {
        path: path.display().to_string(),
        source,
    })?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(|e| Ctx(path).err(e))?;
    Ok(conn)
}

/// Refuses, without changing anything, a database that is not memory-store's at exactly this
/// build's schema version (a read-only open cannot migrate it).
fn check_current(conn: &Connection, path: &Path) -> Result<(), SqliteError> {
    match identify(conn, path)? {
        SCHEMA_VERSION => Ok(()),
        found => Err(SqliteError::NeedsMigration {
            path: path.display().to_string(),
            found,
            known: SCHEMA_VERSION,
        }),
    }
}

/// What the database at `path` holds: memory-store's schema version (0 for an empty
/// database), or a refusal for another application's file or a schema newer than this build.
fn identify(conn: &Connection, path: &Path) -> Result<i64, SqliteError> {
    let ctx = Ctx(path);
    let app: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    let foreign = |why: String| SqliteError::Foreign {
        path: path.display().to_string(),
        why,
    };
    if app == APPLICATION_ID {
        if version > SCHEMA_VERSION {
            return Err(SqliteError::TooNew {
                path: path.display().to_string(),
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        return Ok(version);
    }
    if app != 0 {
        return Err(foreign(format!("application_id {app:#010x}")));
    }
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| ctx.err(e))?;
    if tables > 0 || version != 0 {
        return Err(foreign("it holds tables of another application".into()));
    }
    Ok(0)
}

fn prepare(conn: &mut Connection, path: &Path, wal: bool) -> Result<(), SqliteError> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut pause = Duration::from_millis(2);
    loop {
        match prepare_once(conn, path, wal) {
            Err(SqliteError::Sqlite { busy: true, .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            done => return done,
        }
    }
}

fn prepare_once(conn: &mut Connection, path: &Path, wal: bool) -> Result<(), SqliteError> {
    let ctx = Ctx(path);
    // One snapshot: read outside a transaction, the three checks could straddle another
    // process's schema creation and see half of it (a file "of another application").
    let current = {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(|e| ctx.err(e))?;
        let current = identify(&tx, path)?;
        tx.commit().map_err(|e| ctx.err(e))?;
        current
    };
    if wal {
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
            .map_err(|e| ctx.err(e))?;
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| ctx.err(e))?;
    let from = identify(&tx, path)?;
    for sql in MIGRATIONS.iter().skip(from as usize) {
        tx.execute_batch(sql).map_err(|e| ctx.err(e))?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(|e| ctx.err(e))?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(|e| ctx.err(e))?;
    tx.commit().map_err(|e| ctx.err(e))
}
