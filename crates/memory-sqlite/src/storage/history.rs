//! The `history` table's row-level steps: what a change records, in the change's own
//! transaction, and what the history methods read.
//!
//! The newest revision of a live file holds no content: the `files` row is it, and
//! `files.revision` names it. Before a change replaces, removes or moves that row,
//! [`keep_replaced`] copies its content into that revision (one `UPDATE` copying the blob);
//! the change then adds its own revision ([`record`]: one `INSERT`, then pruning on that
//! path's index entries). A row no revision describes (`files.revision` NULL: written before
//! history existed, with history off, or by another program) is first kept as a revision of
//! its own, so no content a change replaces is lost.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memory_core::history::{Change, FileHistory, HistoryOptions, Revision, newest_first};
use memory_core::{Error, MemoryPath};
use rusqlite::{Connection, OptionalExtension, params};

use super::rows::{below, blob, memory_path};
use crate::error::{JobError, SqliteError};
use crate::pool::Ctx;

/// Microseconds since the Unix epoch, as `history.time_us` holds a revision's time.
pub(super) fn micros(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

fn from_micros(us: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

/// The revision the file at `path` is (`files.revision`): `None` when there is no file,
/// `Some(None)` for a file no revision describes.
pub(super) fn current(
    conn: &Connection,
    ctx: &Ctx,
    path: &str,
) -> Result<Option<(Option<i64>, i64)>, SqliteError> {
    conn.prepare_cached("SELECT revision, version FROM files WHERE path = ?1")
        .and_then(|mut s| {
            s.query_row([path], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(|e| ctx.err(e))
}

/// What a write needs to know of `path` before it changes it, read in one statement: the
/// file's revision and version (`None`: no file), the path's newest revision number (0:
/// none), and the time of its oldest revision (for [`prune`]).
pub(super) struct Before {
    pub(super) file: Option<(Option<i64>, i64)>,
    pub(super) last: i64,
    pub(super) oldest_us: Option<i64>,
}

/// [`Before`] of `path`.
pub(super) fn before(conn: &Connection, ctx: &Ctx, path: &str) -> Result<Before, SqliteError> {
    conn.prepare_cached(
        "SELECT f.revision, f.version,
             (SELECT coalesce(max(number), 0) FROM history WHERE path = ?1),
             (SELECT time_us FROM history WHERE path = ?1 ORDER BY number LIMIT 1)
         FROM (SELECT 1) LEFT JOIN files f ON f.path = ?1",
    )
    .and_then(|mut s| {
        s.query_row([path], |r| {
            let version: Option<i64> = r.get(1)?;
            let file = match version {
                Some(version) => Some((r.get(0)?, version)),
                None => None,
            };
            Ok(Before {
                file,
                last: r.get(2)?,
                oldest_us: r.get(3)?,
            })
        })
    })
    .map_err(|e| ctx.err(e))
}

/// How [`prune`] finds the revisions too old to keep.
#[derive(Clone, Copy)]
pub(super) enum Aging {
    /// The time of the path's oldest revision before the change, as [`before`] read it
    /// (`None`: there was none): the path's rows are scanned only when it is past the cutoff.
    Oldest(Option<i64>),
    /// The same, the oldest revision looked up first.
    LookUp,
    /// Scan every revision of the path: the change may have recorded one older than a later
    /// one (a rename appending moved revisions, the content of a row no revision described
    /// kept at its own time).
    Thorough,
}

/// The newest revision number of `path` (0 when it has none): an index lookup.
pub(super) fn last_number(conn: &Connection, ctx: &Ctx, path: &str) -> Result<i64, SqliteError> {
    conn.prepare_cached("SELECT coalesce(max(number), 0) FROM history WHERE path = ?1")
        .and_then(|mut s| s.query_row([path], |r| r.get(0)))
        .map_err(|e| ctx.err(e))
}

/// Keeps the content of the file at `path` (about to be replaced, deleted or moved) in the
/// history: copied into its revision `revision`, or, when no revision describes the row (or
/// that revision is gone), as a new revision after `last` (`created` for a path with no
/// history, else `modified`, at the row's modification time, with no session). Returns the
/// number of the revision that holds it and the path's newest number (`last` unless a
/// revision was added).
pub(super) fn keep_replaced(
    conn: &Connection,
    ctx: &Ctx,
    path: &str,
    revision: Option<i64>,
    last: i64,
) -> Result<(i64, i64), SqliteError> {
    if let Some(number) = revision {
        let copied = conn
            .prepare_cached(
                "UPDATE history SET content = (SELECT contents FROM files WHERE path = ?1)
                 WHERE path = ?1 AND number = ?2",
            )
            .and_then(|mut s| s.execute(params![path, number]))
            .map_err(|e| ctx.err(e))?;
        if copied == 1 {
            return Ok((number, last));
        }
    }
    let (contents, modified_ms): (Vec<u8>, i64) = conn
        .prepare_cached("SELECT contents, modified_ms FROM files WHERE path = ?1")
        .and_then(|mut s| s.query_row([path], |r| Ok((blob(r.get_ref(0)?)?, r.get(1)?))))
        .map_err(|e| ctx.err(e))?;
    let number = last + 1;
    let change = if last == 0 {
        Change::Created
    } else {
        Change::Modified
    };
    conn.prepare_cached(
        "INSERT INTO history (path, number, change, time_us, size, sha256, content)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut s| {
        s.execute(params![
            path,
            number,
            change.as_str(),
            modified_ms.saturating_mul(1000),
            i64::try_from(contents.len()).unwrap_or(i64::MAX),
            memory_core::history::sha256_hex(&contents),
            contents,
        ])
    })
    .map_err(|e| ctx.err(e))?;
    Ok((number, number))
}

/// The size and digest revision `number` of `path` records.
pub(super) fn described(
    conn: &Connection,
    ctx: &Ctx,
    path: &str,
    number: i64,
) -> Result<(i64, Option<String>), SqliteError> {
    conn.prepare_cached("SELECT size, sha256 FROM history WHERE path = ?1 AND number = ?2")
        .and_then(|mut s| s.query_row(params![path, number], |r| Ok((r.get(0)?, r.get(1)?))))
        .map_err(|e| ctx.err(e))
}

/// Moves the revisions of `from` to `to` (a file a rename moves), renumbered after `to`'s
/// own in their order ([`FileHistory::append_moved`]); each keeps the path it was made at.
/// Returns `to`'s newest number afterwards.
pub(super) fn move_revisions(
    conn: &Connection,
    ctx: &Ctx,
    from: &str,
    to: &str,
) -> Result<i64, SqliteError> {
    let first = last_number(conn, ctx, to)? + 1;
    conn.prepare_cached(
        "UPDATE history SET path = ?2, number = ?3 + moved.position,
             made_at = coalesce(history.made_at, history.path)
         FROM (SELECT rowid AS id, row_number() OVER (ORDER BY number) - 1 AS position
               FROM history WHERE path = ?1) AS moved
         WHERE history.rowid = moved.id",
    )
    .and_then(|mut s| s.execute(params![from, to, first]))
    .map_err(|e| ctx.err(e))?;
    last_number(conn, ctx, to)
}

/// One revision a change adds.
pub(super) struct Record<'a> {
    pub(super) path: &'a str,
    pub(super) number: i64,
    pub(super) change: Change,
    pub(super) old_path: Option<&'a str>,
    pub(super) size: i64,
    pub(super) sha256: Option<String>,
}

impl<'a> Record<'a> {
    /// The revision of a change that left `contents` at `path` (`None`: a deletion).
    pub(super) fn of(path: &'a str, number: i64, change: Change, contents: Option<&[u8]>) -> Self {
        Record {
            path,
            number,
            change,
            old_path: None,
            size: contents.map_or(0, |c| i64::try_from(c.len()).unwrap_or(i64::MAX)),
            sha256: contents.map(memory_core::history::sha256_hex),
        }
    }
}

/// Adds `record` (no content: it is the current file, or a deletion) under `options`'
/// session, then prunes that path as `options` say.
pub(super) fn record(
    conn: &Connection,
    ctx: &Ctx,
    options: &HistoryOptions,
    record: Record<'_>,
    aging: Aging,
) -> Result<(), SqliteError> {
    let now = SystemTime::now();
    conn.prepare_cached(
        "INSERT INTO history (path, number, change, old_path, time_us, size, sha256, session)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .and_then(|mut s| {
        s.execute(params![
            record.path,
            record.number,
            record.change.as_str(),
            record.old_path,
            micros(now),
            record.size,
            record.sha256,
            options.session,
        ])
    })
    .map_err(|e| ctx.err(e))?;
    prune(conn, ctx, options, (record.path, record.number), now, aging)
}

/// Drops the revisions of `path` that `options` no longer keep, as
/// [`FileHistory::prune`] does: beyond `history_max` counted newest first, then those
/// replaced more than `history_days` ago; never `newest` (the revision just recorded, the
/// current file's).
///
/// The count is a range of that path's index entries. For the days, the path's oldest
/// revision is looked at first (`aging`): revisions are recorded in time order, so while the
/// oldest is young enough none is too old, and the path's rows are scanned only when one is
/// to go ([`Aging::Thorough`] for a change that broke the order).
fn prune(
    conn: &Connection,
    ctx: &Ctx,
    options: &HistoryOptions,
    at: (&str, i64),
    now: SystemTime,
    aging: Aging,
) -> Result<(), SqliteError> {
    let (path, newest) = at;
    if let Some(max) = options.max_per_file {
        let beyond: Option<i64> = conn
            .prepare_cached(
                "SELECT number FROM history WHERE path = ?1 ORDER BY number DESC LIMIT 1 OFFSET ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![path, i64::try_from(max).unwrap_or(i64::MAX)], |r| {
                    r.get(0)
                })
                .optional()
            })
            .map_err(|e| ctx.err(e))?;
        if let Some(beyond) = beyond {
            conn.prepare_cached(
                "DELETE FROM history WHERE path = ?1 AND number <= ?2 AND number <> ?3",
            )
            .and_then(|mut s| s.execute(params![path, beyond, newest]))
            .map_err(|e| ctx.err(e))?;
        }
    }
    let Some(cutoff) = options.cutoff(now).map(micros) else {
        return Ok(());
    };
    let oldest = match aging {
        Aging::Thorough => None,
        // No revision before this change: the new one is young.
        Aging::Oldest(oldest) => Some(oldest.unwrap_or(i64::MAX)),
        Aging::LookUp => Some(
            conn.prepare_cached(
                "SELECT time_us FROM history WHERE path = ?1 ORDER BY number LIMIT 1",
            )
            .and_then(|mut s| s.query_row([path], |r| r.get(0)).optional())
            .map_err(|e| ctx.err(e))?
            .unwrap_or(i64::MAX),
        ),
    };
    if oldest.is_some_and(|oldest| oldest >= cutoff) {
        return Ok(());
    }
    // A revision's age counts from when it was replaced: the time of the next one (or its
    // own, where a rename put older revisions after it).
    conn.prepare_cached(
        "DELETE FROM history WHERE path = ?1 AND number <> ?3 AND time_us < ?2 AND \
         (SELECT next.time_us FROM history AS next WHERE next.path = ?1 \
         AND next.number > history.number ORDER BY next.number LIMIT 1) < ?2",
    )
    .and_then(|mut s| s.execute(params![path, cutoff, newest]))
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

