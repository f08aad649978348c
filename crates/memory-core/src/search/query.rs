//! The query language: bare words AND-ed, `"exact phrases"`, `prefix*` words.

use std::fmt;

use super::tokenize::{Token, tokenize};
use crate::MemoryPath;

/// Longest query text, in bytes.
pub const MAX_QUERY_BYTES: usize = 1_000;
/// Most clauses (words, phrases, prefixes) one query may hold.
pub const MAX_CLAUSES: usize = 32;
/// How many hits a search returns when the caller does not say.
pub const DEFAULT_LIMIT: usize = 10;
/// Most hits one search may ask for.
pub const MAX_LIMIT: usize = 100;

/// Why a query cannot be searched. Its `Display` is a message for the person or the model that
/// wrote the query; callers match on the variant, never on the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The query holds no word to search for (empty, or punctuation only).
    #[error("the query has no word to search for")]
    Empty,
    /// The query is longer than [`MAX_QUERY_BYTES`].
    #[error("the query is longer than {max_bytes} bytes")]
    TooLong {
        /// The limit.
        max_bytes: usize,
    },
    /// A `"` opens a phrase that no `"` closes.
    #[error("a double quote opens a phrase that is never closed")]
    UnbalancedQuote,
    /// A phrase in quotes holds no word (`""`, `"!!"`).
    #[error("a quoted phrase has no word in it")]
    EmptyPhrase,
    /// A `*` stands somewhere other than right after a word (`*`, `*deploy`, `de*ploy`,
    /// `"a phrase"*`).
    #[error("`*` may only end a word, as in deploy*")]
    MisplacedStar,
    /// More than [`MAX_CLAUSES`] words and phrases.
    #[error("the query has more than {max} words and phrases")]
    TooManyClauses {
        /// The limit.
        max: usize,
    },
    /// A result limit outside `1..=MAX_LIMIT`.
    #[error("the result limit must be between 1 and {max}, got {given}")]
    Limit {
        /// The limit asked for.
        given: usize,
        /// The largest allowed ([`MAX_LIMIT`]).
        max: usize,
    },
}

/// One condition a file must meet: its words in a row, the last one possibly a prefix.
///
/// A bare word is a clause of one token; a bare word the tokenizer splits (`e-mail`,
/// `v1.2`) and a quoted phrase are clauses of several tokens that must stand next to each
/// other in that order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    tokens: Vec<String>,
    prefix: bool,
}

impl Clause {
    /// The folded tokens, in order (never empty).
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Whether the last token matches any word it begins (`deploy*`).
    pub fn is_prefix(&self) -> bool {
        self.prefix
    }

    /// Whether the clause is more than one word (a phrase).
    pub fn is_phrase(&self) -> bool {
        self.tokens.len() > 1
    }

    /// Whether the `i`-th token of the clause matches the word `word`.
    fn token_matches(&self, i: usize, word: &str) -> bool {
        if self.prefix && i + 1 == self.tokens.len() {
            word.starts_with(self.tokens[i].as_str())
        } else {
            word == self.tokens[i]
        }
    }

    /// Whether the clause matches the words starting at `at`.
    pub(crate) fn matches_at(&self, words: &[Token], at: usize) -> bool {
        words.len() >= at + self.tokens.len()
            && (0..self.tokens.len()).all(|i| self.token_matches(i, &words[at + i].text))
    }
}

impl fmt::Display for Clause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let star = if self.prefix { "*" } else { "" };
        if self.is_phrase() {
            write!(f, "\"{}{star}\"", self.tokens.join(" "))
        } else {
            write!(f, "{}{star}", self.tokens[0])
        }
    }
}

/// A query parsed into [`Clause`]s, every one of which a hit must meet.
///
/// ```
/// use memory_core::search::ParsedQuery;
/// let q = ParsedQuery::parse(r#"deploy* "staging server" Zoë"#).unwrap();
/// let clauses: Vec<String> = q.clauses().iter().map(|c| c.to_string()).collect();
/// assert_eq!(clauses, ["deploy*", "\"staging server\"", "zoe"]);
/// assert!(q.matches("Zoe deployed the staging server."));
/// assert!(!q.matches("Zoe deployed the server for staging."));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedQuery {
    clauses: Vec<Clause>,
}

