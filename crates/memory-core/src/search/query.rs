//! The query language: plain words ranked (none required), `"exact phrases"`, `prefix*`
//! words, `+required` and `-excluded` clauses.

use std::fmt;

use super::analyze::{StemProbe, is_stop_word};
use super::tokenize::{Token, tokenize};
use super::words::Words;
use crate::MemoryPath;

/// Longest query text, in bytes.
pub const MAX_QUERY_BYTES: usize = 1_000;
/// Most clauses (words, phrases, prefixes) one query may hold, stop words left out.
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
    /// Every clause of the query is excluded (`-word`): there is nothing to look for.
    #[error("the query only excludes words (-word); add a word to search for")]
    OnlyExcluded,
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

/// What a clause asks of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occur {
    /// A plain clause: a file holding it ranks higher; none is required.
    Should,
    /// `+clause`: a hit must hold it.
    Must,
    /// `-clause`: a hit must not hold it.
    MustNot,
}

/// One thing a query looks for: a word (matched by stem), a prefix, or words in a row.
///
/// - A plain word (`painted`) matches every word of the same English stem (`paint`,
///   `painting`); see [`stem`](super::stem).
/// - A quoted word or phrase (`"painted"`, `"staging server"`) matches those exact words
///   (folded), next to each other, in order; so does a bare word the tokenizer splits
///   (`e-mail`, `v1.2`).
/// - A word ending in `*` matches every word it begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    tokens: Vec<String>,
    prefix: bool,
    quoted: bool,
    occur: Occur,
    stemmed: Option<StemProbe>,
}

/// A term an index of folded, unstemmed words is asked for. A backend with such an index
/// (FTS5, a `tsvector`) gets a search's candidate files by OR-ing the terms of
/// [`ParsedQuery::index_terms`], then ranks them with a [`Ranker`](super::Ranker); the files
/// it finds are a superset of the files the query can match.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum IndexTerm {
    /// Files holding this word.
    Word(String),
    /// Files holding a word that begins with this.
    Prefix(String),
    /// Files holding these words next to each other, in order; the last one as a prefix when
    /// `prefix`.
    Phrase {
        /// The words, in order (at least two).
        words: Vec<String>,
        /// Whether the last word is a prefix.
        prefix: bool,
    },
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

    /// Whether the clause was written in double quotes (exact words, stop words kept).
    pub fn is_quoted(&self) -> bool {
        self.quoted
    }

    /// Whether the clause matches words by their stem (a plain word).
    pub fn is_stemmed(&self) -> bool {
        self.stemmed.is_some()
    }

    /// What the clause asks of a file.
    pub fn occur(&self) -> Occur {
        self.occur
    }

    /// Whether the clause counts for a file (`Should` or `Must`), rather than excluding it.
    pub fn is_positive(&self) -> bool {
        self.occur != Occur::MustNot
    }

    /// The index terms whose union holds every file this clause matches.
    pub fn index_terms(&self) -> Vec<IndexTerm> {
        if let Some(probe) = &self.stemmed {
            return probe.index_terms();
        }
        if self.is_phrase() {
            return vec![IndexTerm::Phrase {
                words: self.tokens.clone(),
                prefix: self.prefix,
            }];
        }
        let word = self.tokens[0].clone();
        vec![if self.prefix {
            IndexTerm::Prefix(word)
        } else {
            IndexTerm::Word(word)
        }]
    }

    /// Whether the `i`-th token of the clause matches the word `word`.
    fn token_matches(&self, i: usize, word: &str) -> bool {
        if let Some(probe) = &self.stemmed {
            return probe.matches(word);
        }
        let want = self.tokens[i].as_str();
        // One byte first: most words differ there.
        if word.as_bytes().first() != want.as_bytes().first() {
            return false;
        }
        if self.prefix && i + 1 == self.tokens.len() {
            word.starts_with(want)
        } else {
            word == want
        }
    }

    /// Whether the clause matches the words starting at `at`.
    pub(crate) fn matches_at(&self, words: &Words, at: usize) -> bool {
        words.len() >= at + self.tokens.len()
            && (0..self.tokens.len()).all(|i| self.token_matches(i, words.word(at + i)))
    }

    /// Whether the clause occurs in `words`.
    pub(crate) fn holds(&self, words: &Words) -> bool {
        (0..words.len()).any(|at| self.matches_at(words, at))
    }

    /// The word indices where the clause occurs in `words`.
    pub(crate) fn occurrences(&self, words: &Words) -> Vec<usize> {
        (0..words.len())
            .filter(|&at| self.matches_at(words, at))
            .collect()
    }

    /// A plain word, matched by its stem.
    fn word(word: String, occur: Occur) -> Clause {
        let stemmed = Some(StemProbe::new(&word));
        Clause {
            tokens: vec![word],
            prefix: false,
            quoted: false,
            occur,
            stemmed,
        }
    }

    /// Whether the clause is a plain stop word (dropped from a query that has other words).
    fn is_plain_stop_word(&self) -> bool {
        self.occur == Occur::Should && self.stemmed.is_some() && is_stop_word(&self.tokens[0])
    }
}

