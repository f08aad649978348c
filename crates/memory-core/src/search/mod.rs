//! Keyword search over a store's files: the query language, the hit, and the helpers every
//! backend shares so that a search answers alike on every store.
//!
//! - [`SearchQuery`] (text, folder, limit) parses its text into a [`ParsedQuery`] when made:
//!   plain words matched by English stem and ranked (none required; stop words dropped, so a
//!   whole question works), `"exact phrases"`, `prefix*` words, `+required` and `-excluded`
//!   clauses; a query that cannot be parsed is a [`QueryError`], never a panic.
//! - [`Storage::search`] answers it with ranked [`SearchHit`]s, and every backend ranks with
//!   the one [`Ranker`] (BM25F with boosts for coverage and nearness), so every store gives the
//!   same hits in the same order. The provided method is [`scan`]: list, read each searchable
//!   file, rank. Backends with an index of their own override it: they ask their index for
//!   the query's [`ParsedQuery::index_terms`] (OR-ed) and hand the files found to a
//!   [`Ranker`], which also builds each hit's lines and snippet.
//! - What is searched: files below the query's folder that [`is_searchable`] admits (hidden
//!   names and `node_modules` are skipped, as `view` skips them), whose content is UTF-8
//!   ([`searchable_text`]).
//! - Words are compared as [`tokenize`] folds them (Unicode words, no case, no diacritics),
//!   and plain query words by [`stem`].
//! - The search *tool* ([`TOOL_NAME`], [`TOOL_DESCRIPTION`], [`tool_input_schema`],
//!   [`parse_tool_input`], [`tool_result_text`]) is written here once for every surface that
//!   offers it to Claude (an MCP server, a Messages API tool runner).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
//! use memory_core::search::SearchQuery;
//! let store = InMemoryStorage::new();
//! let path = MemoryPath::parse("/memories/ops/deploy.md").unwrap();
//! store.write(&path, b"# Deploys\nRoll back with `make rollback`.".to_vec(), WriteMode::Create).await.unwrap();
//! let hits = store.search(&SearchQuery::new("rollback").unwrap()).await.unwrap();
//! assert_eq!(hits[0].path, path);
//! assert_eq!(hits[0].lines, [2]);
//! assert_eq!(hits[0].snippet, "Roll back with `make rollback`.");
//! # });
//! ```

mod analyze;
mod bm25;
mod folded;
mod query;
mod rank;
mod text;
mod tokenize;
mod tool;
mod words;

use std::cmp::Ordering;

use serde::ser::{Serialize, SerializeStruct, Serializer};

pub use analyze::{is_stop_word, stem};
pub use bm25::Bm25Index;
pub use folded::folded_words;
pub use query::{
    Clause, DEFAULT_LIMIT, IndexTerm, MAX_CLAUSES, MAX_LIMIT, MAX_QUERY_BYTES, Occur, ParsedQuery,
    QueryError, SearchQuery,
};
pub use rank::Ranker;
pub use text::{
    Excerpt, MAX_HIT_LINES, SNIPPET_CHARS, excerpt, excerpt_tokens, is_searchable, searchable_text,
};
pub use tokenize::{Token, fold, tokenize};
pub use tool::{
    TOOL_DESCRIPTION, TOOL_NAME, parse_tool_input, render_hits, tool_input_schema, tool_result_text,
};

use crate::{Error, MemoryPath, Result, Storage};

/// One file that meets a query.
///
/// Serializes as `{"path": "/memories/...", "score": 1.5, "lines": [3, 7], "snippet": "..."}`.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// The file's full path.
    pub path: MemoryPath,
    /// How well it meets the query: higher is better. Comparable within one search's hits
    /// only (each engine scores on its own scale).
    pub score: f64,
    /// The 1-based numbers of the lines holding a match, as `view` numbers them (see
    /// [`Excerpt::lines`]).
    pub lines: Vec<usize>,
    /// A short excerpt holding a match (see [`Excerpt::snippet`]).
    pub snippet: String,
}

impl SearchHit {
    /// The hit for a file whose text meets `query` (see [`ParsedQuery::matches`]), scored
    /// `score`; `None` if it is no hit.
    pub fn from_text(
        path: MemoryPath,
        score: f64,
        text: &str,
        query: &ParsedQuery,
    ) -> Option<SearchHit> {
        let e = excerpt(text, query)?;
        Some(SearchHit {
            path,
            score,
            lines: e.lines,
            snippet: e.snippet,
        })
    }
}

impl Serialize for SearchHit {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("SearchHit", 4)?;
        s.serialize_field("path", self.path.as_str())?;
        s.serialize_field("score", &self.score)?;
        s.serialize_field("lines", &self.lines)?;
        s.serialize_field("snippet", &self.snippet)?;
        s.end()
    }
}

/// Orders hits best first: higher score, then path (byte order) among equal scores.
pub fn sort_hits(hits: &mut [SearchHit]) {
    hits.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// The search behind the provided [`Storage::search`]: lists the query's folder, reads every
/// searchable file (UTF-8 ones; a file gone since the listing is skipped) and ranks them with
/// a [`Ranker`]. Its work is proportional to the store's size.
///
/// Public for wrappers that must search through their own reads (an encrypted store searches
/// its plaintext this way, never its inner store's ciphertext).
pub async fn scan<S: Storage + ?Sized>(storage: &S, query: &SearchQuery) -> Result<Vec<SearchHit>> {
    let searched: Vec<_> = storage
        .list(query.under())
        .await?
        .into_iter()
        .filter(|meta| is_searchable(&meta.path, query.under()))
        .collect();
    let mut ranker = Ranker::new(query, searched.len());
    for meta in searched {
        let file = match storage.read(&meta.path).await {
            Ok(file) => file,
            Err(Error::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        if let Some(text) = searchable_text(&file.contents) {
            ranker.add(meta.path, text);
        }
    }
    Ok(ranker.finish())
}
