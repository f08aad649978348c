//! The search index: a file's words in the FTS5 table `search`, the rows marked for indexing
//! in `search_stale`, and the query that ranks them (see the crate README's "Search").
//!
//! Every change of a file's contents marks its row (the schema's triggers, for this library's
//! writes and anyone else's); [`index_words`] writes a marked row's words and clears its mark,
//! and [`index_stale`] does so for every marked row. A search asks the table for the files
//! holding any of the query's index terms and ranks them with memory-core's `Ranker`. When that happens is the store's
//! [`IndexMode`](crate::IndexMode): in the write's transaction, on the writer thread in
//! batches, or only before a search.

use memory_core::search::{
    Ranker, SearchHit, SearchQuery, folded_words, is_searchable, searchable_text,
};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, params};

use crate::error::SqliteError;
use crate::pool::Ctx;
use crate::storage::{below, blob, memory_path};

/// Puts the words of the file at `rowid` in the search table, in the caller's transaction,
/// and clears the stale mark its write's trigger set. A row with no mark needs nothing: the
/// triggers mark every new row and every change of contents (schema 5: not a rewrite with
/// the same bytes), and only this function clears a mark, after writing the words; so an
/// unmarked row's words are its contents' already. Content that is not UTF-8 (a binary
/// file, an encrypted store's ciphertext) has no words.
pub(crate) fn index_words(
    conn: &Connection,
    ctx: &Ctx,
    rowid: i64,
    contents: &[u8],
) -> Result<(), SqliteError> {
    let marked = conn
        .prepare_cached("DELETE FROM search_stale WHERE id = ?1")
        .and_then(|mut s| s.execute([rowid]))
        .map_err(|e| ctx.err(e))?;
    if marked == 0 {
        return Ok(());
    }
    match searchable_text(contents) {
        Some(text) => conn
            .prepare_cached("INSERT OR REPLACE INTO search (rowid, words) VALUES (?1, ?2)")
            .and_then(|mut s| s.execute(params![rowid, folded_words(text)])),
        None => conn
            .prepare_cached("DELETE FROM search WHERE rowid = ?1")
            .and_then(|mut s| s.execute([rowid])),
    }
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

/// Whether a row changed by another program awaits indexing.
pub(crate) fn has_stale(conn: &Connection, ctx: &Ctx) -> Result<bool, SqliteError> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM search_stale)")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(|e| ctx.err(e))
}

/// Most marked rows one [`index_marked`] reads at a time, so that indexing a store full of
/// them (one migrated from schema 3, or written by another program) holds a bounded amount
/// of it in memory.
pub(crate) const INDEX_CHUNK: usize = 256;

/// Indexes up to `at_most` marked rows (the lowest rowids first) in the caller's transaction;
/// returns how many it took, so fewer than `at_most` means none is left.
pub(crate) fn index_marked(
    conn: &Connection,
    ctx: &Ctx,
    at_most: usize,
) -> Result<usize, SqliteError> {
    let stale: Vec<(i64, Option<Vec<u8>>)> = conn
        .prepare_cached(
            "SELECT s.id, f.contents FROM search_stale s LEFT JOIN files f ON f.rowid = s.id
             ORDER BY s.id LIMIT ?1",
        )
        .and_then(|mut stmt| {
            stmt.query_map([i64::try_from(at_most).unwrap_or(i64::MAX)], |r| {
                let contents = match r.get_ref(1)? {
                    ValueRef::Null => None,
                    value => Some(blob(value)?),
                };
                Ok((r.get(0)?, contents))
            })?
            .collect()
        })
        .map_err(|e| ctx.err(e))?;
    for (rowid, contents) in &stale {
        match contents {
            Some(contents) => index_words(conn, ctx, *rowid, contents)?,
            None => conn
                .prepare_cached("DELETE FROM search_stale WHERE id = ?1")
                .and_then(|mut s| s.execute([rowid]))
                .map(drop)
                .map_err(|e| ctx.err(e))?,
        }
    }
    Ok(stale.len())
}

/// Indexes every marked row in the caller's transaction, [`INDEX_CHUNK`] at a time.
pub(crate) fn index_stale(conn: &Connection, ctx: &Ctx) -> Result<usize, SqliteError> {
    let mut indexed = 0;
    loop {
        let taken = index_marked(conn, ctx, INDEX_CHUNK)?;
        indexed += taken;
        if taken < INDEX_CHUNK {
            return Ok(indexed);
        }
    }
}

/// Ranks with memory-core's [`Ranker`], as every store does: the files searched are counted
/// from the paths below the query's folder, and the candidates are the files whose FTS5 row
/// holds any of the query's index terms (a superset of the hits), read with their contents.
pub(crate) fn search_rows(
    conn: &Connection,
    ctx: &Ctx,
    query: &SearchQuery,
) -> Result<Vec<SearchHit>, SqliteError> {
    let under = query.under();
    let (lo, hi) = if under.is_root() {
        ("/memories/".to_owned(), "/memories0".to_owned())
    } else {
        below(under)
    };
    let searched = {
        let mut stmt = conn
            .prepare_cached("SELECT path FROM files WHERE path > ?1 AND path < ?2")
            .map_err(|e| ctx.err(e))?;
        let mut rows = stmt.query(params![lo, hi]).map_err(|e| ctx.err(e))?;
        let mut searched = 0;
        while let Some(row) = rows.next().map_err(|e| ctx.err(e))? {
            let raw = row
                .get_ref(0)
                .and_then(|v| v.as_str().map_err(Into::into))
                .map_err(|e| ctx.err(e))?;
            if memory_path(raw).is_some_and(|path| is_searchable(&path, under)) {
                searched += 1;
            }
        }
        searched
    };
    let mut ranker = Ranker::new(query, searched);
    let mut stmt = conn
        .prepare_cached(
            "SELECT f.path, f.contents
             FROM search JOIN files f ON f.rowid = search.rowid
             WHERE search MATCH ?1 AND f.path > ?2 AND f.path < ?3",
        )
        .map_err(|e| ctx.err(e))?;
    let mut rows = stmt
        .query(params![query.parsed().fts5_expression(), lo, hi])
        .map_err(|e| ctx.err(e))?;
    while let Some(row) = rows.next().map_err(|e| ctx.err(e))? {
        let raw: String = row.get(0).map_err(|e| ctx.err(e))?;
        let Some(path) = memory_path(&raw) else {
            continue;
        };
        let contents = row
            .get_ref(1)
            .and_then(|v| v.as_bytes().map_err(Into::into))
            .map_err(|e| ctx.err(e))?;
        if let Some(text) = searchable_text(contents) {
            ranker.add(path, text);
        }
    }
    Ok(ranker.finish())
}
