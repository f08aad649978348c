//! [`MemoryPath`]: the validated, normalized path every storage call takes.

use std::fmt;

/// The root every memory path lives under.
pub const ROOT: &str = "/memories";

/// Longest normalized path, in bytes, `/memories` included.
pub const MAX_PATH_BYTES: usize = 1024;
/// Longest single name (segment), in bytes.
pub const MAX_SEGMENT_BYTES: usize = 255;
/// Most segments below `/memories`.
pub const MAX_SEGMENTS: usize = 20;

/// A path inside the memory store, validated and normalized.
///
/// This is the only way a path reaches a [`Storage`](crate::Storage): backends never see a raw
/// string. Its invariants:
///
/// - it is `/memories` or starts with `/memories/`;
/// - no segment is empty, `.` or `..`; no trailing `/` (one given is dropped);
/// - no backslash, no control character (U+0000–U+001F, U+007F, U+0080–U+009F), and no
///   percent-encoded `.`, `/` or `\` (`%2e`, `%2f`, `%5c` in any case);
/// - at most [`MAX_PATH_BYTES`] bytes in all, [`MAX_SEGMENT_BYTES`] per segment and
///   [`MAX_SEGMENTS`] segments below `/memories`.
///
/// Names are case-sensitive and not Unicode-normalized.
///
/// ```
/// use memory_core::MemoryPath;
///
/// let p = MemoryPath::parse("/memories/projects/notes.md").unwrap();
/// assert_eq!(p.as_str(), "/memories/projects/notes.md");
/// assert_eq!(p.name(), Some("notes.md"));
/// assert_eq!(p.parent().unwrap().as_str(), "/memories/projects");
///
/// // One trailing slash is dropped; the root is a path too.
/// assert_eq!(MemoryPath::parse("/memories/projects/").unwrap().as_str(), "/memories/projects");
/// assert!(MemoryPath::parse("/memories").unwrap().is_root());
/// ```
///
/// Refused inputs:
///
/// ```
/// use memory_core::MemoryPath;
///
/// for raw in [
///     "/etc/passwd",               // outside the store
///     "/memoriesX/a",              // not below /memories/
///     "memories/a",                // relative
///     "/memories/../etc/passwd",   // traversal
///     "/memories/./a",             // dot segment
///     "/memories//a",              // empty segment
///     "/memories/a\\b",            // backslash
///     "/memories/a\u{0}b",         // control character
///     "/memories/%2e%2e/secrets",  // percent-encoded traversal
///     "/memories/v1%2E0.md",       // ... in any case, anywhere
/// ] {
///     assert!(MemoryPath::parse(raw).is_err(), "{raw:?} should be refused");
/// }
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemoryPath(String);

/// Why a raw string is not a [`MemoryPath`]. Its `Display` is the tool's error text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path is neither `/memories` nor below `/memories/`.
    #[error("Error: Path must start with /memories, got: {raw}")]
    OutsideRoot {
        /// The path as given.
        raw: String,
    },
    /// The path is below `/memories` but breaks one of the other rules.
    #[error("Error: Invalid path {raw}: {reason}")]
    Invalid {
        /// The path as given.
        raw: String,
        /// Which rule it breaks.
        reason: PathRule,
    },
}

/// The rule an invalid path breaks (see [`MemoryPath`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathRule {
    /// An empty segment, as in `/memories//a`.
    EmptySegment,
    /// A `.` or `..` segment.
    DotSegment,
    /// A backslash.
    Backslash,
    /// A control character.
    ControlCharacter,
    /// `%2e`, `%2f` or `%5c`.
    PercentEncodedSeparator,
    /// More than [`MAX_PATH_BYTES`] bytes.
    TooLong,
    /// A segment of more than [`MAX_SEGMENT_BYTES`] bytes.
    SegmentTooLong,
    /// More than [`MAX_SEGMENTS`] segments below `/memories`.
    TooDeep,
}

