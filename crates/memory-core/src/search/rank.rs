//! The one ranking every backend uses: BM25F over a search's candidate files, with boosts for
//! files that hold more of the query's clauses and hold them near each other.
//!
//! A backend finds the candidates its own way (a scan reads every file; an index is asked for
//! [`ParsedQuery::index_terms`](super::ParsedQuery::index_terms)), hands each one's text to a
//! [`Ranker`], and takes its hits. Everything a score depends on is computed here from those
//! texts and the number of files searched, so every backend gives the same hits, in the same
//! order, with the same scores, for the same store.
//!
//! For each clause `c` a file holds, with `tf` its weighted count in the file, `df` the number
//! of candidates holding it, `N` the number of files searched and `len / avg` the file's
//! length (in words) against the candidates' average:
//!
//! ```text
//! score = Σ idf(c) · tf·(k1 + 1) / (tf + k1·(1 − b + b·len/avg))      k1 = 1.2, b = 0.75
//! idf(c) = ln(1 + (N − df + 0.5) / (df + 0.5))
//! tf = occurrences in the text + 1 more per occurrence in a heading (a `#` line)
//!      + 2 per occurrence in the file's path
//! ```
//!
//! then multiplied by `1 + 0.5·(held − 1)/(clauses − 1)` (the share of the query's clauses the
//! file holds) and by `1 + 0.5·(near − 1)/(clauses − 1)` (the most distinct clauses within any
//! eight words of the text), for a query of several clauses.

use super::SearchHit;
use super::query::{Occur, SearchQuery};
use super::text::{Lines, excerpt_at, is_searchable};
use super::tokenize::Token;
use super::words::Words;
use crate::MemoryPath;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalization.
const B: f64 = 0.75;
/// What an occurrence in a heading line adds to its count.
const HEADING_WEIGHT: f64 = 1.0;
/// What an occurrence in the file's path counts.
const PATH_WEIGHT: f64 = 2.0;
/// How far (in words) clauses may stand apart to count as near each other.
const PROXIMITY_WINDOW: usize = 8;
/// The most the share of clauses held adds to a score (as a factor, minus one).
const COVERAGE_BOOST: f64 = 0.5;
/// The most nearness adds to a score (as a factor, minus one).
const PROXIMITY_BOOST: f64 = 0.5;

/// A candidate file, measured.
#[derive(Debug)]
struct Candidate {
    path: MemoryPath,
    lines: Vec<usize>,
    snippet: String,
    /// Weighted count of each clause (text, headings, path), in the query's order.
    weight: Vec<f64>,
    /// Words in the text.
    length: usize,
    /// The most distinct positive clauses within [`PROXIMITY_WINDOW`] words.
    near: usize,
}

/// Ranks a search's candidate files (see the module's documentation).
///
/// ```
/// use memory_core::MemoryPath;
/// use memory_core::search::{Ranker, SearchQuery};
/// let p = |s: &str| MemoryPath::parse(s).unwrap();
/// let query = SearchQuery::new("When did Melanie paint a sunrise?").unwrap();
/// let mut ranker = Ranker::new(&query, 3);
/// ranker.add(p("/memories/s1.md"), "Melanie: Yeah, I painted that lake sunrise last year!");
/// ranker.add(p("/memories/s2.md"), "Melanie: the kids loved the museum.");
/// ranker.add(p("/memories/s3.md"), "Caroline: lunch at noon?");
/// let hits = ranker.finish();
/// let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
/// assert_eq!(paths, ["/memories/s1.md", "/memories/s2.md"]);
/// assert_eq!(hits[0].snippet, "Melanie: Yeah, I painted that lake sunrise last year!");
/// ```
#[derive(Debug)]
pub struct Ranker<'q> {
    query: &'q SearchQuery,
    files: usize,
    candidates: Vec<Candidate>,
}

