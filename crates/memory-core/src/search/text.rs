//! What is searchable, and what a hit shows: its line numbers and a snippet.

use super::query::ParsedQuery;
use super::tokenize::Token;
use super::words::Words;
use crate::MemoryPath;

/// Most line numbers one hit lists.
pub const MAX_HIT_LINES: usize = 20;
/// Most characters of a snippet (not counting the `…` marking a cut).
pub const SNIPPET_CHARS: usize = 160;
/// How many characters a cut snippet keeps before the match.
const SNIPPET_LEAD: usize = 40;

/// Whether a file at `path` is searched by a search of the folder `under`: it lies strictly
/// below `under` (whole segments) and no segment between the two is hidden (starts with `.`)
/// or is `node_modules`, the names a `view` of `under` leaves out.
///
/// ```
/// use memory_core::MemoryPath;
/// use memory_core::search::is_searchable;
/// let p = |s: &str| MemoryPath::parse(s).unwrap();
/// assert!(is_searchable(&p("/memories/a/b.md"), &p("/memories")));
/// assert!(!is_searchable(&p("/memories/.git/config"), &p("/memories")));
/// assert!(!is_searchable(&p("/memories/web/node_modules/x.js"), &p("/memories")));
/// assert!(!is_searchable(&p("/memories/ab/x.md"), &p("/memories/a")));
/// // Asked for by name, a hidden folder is searched like any other.
/// assert!(is_searchable(&p("/memories/.notes/x.md"), &p("/memories/.notes")));
/// ```
pub fn is_searchable(path: &MemoryPath, under: &MemoryPath) -> bool {
    if path == under {
        return false;
    }
    match path.rebase(under, &MemoryPath::root()) {
        Some(rest) => rest
            .segments()
            .all(|name| !name.starts_with('.') && name != "node_modules"),
        None => false,
    }
}

/// The text of a file's bytes if it is searchable: UTF-8 only (binary files and an encrypted
/// store's ciphertext are never indexed).
pub fn searchable_text(contents: &[u8]) -> Option<&str> {
    std::str::from_utf8(contents).ok()
}

/// Where a file meets a query: what a hit shows besides its path and score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The 1-based numbers (as `view` numbers lines, splitting at `\n`) of the lines where a
    /// clause of the query starts, ascending, at most [`MAX_HIT_LINES`].
    pub lines: Vec<usize>,
    /// One line holding a match (the line that meets the most clauses, the first of those),
    /// trimmed, cut to [`SNIPPET_CHARS`] characters around the match with `…` where cut.
    pub snippet: String,
}

/// Where `text` meets `query`, or `None` if it is no hit (see [`ParsedQuery::matches`]).
///
/// Every backend computes a hit's lines and snippet this way, so a hit looks the same
/// whatever store found it.
///
/// ```
/// use memory_core::search::{ParsedQuery, excerpt};
/// let q = ParsedQuery::parse("rotate key*").unwrap();
/// let e = excerpt("# Ops\n\nRotate the keys weekly.\nKeys live in the vault.", &q).unwrap();
/// assert_eq!(e.lines, [3, 4]);
/// assert_eq!(e.snippet, "Rotate the keys weekly.");
/// assert!(excerpt("nothing here", &q).is_none());
/// ```
pub fn excerpt(text: &str, query: &ParsedQuery) -> Option<Excerpt> {
    excerpt_words(text, &Words::of(text), query)
}

/// [`excerpt`] over a text already tokenized (with [`tokenize`](super::tokenize)).
pub fn excerpt_tokens(text: &str, words: &[Token], query: &ParsedQuery) -> Option<Excerpt> {
    excerpt_words(text, &Words::from_tokens(words), query)
}

fn excerpt_words(text: &str, words: &Words, query: &ParsedQuery) -> Option<Excerpt> {
    if !query.matches_words(words) {
        return None;
    }
    let found: Vec<Vec<usize>> = query
        .clauses()
        .iter()
        .map(|c| {
            if c.is_positive() {
                c.occurrences(words)
            } else {
                Vec::new()
            }
        })
        .collect();
    Some(excerpt_at(&Lines::of(text), words, &found))
}

/// A text's lines as `view` numbers them (split at `\n`): where each starts, found once for
/// all that asks about them (the excerpt, the ranker's headings).
pub(crate) struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    /// The lines of `text`.
    pub(crate) fn of(text: &'t str) -> Lines<'t> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// The 0-based index of the line holding byte `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&start| start <= offset) - 1
    }

    /// Where line `line` starts in the text, and the line itself (without its `\n`).
    fn line(&self, line: usize) -> (usize, &'t str) {
        let start = self.starts[line];
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1);
        (start, &self.text[start..end])
    }

    /// Whether line `line` is a heading: its first non-blank character is `#`.
    pub(crate) fn is_heading(&self, line: usize) -> bool {
        self.line(line).1.trim_start().starts_with('#')
    }
}

