//! A line diff for the history pages, by the `similar` crate (Myers' algorithm, with a
//! deadline so a huge change cannot hold a request): the lines both texts share are kept in
//! order, the rest shown as removed or added.

use std::time::{Duration, Instant};

use similar::{Algorithm, ChangeTag};

/// One line of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// In both texts.
    Same(&'a str),
    /// Only in the old text.
    Removed(&'a str),
    /// Only in the new text.
    Added(&'a str),
}

/// Longest a diff may search for the smallest edit; past it `similar` gives a larger (still
/// correct) one.
const DEADLINE: Duration = Duration::from_millis(500);

/// The lines of `old` and `new` as a diff, in order.
pub(crate) fn lines<'a>(old: &'a str, new: &'a str) -> Vec<Line<'a>> {
    let a = split(old);
    let b = split(new);
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &a,
        &b,
        Some(Instant::now() + DEADLINE),
    );
    ops.iter()
        .flat_map(|op| op.iter_changes(&a, &b))
        .map(|change| match change.tag() {
            ChangeTag::Equal => Line::Same(change.value()),
            ChangeTag::Delete => Line::Removed(change.value()),
            ChangeTag::Insert => Line::Added(change.value()),
        })
        .collect()
}

/// The lines of `text`; a final newline does not make an empty last line.
fn split(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Line::{Added, Removed, Same};
    use super::*;

    #[test]
    fn keeps_common_lines_and_marks_the_rest() {
        let d = lines("a\nb\nc\nd\n", "a\nc\nx\nd\n");
        assert_eq!(
            d,
            vec![Same("a"), Removed("b"), Same("c"), Added("x"), Same("d")]
        );
    }

    #[test]
    fn empty_and_identical_texts() {
        assert_eq!(lines("", ""), vec![]);
        assert_eq!(lines("", "new\n"), vec![Added("new")]);
        assert_eq!(lines("old", ""), vec![Removed("old")]);
        assert_eq!(lines("same\n", "same\n"), vec![Same("same")]);
    }

    #[test]
    fn a_replaced_middle_is_removed_then_added() {
        let old: String = (0..2100).map(|i| format!("o{i}\n")).collect();
        let new: String = (0..2100).map(|i| format!("n{i}\n")).collect();
        let d = lines(&old, &new);
        assert_eq!(d.len(), 4200);
        assert!(d[..2100].iter().all(|l| matches!(l, Removed(_))));
        assert!(d[2100..].iter().all(|l| matches!(l, Added(_))));
    }
}
