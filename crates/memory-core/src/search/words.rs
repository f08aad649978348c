//! A text's words as the ranker reads them: one folded copy of the text and each word's place
//! in it, with no allocation per word.
//!
//! The words are [`tokenize`]'s, in order, folded alike (the tests check it), laid end to end
//! in one string. Most of a memory file is ASCII, and an ASCII word needs only lower-casing:
//! only the stretches holding another character go through [`tokenize`].

use super::tokenize::{Token, tokenize};

/// One word: where its folded form lies in [`Words::folded`], and where it starts in the
/// original text.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
    original: usize,
}

/// The words of a text (see the module's documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct Words {
    folded: String,
    spans: Vec<Span>,
}

impl Words {
    /// The words of `text`. Stretches of ASCII are cut and lower-cased here; only a stretch
    /// holding another character goes through [`tokenize`] (the rule of
    /// [`folded_words`](super::folded_words)).
    pub(crate) fn of(text: &str) -> Words {
        let mut words = Words {
            folded: String::with_capacity(text.len()),
            spans: Vec::with_capacity(text.len() / 6),
        };
        let bytes = text.as_bytes();
        let mut start = 0;
        let mut ascii = true;
        for (i, &b) in bytes.iter().enumerate() {
            if b.is_ascii() && !b.is_ascii_alphanumeric() {
                words.piece(text, start, i, ascii);
                start = i + 1;
                ascii = true;
            } else if !b.is_ascii() {
                ascii = false;
            }
        }
        words.piece(text, start, text.len(), ascii);
        words
    }

    /// Adds the words of `text[start..end]`, a stretch holding no ASCII separator.
    fn piece(&mut self, text: &str, start: usize, end: usize, ascii: bool) {
        if start == end {
            return;
        }
        if ascii {
            self.push(&text[start..end], start);
            let from = self.folded.len() - (end - start) - 1;
            self.folded[from..].make_ascii_lowercase();
        } else {
            for token in tokenize(&text[start..end]) {
                self.push(&token.text, start + token.start);
            }
        }
    }

    /// Appends a word (then a space) and its span.
    fn push(&mut self, word: &str, original: usize) {
        let at = self.folded.len();
        self.folded.push_str(word);
        self.folded.push(' ');
        self.spans.push(Span {
            start: u32::try_from(at).unwrap_or(u32::MAX),
            end: u32::try_from(at + word.len()).unwrap_or(u32::MAX),
            original,
        });
    }

    /// The words of an already tokenized text.
    pub(crate) fn from_tokens(tokens: &[Token]) -> Words {
        let mut words = Words {
            folded: String::with_capacity(tokens.iter().map(|t| t.text.len() + 1).sum()),
            spans: Vec::with_capacity(tokens.len()),
        };
        for token in tokens {
            words.push(&token.text, token.start);
        }
        words
    }

    /// How many words.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The `i`-th word, folded.
    pub(crate) fn word(&self, i: usize) -> &str {
        let span = self.spans[i];
        &self.folded[span.start as usize..span.end as usize]
    }

    /// Where the `i`-th word starts in the original text (a byte offset).
    pub(crate) fn start(&self, i: usize) -> usize {
        self.spans[i].original
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(words: &Words) -> Vec<(String, usize)> {
        (0..words.len())
            .map(|i| (words.word(i).to_owned(), words.start(i)))
            .collect()
    }

    /// The fast ASCII path gives exactly what the tokenizer gives.
    #[test]
    fn the_same_words_as_the_tokenizer() {
        for text in [
            "",
            "Deploy-key: rotate *weekly*, v1.2!",
            "  # Title\n\nMelanie: I painted\tit.\r\n",
            "Zoë likes 東京 and CAFÉ",
            "e\u{301}te\u{301} x",
            "# Session 3 — 2022-03-22\nCaroline’s dog, naïve-ish Ünïcode.",
        ] {
            let tokens = tokenize(text);
            let want: Vec<(String, usize)> =
                tokens.iter().map(|t| (t.text.clone(), t.start)).collect();
            assert_eq!(all(&Words::of(text)), want, "{text:?}");
            assert_eq!(all(&Words::from_tokens(&tokens)), want, "{text:?}");
        }
    }
}
