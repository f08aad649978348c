//! Text the model sees for views: sizes, numbered lines, truncation, directory listings.
//! Pure functions, so every rule of the contract is tested here without a store.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::{FileMeta, MemoryPath};

/// Most characters of numbered lines a view returns before it is truncated.
pub(crate) const MAX_VIEW_CHARS: usize = 16_000;

/// Most lines a viewed file may have.
pub(crate) const MAX_LINES: usize = 999_999;

/// A byte count as the directory view shows it: `0B`, `1023B`, `1K`, `1.5K`, `1024.0K`, `1M`,
/// `3072G` (units of 1,024; one decimal, rounded half to even, unless the value is whole).
///
/// ```
/// assert_eq!(memory_core::format_size(1536), "1.5K");
/// assert_eq!(memory_core::format_size(1025), "1.0K");
/// ```
pub fn format_size(bytes: u64) -> String {
    if bytes == 0 {
        return "0B".to_owned();
    }
    let exponent = ((63 - bytes.leading_zeros()) / 10).min(3);
    let unit = ["B", "K", "M", "G"][exponent as usize];
    let divisor = 1u64 << (10 * exponent);
    if bytes.is_multiple_of(divisor) {
        format!("{}{unit}", bytes / divisor)
    } else {
        // `{:.1}` rounds the exact binary value half to even, as Python's format does.
        format!("{:.1}{unit}", bytes as f64 / divisor as f64)
    }
}

/// `{n:>6}\t{line}` for each line, numbered from `first`.
pub(crate) fn numbered<'a>(lines: impl IntoIterator<Item = &'a str>, first: usize) -> Vec<String> {
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| format!("{:>6}\t{line}", first + i))
        .collect()
}

/// Appends `{n:>6}\t{line}` for each line, numbered from `first` and joined by `\n`, to `out`:
/// the text [`join_truncated`] makes of [`numbered`] lines, written straight into `out` with
/// no string per line when it needs no truncation (the usual case).
///
/// `total` is the file's line count.
pub(crate) fn push_numbered(out: &mut String, lines: &[&str], first: usize, total: usize) {
    // Each line gets a number of at most six digits (`MAX_LINES`), so a prefix of seven
    // characters; a longer number (never shown by the tool) takes the general path.
    let fits = first
        .checked_add(lines.len())
        .is_some_and(|end| end <= 1_000_000);
    let chars = || {
        lines.iter().map(|l| 7 + l.chars().count()).sum::<usize>() + lines.len().saturating_sub(1)
    };
    if !fits || chars() > MAX_VIEW_CHARS {
        out.push_str(&join_truncated(
            &numbered(lines.iter().copied(), first),
            first,
            total,
        ));
        return;
    }
    out.reserve(lines.iter().map(|l| l.len() + 8).sum());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        // Formatted into `out` itself: no string per line.
        let _ = write!(out, "{:>6}\t{line}", first + i);
    }
}

/// Joins numbered lines, truncating past [`MAX_VIEW_CHARS`] with a notice.
///
/// `first` is the number of the first line given, `total` the file's line count.
pub(crate) fn join_truncated(lines: &[String], first: usize, total: usize) -> String {
    let full_chars: usize =
        lines.iter().map(|l| l.chars().count()).sum::<usize>() + lines.len().saturating_sub(1);
    if full_chars <= MAX_VIEW_CHARS {
        return lines.join("\n");
    }
    let mut kept = String::new();
    let mut used = 0;
    let mut shown = 0;
    for line in lines {
        let chars = line.chars().count();
        let needed = if shown == 0 { chars } else { chars + 1 };
        if used + needed > MAX_VIEW_CHARS {
            break;
        }
        if shown > 0 {
            kept.push('\n');
        }
        kept.push_str(line);
        used += needed;
        shown += 1;
    }
    if shown == 0 {
        // A single line longer than the limit: cut it, number prefix included.
        kept = lines[0].chars().take(MAX_VIEW_CHARS).collect();
        shown = 1;
    }
    let last = first + shown - 1;
    format!(
        "{kept}\n[Output truncated: showed lines {first}-{last} of {total}. Use view_range to see the rest.]"
    )
}

fn is_listed(name: &str) -> bool {
    !name.starts_with('.') && name != "node_modules"
}

#[derive(Default)]
struct Node {
    size: u64,
    is_dir: bool,
    children: BTreeMap<String, Node>,
}