impl fmt::Display for PathRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathRule::EmptySegment => "empty path segments are not allowed",
            PathRule::DotSegment => "'.' and '..' segments are not allowed",
            PathRule::Backslash => "backslashes are not allowed",
            PathRule::ControlCharacter => "control characters are not allowed",
            PathRule::PercentEncodedSeparator => {
                "percent-encoded '.', '/' or '\\' (%2e, %2f, %5c) is not allowed"
            }
            PathRule::TooLong => "the path is longer than 1024 bytes",
            PathRule::SegmentTooLong => "a name is longer than 255 bytes",
            PathRule::TooDeep => "more than 20 levels below /memories",
        })
    }
}

/// Whether `s` holds a control character (U+0000-U+001F, U+007F, U+0080-U+009F), looking at
/// bytes: the C1 controls are the UTF-8 pairs `C2 80` to `C2 9F`.
fn has_control(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b < 0x20
            || b == 0x7f
            || (b == 0xc2
                && bytes
                    .get(i + 1)
                    .is_some_and(|&n| (0x80..=0x9f).contains(&n)))
    })
}

/// Whether `s` holds `%2e`, `%2f` or `%5c` in any case, without a lowered copy.
fn has_percent_encoded_separator(s: &str) -> bool {
    s.as_bytes().windows(3).any(|w| {
        w[0] == b'%'
            && matches!(
                (w[1], w[2].to_ascii_lowercase()),
                (b'2', b'e' | b'f') | (b'5', b'c')
            )
    })
}

fn check_segment(segment: &str) -> Result<(), PathRule> {
    if segment.is_empty() {
        return Err(PathRule::EmptySegment);
    }
    if segment == "." || segment == ".." {
        return Err(PathRule::DotSegment);
    }
    if segment.len() > MAX_SEGMENT_BYTES {
        return Err(PathRule::SegmentTooLong);
    }
    Ok(())
}

impl MemoryPath {
    /// Validates and normalizes a path as Claude sends it.
    ///
    /// The `/memories` prefix is checked first; then one trailing `/` is dropped and every other
    /// rule is checked (see the type's documentation).
    pub fn parse(raw: &str) -> Result<Self, PathError> {
        if raw != ROOT && !raw.starts_with("/memories/") {
            return Err(PathError::OutsideRoot {
                raw: raw.to_owned(),
            });
        }
        let invalid = |reason| PathError::Invalid {
            raw: raw.to_owned(),
            reason,
        };
        let normalized = raw.strip_suffix('/').unwrap_or(raw);
        if normalized.contains('\\') {
            return Err(invalid(PathRule::Backslash));
        }
        if has_control(normalized) {
            return Err(invalid(PathRule::ControlCharacter));
        }
        if has_percent_encoded_separator(normalized) {
            return Err(invalid(PathRule::PercentEncodedSeparator));
        }
        if normalized.len() > MAX_PATH_BYTES {
            return Err(invalid(PathRule::TooLong));
        }
        if let Some(rest) = normalized.strip_prefix("/memories/") {
            let mut count = 0;
            for segment in rest.split('/') {
                check_segment(segment).map_err(invalid)?;
                count += 1;
            }
            if count > MAX_SEGMENTS {
                return Err(invalid(PathRule::TooDeep));
            }
        }
        Ok(MemoryPath(normalized.to_owned()))
    }

    /// The root, `/memories`.
    pub fn root() -> Self {
        MemoryPath(ROOT.to_owned())
    }

    /// The normalized path, e.g. `/memories/a/b.md`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is `/memories` itself.
    pub fn is_root(&self) -> bool {
        self.0 == ROOT
    }

    /// The path below `/memories/` (`a/b.md`); empty for the root.
    pub fn relative(&self) -> &str {
        self.0.strip_prefix("/memories/").unwrap_or("")
    }