const COLUMNS: &str =
    "path, number, change, made_at, old_path, time_us, size, sha256, session, redacted";

/// A revision from a row of [`COLUMNS`]; `None` for a row this crate did not write (a path
/// that is not a memory path, an unknown change).
fn revision(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<Revision>> {
    let path: String = r.get(0)?;
    let made_at: Option<String> = r.get(3)?;
    let old_path: Option<String> = r.get(4)?;
    let change: String = r.get(2)?;
    let (Some(path), Some(change)) = (
        memory_path(made_at.as_deref().unwrap_or(&path)),
        Change::parse(&change),
    ) else {
        return Ok(None);
    };
    Ok(Some(Revision {
        number: u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
        change,
        path,
        old_path: old_path.as_deref().and_then(memory_path),
        time: from_micros(r.get(5)?),
        size: u64::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
        sha256: r.get(7)?,
        session: r.get(8)?,
        redacted: r.get::<_, i64>(9)? != 0,
    }))
}

/// The revisions filed under `path`, oldest first.
pub(super) fn file_history(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
) -> Result<FileHistory, SqliteError> {
    let rows = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM history WHERE path = ?1 ORDER BY number"
        ))
        .and_then(|mut s| {
            s.query_map([path.as_str()], revision)?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| ctx.err(e))?;
    Ok(FileHistory::from_revisions(
        rows.into_iter().flatten().collect(),
    ))
}

