//! The table layout, recognising our own databases, and migrations.
//!
//! A memory store is marked with `PRAGMA application_id = APPLICATION_ID` and carries its schema
//! version in `PRAGMA user_version`. Opening a file:
//!
//! - ours and current → used as is;
//! - ours and older → migrated, once, in one `BEGIN IMMEDIATE` transaction (so two processes
//!   opening an old file at the same moment migrate it exactly once);
//! - ours and newer than this build → refused;
//! - an empty database (a new or zero-length file) → initialised;
//! - anything else (another application's id or tables, a file that is not SQLite) → refused,
//!   and left byte for byte as it was.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::SqliteError;
use crate::pool::Ctx;

/// `PRAGMA application_id` of a memory store: `"MMSQ"` in ASCII.
pub(crate) const APPLICATION_ID: i32 = 0x4D4D_5351;

/// The migrations, in order: `MIGRATIONS[i]` takes schema version `i` to `i + 1`.
///
/// Never edit a migration that has shipped; add a new one.
const MIGRATIONS: &[&str] = &[
    // 1: the files table (keyed and ordered by the normalized path, byte order) and the store-wide
    // version counter, so a path deleted and created again never repeats a version.
    "CREATE TABLE files (
         path        TEXT    NOT NULL PRIMARY KEY COLLATE BINARY,
         contents    BLOB    NOT NULL,
         version     INTEGER NOT NULL,
         modified_ms INTEGER NOT NULL
     );
     CREATE TABLE counters (
         name  TEXT    NOT NULL PRIMARY KEY,
         value INTEGER NOT NULL
     );
     INSERT INTO counters (name, value) VALUES ('version', 0);",
    // 2: the size of each file, so listings never touch the content, and its creation time.
    "ALTER TABLE files ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE files ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0;
     UPDATE files SET size = length(CAST(contents AS BLOB)), created_ms = modified_ms;",
    // 3: the number of files below `/memories/`, kept by triggers in the transaction of every
    // insert and delete (of this library's or anyone's), so the file limit is one row read
    // instead of a count over the whole index. A rename moves rows within `/memories/` and
    // leaves it alone.
    "INSERT INTO counters (name, value)
         SELECT 'files', count(*) FROM files WHERE path > '/memories/' AND path < '/memories0';
     CREATE TRIGGER files_count_insert AFTER INSERT ON files
         WHEN NEW.path > '/memories/' AND NEW.path < '/memories0'
         BEGIN UPDATE counters SET value = value + 1 WHERE name = 'files'; END;
     CREATE TRIGGER files_count_delete AFTER DELETE ON files
         WHEN OLD.path > '/memories/' AND OLD.path < '/memories0'
         BEGIN UPDATE counters SET value = value - 1 WHERE name = 'files'; END;
     CREATE TRIGGER files_count_move AFTER UPDATE OF path ON files
         WHEN (OLD.path > '/memories/' AND OLD.path < '/memories0')
             <> (NEW.path > '/memories/' AND NEW.path < '/memories0')
         BEGIN UPDATE counters
             SET value = value + (CASE WHEN NEW.path > '/memories/' AND NEW.path < '/memories0'
                                       THEN 1 ELSE -1 END)
             WHERE name = 'files'; END;",
    // 4: keyword search. `search` holds each file's words as memory-core's tokenizer folds
    // them, one space between words (so FTS5's `ascii` tokenizer splits exactly there), keyed
    // by the file's rowid, which a rename keeps. The library writes a file's words in the
    // transaction of the write; the triggers mark every inserted or rewritten row stale (the
    // library's write clears the mark at once), so a row changed by another program is
    // indexed again before the next search, and a deleted row's words go with it. Files
    // already there start stale.
    "CREATE VIRTUAL TABLE search USING fts5(
         words, tokenize = 'ascii', content = '', contentless_delete = 1
     );
     CREATE TABLE search_stale (id INTEGER NOT NULL PRIMARY KEY);
     INSERT INTO search_stale (id) SELECT rowid FROM files;
     CREATE TRIGGER search_mark_insert AFTER INSERT ON files
         BEGIN INSERT OR IGNORE INTO search_stale (id) VALUES (NEW.rowid); END;
     CREATE TRIGGER search_mark_update AFTER UPDATE OF contents ON files
         BEGIN INSERT OR IGNORE INTO search_stale (id) VALUES (NEW.rowid); END;
     CREATE TRIGGER search_forget AFTER DELETE ON files
         BEGIN
             DELETE FROM search WHERE rowid = OLD.rowid;
             DELETE FROM search_stale WHERE id = OLD.rowid;
         END;",
    // 5: the stale marks never fail a write and mark only a real change. SQLite applies the
    // conflict clause of the statement that fires a trigger to the trigger's statements, so
    // schema 4's `INSERT OR IGNORE` mark failed the library's upsert (overwrite) of a row
    // another program had changed ("UNIQUE constraint failed"); a `NOT EXISTS` never
    // conflicts. A rewrite with the same bytes marks nothing: the row's words are still
    // right, and the library indexes only the rows its write's trigger marked, so such a
    // write skips the search table.
    "DROP TRIGGER search_mark_insert;
     DROP TRIGGER search_mark_update;
     CREATE TRIGGER search_mark_insert AFTER INSERT ON files
         BEGIN INSERT INTO search_stale (id) SELECT NEW.rowid
             WHERE NOT EXISTS (SELECT 1 FROM search_stale WHERE id = NEW.rowid); END;
     CREATE TRIGGER search_mark_update AFTER UPDATE OF contents ON files
         WHEN OLD.contents IS NOT NEW.contents
         BEGIN INSERT INTO search_stale (id) SELECT NEW.rowid
             WHERE NOT EXISTS (SELECT 1 FROM search_stale WHERE id = NEW.rowid); END;",
    // 6: each file's earlier versions (issue 30). `history` holds one row per revision, filed
    // under the path the file has now (`path`, moved by renames) and numbered from 1 per path;
    // `made_at` is the path the change was made at when a rename moved the row since. The
    // newest revision of a live file keeps no `content`: the files row is it, and
    // `files.revision` names it. A change that replaces or removes the row first copies its
    // content into that revision, in the change's transaction. A file whose row no revision
    // describes (written before this schema, with history off, or by another program) has
    // `revision` NULL; its content is kept as a revision of its own when it is next changed.
    // The trigger forgets the revision of a row another program rewrites (the library's own
    // writes always set a new one, or NULL).
    "ALTER TABLE files ADD COLUMN revision INTEGER;
     CREATE TABLE history (
         path     TEXT    NOT NULL COLLATE BINARY,
         number   INTEGER NOT NULL,
         change   TEXT    NOT NULL,
         made_at  TEXT,
         old_path TEXT,
         time_us  INTEGER NOT NULL,
         size     INTEGER NOT NULL,
         sha256   TEXT,
         session  TEXT,
         redacted INTEGER NOT NULL DEFAULT 0,
         content  BLOB,
         UNIQUE (path, number)
     );
     CREATE TRIGGER files_revision_forget AFTER UPDATE OF contents ON files
         WHEN NEW.revision IS OLD.revision AND NEW.revision IS NOT NULL
         BEGIN UPDATE files SET revision = NULL WHERE rowid = NEW.rowid; END;",
];