    /// The names below `/memories`, outermost first; none for the root.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.relative().split('/').filter(|s| !s.is_empty())
    }

    /// The last name, or `None` for the root.
    pub fn name(&self) -> Option<&str> {
        if self.is_root() {
            None
        } else {
            self.0.rsplit('/').next()
        }
    }

    /// The directory holding this path, or `None` for the root.
    pub fn parent(&self) -> Option<MemoryPath> {
        if self.is_root() {
            return None;
        }
        let cut = self.0.rfind('/')?;
        Some(MemoryPath(self.0[..cut].to_owned()))
    }

    /// Every ancestor below the root, outermost first (`/memories/a`, `/memories/a/b` for
    /// `/memories/a/b/c.md`).
    pub fn ancestors(&self) -> Vec<MemoryPath> {
        let mut out = Vec::new();
        let mut current = self.parent();
        while let Some(p) = current {
            if p.is_root() {
                break;
            }
            current = p.parent();
            out.push(p);
        }
        out.reverse();
        out
    }

    /// Appends one name, validating it.
    ///
    /// ```
    /// use memory_core::MemoryPath;
    /// let dir = MemoryPath::parse("/memories/notes").unwrap();
    /// assert_eq!(dir.join("a.md").unwrap().as_str(), "/memories/notes/a.md");
    /// assert!(dir.join("../x").is_err());
    /// ```
    pub fn join(&self, name: &str) -> Result<MemoryPath, PathError> {
        let joined_len = self.0.len() + 1 + name.len();
        // A single valid name (what a listing walk joins for every entry) is checked alone:
        // the rest of the path is valid already, and no rule spans the `/` between them.
        // Bytes that some rule looks at: separators, controls (C0, DEL, and 0xC2, the lead
        // byte of the C1 ones) and `%`. A name without any passes those rules.
        let plain = |b: u8| !(b < 0x20 || matches!(b, b'/' | b'\\' | b'%' | 0x7f | 0xc2));
        let single_valid_name = !name.is_empty()
            && name != "."
            && name != ".."
            && name.len() <= MAX_SEGMENT_BYTES
            && joined_len <= MAX_PATH_BYTES
            && name.bytes().all(plain)
            // `/memories` has one `/`, and each segment below it one more.
            && self.0.bytes().filter(|&b| b == b'/').count() <= MAX_SEGMENTS;
        if !single_valid_name {
            // Everything else, errors included, exactly as `parse` has it.
            return MemoryPath::parse(&format!("{}/{}", self.0, name));
        }
        let mut joined = String::with_capacity(joined_len);
        joined.push_str(&self.0);
        joined.push('/');
        joined.push_str(name);
        Ok(MemoryPath(joined))
    }

    /// Whether `self` is `ancestor` or lies below it, comparing whole segments
    /// (`/memories/ab` is not below `/memories/a`).
    pub fn starts_with(&self, ancestor: &MemoryPath) -> bool {
        if ancestor.is_root() || self.0 == ancestor.0 {
            return true;
        }
        self.0
            .strip_prefix(ancestor.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    }

    /// The same file moved from below `from` to below `to`: `self` with its `from` prefix
    /// replaced by `to`. `None` when `self` is not at or below `from`, or the result breaks a
    /// path rule (too long or too deep).
    pub fn rebase(&self, from: &MemoryPath, to: &MemoryPath) -> Option<MemoryPath> {
        if !self.starts_with(from) {
            return None;
        }
        let rest = if from.is_root() {
            self.relative()
        } else {
            self.0[from.0.len()..].trim_start_matches('/')
        };
        if rest.is_empty() {
            return Some(to.clone());
        }
        MemoryPath::parse(&format!("{}/{}", to.0, rest)).ok()
    }
}

impl fmt::Display for MemoryPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for MemoryPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl AsRef<str> for MemoryPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for MemoryPath {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MemoryPath::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(raw: &str) -> String {
        MemoryPath::parse(raw).unwrap_err().to_string()
    }

