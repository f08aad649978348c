//! A BM25 ranking over documents held in memory: the provided [`Storage::search`] scan, and
//! an index for stores that keep one in memory only.
//!
//! [`Storage::search`]: crate::Storage::search

use std::collections::BTreeMap;

use super::SearchHit;
use super::query::SearchQuery;
use super::text::{excerpt_tokens, is_searchable};
use super::tokenize::{Token, tokenize};
use crate::MemoryPath;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalization.
const B: f64 = 0.75;

#[derive(Debug, Clone)]
struct Doc {
    text: String,
    words: Vec<Token>,
}

/// Documents by path, ranked by BM25 (k1 = 1.2, b = 0.75) for a [`SearchQuery`].
///
/// Each clause of the query (a word, a prefix, a phrase) counts as one term: its frequency is
/// how often it occurs in a file, its document frequency how many searched files hold it.
/// The collection a search ranks against is the files it searches (those at or below the
/// query's folder that [`is_searchable`] admits).
///
/// ```
/// use memory_core::MemoryPath;
/// use memory_core::search::{Bm25Index, SearchQuery};
/// let p = |s: &str| MemoryPath::parse(s).unwrap();
/// let mut index = Bm25Index::new();
/// index.insert(p("/memories/a.md"), "deploy deploy deploy on friday".into());
/// index.insert(p("/memories/b.md"), "we deploy on monday, rarely".into());
/// index.insert(p("/memories/c.md"), "lunch menu".into());
/// let hits = index.search(&SearchQuery::new("deploy").unwrap());
/// let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
/// assert_eq!(paths, ["/memories/a.md", "/memories/b.md"]);
/// assert!(hits[0].score > hits[1].score);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    docs: BTreeMap<MemoryPath, Doc>,
}

impl Bm25Index {
    /// An empty index.
    pub fn new() -> Self {
        Bm25Index::default()
    }

    /// Adds a file's text, replacing what the index held for that path.
    pub fn insert(&mut self, path: MemoryPath, text: String) {
        let words = tokenize(&text);
        self.docs.insert(path, Doc { text, words });
    }

    /// Forgets a file; whether it was there.
    pub fn remove(&mut self, path: &MemoryPath) -> bool {
        self.docs.remove(path).is_some()
    }

    /// Forgets `path` and every file below it (a deleted directory); `/memories` empties the
    /// index.
    pub fn remove_below(&mut self, path: &MemoryPath) {
        self.docs.retain(|p, _| !p.starts_with(path));
    }

    /// Moves the file at `from`, or every file below it, to the same place below `to`.
    pub fn rename(&mut self, from: &MemoryPath, to: &MemoryPath) {
        let moved: Vec<MemoryPath> = self
            .docs
            .keys()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for old in moved {
            if let (Some(doc), Some(new)) = (self.docs.remove(&old), old.rebase(from, to)) {
                self.docs.insert(new, doc);
            }
        }
    }

    /// Whether the index holds a file at `path`.
    pub fn contains(&self, path: &MemoryPath) -> bool {
        self.docs.contains_key(path)
    }

    /// How many files the index holds.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether the index holds no file.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The hits for `query`, best first (ties by path), at most `query.limit()`.
    pub fn search(&self, query: &SearchQuery) -> Vec<SearchHit> {
        let under = query.under();
        let parsed = query.parsed();
        let scope: Vec<(&MemoryPath, &Doc)> = self
            .docs
            .iter()
            .filter(|(p, _)| is_searchable(p, under))
            .collect();
        if scope.is_empty() {
            return Vec::new();
        }
        let n = scope.len() as f64;
        let avg_len = scope.iter().map(|(_, d)| d.words.len()).sum::<usize>() as f64 / n;
        let matched: Vec<(&MemoryPath, super::Excerpt)> = scope
            .iter()
            .filter_map(|(p, d)| excerpt_tokens(&d.text, &d.words, parsed).map(|e| (*p, e)))
            .collect();
        // Documents holding each clause, among the searched ones. Every matched document holds
        // every clause, but documents that miss another clause may still hold this one.
        let clauses = parsed.clauses().len();
        let mut df = vec![0usize; clauses];
        for (_, doc) in &scope {
            for (c, clause) in parsed.clauses().iter().enumerate() {
                if (0..doc.words.len()).any(|at| clause.matches_at(&doc.words, at)) {
                    df[c] += 1;
                }
            }
        }
        let mut hits: Vec<SearchHit> = matched
            .into_iter()
            .map(|(path, e)| {
                let len_norm = if avg_len > 0.0 {
                    e.length as f64 / avg_len
                } else {
                    1.0
                };
                let score = e
                    .frequencies
                    .iter()
                    .zip(&df)
                    .map(|(&tf, &df)| {
                        let tf = tf as f64;
                        let df = df as f64;
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len_norm))
                    })
                    .sum();
                SearchHit {
                    path: path.clone(),
                    score,
                    lines: e.lines,
                    snippet: e.snippet,
                }
            })
            .collect();
        super::sort_hits(&mut hits);
        hits.truncate(query.limit());
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> MemoryPath {
        MemoryPath::parse(s).unwrap()
    }

    fn paths(hits: &[SearchHit]) -> Vec<&str> {
        hits.iter().map(|h| h.path.as_str()).collect()
    }

    #[test]
    fn rare_words_rank_higher_and_short_files_beat_long_ones() {
        let mut index = Bm25Index::new();
        index.insert(p("/memories/common.md"), "cat cat cat dog".into());
        index.insert(p("/memories/rare.md"), "cat zebra".into());
        index.insert(p("/memories/other.md"), "cat".into());
        let hits = index.search(&SearchQuery::new("cat zebra").unwrap());
        assert_eq!(paths(&hits), ["/memories/rare.md"]);
        let long = format!("needle {}", "hay ".repeat(200));
        index.insert(p("/memories/long.md"), long);
        index.insert(p("/memories/short.md"), "needle hay".into());
        let hits = index.search(&SearchQuery::new("needle").unwrap());
        assert_eq!(paths(&hits), ["/memories/short.md", "/memories/long.md"]);
    }

    #[test]
    fn scope_limit_and_maintenance() {
        let mut index = Bm25Index::new();
        for name in ["a/1", "a/2", "ab/3", "a/.h/4", "a/node_modules/5"] {
            index.insert(p(&format!("/memories/{name}")), "word".into());
        }
        let q = SearchQuery::new("word")
            .unwrap()
            .with_under(p("/memories/a"));
        assert_eq!(paths(&index.search(&q)), ["/memories/a/1", "/memories/a/2"]);
        let q1 = q.clone().with_limit(1).unwrap();
        assert_eq!(index.search(&q1).len(), 1);
        index.rename(&p("/memories/a"), &p("/memories/z"));
        assert!(index.search(&q).is_empty());
        assert!(index.contains(&p("/memories/z/1")));
        index.remove_below(&p("/memories/z"));
        assert_eq!(index.len(), 1);
        assert!(index.remove(&p("/memories/ab/3")));
        assert!(index.is_empty());
    }
}