impl ParsedQuery {
    /// Parses a query:
    ///
    /// - words separated by spaces are AND-ed: a hit holds every one;
    /// - `"double-quoted text"` is a phrase: its words next to each other, in order;
    /// - a word ending in `*` matches every word it begins (`deploy*` finds `deployment`);
    /// - words are compared folded (see [`tokenize`](super::tokenize)), so case and
    ///   diacritics do not matter; punctuation separates words.
    ///
    /// Errors are [`QueryError`]s; no input panics.
    pub fn parse(text: &str) -> Result<ParsedQuery, QueryError> {
        if text.len() > MAX_QUERY_BYTES {
            return Err(QueryError::TooLong {
                max_bytes: MAX_QUERY_BYTES,
            });
        }
        let mut clauses: Vec<Clause> = Vec::new();
        let mut rest = text;
        loop {
            rest = rest.trim_start();
            let Some(first) = rest.chars().next() else {
                break;
            };
            if first == '"' {
                let body = &rest[1..];
                let close = body.find('"').ok_or(QueryError::UnbalancedQuote)?;
                let phrase = &body[..close];
                rest = &body[close + 1..];
                if rest.starts_with('*') {
                    return Err(QueryError::MisplacedStar);
                }
                let tokens: Vec<String> = tokenize(phrase).into_iter().map(|t| t.text).collect();
                if tokens.is_empty() {
                    return Err(QueryError::EmptyPhrase);
                }
                clauses.push(Clause {
                    tokens,
                    prefix: false,
                });
            } else {
                // A bare word runs to the next space or quote.
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '"')
                    .unwrap_or(rest.len());
                let word = &rest[..end];
                rest = &rest[end..];
                let (body, prefix) = match word.strip_suffix('*') {
                    Some(body) => (body, true),
                    None => (word, false),
                };
                if body.contains('*') {
                    return Err(QueryError::MisplacedStar);
                }
                let tokens = tokenize(body);
                // The star must touch a word: `deploy-*` and a lone `*` are refused.
                if prefix && tokens.last().map(|t| t.end) != Some(body.len()) {
                    return Err(QueryError::MisplacedStar);
                }
                if tokens.is_empty() {
                    // Punctuation alone (`-`, `&`) searches for nothing; skip it.
                    continue;
                }
                clauses.push(Clause {
                    tokens: tokens.into_iter().map(|t| t.text).collect(),
                    prefix,
                });
            }
            if clauses.len() > MAX_CLAUSES {
                return Err(QueryError::TooManyClauses { max: MAX_CLAUSES });
            }
        }
        if clauses.is_empty() {
            return Err(QueryError::Empty);
        }
        Ok(ParsedQuery { clauses })
    }

    /// The clauses, in the order the query gave them.
    pub fn clauses(&self) -> &[Clause] {
        &self.clauses
    }

    /// Whether `text` meets every clause.
    pub fn matches(&self, text: &str) -> bool {
        let words = tokenize(text);
        self.matches_tokens(&words)
    }

    /// [`matches`](Self::matches) over a text already tokenized.
    pub fn matches_tokens(&self, words: &[Token]) -> bool {
        self.clauses
            .iter()
            .all(|clause| (0..words.len()).any(|at| clause.matches_at(words, at)))
    }
}

/// What to search for, where, and how many hits to return.
///
/// The text is parsed when the query is made, so a query that reaches a
/// [`Storage`](crate::Storage) is always one the engine can run.
///
/// ```
/// use memory_core::MemoryPath;
/// use memory_core::search::{QueryError, SearchQuery};
/// let q = SearchQuery::new("deploy* \"staging server\"").unwrap()
///     .with_under(MemoryPath::parse("/memories/notes").unwrap())
///     .with_limit(5).unwrap();
/// assert_eq!(q.under().as_str(), "/memories/notes");
/// assert_eq!(q.limit(), 5);
/// assert_eq!(SearchQuery::new("\"open").unwrap_err(), QueryError::UnbalancedQuote);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    text: String,
    parsed: ParsedQuery,
    under: MemoryPath,
    limit: usize,
}

impl SearchQuery {
    /// Parses `text` (see [`ParsedQuery::parse`]); searches all of `/memories` for at most
    /// [`DEFAULT_LIMIT`] hits until told otherwise.
    pub fn new(text: impl Into<String>) -> Result<SearchQuery, QueryError> {
        let text = text.into();
        let parsed = ParsedQuery::parse(&text)?;
        Ok(SearchQuery {
            text,
            parsed,
            under: MemoryPath::root(),
            limit: DEFAULT_LIMIT,
        })
    }

    /// Keeps hits to files at or below `under` (whole segments: `/memories/a` never matches
    /// `/memories/ab`).
    #[must_use]
    pub fn with_under(mut self, under: MemoryPath) -> SearchQuery {
        self.under = under;
        self
    }