/// The lines and snippet of a text whose clause `c` occurs at the word indices `found[c]`.
pub(crate) fn excerpt_at(lines: &Lines<'_>, words: &Words, found: &[Vec<usize>]) -> Excerpt {
    let line_of = |offset: usize| lines.line_of(offset);

    // (line index, clause index, byte offset of the match) for every occurrence.
    let mut marks: Vec<(usize, usize, usize)> = Vec::new();
    for (c, at_words) in found.iter().enumerate() {
        for &at in at_words {
            let offset = words.start(at);
            marks.push((line_of(offset), c, offset));
        }
    }
    marks.sort_unstable();
    let mut numbers: Vec<usize> = marks.iter().map(|m| m.0 + 1).collect();
    numbers.dedup();
    numbers.truncate(MAX_HIT_LINES);

    // The line meeting the most distinct clauses, the first of those.
    let mut best: Option<(usize, usize, usize)> = None; // (clauses, line, first offset)
    let mut i = 0;
    while i < marks.len() {
        let line = marks[i].0;
        let mut j = i;
        let mut distinct = 0;
        let mut last_clause = None;
        while j < marks.len() && marks[j].0 == line {
            if last_clause != Some(marks[j].1) {
                distinct += 1;
                last_clause = Some(marks[j].1);
            }
            j += 1;
        }
        let first_offset = marks[i..j].iter().map(|m| m.2).min().unwrap_or(0);
        if best.is_none_or(|(n, _, _)| distinct > n) {
            best = Some((distinct, line, first_offset));
        }
        i = j;
    }
    let snippet = match best {
        Some((_, line, offset)) => {
            let (start, text) = lines.line(line);
            snippet_of(text, offset - start)
        }
        None => String::new(),
    };
    Excerpt {
        lines: numbers,
        snippet,
    }
}

/// A line cut to [`SNIPPET_CHARS`] characters around byte `at` (where the match starts).
fn snippet_of(line: &str, at: usize) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let leading = line.len() - line.trim_start().len();
    let trimmed = line.trim();
    let at = at.saturating_sub(leading).min(trimmed.len());
    let total = trimmed.chars().count();
    if total <= SNIPPET_CHARS {
        return trimmed.to_owned();
    }
    let at_char = trimmed[..at].chars().count();
    let first = at_char
        .saturating_sub(SNIPPET_LEAD)
        .min(total - SNIPPET_CHARS);
    let kept: String = trimmed.chars().skip(first).take(SNIPPET_CHARS).collect();
    let head = if first > 0 { "…" } else { "" };
    let tail = if first + SNIPPET_CHARS < total {
        "…"
    } else {
        ""
    };
    format!("{head}{}{tail}", kept.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> ParsedQuery {
        ParsedQuery::parse(text).unwrap()
    }

    #[test]
    fn lines_are_numbered_as_view_numbers_them() {
        let text = "alpha\r\n\nbeta alpha\n\n\nend alpha";
        let e = excerpt(text, &q("alpha")).unwrap();
        assert_eq!(e.lines, [1, 3, 6]);
        assert_eq!(e.snippet, "alpha");
    }

    #[test]
    fn snippet_prefers_the_line_with_most_clauses() {
        let text = "deploy notes\nstaging only\n  deploy to staging today  \n";
        let e = excerpt(text, &q("deploy staging")).unwrap();
        assert_eq!(e.lines, [1, 2, 3]);
        assert_eq!(e.snippet, "deploy to staging today");
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let line = format!("{} needle {}", "é".repeat(300), "z".repeat(300));
        let e = excerpt(&line, &q("needle")).unwrap();
        assert!(e.snippet.contains("needle"), "{}", e.snippet);
        assert!(e.snippet.starts_with('…') && e.snippet.ends_with('…'));
        assert!(e.snippet.chars().count() <= SNIPPET_CHARS + 2);
        // A match near the end keeps the end.
        let line = format!("{} needle", "a ".repeat(300));
        let e = excerpt(&line, &q("needle")).unwrap();
        assert!(e.snippet.ends_with("needle") && e.snippet.starts_with('…'));
    }

    #[test]
    fn lines_are_capped() {
        let text = "x\n".repeat(100);
        let e = excerpt(&text, &q("x")).unwrap();
        assert_eq!(e.lines, (1..=MAX_HIT_LINES).collect::<Vec<_>>());
    }

    #[test]
    fn searchable_rule() {
        let p = |s: &str| MemoryPath::parse(s).unwrap();
        let root = MemoryPath::root();
        assert!(is_searchable(&p("/memories/a.md"), &root));
        assert!(!is_searchable(&p("/memories/.hidden"), &root));
        assert!(!is_searchable(&p("/memories/a/.b/c.md"), &root));
        assert!(!is_searchable(&p("/memories/node_modules/c.md"), &root));
        assert!(is_searchable(&p("/memories/node_modules2/c.md"), &root));
        assert!(is_searchable(&p("/memories/a/b"), &p("/memories/a")));
        assert!(!is_searchable(&p("/memories/a"), &p("/memories/a")));
        assert!(!is_searchable(&p("/memories/ab/c"), &p("/memories/a")));
        assert!(searchable_text(b"ok").is_some());
        assert!(searchable_text(b"\xff\xfe").is_none());
    }
}
