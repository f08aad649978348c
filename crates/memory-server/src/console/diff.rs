//! A line diff for the history pages: the lines both texts share are kept in order (a
//! longest common subsequence), the rest shown as removed or added.

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

/// Largest table (old lines × new lines, after the common head and tail are taken off) the
/// exact diff computes; past it the changed middle is shown as removed, then added.
const MAX_CELLS: usize = 4_000_000;

/// The lines of `old` and `new` as a diff, in order.
pub(crate) fn lines<'a>(old: &'a str, new: &'a str) -> Vec<Line<'a>> {
    let a: Vec<&str> = split(old);
    let b: Vec<&str> = split(new);
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out: Vec<Line<'a>> = a[..head].iter().map(|l| Line::Same(l)).collect();
    if am.len().saturating_mul(bm.len()) > MAX_CELLS {
        out.extend(am.iter().map(|l| Line::Removed(l)));
        out.extend(bm.iter().map(|l| Line::Added(l)));
    } else {
        middle(am, bm, &mut out);
    }
    out.extend(a[a.len() - tail..].iter().map(|l| Line::Same(l)));
    out
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

/// The exact diff of `a` and `b` by dynamic programming: `len[i][j]` is the length of the
/// longest common subsequence of `a[i..]` and `b[j..]`.
fn middle<'a>(a: &[&'a str], b: &[&'a str], out: &mut Vec<Line<'a>>) {
    let (n, m) = (a.len(), b.len());
    let width = m + 1;
    let mut len = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            len[i * width + j] = if a[i] == b[j] {
                len[(i + 1) * width + j + 1] + 1
            } else {
                len[(i + 1) * width + j].max(len[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            out.push(Line::Same(a[i]));
            i += 1;
            j += 1;
        } else if len[(i + 1) * width + j] >= len[i * width + j + 1] {
            out.push(Line::Removed(a[i]));
            i += 1;
        } else {
            out.push(Line::Added(b[j]));
            j += 1;
        }
    }
    out.extend(a[i..].iter().map(|l| Line::Removed(l)));
    out.extend(b[j..].iter().map(|l| Line::Added(l)));
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
    fn a_replaced_middle_beyond_the_table_is_removed_then_added() {
        let old: String = (0..2100).map(|i| format!("o{i}\n")).collect();
        let new: String = (0..2100).map(|i| format!("n{i}\n")).collect();
        let d = lines(&old, &new);
        assert_eq!(d.len(), 4200);
        assert!(d[..2100].iter().all(|l| matches!(l, Removed(_))));
        assert!(d[2100..].iter().all(|l| matches!(l, Added(_))));
    }
}