    /// Returns at most `limit` hits; `limit` must be in `1..=MAX_LIMIT`.
    pub fn with_limit(mut self, limit: usize) -> Result<SearchQuery, QueryError> {
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(QueryError::Limit {
                given: limit,
                max: MAX_LIMIT,
            });
        }
        self.limit = limit;
        Ok(self)
    }

    /// The query as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The query as parsed.
    pub fn parsed(&self) -> &ParsedQuery {
        &self.parsed
    }

    /// The folder hits must lie in (`/memories` unless told otherwise).
    pub fn under(&self) -> &MemoryPath {
        &self.under
    }

    /// The most hits to return.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clauses(q: &str) -> Vec<String> {
        ParsedQuery::parse(q)
            .unwrap()
            .clauses()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn words_phrases_prefixes() {
        assert_eq!(clauses("  Alpha   beta "), ["alpha", "beta"]);
        assert_eq!(
            clauses(r#""Alpha Beta" gamma"#),
            ["\"alpha beta\"", "gamma"]
        );
        assert_eq!(clauses("depl*"), ["depl*"]);
        assert_eq!(clauses("e-mail v1.2*"), ["\"e mail\"", "\"v1 2*\""]);
        assert_eq!(clauses("a\"b c\"d"), ["a", "\"b c\"", "d"]);
        assert_eq!(clauses("東京 Zoë"), ["東京", "zoe"]);
        // Punctuation alone next to real words is no clause.
        assert_eq!(clauses("deploy - & key"), ["deploy", "key"]);
        // AND, OR and NOT are words like any other.
        assert_eq!(clauses("cats OR dogs"), ["cats", "or", "dogs"]);
    }

    #[test]
    fn bad_queries_are_typed_errors() {
        let err = |q: &str| ParsedQuery::parse(q).unwrap_err();
        assert_eq!(err(""), QueryError::Empty);
        assert_eq!(err("   "), QueryError::Empty);
        assert_eq!(err("!!! ---"), QueryError::Empty);
        assert_eq!(err("\"open phrase"), QueryError::UnbalancedQuote);
        assert_eq!(err("ok \"\""), QueryError::EmptyPhrase);
        assert_eq!(err("\"?!\""), QueryError::EmptyPhrase);
        assert_eq!(err("*"), QueryError::MisplacedStar);
        assert_eq!(err("*deploy"), QueryError::MisplacedStar);
        assert_eq!(err("de*ploy"), QueryError::MisplacedStar);
        assert_eq!(err("deploy**"), QueryError::MisplacedStar);
        assert_eq!(err("deploy-*"), QueryError::MisplacedStar);
        assert_eq!(err("\"a b\"*"), QueryError::MisplacedStar);
        assert_eq!(
            err(&"x".repeat(MAX_QUERY_BYTES + 1)),
            QueryError::TooLong {
                max_bytes: MAX_QUERY_BYTES
            }
        );
        let many = vec!["w"; MAX_CLAUSES + 1].join(" ");
        assert_eq!(err(&many), QueryError::TooManyClauses { max: MAX_CLAUSES });
        assert!(ParsedQuery::parse(&vec!["w"; MAX_CLAUSES].join(" ")).is_ok());
    }

    #[test]
    fn no_input_panics() {
        // Every prefix of tricky text, cut at each char boundary.
        let tricky = "\"é*\" *東\"京 ** \u{301}\"\" a*b \"x y\"*z";
        for (i, _) in tricky.char_indices() {
            let _ = ParsedQuery::parse(&tricky[..i]);
            let _ = ParsedQuery::parse(&tricky[i..]);
        }
    }

    #[test]
    fn matching() {
        let q = ParsedQuery::parse(r#""quick brown" jump*"#).unwrap();
        assert!(q.matches("The Quick  Brown fox JUMPED."));
        assert!(q.matches("jumps\nquick\nbrown"));
        assert!(!q.matches("brown quick jumped"));
        assert!(!q.matches("quick brown fox"));
        let q = ParsedQuery::parse("cafe").unwrap();
        assert!(q.matches("Un CAFÉ noir"));
        assert!(!q.matches("cafeteria"));
        assert!(ParsedQuery::parse("cafe*").unwrap().matches("cafeteria"));
    }

    #[test]
    fn limits() {
        let q = SearchQuery::new("x").unwrap();
        assert_eq!(q.limit(), DEFAULT_LIMIT);
        assert!(q.under().is_root());
        assert_eq!(
            q.clone().with_limit(0).unwrap_err(),
            QueryError::Limit {
                given: 0,
                max: MAX_LIMIT
            }
        );
        assert!(q.clone().with_limit(MAX_LIMIT).is_ok());
        assert!(q.with_limit(MAX_LIMIT + 1).is_err());
    }
}
