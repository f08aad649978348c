//! Words as people write them: English stemming, the stop words a query ignores, and the
//! index terms that find every inflection of a word in an index of unstemmed words.
//!
//! - [`stem`] is Snowball's English (Porter2) stemmer over a folded word, so `paint`,
//!   `painted` and `painting` are one word to a search. Only words of ASCII letters are
//!   stemmed: a word with a digit (`v2`) or another script (`東京`) is compared as it is.
//! - [`is_stop_word`] names the function words (`the`, `when`, `did`, ...) a query drops
//!   unless they are quoted or are all the query has, so a whole question works as a query.
//! - A stem probe is how an index of unstemmed words (FTS5, a `tsvector`) finds the files
//!   that may hold a word with a given stem: every inflection of a word begins with its stem
//!   minus a trailing `e`, `i` or `y` (`hoping`/`hope` → `hop`, `happy`/`happi` → `happ`), so a
//!   prefix query on that finds them all; the ranker then keeps only the words whose stem is
//!   the query's. A stem too short for a useful prefix is looked for in its common forms.

use rust_stemmers::{Algorithm, Stemmer};

use super::query::IndexTerm;

/// The shortest prefix an index is asked for; below it, a word's common forms are listed.
const MIN_PROBE_CHARS: usize = 3;

/// The English stop words a query ignores unless quoted: articles, pronouns, auxiliaries,
/// prepositions, conjunctions, question words, and the pieces the tokenizer cuts from
/// contractions and possessives (`Caroline's` → `caroline`, `s`; `didn't` → `didn`, `t`).
/// Sorted, for the binary search.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "between",
    "both",
    "but",
    "by",
    "can",
    "cannot",
    "could",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "during",
    "each",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "ll",
    "m",
    "me",
    "my",
    "myself",
    "of",
    "on",
    "or",
    "our",
    "ours",
    "ourselves",
    "re",
    "s",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "until",
    "up",
    "us",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Whether a folded word is an English stop word (see the module's documentation).
///
/// ```
/// use memory_core::search::is_stop_word;
/// assert!(is_stop_word("when") && is_stop_word("did") && is_stop_word("the"));
/// assert!(!is_stop_word("paint"));
/// ```
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Whether a folded word is one [`stem`] changes: ASCII letters only.
fn is_stemmable(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase())
}

/// The stem of a folded word (Snowball English); the word itself when it is not all ASCII
/// letters.
///
/// ```
/// use memory_core::search::stem;
/// assert_eq!(stem("painted"), stem("paint"));
/// assert_eq!(stem("running"), stem("run"));
/// assert_eq!(stem("sunrises"), stem("sunrise"));
/// assert_eq!(stem("v2"), "v2");
/// assert_eq!(stem("東京"), "東京");
/// ```
pub fn stem(word: &str) -> String {
    if !is_stemmable(word) {
        return word.to_owned();
    }
    Stemmer::create(Algorithm::English).stem(word).into_owned()
}

/// The prefix every word with stem `stem` begins with (see the module's documentation), or
/// `None` when it would be shorter than [`MIN_PROBE_CHARS`].
fn probe_prefix(stem: &str) -> Option<&str> {
    let prefix = stem.trim_end_matches(['e', 'i', 'y']);
    (prefix.len() >= MIN_PROBE_CHARS).then_some(prefix)
}

/// The forms a short stem is looked for in: the query's word, the stem, and the stem with
/// the common English endings.
fn common_forms(stem: &str, folded: &str) -> Vec<String> {
    let mut forms = vec![folded.to_owned(), stem.to_owned()];
    for ending in ["s", "es", "d", "ed", "ing", "er", "ers", "y", "ies", "ied"] {
        forms.push(format!("{stem}{ending}"));
    }
    if let Some(base) = stem.strip_suffix("ie") {
        // `die` → `dying`, `lie` → `lying`.
        forms.push(format!("{base}ying"));
    }
    if let Some(last) = stem.chars().last() {
        // A doubled last consonant: `run` → `running`, `runner`.
        for ending in ["ing", "ed", "er", "ers"] {
            forms.push(format!("{stem}{last}{ending}"));
        }
    }
    forms.sort();
    forms.dedup();
    forms
}

