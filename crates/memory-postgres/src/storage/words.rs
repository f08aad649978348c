//! A file's words as a PostgreSQL `tsvector`, and a search query as the `tsquery` that finds its
//! candidates.

use memory_core::search::{IndexTerm, ParsedQuery, searchable_text, tokenize};

/// Longest lexeme PostgreSQL keeps (bytes); a longer word is left out of `words`.
const MAX_LEXEME_BYTES: usize = 2_046;
/// Most lexeme bytes one tsvector holds here (PostgreSQL's limit is just under 1 MiB); words
/// first seen past it are left out.
const MAX_TSVECTOR_BYTES: usize = 1_000_000;
/// Most positions PostgreSQL keeps per lexeme, and the largest position.
const MAX_POSITIONS: usize = 256;
const MAX_POSITION: usize = 16_383;

/// A file's words as a tsvector literal: memory-core's folded tokens, each with its positions
/// (kept from when `ts_rank` ranked); empty for content that is not UTF-8. Tokens hold only letters, digits and
/// marks, so quoting them needs no escapes.
pub(super) fn tsvector(contents: &[u8]) -> String {
    let Some(text) = searchable_text(contents) else {
        return String::new();
    };
    let mut order: Vec<String> = Vec::new();
    let mut positions: std::collections::HashMap<String, Vec<usize>> =
        std::collections::HashMap::new();
    let mut bytes = 0;
    for (i, token) in tokenize(text).into_iter().enumerate() {
        if token.text.len() > MAX_LEXEME_BYTES {
            continue;
        }
        let position = (i + 1).min(MAX_POSITION);
        match positions.get_mut(&token.text) {
            Some(list) if list.len() < MAX_POSITIONS && list.last() != Some(&position) => {
                list.push(position);
            }
            Some(_) => {}
            None if bytes + token.text.len() <= MAX_TSVECTOR_BYTES => {
                bytes += token.text.len();
                order.push(token.text.clone());
                positions.insert(token.text, vec![position]);
            }
            None => {}
        }
    }
    let mut out = String::with_capacity(bytes * 2);
    for word in &order {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push('\'');
        out.push_str(word);
        out.push_str("':");
        let list = &positions[word];
        for (i, p) in list.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&p.to_string());
        }
    }
    out
}

/// The tsquery that selects candidates: the query's index terms OR-ed, a prefix as `'dep':*`,
/// a phrase as its words AND-ed (not `<->`: positions past PostgreSQL's limit would hide a
/// file), so the rows found are a superset of the hits. Words hold only letters, digits and
/// marks, so quoting them needs no escapes.
pub(super) fn tsquery(parsed: &ParsedQuery) -> String {
    let lexeme = |word: &str, prefix: bool| format!("'{word}'{}", if prefix { ":*" } else { "" });
    parsed
        .index_terms()
        .iter()
        .map(|term| match term {
            IndexTerm::Word(word) => lexeme(word, false),
            IndexTerm::Prefix(prefix) => lexeme(prefix, true),
            IndexTerm::Phrase { words, prefix } => {
                let last = words.len() - 1;
                let all: Vec<String> = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| lexeme(w, *prefix && i == last))
                    .collect();
                format!("({})", all.join(" & "))
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}
