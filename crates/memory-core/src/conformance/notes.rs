//! Generated notes for search benches: about 400 bytes each of everyday words, the same for
//! every backend, so that their figures compare.

/// The words the notes are made of (33, some rarer than others by chance).
pub const WORDS: &[&str] = &[
    "deploy",
    "rollback",
    "staging",
    "server",
    "invoice",
    "budget",
    "meeting",
    "laptop",
    "flight",
    "garden",
    "recipe",
    "contract",
    "password",
    "doctor",
    "birthday",
    "vacation",
    "salary",
    "apartment",
    "bug",
    "release",
    "kyoto",
    "lisbon",
    "oslo",
    "alice",
    "bruno",
    "chiara",
    "note",
    "remember",
    "weekly",
    "review",
    "shared",
    "folder",
    "important",
];

/// Note number `i`: a heading and six lines of nine words, the same for the same `i`; with
/// `rare`, its third line ends with those words (a query's needle).
///
/// ```
/// use memory_core::conformance::notes::note;
/// assert_eq!(note(7, None), note(7, None));
/// assert!(note(7, Some("zephyr quasar")).contains("zephyr quasar"));
/// ```
pub fn note(i: usize, rare: Option<&str>) -> String {
    let mut text = format!("# Note {i}\n\n");
    let mut x = i.wrapping_mul(2_654_435_761) | 1;
    for line in 0..6 {
        for _ in 0..9 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            text.push_str(WORDS[x % WORDS.len()]);
            text.push(' ');
        }
        if let (2, Some(rare)) = (line, rare) {
            text.push_str(rare);
        }
        text.push('\n');
    }
    text
}