impl fmt::Display for Clause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = match self.occur {
            Occur::Should => "",
            Occur::Must => "+",
            Occur::MustNot => "-",
        };
        let star = if self.prefix { "*" } else { "" };
        if self.is_phrase() || self.quoted {
            write!(f, "{sign}\"{}{star}\"", self.tokens.join(" "))
        } else {
            write!(f, "{sign}{}{star}", self.tokens[0])
        }
    }
}

/// A query parsed into [`Clause`]s.
///
/// A file is a hit when it holds at least one of the query's clauses, every `+` clause and
/// no `-` clause; hits are ranked by how well they meet the clauses (see
/// [`Ranker`](super::Ranker)).
///
/// ```
/// use memory_core::search::ParsedQuery;
/// let q = ParsedQuery::parse(r#"When did Zoë deploy* the "staging server" -friday"#).unwrap();
/// let clauses: Vec<String> = q.clauses().iter().map(|c| c.to_string()).collect();
/// assert_eq!(clauses, ["zoe", "deploy*", "\"staging server\"", "-friday"]);
/// assert!(q.matches("Zoe deployed it."));
/// assert!(!q.matches("Zoe deployed it on friday."));
/// assert!(!q.matches("Nothing here."));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedQuery {
    clauses: Vec<Clause>,
}