/// The schema version this build writes.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// What an opened database turned out to be.
enum Identity {
    /// Ours, at this schema version.
    Ours(i64),
    /// An empty database: ours to initialise.
    Empty,
}

fn identify(conn: &Connection, ctx: &Ctx) -> Result<Identity, SqliteError> {
    // The first read of a file that is not SQLite fails here with SQLITE_NOTADB.
    let application_id: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    let user_version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    if application_id == APPLICATION_ID {
        if user_version > SCHEMA_VERSION {
            return Err(SqliteError::TooNew {
                path: ctx.path.clone(),
                found: user_version,
                known: SCHEMA_VERSION,
            });
        }
        return Ok(Identity::Ours(user_version));
    }
    if application_id != 0 {
        return Err(SqliteError::ForeignApplication {
            path: ctx.path.clone(),
            application_id,
        });
    }
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT 5")
        .map_err(|e| ctx.err(e))?;
    let tables = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| ctx.err(e))?;
    if !tables.is_empty() || user_version != 0 {
        return Err(SqliteError::ForeignSchema {
            path: ctx.path.clone(),
            tables: if tables.is_empty() {
                format!("user_version {user_version}")
            } else {
                tables.join(", ")
            },
        });
    }
    Ok(Identity::Empty)
}

/// Checks, changing nothing, that `conn` is a memory store of [`SCHEMA_VERSION`] (a read-only
/// open cannot create or migrate the schema).
pub(crate) fn check_current(conn: &Connection, ctx: &Ctx) -> Result<(), SqliteError> {
    match identify(conn, ctx)? {
        Identity::Ours(v) if v == SCHEMA_VERSION => Ok(()),
        Identity::Ours(v) => Err(SqliteError::NeedsUpgrade {
            path: ctx.path.clone(),
            version: v,
        }),
        Identity::Empty => Err(SqliteError::NeedsUpgrade {
            path: ctx.path.clone(),
            version: 0,
        }),
    }
}

/// Checks that `conn` is a memory store (or empty), switches it to WAL and brings its schema up
/// to [`SCHEMA_VERSION`]. Leaves a foreign or corrupt file untouched.
pub(crate) fn prepare(conn: &mut Connection, ctx: &Ctx, wal: bool) -> Result<(), SqliteError> {
    let current = match identify(conn, ctx)? {
        Identity::Ours(v) => v,
        Identity::Empty => 0,
    };
    if wal {
        // Persistent in the file; cannot run inside a transaction.
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(|e| ctx.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(db = %ctx.path.display(), %mode, "SQLite refused WAL mode; using {mode}");
        }
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    migrate(conn, ctx)
}

fn migrate(conn: &mut Connection, ctx: &Ctx) -> Result<(), SqliteError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| ctx.err(e))?;
    // Look again under the write lock: another process may have migrated in between.
    let from = match identify(&tx, ctx)? {
        Identity::Ours(v) => v,
        Identity::Empty => 0,
    };
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        tx.execute_batch(sql).map_err(|e| ctx.err(e))?;
        tracing::info!(db = %ctx.path.display(), to = index + 1, "migrated the memory store schema");
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(|e| ctx.err(e))?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(|e| ctx.err(e))?;
    tx.commit().map_err(|e| ctx.err(e))
}
