//! The search index: a file's words in the FTS5 table `search`, the rows marked for indexing
//! in `search_stale`, and the query that ranks them (see the crate README's "Search").
//!
//! Every change of a file's contents marks its row (the schema's triggers, for this library's
//! writes and anyone else's); [`index_words`] writes a marked row's words and clears its mark,
//! and [`index_stale`] does so for every marked row. When that happens is the store's
//! [`IndexMode`](crate::IndexMode): in the write's transaction, on the writer thread in
//! batches, or only before a search.

use memory_core::search::{
    ParsedQuery, SearchHit, SearchQuery, folded_words, is_searchable, searchable_text, sort_hits,
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

/// The FTS5 query for a parsed query: each clause a quoted string (its tokens hold no quote),
/// a prefix clause starred, all AND-ed. Engine syntax in the user's text never reaches FTS5.
fn fts_query(parsed: &ParsedQuery) -> String {
    parsed
        .clauses()
        .iter()
        .map(|clause| {
            let star = if clause.is_prefix() { "*" } else { "" };
            format!("\"{}\"{star}", clause.tokens().join(" "))
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// Ranks with FTS5's `bm25()` (negated: higher is better), then keeps the candidates the
/// shared rule admits (searchable path, UTF-8 text meeting every clause), up to the limit.
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
    let mut stmt = conn
        .prepare_cached(
            "SELECT f.path, f.contents, bm25(search) AS rank
             FROM search JOIN files f ON f.rowid = search.rowid
             WHERE search MATCH ?1 AND f.path > ?2 AND f.path < ?3
             ORDER BY rank, f.path",
        )
        .map_err(|e| ctx.err(e))?;
    let mut rows = stmt
        .query(params![fts_query(query.parsed()), lo, hi])
        .map_err(|e| ctx.err(e))?;
    let mut hits = Vec::new();
    while hits.len() < query.limit() {
        let Some(row) = rows.next().map_err(|e| ctx.err(e))? else {
            break;
        };
        let raw: String = row.get(0).map_err(|e| ctx.err(e))?;
        let Some(path) = memory_path(&raw) else {
            continue;
        };
        if !is_searchable(&path, under) {
            continue;
        }
        let contents = row
            .get_ref(1)
            .and_then(|v| v.as_bytes().map_err(Into::into))
            .map_err(|e| ctx.err(e))?;
        let Some(text) = searchable_text(contents) else {
            continue;
        };
        let rank: f64 = row.get(2).map_err(|e| ctx.err(e))?;
        hits.extend(SearchHit::from_text(path, -rank, text, query.parsed()));
    }
    sort_hits(&mut hits);
    Ok(hits)
}