impl ParsedQuery {
    /// Parses a query:
    ///
    /// - plain words are matched by their English stem (`paint` finds `painted`) and ranked:
    ///   none is required, files holding more of them (and rarer ones) come first;
    /// - stop words (`the`, `when`, `did`, ...) are left out unless quoted or all the query
    ///   has, so a whole question works;
    /// - `"double-quoted text"` is a phrase: those exact words next to each other, in order;
    /// - a word ending in `*` matches every word it begins (`deploy*` finds `deployment`);
    /// - `+clause` must be in a hit, `-clause` must not (`+word`, `-"a phrase"`, `+pre*`);
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
            // A sign counts only when a word or a quote follows it at once.
            let occur = match (first, rest[first.len_utf8()..].chars().next()) {
                ('+', Some(next)) if !next.is_whitespace() && next != '+' && next != '-' => {
                    rest = &rest[1..];
                    Occur::Must
                }
                ('-', Some(next)) if !next.is_whitespace() && next != '+' && next != '-' => {
                    rest = &rest[1..];
                    Occur::MustNot
                }
                _ => Occur::Should,
            };
            if rest.starts_with('"') {
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
                    quoted: true,
                    occur,
                    stemmed: None,
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
                let mut tokens: Vec<String> = tokens.into_iter().map(|t| t.text).collect();
                if tokens.len() > 1 && !prefix {
                    // A word the tokenizer splits is a phrase (`e-mail`, `v1.2`), unless all
                    // but one of its pieces are stop words: a possessive or a contraction
                    // (`Caroline's` → `caroline`, `didn't` → `didn`) is that one word.
                    let content: Vec<&String> =
                        tokens.iter().filter(|t| !is_stop_word(t)).collect();
                    match content.as_slice() {
                        [one] => tokens = vec![(*one).clone()],
                        [] => {
                            // Stop words only (`it's`): each a word of its own, dropped
                            // unless the query has nothing else.
                            for token in tokens {
                                clauses.push(Clause::word(token, occur));
                            }
                            continue;
                        }
                        _ => {}
                    }
                }
                if tokens.len() == 1 && !prefix {
                    let word = tokens.remove(0);
                    clauses.push(Clause::word(word, occur));
                } else {
                    clauses.push(Clause {
                        tokens,
                        prefix,
                        quoted: false,
                        occur,
                        stemmed: None,
                    });
                }
            }
            // The text is at most MAX_QUERY_BYTES, so this holds a few hundred clauses at
            // most before stop words go.
        }
        if clauses.is_empty() {
            return Err(QueryError::Empty);
        }
        if !clauses.iter().any(Clause::is_positive) {
            return Err(QueryError::OnlyExcluded);
        }
        // Stop words go, unless they are all the query looks for.
        if clauses
            .iter()
            .any(|c| c.is_positive() && !c.is_plain_stop_word())
        {
            clauses.retain(|c| !c.is_plain_stop_word());
        }
        if clauses.len() > MAX_CLAUSES {
            return Err(QueryError::TooManyClauses { max: MAX_CLAUSES });
        }
        Ok(ParsedQuery { clauses })
    }

    /// The clauses, in the order the query gave them (stop words left out).
    pub fn clauses(&self) -> &[Clause] {
        &self.clauses
    }

    /// The index terms a backend's index is asked for (OR-ed) to find every file the query
    /// may match: those of the clauses that are not excluded, without repeats, sorted.
    ///
    /// ```
    /// use memory_core::search::{IndexTerm, ParsedQuery};
    /// let q = ParsedQuery::parse(r#"painted "red door" -blue"#).unwrap();
    /// assert_eq!(q.index_terms(), [
    ///     IndexTerm::Prefix("paint".into()),
    ///     IndexTerm::Phrase { words: vec!["red".into(), "door".into()], prefix: false },
    /// ]);
    /// ```
    pub fn index_terms(&self) -> Vec<IndexTerm> {
        let mut terms: Vec<IndexTerm> = self
            .clauses
            .iter()
            .filter(|c| c.is_positive())
            .flat_map(Clause::index_terms)
            .collect();
        terms.sort();
        terms.dedup();
        terms
    }

    /// The FTS5 `MATCH` expression finding the files that hold any of
    /// [`index_terms`](Self::index_terms), for an FTS5 table that indexes
    /// [`folded_words`](super::folded_words) with the `ascii` tokenizer (memory-sqlite's
    /// and memory-search's): each term one quoted string (a folded word holds no quote), a
    /// prefix starred, all OR-ed. Engine syntax in the user's text never reaches FTS5.
    ///
    /// ```
    /// use memory_core::search::ParsedQuery;
    /// let q = ParsedQuery::parse(r#"Painted "red door" cat* -blue"#).unwrap();
    /// assert_eq!(q.fts5_expression(), r#""cat"* OR "paint"* OR "red door""#);
    /// ```
    pub fn fts5_expression(&self) -> String {
        self.index_terms()
            .iter()
            .map(|term| match term {
                IndexTerm::Word(word) => format!("\"{word}\""),
                IndexTerm::Prefix(prefix) => format!("\"{prefix}\"*"),
                IndexTerm::Phrase { words, prefix } => {
                    let star = if *prefix { "*" } else { "" };
                    format!("\"{}\"{star}", words.join(" "))
                }
            })
            .collect::<Vec<_>>()
            .join(" OR ")
    }

    /// Whether `text` is a hit: it holds a clause, every `+` clause and no `-` clause.
    pub fn matches(&self, text: &str) -> bool {
        self.matches_words(&Words::of(text))
    }

    /// Whether `text` holds every `+` clause and no `-` clause (whether or not it holds any
    /// other): what a file found by other means (by meaning, in a hybrid search) must meet.
    ///
    /// ```
    /// use memory_core::search::ParsedQuery;
    /// let q = ParsedQuery::parse("dogs +cats -mice").unwrap();
    /// assert!(q.admits("cats only"));
    /// assert!(!q.admits("dogs only") && !q.admits("cats and mice"));
    /// ```
    pub fn admits(&self, text: &str) -> bool {
        let words = Words::of(text);
        self.clauses.iter().all(|c| match c.occur {
            Occur::Should => true,
            Occur::Must => c.holds(&words),
            Occur::MustNot => !c.holds(&words),
        })
    }

    /// [`matches`](Self::matches) over a text already tokenized.
    pub fn matches_tokens(&self, words: &[Token]) -> bool {
        self.matches_words(&Words::from_tokens(words))
    }

    /// [`matches`](Self::matches) over a text's [`Words`].
    pub(crate) fn matches_words(&self, words: &Words) -> bool {
        let mut any = false;
        for clause in &self.clauses {
            let held = clause.holds(words);
            match clause.occur {
                Occur::Should => any |= held,
                Occur::Must if !held => return false,
                Occur::Must => any = true,
                Occur::MustNot if held => return false,
                Occur::MustNot => {}
            }
        }
        any
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
        // Possessives and contractions are their one content word.
        assert_eq!(clauses("Caroline's new dog's"), ["caroline", "new", "dog"]);
        assert_eq!(clauses("it's Zoë's"), ["zoe"]);
        assert_eq!(clauses("it's"), ["it", "s"]);
        assert_eq!(clauses("x\"b c\"y"), ["x", "\"b c\"", "y"]);
        assert_eq!(clauses("東京 Zoë"), ["東京", "zoe"]);
        // Punctuation alone next to real words is no clause.
        assert_eq!(clauses("deploy - & key"), ["deploy", "key"]);
        // OR and NOT are words like any other; `or` is a stop word.
        assert_eq!(clauses("cats OR dogs"), ["cats", "dogs"]);
    }

    #[test]
    fn signs_and_stop_words() {
        assert_eq!(
            clauses(r#"+deploy -friday +"red door" -pre* x-y"#),
            ["+deploy", "-friday", "+\"red door\"", "-pre*", "\"x y\""]
        );
        // A sign alone, doubled or before a space is punctuation.
        assert_eq!(clauses("+ x - y ++z --w"), ["x", "y", "z", "w"]);
        assert_eq!(
            clauses("When did Melanie paint a sunrise?"),
            ["melanie", "paint", "sunrise"]
        );
        // Quoted or required stop words stay; a query of stop words only keeps them.
        assert_eq!(clauses(r#""the" +when x"#), ["\"the\"", "+when", "x"]);
        assert_eq!(clauses("who are you"), ["who", "are", "you"]);
        let long = format!("{} x", vec!["the"; 100].join(" "));
        assert_eq!(clauses(&long), ["x"]);
    }

    #[test]
    fn bad_queries_are_typed_errors() {
        let err = |q: &str| ParsedQuery::parse(q).unwrap_err();
        assert_eq!(err(""), QueryError::Empty);
        assert_eq!(err("   "), QueryError::Empty);
        assert_eq!(err("!!! ---"), QueryError::Empty);
        assert_eq!(err("-x -\"y z\""), QueryError::OnlyExcluded);
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
        let q = ParsedQuery::parse(r#"+"quick brown" jump*"#).unwrap();
        assert!(q.matches("The Quick  Brown fox JUMPED."));
        assert!(q.matches("jumps\nquick\nbrown"));
        assert!(!q.matches("brown quick jumped"));
        assert!(q.matches("quick brown fox"));
        let q = ParsedQuery::parse("cafe").unwrap();
        assert!(q.matches("Un CAFÉ noir"));
        assert!(!q.matches("cafeteria"));
        assert!(ParsedQuery::parse("cafe*").unwrap().matches("cafeteria"));
        let q = ParsedQuery::parse("painting").unwrap();
        assert!(q.matches("I painted it"));
        assert!(
            !ParsedQuery::parse("\"painting\"")
                .unwrap()
                .matches("I painted it")
        );
        let q = ParsedQuery::parse("deploy -friday").unwrap();
        assert!(q.matches("deploy monday"));
        assert!(!q.matches("deploy friday"));
        assert!(!q.matches("friday"));
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