/// A query word matched by stem: which words of a document are its inflections, and which
/// index terms find the files holding them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StemProbe {
    /// The word as the query wrote it, folded.
    folded: String,
    /// Its stem.
    stem: String,
    /// The prefix every inflection begins with, when long enough.
    prefix: Option<String>,
    /// Otherwise the forms looked for (sorted).
    forms: Vec<String>,
}

impl StemProbe {
    /// The probe of a folded query word.
    pub(crate) fn new(folded: &str) -> StemProbe {
        let stem = stem(folded);
        let prefix = is_stemmable(folded)
            .then(|| probe_prefix(&stem).map(str::to_owned))
            .flatten();
        let forms = match (&prefix, is_stemmable(folded)) {
            (None, true) => common_forms(&stem, folded),
            _ => Vec::new(),
        };
        StemProbe {
            folded: folded.to_owned(),
            stem,
            prefix,
            forms,
        }
    }

    /// Whether a document's folded word is an inflection of the query's. The cheap test (the
    /// prefix, or the listed forms) comes first and is exactly what [`index_terms`] finds in
    /// an index, so a file an index returns and a file a scan reads are judged alike.
    ///
    /// [`index_terms`]: StemProbe::index_terms
    pub(crate) fn matches(&self, word: &str) -> bool {
        // Every word this probe matches begins as the query's word does (the prefix is a
        // prefix of the stem, which begins as the word; a listed form begins with the stem):
        // one byte compared turns most words away before any longer comparison.
        if word.as_bytes().first() != self.folded.as_bytes().first() {
            return false;
        }
        if word == self.folded {
            return true;
        }
        let may = match &self.prefix {
            Some(prefix) => word.starts_with(prefix.as_str()),
            None => self
                .forms
                .binary_search_by(|f| f.as_str().cmp(word))
                .is_ok(),
        };
        may && is_stemmable(word) && stem(word) == self.stem
    }

    /// The index terms whose union holds every file with a word this probe matches: the
    /// prefix (plus the word itself if the prefix does not cover it), or the listed forms, or
    /// the word alone when it is not stemmed.
    pub(crate) fn index_terms(&self) -> Vec<IndexTerm> {
        if let Some(prefix) = &self.prefix {
            let mut terms = vec![IndexTerm::Prefix(prefix.clone())];
            if !self.folded.starts_with(prefix.as_str()) {
                terms.push(IndexTerm::Word(self.folded.clone()));
            }
            return terms;
        }
        if self.forms.is_empty() {
            return vec![IndexTerm::Word(self.folded.clone())];
        }
        self.forms.iter().cloned().map(IndexTerm::Word).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_and_folded() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| super::super::fold(w) == *w));
    }

    #[test]
    fn inflections_share_a_stem() {
        for group in [
            &["paint", "painted", "painting", "paints"][..],
            &["run", "running", "runs"],
            &["hike", "hiked", "hiking", "hikes"],
            &["puppy", "puppies"],
            &["study", "studies", "studied"],
            &["hope", "hoping", "hoped"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.windows(2).all(|s| s[0] == s[1]),
                "{group:?}: {stems:?}"
            );
        }
    }

    /// Every inflection a stem covers passes the cheap test, so the index terms find it.
    #[test]
    fn probes_cover_every_inflection() {
        let words = [
            "paint",
            "painted",
            "painting",
            "run",
            "running",
            "hope",
            "hoping",
            "happy",
            "happiness",
            "study",
            "studies",
            "dying",
            "die",
            "dies",
            "agree",
            "agreed",
            "employee",
            "employees",
            "sunrise",
            "sunrises",
            "go",
            "goes",
            "going",
        ];
        for query in words {
            let s = stem(query);
            for word in words {
                if stem(word) == s {
                    let probe = StemProbe::new(query);
                    assert!(probe.matches(word), "{query} → {word}");
                    let found = probe.index_terms().iter().any(|t| match t {
                        IndexTerm::Word(w) => w == word,
                        IndexTerm::Prefix(p) => word.starts_with(p.as_str()),
                        IndexTerm::Phrase { .. } => false,
                    });
                    assert!(found, "{query} → {word}: {:?}", probe.index_terms());
                }
            }
        }
    }
}
