//! The changes a [`Storage`](memory_core::Storage) call makes, each run inside the writer
//! thread's transaction (in a savepoint of its own), with the revision it records
//! ([`history`](super::history)) in the same step: a change that fails rolls its revision
//! back with it.

use memory_core::history::{Change, HistoryOptions};
use memory_core::{Error, MemoryPath, Version, WriteMode};
use rusqlite::{Connection, OptionalExtension, params};

use super::history::{self, Aging, Record};
use super::rows::{below, file_ancestor, file_row, is_dir, memory_path, next_version, now_ms};
use crate::error::{JobError, SqliteError};
use crate::pool::Ctx;
use crate::search::index_words;

/// What every change needs to know besides its arguments.
#[derive(Clone)]
pub(super) struct Changing {
    /// The store's history options (`enabled` false: nothing recorded).
    pub(super) history: HistoryOptions,
    /// Whether a write indexes its file's words itself ([`IndexMode::Write`](crate::IndexMode::Write)).
    pub(super) index: bool,
}

/// A write of any mode; `restored`: the write of a restore, recorded as `restored`.
pub(super) fn write(
    tx: &Connection,
    ctx: &Ctx,
    how: &Changing,
    path: MemoryPath,
    contents: &[u8],
    mode: WriteMode,
    restored: bool,
) -> Result<Version, JobError> {
    if let Some(parent) = file_ancestor(tx, ctx, &path)? {
        return Err(Error::ParentIsFile { path, parent }.into());
    }
    if is_dir(tx, ctx, &path)? {
        return Err(match mode {
            WriteMode::Update(_) => Error::NotFound { path },
            _ => Error::AlreadyExists { path },
        }
        .into());
    }
    // With history, the outcome is decided first (under the write lock nothing changes in
    // between), so that a write that would fail touches no revision.
    let mut revision = None;
    if how.history.enabled {
        let history::Before {
            file: old,
            last: before,
            oldest_us,
        } = history::before(tx, ctx, path.as_str())?;
        match (&mode, old) {
            (WriteMode::Create, Some(_)) => return Err(Error::AlreadyExists { path }.into()),
            (WriteMode::Update(_), None) => return Err(Error::NotFound { path }.into()),
            (WriteMode::Update(expected), Some((_, version)))
                if expected.as_str().parse::<i64>().ok() != Some(version) =>
            {
                return Err(Error::Conflict { path }.into());
            }
            _ => {}
        }
        let (change, last) = match old {
            Some((kept, _)) => {
                let (_, last) = history::keep_replaced(tx, ctx, path.as_str(), kept, before)?;
                (Change::Modified, last)
            }
            None => (Change::Created, before),
        };
        let change = if restored { Change::Restored } else { change };
        // A row of its own kept at its own time: look at every revision's age.
        let aging = match last == before {
            true => Aging::Oldest(oldest_us),
            false => Aging::Thorough,
        };
        revision = Some((last + 1, change, aging));
    }
    let number = revision.map(|(number, _, _)| number);
    let version = next_version(tx, ctx)?;
    let now = now_ms();
    let size = i64::try_from(contents.len()).unwrap_or(i64::MAX);
    let changed = match &mode {
        // Create-if-absent in one statement.
        WriteMode::Create => tx
            .prepare_cached(
                "INSERT INTO files (path, contents, size, version, created_ms, modified_ms, revision)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
                 ON CONFLICT (path) DO NOTHING RETURNING rowid",
            )
            .and_then(|mut s| {
                s.query_row(
                    params![path.as_str(), contents, size, version, now, number],
                    |r| r.get(0),
                )
                .optional()
            }),
        WriteMode::Overwrite => tx
            .prepare_cached(
                "INSERT INTO files (path, contents, size, version, created_ms, modified_ms, revision)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
                 ON CONFLICT (path) DO UPDATE SET contents = excluded.contents,
                     size = excluded.size, version = excluded.version,
                     modified_ms = excluded.modified_ms, revision = excluded.revision
                 RETURNING rowid",
            )
            .and_then(|mut s| {
                s.query_row(
                    params![path.as_str(), contents, size, version, now, number],
                    |r| r.get(0),
                )
                .optional()
            }),
        // Compare-and-swap on the version, in one statement. A token this backend never
        // issued matches no row.
        WriteMode::Update(expected) => match expected.as_str().parse::<i64>() {
            Ok(expected) => tx
                .prepare_cached(
                    "UPDATE files SET contents = ?2, size = ?3, version = ?4, modified_ms = ?5,
                         revision = ?7
                     WHERE path = ?1 AND version = ?6 RETURNING rowid",
                )
                .and_then(|mut s| {
                    s.query_row(
                        params![path.as_str(), contents, size, version, now, expected, number],
                        |r| r.get(0),
                    )
                    .optional()
                }),
            Err(_) => Ok(None),
        },
    }
    .map_err(|e| ctx.err(e))?;
    let Some(rowid): Option<i64> = changed else {
        let exists = file_row(tx, ctx, &path)?.is_some();
        return Err(match (mode, exists) {
            (WriteMode::Update(_), false) => Error::NotFound { path },
            (WriteMode::Update(_), true) => Error::Conflict { path },
            _ => Error::AlreadyExists { path },
        }
        .into());
    };
    if let Some((number, change, aging)) = revision {
        let record = Record::of(path.as_str(), number, change, Some(contents));
        history::record(tx, ctx, &how.history, record, aging)?;
    }
    if how.index {
        index_words(tx, ctx, rowid, contents)?;
    }
    Ok(Version::new(version.to_string()))
}