    /// `join` answers, errors included, what `parse` of the joined text answers.
    #[test]
    fn join_is_parse_of_the_joined_text() {
        let deep = format!("/memories{}", "/d".repeat(MAX_SEGMENTS - 1));
        let long = format!(
            "/memories{}",
            "/l".repeat(MAX_SEGMENTS / 2).replace('l', &"l".repeat(90))
        );
        let deepest = format!("{deep}/d");
        let parents = [
            "/memories",
            "/memories/a",
            deep.as_str(),
            deepest.as_str(),
            long.as_str(),
        ];
        let wide = "n".repeat(MAX_SEGMENT_BYTES);
        let wider = "n".repeat(MAX_SEGMENT_BYTES + 1);
        let names = [
            "a.md",
            "",
            ".",
            "..",
            "...",
            ".hidden",
            "a/b",
            "a/",
            "/a",
            "a\\b",
            "tab\there",
            "bell\u{7}",
            "c1\u{85}",
            "del\u{7f}",
            "%2e",
            "x%2Fy",
            "%5C",
            "%25",
            "%2",
            "é.md",
            "日本.md",
            wide.as_str(),
            wider.as_str(),
            "twelve chars",
        ];
        for parent in parents {
            let parent = MemoryPath::parse(parent).unwrap();
            for name in names {
                let joined = format!("{}/{}", parent.as_str(), name);
                assert_eq!(
                    parent.join(name),
                    MemoryPath::parse(&joined),
                    "{parent} + {name:?}"
                );
            }
        }
    }

    #[test]
    fn prefix_rule_comes_first() {
        assert_eq!(
            err("/memoriesX/a"),
            "Error: Path must start with /memories, got: /memoriesX/a"
        );
        assert_eq!(err(""), "Error: Path must start with /memories, got: ");
        assert_eq!(
            err("C:\\x"),
            "Error: Path must start with /memories, got: C:\\x"
        );
        assert_eq!(
            err("/memories\\a"),
            "Error: Path must start with /memories, got: /memories\\a"
        );
    }

    #[test]
    fn trailing_slash_dropped_once() {
        assert_eq!(
            MemoryPath::parse("/memories/").unwrap().as_str(),
            "/memories"
        );
        assert_eq!(
            MemoryPath::parse("/memories/a/").unwrap().as_str(),
            "/memories/a"
        );
        assert!(err("/memories/a//").contains("empty path segments"));
        assert!(err("/memories//").contains("empty path segments"));
    }

    #[test]
    fn rules() {
        assert_eq!(
            err("/memories/a/../b"),
            "Error: Invalid path /memories/a/../b: '.' and '..' segments are not allowed"
        );
        assert!(err("/memories/%2F").contains("percent-encoded"));
        assert!(err("/memories/a%5Cb").contains("percent-encoded"));
        assert!(MemoryPath::parse("/memories/%41%25").is_ok());
        assert!(err("/memories/a\u{85}").contains("control"));
        assert!(err("/memories/a\u{7f}").contains("control"));
        assert!(MemoryPath::parse("/memories/a\u{a0}b").is_ok());
        let long = format!("/memories/{}", "a".repeat(256));
        assert!(err(&long).contains("255"));
        let ok = format!("/memories/{}", "a".repeat(255));
        assert!(MemoryPath::parse(&ok).is_ok());
        let deep = format!("/memories{}", "/a".repeat(21));
        assert!(err(&deep).contains("20 levels"));
        let deep_ok = format!("/memories{}", "/a".repeat(20));
        assert!(MemoryPath::parse(&deep_ok).is_ok());
        let exact = format!(
            "/memories/{}/{}/{}/{}/{}",
            "a".repeat(250),
            "b".repeat(250),
            "c".repeat(250),
            "d".repeat(250),
            "e".repeat(10)
        );
        assert_eq!(exact.len(), 1024);
        assert!(MemoryPath::parse(&exact).is_ok());
        assert!(err(&format!("{exact}x")).contains("1024"));
    }

    #[test]
    fn relations() {
        let a = MemoryPath::parse("/memories/a").unwrap();
        let ab = MemoryPath::parse("/memories/ab").unwrap();
        let a_b = MemoryPath::parse("/memories/a/b").unwrap();
        assert!(a_b.starts_with(&a));
        assert!(!ab.starts_with(&a));
        assert!(a.starts_with(&MemoryPath::root()));
        assert_eq!(a_b.ancestors(), vec![a.clone()]);
        assert_eq!(a_b.rebase(&a, &ab).unwrap().as_str(), "/memories/ab/b");
        assert_eq!(a.rebase(&a, &ab).unwrap(), ab);
        assert_eq!(MemoryPath::root().segments().count(), 0);
        assert_eq!(a_b.segments().collect::<Vec<_>>(), ["a", "b"]);
    }
}
