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
    let mut out = String::new();
    push_size(&mut out, bytes);
    out
}

/// Appends [`format_size`]'s text to `out`.
fn push_size(out: &mut String, bytes: u64) {
    if bytes == 0 {
        out.push_str("0B");
        return;
    }
    let exponent = ((63 - bytes.leading_zeros()) / 10).min(3);
    let unit = ["B", "K", "M", "G"][exponent as usize];
    let divisor = 1u64 << (10 * exponent);
    if bytes.is_multiple_of(divisor) {
        push_decimal(out, bytes / divisor);
        out.push_str(unit);
    } else if bytes < 1 << f64::MANTISSA_DIGITS {
        // Below 2^53 the quotient is exact in binary, so rounding it to tenths half to even
        // (what `{:.1}` and Python do) is integer arithmetic: no float formatting.
        let scaled = u128::from(bytes) * 10;
        let divisor = u128::from(divisor);
        let (mut tenths, rest) = (scaled / divisor, scaled % divisor);
        if 2 * rest > divisor || (2 * rest == divisor && tenths % 2 == 1) {
            tenths += 1;
        }
        push_decimal(out, (tenths / 10) as u64);
        out.push('.');
        out.push(char::from(b'0' + (tenths % 10) as u8));
        out.push_str(unit);
    } else {
        // `{:.1}` rounds the float's exact binary value half to even, as Python's format does.
        let _ = write!(out, "{:.1}{unit}", bytes as f64 / divisor as f64);
    }
}

/// Appends `n` in decimal (what `{n}` writes, without the formatting machinery, which is most
/// of a listing line's cost).
fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[start..]).unwrap_or("?"));
}

/// Appends `n` right-aligned in six columns (what `{n:>6}` writes), for `n` below 1,000,000.
fn push_line_number(out: &mut String, n: usize) {
    let mut digits = [b' '; 6];
    let mut rest = n;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits).unwrap_or("?"));
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
    let joined = |len: fn(&str) -> usize| {
        lines.iter().map(|l| 7 + len(l)).sum::<usize>() + lines.len().saturating_sub(1)
    };
    // A line has at most as many characters as bytes: count them only when the bytes alone
    // could pass the limit.
    if !fits
        || (joined(str::len) > MAX_VIEW_CHARS && joined(|l| l.chars().count()) > MAX_VIEW_CHARS)
    {
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
        // Written into `out` itself: no string per line, no formatting machinery.
        push_line_number(out, first + i);
        out.push('\t');
        out.push_str(line);
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

/// A file or folder of a listing, its name borrowed from the listed paths.
#[derive(Default)]
struct Node<'a> {
    size: u64,
    is_dir: bool,
    children: BTreeMap<&'a str, Node<'a>>,
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
            node = node.children.entry(segment).or_default();
            node.size += file.size;
            node.is_dir |= segments.peek().is_some();
        }
    }
    let mut out = String::with_capacity(160 + files.len() * (dir.as_str().len() + 32));
    out.push_str("Here're the files and directories up to 2 levels deep in ");
    out.push_str(dir.as_str());
    out.push_str(", excluding hidden items and node_modules:\n");
    push_size(&mut out, root.size);
    out.push('\t');
    out.push_str(dir.as_str());
    let line = |out: &mut String, size: u64, names: &[&str], slash: bool| {
        out.push('\n');
        push_size(out, size);
        out.push('\t');
        out.push_str(dir.as_str());
        for name in names {
            out.push('/');
            out.push_str(name);
        }
        if slash {
            out.push('/');
        }
    };
    // A BTreeMap of `str` keys iterates in byte order, which is UTF-8 byte order.
    for (name, child) in root.children.iter().filter(|(n, _)| is_listed(n)) {
        line(&mut out, child.size, &[name], child.is_dir);
        if child.is_dir {
            for (grand_name, grand) in child.children.iter().filter(|(n, _)| is_listed(n)) {
                line(&mut out, grand.size, &[name, grand_name], grand.is_dir);
            }
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

    /// The integer rounding gives what `{:.1}` of the float gives, for every value near a
    /// rounding boundary of each unit and a spread of others.
    #[test]
    fn sizes_match_the_float_formatting() {
        let float = |bytes: u64| {
            let exponent = ((63 - bytes.leading_zeros()) / 10).min(3);
            let unit = ["B", "K", "M", "G"][exponent as usize];
            let divisor = 1u64 << (10 * exponent);
            if bytes.is_multiple_of(divisor) {
                format!("{}{unit}", bytes / divisor)
            } else {
                format!("{:.1}{unit}", bytes as f64 / divisor as f64)
            }
        };
        let mut values: Vec<u64> = (1..5000).collect();
        for exponent in 1..4u32 {
            let divisor = 1u64 << (10 * exponent);
            for whole in [1u64, 2, 7, 99, 1023, 5000] {
                for tenth in 0..10u64 {
                    // Around each half tenth: the ties and their neighbours.
                    let tie = whole * divisor + (2 * tenth + 1) * divisor / 20;
                    values.extend(tie.saturating_sub(2)..tie + 3);
                }
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 40));
        }
        values.extend([(1 << 53) - 1, 1 << 53, (1 << 53) + 1, u64::MAX]);
        for bytes in values.into_iter().filter(|&b| b > 0) {
            assert_eq!(format_size(bytes), float(bytes), "{bytes}");
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