/// The `deleted` revision of the file at `raw` (its row still there, about to go), after its
/// content is kept.
fn record_deletion(
    tx: &Connection,
    ctx: &Ctx,
    history: &HistoryOptions,
    raw: &str,
    kept: Option<i64>,
) -> Result<(), SqliteError> {
    let before = history::last_number(tx, ctx, raw)?;
    let (_, last) = history::keep_replaced(tx, ctx, raw, kept, before)?;
    let record = Record::of(raw, last + 1, Change::Deleted, None);
    let aging = match last == before {
        true => Aging::LookUp,
        false => Aging::Thorough,
    };
    history::record(tx, ctx, history, record, aging)
}

/// A delete: of one file, or of every file below a folder.
pub(super) fn delete(
    tx: &Connection,
    ctx: &Ctx,
    how: &Changing,
    path: MemoryPath,
) -> Result<(), JobError> {
    if how.history.enabled {
        if let Some((kept, _)) = history::current(tx, ctx, path.as_str())? {
            record_deletion(tx, ctx, &how.history, path.as_str(), kept)?;
        } else {
            let (lo, hi) = below(&path);
            let files: Vec<(String, Option<i64>)> = tx
                .prepare_cached("SELECT path, revision FROM files WHERE path > ?1 AND path < ?2")
                .and_then(|mut s| {
                    s.query_map(params![lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| ctx.err(e))?;
            // A foreign row (not a memory path) goes without a revision.
            for (raw, kept) in files.iter().filter(|(raw, _)| memory_path(raw).is_some()) {
                record_deletion(tx, ctx, &how.history, raw, *kept)?;
            }
        }
    }
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
    Ok(())
}

/// A rename of a file, or of a folder with every file below it; each file's history moves
/// with it.
pub(super) fn rename(
    tx: &Connection,
    ctx: &Ctx,
    how: &Changing,
    from: MemoryPath,
    to: MemoryPath,
) -> Result<(), JobError> {
    let sources: Vec<(String, Option<i64>)> = match history::current(tx, ctx, from.as_str())? {
        Some((kept, _)) => vec![(from.as_str().to_owned(), kept)],
        None => {
            let (lo, hi) = below(&from);
            tx.prepare_cached(
                "SELECT path, revision FROM files WHERE path > ?1 AND path < ?2 ORDER BY path",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| ctx.err(e))?
        }
    };
    if sources.is_empty() {
        return Err(Error::NotFound { path: from }.into());
    }
    if to.starts_with(&from) {
        return Err(Error::RenameIntoItself { from, to }.into());
    }
    if file_row(tx, ctx, &to)?.is_some() || is_dir(tx, ctx, &to)? {
        return Err(Error::AlreadyExists { path: to }.into());
    }
    if let Some(parent) = file_ancestor(tx, ctx, &to)? {
        return Err(Error::ParentIsFile { path: to, parent }.into());
    }
    // Moved files get a new version: a compare-and-swap prepared before the move must
    // not succeed on a file that has since been moved away and back.
    let version = next_version(tx, ctx)?;
    for (source, kept) in &sources {
        let target = match memory_path(source) {
            Some(source_path) => source_path
                .rebase(&from, &to)
                .ok_or_else(|| SqliteError::RenameTooLong {
                    source_path: source.clone(),
                    to: to.to_string(),
                })?
                .as_str()
                .to_owned(),
            // A foreign row moves with its directory, its name kept as it is, as a
            // folder store's rename takes every entry along (without history).
            None => format!("{to}{}", &source[from.as_str().len()..]),
        };
        let tracked = how.history.enabled && memory_path(source).is_some();
        let revision = if tracked {
            let last = history::last_number(tx, ctx, source)?;
            let (holder, _) = history::keep_replaced(tx, ctx, source, *kept, last)?;
            let (size, sha256) = history::described(tx, ctx, source, holder)?;
            let last = history::move_revisions(tx, ctx, source, &target)?;
            Some((last + 1, size, sha256))
        } else {
            None
        };
        tx.prepare_cached(
            "UPDATE files SET path = ?2, version = ?3, revision = ?4 WHERE path = ?1",
        )
        .and_then(|mut s| {
            s.execute(params![
                source.as_str(),
                target.as_str(),
                version,
                revision.as_ref().map(|r| r.0)
            ])
        })
        .map_err(|e| ctx.err(e))?;
        if let Some((number, size, sha256)) = revision {
            let record = Record {
                path: &target,
                number,
                change: Change::Renamed,
                old_path: Some(source),
                size,
                sha256,
            };
            // The moved revisions may be older than the path's own: look at every one's age.
            history::record(tx, ctx, &how.history, record, Aging::Thorough)?;
        }
    }
    Ok(())
}