/// [`Storage::history`](memory_core::Storage::history): the revisions of the file at `path`,
/// newest first, or, when it has none, those of every file below it.
pub(super) fn revisions(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
) -> Result<Vec<Revision>, SqliteError> {
    let file = file_history(conn, ctx, path)?;
    if !file.is_empty() {
        return Ok(file.newest_first());
    }
    let (lo, hi) = below(path);
    let rows = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM history WHERE path > ?1 AND path < ?2"
        ))
        .and_then(|mut s| {
            s.query_map(params![lo, hi], revision)?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| ctx.err(e))?;
    let mut below: Vec<Revision> = rows.into_iter().flatten().collect();
    newest_first(&mut below);
    Ok(below)
}

/// [`Storage::read_revision`](memory_core::Storage::read_revision): the revision's own
/// content, or the file's when it is the current one.
pub(super) fn read(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
    number: u64,
) -> Result<Vec<u8>, JobError> {
    let row = conn
        .prepare_cached(
            "SELECT h.change, h.redacted,
                 coalesce(h.content, CASE WHEN f.revision = h.number THEN f.contents END)
             FROM history h LEFT JOIN files f ON f.path = h.path
             WHERE h.path = ?1 AND h.number = ?2",
        )
        .and_then(|mut s| {
            s.query_row(
                params![path.as_str(), i64::try_from(number).unwrap_or(i64::MAX)],
                |r| {
                    let content = match r.get_ref(2)? {
                        rusqlite::types::ValueRef::Null => None,
                        value => Some(blob(value)?),
                    };
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? != 0, content))
                },
            )
            .optional()
        })
        .map_err(|e| ctx.err(e))?;
    let Some((change, redacted, content)) = row else {
        return Err(Error::NoRevision {
            path: path.clone(),
            number,
        }
        .into());
    };
    if redacted || change == Change::Deleted.as_str() {
        return Err(Error::RevisionWithoutContent {
            path: path.clone(),
            number,
            redacted,
        }
        .into());
    }
    content.ok_or_else(|| {
        SqliteError::RevisionLost {
            path: ctx.path.clone(),
            file: path.to_string(),
            number,
        }
        .into()
    })
}

