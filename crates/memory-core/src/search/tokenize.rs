//! The one tokenizer every backend's search uses, so a word is found the same way everywhere.
//!
//! A token is a run of Unicode letters and digits (with the combining marks attached to
//! them); everything else separates tokens. Each token is folded: decomposed (NFD), stripped
//! of its combining marks (diacritics) and lower-cased, so `Café`, `CAFE` and `cafe` are one
//! word. This is the rule of SQLite FTS5's `unicode61 remove_diacritics 2` tokenizer, so an
//! FTS5 index built with it agrees with this tokenizer on which files hold a word; scripts
//! without spaces between words (Chinese, Japanese) give one token per run, as there.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// One word of a text: its folded form and where it stands in the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The folded word (no diacritics, lower case).
    pub text: String,
    /// Byte offset of its first character in the text.
    pub start: usize,
    /// Byte offset just past its last character.
    pub end: usize,
}

/// Whether `c` belongs to a word.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

/// Folds one word: NFD, combining marks dropped, lower case.
///
/// ```
/// use memory_core::search::fold;
/// assert_eq!(fold("Café"), "cafe");
/// assert_eq!(fold("ÅNGSTRÖM"), "angstrom");
/// assert_eq!(fold("東京"), "東京");
/// ```
pub fn fold(word: &str) -> String {
    // ASCII decomposes to itself and holds no combining mark: only the case changes. Most of
    // a memory file is ASCII, and this skips the decomposition for every such word.
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(word.len());
    for c in word.nfd().filter(|c| !is_combining_mark(*c)) {
        out.extend(c.to_lowercase());
    }
    out
}

/// The words of `text`, in order, folded (see the module's documentation).
///
/// ```
/// use memory_core::search::tokenize;
/// let words: Vec<String> = tokenize("Deploy-key: rotate *weekly*, Zoë!").into_iter().map(|t| t.text).collect();
/// assert_eq!(words, ["deploy", "key", "rotate", "weekly", "zoe"]);
/// ```
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (is_word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                push_token(&mut tokens, text, s, i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        push_token(&mut tokens, text, s, text.len());
    }
    tokens
}

fn push_token(tokens: &mut Vec<Token>, text: &str, start: usize, end: usize) {
    let folded = fold(&text[start..end]);
    // A word made of combining marks alone folds to nothing: it is no word.
    if !folded.is_empty() {
        tokens.push(Token {
            text: folded,
            start,
            end,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    /// The ASCII shortcut of `fold` gives what the decomposition gives, for every ASCII
    /// character.
    #[test]
    fn ascii_words_fold_as_the_decomposition_does() {
        let all: String = (0u8..128).map(char::from).collect();
        let decomposed: String = all
            .nfd()
            .filter(|c| !is_combining_mark(*c))
            .flat_map(char::to_lowercase)
            .collect();
        assert_eq!(fold(&all), decomposed);
        assert_eq!(fold("Deploy-KEY_v2"), "deploy-key_v2");
    }

    #[test]
    fn splits_on_everything_but_letters_and_digits() {
        assert_eq!(
            words("a/b.md  x_y\tz9 -- 3.14"),
            ["a", "b", "md", "x", "y", "z9", "3", "14"]
        );
        assert!(words("!!! *** \"\" ...").is_empty());
        assert!(words("").is_empty());
    }

    #[test]
    fn folds_case_and_diacritics() {
        assert_eq!(words("Crème BRÛLÉE naïve"), ["creme", "brulee", "naive"]);
        // Precomposed and decomposed forms are one word.
        assert_eq!(words("e\u{301}te\u{301}"), words("\u{e9}t\u{e9}"));
        assert_eq!(words("ΣΟΦΊΑ"), ["σοφια"]);
    }

    #[test]
    fn offsets_point_into_the_original() {
        let text = "Zoë likes 東京.";
        for token in tokenize(text) {
            assert_eq!(fold(&text[token.start..token.end]), token.text);
        }
        assert_eq!(words(text), ["zoe", "likes", "東京"]);
    }

    #[test]
    fn lone_combining_marks_are_no_word() {
        assert!(words("\u{301}\u{302}").is_empty());
    }
}
