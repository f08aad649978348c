//! Documents held in memory, tokenized once and ranked by the shared [`Ranker`] at each
//! search: for stores that keep their whole text in memory.

use std::collections::BTreeMap;

use super::SearchHit;
use super::query::SearchQuery;
use super::rank::Ranker;
use super::text::is_searchable;
use super::words::Words;
use crate::MemoryPath;

#[derive(Debug, Clone)]
struct Doc {
    text: String,
    words: Words,
}

/// Documents by path, ranked for a [`SearchQuery`] by the shared [`Ranker`] (BM25F with
/// boosts; see its module) against the files the search covers (those at or below the
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
        let words = Words::of(&text);
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

    /// The hits for `query`, best first (ties by path), at most `query.limit()`, ranked by
    /// the shared [`Ranker`] over the files at or below the query's folder.
    pub fn search(&self, query: &SearchQuery) -> Vec<SearchHit> {
        let under = query.under();
        let scope: Vec<(&MemoryPath, &Doc)> = self
            .docs
            .iter()
            .filter(|(p, _)| is_searchable(p, under))
            .collect();
        let mut ranker = Ranker::new(query, scope.len());
        for (path, doc) in scope {
            ranker.add_words(path.clone(), &doc.text, &doc.words);
        }
        ranker.finish()
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
        assert_eq!(paths(&hits)[0], "/memories/rare.md");
        let hits = index.search(&SearchQuery::new("+cat +zebra").unwrap());
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