/// Whether `path` has revision `number`.
pub(super) fn exists(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
    number: u64,
) -> Result<bool, SqliteError> {
    conn.prepare_cached("SELECT 1 FROM history WHERE path = ?1 AND number = ?2")
        .and_then(|mut s| {
            s.exists(params![
                path.as_str(),
                i64::try_from(number).unwrap_or(i64::MAX)
            ])
        })
        .map_err(|e| ctx.err(e))
}

/// Removes the content and digest of revisions `numbers` of `path`, marking them redacted.
pub(super) fn redact(
    conn: &Connection,
    ctx: &Ctx,
    path: &MemoryPath,
    numbers: &[u64],
) -> Result<(), SqliteError> {
    let mut update = conn
        .prepare_cached(
            "UPDATE history SET content = NULL, sha256 = NULL, redacted = 1
             WHERE path = ?1 AND number = ?2",
        )
        .map_err(|e| ctx.err(e))?;
    for &number in numbers {
        update
            .execute(params![
                path.as_str(),
                i64::try_from(number).unwrap_or(i64::MAX)
            ])
            .map_err(|e| ctx.err(e))?;
    }
    Ok(())
}

/// The paths with history at or below `dir`.
pub(super) fn paths_at_or_below(
    conn: &Connection,
    ctx: &Ctx,
    dir: &MemoryPath,
) -> Result<Vec<MemoryPath>, SqliteError> {
    let (lo, hi) = below(dir);
    let rows = conn
        .prepare_cached(
            "SELECT DISTINCT path FROM history
             WHERE path = ?1 OR (path > ?2 AND path < ?3) ORDER BY path",
        )
        .and_then(|mut s| {
            s.query_map(params![dir.as_str(), lo, hi], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| ctx.err(e))?;
    Ok(rows.iter().filter_map(|raw| memory_path(raw)).collect())
}