impl<'q> Ranker<'q> {
    /// A ranker for `query` over a store where `files_searched` files are searched: those at
    /// or below the query's folder that [`is_searchable`] admits (text or not). It is the `N`
    /// of the idf; the candidates count if they are more.
    pub fn new(query: &'q SearchQuery, files_searched: usize) -> Ranker<'q> {
        Ranker {
            query,
            files: files_searched,
            candidates: Vec::new(),
        }
    }

    /// Considers a file: one that holds none of the query's clauses (or is not searched by
    /// it) is left out, so a backend may hand over more files than match.
    pub fn add(&mut self, path: MemoryPath, text: &str) {
        self.add_words(path, text, &Words::of(text));
    }

    /// [`add`](Self::add) with the text already tokenized (by [`tokenize`](super::tokenize)).
    pub fn add_tokens(&mut self, path: MemoryPath, text: &str, tokens: &[Token]) {
        self.add_words(path, text, &Words::from_tokens(tokens));
    }

    /// [`add`](Self::add) with the text's [`Words`] made already.
    pub(crate) fn add_words(&mut self, path: MemoryPath, text: &str, words: &Words) {
        if !is_searchable(&path, self.query.under()) {
            return;
        }
        let clauses = self.query.parsed().clauses();
        let found: Vec<Vec<usize>> = clauses.iter().map(|c| c.occurrences(words)).collect();
        let holds_positive = clauses
            .iter()
            .zip(&found)
            .any(|(c, at)| c.is_positive() && !at.is_empty());
        if !holds_positive {
            return;
        }
        let lines = Lines::of(text);
        let in_heading = |word: usize| lines.is_heading(lines.line_of(words.start(word)));
        let path_words = Words::of(path.relative());
        let weight: Vec<f64> = clauses
            .iter()
            .zip(&found)
            .map(|(clause, at)| {
                let in_headings = at.iter().filter(|&&i| in_heading(i)).count();
                let in_path = clause.occurrences(&path_words).len();
                at.len() as f64 + HEADING_WEIGHT * in_headings as f64 + PATH_WEIGHT * in_path as f64
            })
            .collect();
        let positive: Vec<Vec<usize>> = clauses
            .iter()
            .zip(found)
            .map(|(c, at)| if c.is_positive() { at } else { Vec::new() })
            .collect();
        let near = nearest_clauses(&positive);
        let excerpt = excerpt_at(&lines, words, &positive);
        self.candidates.push(Candidate {
            path,
            lines: excerpt.lines,
            snippet: excerpt.snippet,
            weight,
            length: words.len(),
            near,
        });
    }

    /// The hits, best first (ties by path), at most the query's limit: the candidates that hold
    /// every `+` clause and no `-` clause.
    pub fn finish(self) -> Vec<SearchHit> {
        let limit = self.query.limit();
        self.finish_at_most(limit)
    }

    /// [`finish`](Self::finish) with another limit (a fusion of several rankings takes more
    /// of each than it returns).
    pub fn finish_at_most(self, limit: usize) -> Vec<SearchHit> {
        let clauses = self.query.parsed().clauses();
        let count = self.candidates.len();
        if count == 0 {
            return Vec::new();
        }
        let n = self.files.max(count) as f64;
        let avg = (self.candidates.iter().map(|c| c.length).sum::<usize>() as f64 / count as f64)
            .max(1.0);
        let idf: Vec<f64> = (0..clauses.len())
            .map(|i| {
                let df = self.candidates.iter().filter(|c| c.weight[i] > 0.0).count() as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let positive = clauses.iter().filter(|c| c.is_positive()).count();
        let spread = positive.saturating_sub(1).max(1) as f64;
        let mut hits: Vec<SearchHit> = self
            .candidates
            .into_iter()
            .filter(|cand| {
                clauses
                    .iter()
                    .zip(&cand.weight)
                    .all(|(c, &w)| match c.occur() {
                        Occur::Must => w > 0.0,
                        Occur::MustNot => w == 0.0,
                        Occur::Should => true,
                    })
            })
            .map(|cand| {
                let norm = K1 * (1.0 - B + B * cand.length as f64 / avg);
                let mut score = 0.0;
                let mut held = 0usize;
                for ((clause, &tf), idf) in clauses.iter().zip(&cand.weight).zip(&idf) {
                    if clause.is_positive() && tf > 0.0 {
                        held += 1;
                        score += idf * tf * (K1 + 1.0) / (tf + norm);
                    }
                }
                if positive > 1 {
                    score *= 1.0 + COVERAGE_BOOST * held.saturating_sub(1) as f64 / spread;
                    score *= 1.0 + PROXIMITY_BOOST * cand.near.saturating_sub(1) as f64 / spread;
                }
                SearchHit {
                    path: cand.path,
                    score,
                    lines: cand.lines,
                    snippet: cand.snippet,
                }
            })
            .collect();
        super::sort_hits(&mut hits);
        hits.truncate(limit);
        hits
    }
}

/// The most distinct clauses whose occurrences fall within [`PROXIMITY_WINDOW`] consecutive
/// words; `found[c]` holds clause `c`'s word indices (ascending).
fn nearest_clauses(found: &[Vec<usize>]) -> usize {
    let mut marks: Vec<(usize, usize)> = found
        .iter()
        .enumerate()
        .flat_map(|(c, at)| at.iter().map(move |&i| (i, c)))
        .collect();
    marks.sort_unstable();
    let mut inside = vec![0usize; found.len()];
    let mut distinct = 0;
    let mut best = 0;
    let mut first = 0;
    for &(at, clause) in &marks {
        inside[clause] += 1;
        if inside[clause] == 1 {
            distinct += 1;
        }
        while marks[first].0 + PROXIMITY_WINDOW <= at {
            let gone = marks[first].1;
            inside[gone] -= 1;
            if inside[gone] == 0 {
                distinct -= 1;
            }
            first += 1;
        }
        best = best.max(distinct);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> MemoryPath {
        MemoryPath::parse(s).unwrap()
    }

    fn ranked(query: &str, files: &[(&str, &str)]) -> Vec<String> {
        let query = SearchQuery::new(query).unwrap();
        let mut ranker = Ranker::new(&query, files.len());
        for (path, text) in files {
            ranker.add(p(&format!("/memories/{path}")), text);
        }
        ranker
            .finish()
            .into_iter()
            .map(|h| h.path.as_str().trim_start_matches("/memories/").to_owned())
            .collect()
    }

    #[test]
    fn any_word_counts_and_more_words_rank_higher() {
        let files = [
            ("one.md", "the sunrise was red"),
            ("two.md", "Melanie painted the sunrise"),
            ("none.md", "lunch at noon"),
        ];
        assert_eq!(
            ranked("Melanie paint sunrise", &files),
            ["two.md", "one.md"]
        );
    }

    #[test]
    fn required_and_excluded_clauses() {
        let files = [
            ("a.md", "deploy on friday"),
            ("b.md", "deploy on monday"),
            ("c.md", "rollback on friday"),
        ];
        assert_eq!(ranked("deploy +friday", &files), ["a.md", "c.md"]);
        assert_eq!(ranked("deploy -friday", &files), ["b.md"]);
        assert_eq!(ranked("+deploy +friday", &files), ["a.md"]);
    }

    #[test]
    fn near_words_and_paths_and_headings_rank_higher() {
        let filler = "word ".repeat(20);
        let near = format!("staging server {filler}");
        let far = format!("staging {filler} server");
        assert_eq!(
            ranked("staging server", &[("far.md", &far), ("near.md", &near)]),
            ["near.md", "far.md"]
        );
        assert_eq!(
            ranked(
                "deploy",
                &[("a.md", "we deploy"), ("deploy.md", "we deploy")]
            ),
            ["deploy.md", "a.md"]
        );
        assert_eq!(
            ranked(
                "deploy",
                &[("a.md", "we deploy\nok"), ("b.md", "# deploy\nok")]
            ),
            ["b.md", "a.md"]
        );
    }

    #[test]
    fn headings_are_the_lines_starting_with_a_hash() {
        let text = "# Title words\nbody words\n  ## Sub\nlast";
        let words = Words::of(text);
        let lines = Lines::of(text);
        let headings: Vec<bool> = (0..words.len())
            .map(|i| lines.is_heading(lines.line_of(words.start(i))))
            .collect();
        assert_eq!(headings, [true, true, false, false, true, false]);
    }

    #[test]
    fn nearness_counts_distinct_clauses_in_a_window() {
        assert_eq!(nearest_clauses(&[vec![0], vec![3], vec![20]]), 2);
        assert_eq!(nearest_clauses(&[vec![0, 30], vec![31], vec![33]]), 3);
        assert_eq!(nearest_clauses(&[vec![], vec![5]]), 1);
        assert_eq!(nearest_clauses(&[vec![], vec![]]), 0);
    }
}