/// The listing of a directory, two levels deep, from every file below it.
pub(crate) fn listing(dir: &MemoryPath, files: &[FileMeta]) -> String {
    let mut root = Node {
        is_dir: true,
        ..Node::default()
    };
    for file in files {
        root.size += file.size;
        // The path below `dir` (what `rebase` onto the root gives, without building and
        // checking a new path).
        let rest = if dir.is_root() {
            file.path.relative()
        } else {
            match file.path.as_str().strip_prefix(dir.as_str()) {
                Some("") => "",
                Some(rest) => match rest.strip_prefix('/') {
                    Some(rest) => rest,
                    None => continue,
                },
                None => continue,
            }
        };
        let mut segments = rest.split('/').filter(|s| !s.is_empty()).peekable();
        let mut node = &mut root;
        // Only the first two levels are shown; deeper files only add to sizes.
        for _ in 0..2 {
            let Some(segment) = segments.next() else {
                break;
            };
            if !node.children.contains_key(segment) {
                node.children.insert(segment.to_owned(), Node::default());
            }
            let Some(child) = node.children.get_mut(segment) else {
                break;
            };
            node = child;
            node.size += file.size;
            node.is_dir |= segments.peek().is_some();
        }
    }
    let mut out = format!(
        "Here're the files and directories up to 2 levels deep in {dir}, excluding hidden items and node_modules:\n{}\t{dir}",
        format_size(root.size)
    );
    // BTreeMap<String, _> iterates in byte order, which is UTF-8 byte order.
    for (name, child) in root.children.iter().filter(|(n, _)| is_listed(n)) {
        if child.is_dir {
            let _ = write!(out, "\n{}\t{dir}/{name}/", format_size(child.size));
            for (grand_name, grand) in child.children.iter().filter(|(n, _)| is_listed(n)) {
                let slash = if grand.is_dir { "/" } else { "" };
                let _ = write!(
                    out,
                    "\n{}\t{dir}/{name}/{grand_name}{slash}",
                    format_size(grand.size)
                );
            }
        } else {
            let _ = write!(out, "\n{}\t{dir}/{name}", format_size(child.size));
        }
    }
    out
}

/// The media type of an image file the tool returns as an image block, from its name.
pub(crate) fn image_media_type(path: &MemoryPath) -> Option<&'static str> {
    let name = path.name()?;
    [
        (".png", "image/png"),
        (".jpg", "image/jpeg"),
        (".jpeg", "image/jpeg"),
        (".gif", "image/gif"),
        (".webp", "image/webp"),
    ]
    .into_iter()
    .find(|(ext, _)| name.len() > ext.len() && name.ends_with(ext))
    .map(|(_, media_type)| media_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        for (n, want) in [
            (0, "0B"),
            (1, "1B"),
            (1023, "1023B"),
            (1024, "1K"),
            (1025, "1.0K"),
            (1280, "1.2K"),
            (1536, "1.5K"),
            (1792, "1.8K"),
            (2047, "2.0K"),
            (10239, "10.0K"),
            (1_048_575, "1024.0K"),
            (1_048_576, "1M"),
            (3 << 40, "3072G"),
        ] {
            assert_eq!(format_size(n), want, "{n}");
        }
    }

    fn meta(path: &str, size: u64) -> FileMeta {
        FileMeta {
            path: MemoryPath::parse(path).unwrap(),
            size,
            modified: None,
        }
    }

    #[test]
    fn listing_two_levels_sorted_hidden_skipped() {
        let files = [
            meta("/memories/a.md", 10),
            meta("/memories/a/x", 1),
            meta("/memories/a/b/c/d/deep.md", 2),
            meta("/memories/.hidden/x", 100),
            meta("/memories/node_modules/y", 5),
            meta("/memories/a/.secret", 7),
        ];
        let text = listing(&MemoryPath::root(), &files);
        assert_eq!(
            text,
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n\
             125B\t/memories\n\
             10B\t/memories/a/\n\
             2B\t/memories/a/b/\n\
             1B\t/memories/a/x\n\
             10B\t/memories/a.md"
        );
    }

    #[test]
    fn truncation() {
        let x = "x".repeat(93);
        let lines: Vec<String> = numbered(std::iter::repeat_n(x.as_str(), 200), 1);
        // Each numbered line is 6 + 1 + 93 = 100 characters; 158 lines and 157 newlines fit.
        let text = join_truncated(&lines, 1, 200);
        assert!(text.ends_with(
            "\n[Output truncated: showed lines 1-158 of 200. Use view_range to see the rest.]"
        ));
        let long = numbered(["y".repeat(20_000).as_str()], 5);
        let text = join_truncated(&long, 5, 9);
        let (kept, notice) = text.split_once('\n').unwrap();
        assert_eq!(kept.chars().count(), 16_000);
        assert_eq!(
            notice,
            "[Output truncated: showed lines 5-5 of 9. Use view_range to see the rest.]"
        );
    }

    /// The text written straight into the output is the one the per-line strings make.
    #[test]
    fn numbered_lines_written_in_place_match_the_joined_ones() {
        let long = "z".repeat(20_000);
        let wide = "é".repeat(150);
        let mut cases: Vec<(Vec<&str>, usize)> = vec![
            (vec![""], 1),
            (vec!["a", "", "b\tc", "ünï"], 1),
            (vec!["x"; 12], 995),
            (vec!["y"; 3], 999_998),
            (vec![long.as_str()], 4),
            (vec![wide.as_str(); 120], 1),
            (vec!["q"; 1], 123_456),
        ];
        cases.push((vec!["w"; 2_500], 1));
        for (lines, first) in cases {
            let total = first + lines.len() + 3;
            let mut direct = String::from("head:\n");
            push_numbered(&mut direct, &lines, first, total);
            let joined = format!(
                "head:\n{}",
                join_truncated(&numbered(lines.iter().copied(), first), first, total)
            );
            assert_eq!(direct, joined, "{first} {}", lines.len());
        }
    }

    #[test]
    fn images() {
        let media = |p: &str| image_media_type(&MemoryPath::parse(p).unwrap());
        assert_eq!(media("/memories/a.png"), Some("image/png"));
        assert_eq!(media("/memories/a.jpeg"), Some("image/jpeg"));
        assert_eq!(media("/memories/.png"), None);
        assert_eq!(media("/memories/a.PNG"), None);
        assert_eq!(media("/memories/a.webp"), Some("image/webp"));
    }
}
