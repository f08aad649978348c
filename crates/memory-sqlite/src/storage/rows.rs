//! The row-level steps the [`Storage`](memory_core::Storage) methods are made of: the range
//! below a folder, a file's row, the checks of a create, the version counter, an insert.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memory_core::{Error, MemoryPath};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{JobError, SqliteError};
use crate::pool::Ctx;
use crate::search::index_words;

/// Bounds of the rows strictly below `dir`: `dir/ < path < dir0` (`'0'` follows `'/'`), a range
/// on the primary-key index that matches whole segments and needs no `LIKE` escaping.
pub(crate) fn below(dir: &MemoryPath) -> (String, String) {
    (format!("{dir}/"), format!("{dir}0"))
}

pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

pub(super) fn to_time(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// The memory path a row's key names, or `None` for a foreign row: a key that is not a
/// memory path in its normal form (this crate only ever writes normal forms).
pub(crate) fn memory_path(raw: &str) -> Option<MemoryPath> {
    MemoryPath::parse(raw)
        .ok()
        .filter(|path| path.as_str() == raw)
}

/// The version, size and modification time of the file at `path`, if there is one.
pub(super) fn file_row(
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

pub(super) fn is_dir(conn: &Connection, ctx: &Ctx, path: &MemoryPath) -> Result<bool, SqliteError> {
    Ok(path.is_root() || has_below(conn, ctx, path)?)
}

/// The outermost ancestor of `path` that is a file.
pub(super) fn file_ancestor(
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
pub(super) fn next_version(conn: &Connection, ctx: &Ctx) -> Result<i64, SqliteError> {
    conn.prepare_cached(
        "UPDATE counters SET value = value + 1 WHERE name = 'version' RETURNING value",
    )
    .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
    .map_err(|e| ctx.err(e))
}

pub(crate) fn blob(value: ValueRef<'_>) -> rusqlite::Result<Vec<u8>> {
    match value {
        ValueRef::Blob(b) | ValueRef::Text(b) => Ok(b.to_vec()),
        other => Err(rusqlite::Error::InvalidColumnType(
            0,
            "contents".to_owned(),
            other.data_type(),
        )),
    }
}

/// The checks before a create: an ancestor that is a file, something at the path.
pub(super) fn check_create(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
) -> Result<(), JobError> {
    if let Some(parent) = file_ancestor(conn, ctx, path)? {
        return Err(Error::ParentIsFile {
            path: path.clone(),
            parent,
        }
        .into());
    }
    if file_row(conn, ctx, path)?.is_some() || is_dir(conn, ctx, path)? {
        return Err(Error::AlreadyExists { path: path.clone() }.into());
    }
    Ok(())
}

/// Files in the store: the rows below `/memories/` (foreign rows included), as the schema's
/// triggers keep them counted (schema version 3): one row read, whatever the store's size.
pub(super) fn count_files(conn: &Connection, ctx: &Ctx) -> Result<usize, SqliteError> {
    conn.prepare_cached("SELECT value FROM counters WHERE name = 'files'")
        .and_then(|mut stmt| stmt.query_row([], |r| r.get::<_, i64>(0)))
        .map(|n| usize::try_from(n).unwrap_or(0))
        .map_err(|e| ctx.err(e))
}

/// Inserts a new file (the path known to be free) as history's revision `revision` (`None`:
/// no revision describes it) and returns its version; with `index`, puts its words in the
/// search table too (see [`index_words`]).
pub(super) fn insert(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
    contents: &[u8],
    index: bool,
    revision: Option<i64>,
) -> Result<i64, SqliteError> {
    let version = next_version(conn, ctx)?;
    let size = i64::try_from(contents.len()).unwrap_or(i64::MAX);
    let rowid: i64 = conn
        .prepare_cached(
            "INSERT INTO files (path, contents, size, version, created_ms, modified_ms, revision)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6) RETURNING rowid",
        )
        .and_then(|mut s| {
            s.query_row(
                params![path.as_str(), contents, size, version, now_ms(), revision],
                |r| r.get(0),
            )
        })
        .map_err(|e| ctx.err(e))?;
    if index {
        index_words(conn, ctx, rowid, contents)?;
    }
    Ok(version)
}
