//! [`folded_words`]: a text's words as a full-text index holds them, folded fast.
//!
//! The rule is [`tokenize`]'s: a word is a run of letters, digits and
//! combining marks, folded (NFD, marks dropped, lower case). Most of a memory file is ASCII,
//! and an ASCII run needs none of that machinery: ASCII punctuation, spaces and control
//! characters always separate words (none is a letter, a digit or a mark), an ASCII letter or
//! digit decomposes to itself, and its lower case is its ASCII lower case. So [`folded_words`] cuts
//! the text at ASCII separators, lower-cases each all-ASCII piece in place, and hands only the
//! pieces holding a non-ASCII character to [`tokenize`] itself. The result is the same string,
//! byte for byte, as joining [`tokenize`]'s words with spaces (the tests check it on mixed
//! scripts, marks and random text), at a fraction of the cost: memory-sqlite's FTS5 rows and
//! memory-search's side index are made of it, and folding through `tokenize` was half of what
//! an SQLite write with its search row cost.

use super::tokenize;

/// The folded words of `text` ([`tokenize`]'s), one space between each: what an FTS5 table
/// with the `ascii` tokenizer indexes, since it splits there and nowhere else (a folded word
/// holds no ASCII separator).
///
/// ```
/// use memory_core::search::folded_words;
/// assert_eq!(folded_words("# Deploy-key: Zoë's café"), "deploy key zoe s cafe");
/// ```
pub fn folded_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut ascii = true;
    for (i, &b) in bytes.iter().enumerate() {
        if b.is_ascii() && !b.is_ascii_alphanumeric() {
            piece(&mut out, &text[start..i], ascii);
            start = i + 1;
            ascii = true;
        } else if !b.is_ascii() {
            ascii = false;
        }
    }
    piece(&mut out, &text[start..], ascii);
    out
}

/// Appends the words of `piece`, a stretch of text holding no ASCII separator: itself, lower
/// case, when it is all ASCII; else whatever [`tokenize`] makes of it.
fn piece(out: &mut String, piece: &str, ascii: bool) {
    if piece.is_empty() {
        return;
    }
    if ascii {
        push_word(out, piece);
        let word = out.len() - piece.len();
        out[word..].make_ascii_lowercase();
    } else {
        for token in tokenize(piece) {
            push_word(out, &token.text);
        }
    }
}

fn push_word(out: &mut String, word: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(word);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: memory-core's words, joined by spaces.
    fn reference(text: &str) -> String {
        tokenize(text)
            .into_iter()
            .map(|t| t.text)
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn ascii_text_is_split_and_lower_cased() {
        assert_eq!(
            folded_words("# Deploy-key: rotate *WEEKLY*, v2.0!\n\tok"),
            "deploy key rotate weekly v2 0 ok"
        );
        assert_eq!(folded_words(""), "");
        assert_eq!(folded_words("!!! ... \n"), "");
        assert_eq!(folded_words("x"), "x");
    }

    #[test]
    fn matches_memory_core_on_unicode() {
        for text in [
            "Crème BRÛLÉE naïve",
            "e\u{301}te\u{301} and \u{e9}t\u{e9}",
            "ΣΟΦΊΑ σοφία",
            "Zoë likes 東京. 東京タワー",
            "abc\u{301}def",
            "\u{301}\u{302} lone marks",
            "x\u{301}",
            "\u{301}x",
            "İstanbul ǅemal ß ﬁle Ⅻ ١٢٣",
            "foo\u{200B}bar nbsp\u{a0}here em—dash",
            "mixed\u{301}-ascii-ÄÖÜ_underscore",
            "tab\u{0}nul\u{7f}del",
            "😀emoji😀 word",
        ] {
            assert_eq!(folded_words(text), reference(text), "{text:?}");
        }
    }

    #[test]
    fn matches_memory_core_on_random_text() {
        // Characters from every class the rule tells apart: ASCII letters, digits and
        // separators, precomposed and decomposed accents, lone marks, other scripts, non-ASCII
        // separators, a character whose lower case is longer.
        const POOL: &[char] = &[
            'a', 'Z', 'q', '7', '0', ' ', '\n', '-', '_', '.', '\u{0}', 'é', 'É', '\u{301}',
            '\u{308}', 'ß', 'İ', 'Σ', 'ς', '東', 'タ', '١', '\u{a0}', '—', '\u{200B}', '😀', 'ǅ',
            'Ⅻ', 'ﬁ',
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..2_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 24) as usize;
            let mut text = String::new();
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push(POOL[(x % POOL.len() as u64) as usize]);
            }
            assert_eq!(folded_words(&text), reference(&text), "{text:?}");
        }
    }
}
