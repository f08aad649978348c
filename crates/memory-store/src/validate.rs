//! The rules on paths, names, descriptions, metadata, hashes and content.

use std::collections::BTreeMap;

use unicode_normalization::is_nfc;

use crate::error::{Reason, Result, StoreError};

/// Most bytes in a memory path.
pub const MAX_PATH_BYTES: usize = 1024;
/// Most segments in a memory path.
pub const MAX_PATH_SEGMENTS: usize = 20;
/// Most bytes of a memory's content (100 kB).
pub const MAX_CONTENT_BYTES: usize = 102_400;
/// Most characters in a store name.
pub const MAX_NAME_CHARS: usize = 255;
/// Most characters in a store description.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Most metadata pairs on a store.
pub const MAX_METADATA_PAIRS: usize = 16;
/// Most characters in a metadata key.
pub const MAX_METADATA_KEY_CHARS: usize = 64;
/// Most characters in a metadata value.
pub const MAX_METADATA_VALUE_CHARS: usize = 512;

/// Unicode format characters (general category Cf, Unicode 16).
const FORMAT_CHARS: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

fn is_format(c: char) -> bool {
    let c = u32::from(c);
    FORMAT_CHARS.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Checks a memory path against the rules of the hosted API: a leading `/`, 1–20 segments, no
/// empty, `.` or `..` segment, no control or format characters (nor U+2028/U+2029), already NFC,
/// at most 1,024 bytes.
///
/// ```
/// use memory_store::validate_path;
///
/// assert!(validate_path("/notes/todo.md").is_ok());
/// assert!(validate_path("notes").is_err());
/// assert!(validate_path("/a//b").is_err());
/// assert!(validate_path("/a/../b").is_err());
/// assert!(validate_path("/dir/").is_err());
/// assert!(validate_path("/cafe\u{301}").is_err()); // not NFC
/// ```
pub fn validate_path(path: &str) -> Result<()> {
    let refuse = |reason: Reason, why: &str| {
        Err(StoreError::refused(
            reason,
            format!("invalid memory path: {why}"),
        ))
    };
    let bad = |why: &str| refuse(Reason::PathInvalid, why);
    let Some(rest) = path.strip_prefix('/') else {
        return bad("it must start with '/'");
    };
    if path.len() > MAX_PATH_BYTES {
        return bad("it is longer than 1024 bytes");
    }
    if rest.is_empty() {
        return bad("it must name at least one segment");
    }
    let mut segments = 0;
    for segment in rest.split('/') {
        segments += 1;
        if segment.is_empty() {
            return bad("it has an empty segment (a doubled or trailing '/')");
        }
        if segment == "." || segment == ".." {
            return bad("'.' and '..' segments are not allowed");
        }
    }
    if segments > MAX_PATH_SEGMENTS {
        return bad("it has more than 20 segments");
    }
    if path.chars().any(char::is_control) {
        return refuse(
            Reason::PathControlCharacter,
            "it contains a control character",
        );
    }
    if path
        .chars()
        .any(|c| is_format(c) || c == '\u{2028}' || c == '\u{2029}')
    {
        return refuse(
            Reason::PathFormatCharacter,
            "it contains a format character",
        );
    }
    if !is_nfc(path) {
        return refuse(
            Reason::PathNotNfc,
            "it is not in Unicode normalization form C (NFC)",
        );
    }
    Ok(())
}

/// Checks a `path_prefix`: a path ending with `/` (or `/` itself).
pub(crate) fn validate_prefix(prefix: &str) -> Result<()> {
    if !prefix.starts_with('/') || !prefix.ends_with('/') {
        return Err(StoreError::invalid(
            "path_prefix must start and end with '/'",
        ));
    }
    if prefix.len() > MAX_PATH_BYTES {
        return Err(StoreError::invalid("path_prefix is longer than 1024 bytes"));
    }
    Ok(())
}

/// Checks a memory's content size.
pub(crate) fn validate_content(content: &str) -> Result<()> {
    if content.len() > MAX_CONTENT_BYTES {
        return Err(StoreError::refused(
            Reason::ContentTooLarge,
            format!(
                "content is {} bytes; a memory holds at most {MAX_CONTENT_BYTES} bytes",
                content.len()
            ),
        ));
    }
    Ok(())
}

/// Checks a SHA-256 given by a client: 64 lowercase hex digits.
pub(crate) fn validate_sha(field: &str, sha: &str) -> Result<()> {
    if sha.len() == 64 && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(StoreError::invalid(format!(
            "{field} must be 64 lowercase hexadecimal characters"
        )))
    }
}

pub(crate) fn validate_name(name: &str) -> Result<()> {
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS {
        return Err(StoreError::invalid("name must be 1 to 255 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(StoreError::invalid(
            "name must not contain control characters",
        ));
    }
    Ok(())
}

pub(crate) fn validate_description(description: &str) -> Result<()> {
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(StoreError::invalid(
            "description must be at most 1024 characters",
        ));
    }
    Ok(())
}

pub(crate) fn validate_metadata(metadata: &BTreeMap<String, String>) -> Result<()> {
    if metadata.len() > MAX_METADATA_PAIRS {
        return Err(StoreError::invalid(
            "metadata holds at most 16 key-value pairs",
        ));
    }
    for (key, value) in metadata {
        let k = key.chars().count();
        if k == 0 || k > MAX_METADATA_KEY_CHARS {
            return Err(StoreError::invalid(
                "metadata keys must be 1 to 64 characters",
            ));
        }
        if value.chars().count() > MAX_METADATA_VALUE_CHARS {
            return Err(StoreError::invalid(
                "metadata values must be at most 512 characters",
            ));
        }
    }
    Ok(())
}

/// Whether `id` can name a workspace (the `anthropic-workspace-id` header, e.g.
/// `wrkspc_011CZkZaBF1tNoB5wlCeusgy`): 1 to 64 characters from `[0-9A-Za-z_-]`. Ids are
/// otherwise opaque; the default workspace has none.
///
/// ```
/// use memory_store::is_valid_workspace_id;
/// assert!(is_valid_workspace_id("wrkspc_011CZkZaBF1tNoB5wlCeusgy"));
/// assert!(!is_valid_workspace_id(""));
/// assert!(!is_valid_workspace_id("a b"));
/// ```
pub fn is_valid_workspace_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_rules() {
        let ok = [
            "/a",
            "/a/b.md",
            "/Notes/Ünïcödé 1.md",
            "/%_*?",
            "/.hidden",
            "/a..b",
        ];
        for p in ok {
            assert!(validate_path(p).is_ok(), "{p}");
        }
        let twenty = "/s".repeat(20);
        assert!(validate_path(&twenty).is_ok());
        let twenty_one = "/s".repeat(21);
        let long = format!("/{}", "x".repeat(1023));
        let too_long = format!("/{}", "x".repeat(1024));
        assert!(validate_path(&long).is_ok());
        let bad = [
            "",
            "/",
            "a",
            "//a",
            "/a/",
            "/a//b",
            "/.",
            "/a/..",
            "/a\u{0}b",
            "/a\nb",
            "/a\u{7f}",
            "/a\u{200b}b",
            "/a\u{feff}",
            "/a\u{2028}",
            "/e\u{301}",
            &twenty_one,
            &too_long,
        ];
        for p in bad {
            assert!(validate_path(p).is_err(), "{p:?}");
        }
    }

    #[test]
    fn field_rules() {
        assert!(validate_name("").is_err());
        assert!(validate_name(&"n".repeat(255)).is_ok());
        assert!(validate_name(&"n".repeat(256)).is_err());
        assert!(validate_name("a\tb").is_err());
        assert!(validate_description(&"d".repeat(1024)).is_ok());
        assert!(validate_description(&"d".repeat(1025)).is_err());
        assert!(validate_sha("x", &"a".repeat(64)).is_ok());
        assert!(validate_sha("x", &"A".repeat(64)).is_err());
        assert!(validate_sha("x", &"a".repeat(63)).is_err());
        assert!(validate_content(&"x".repeat(MAX_CONTENT_BYTES)).is_ok());
        assert!(validate_content(&"x".repeat(MAX_CONTENT_BYTES + 1)).is_err());
        let mut m: BTreeMap<String, String> =
            (0..16).map(|i| (format!("k{i}"), "v".into())).collect();
        assert!(validate_metadata(&m).is_ok());
        m.insert("k16".into(), "v".into());
        assert!(validate_metadata(&m).is_err());
        let big: BTreeMap<String, String> = [("k".into(), "v".repeat(513))].into();
        assert!(validate_metadata(&big).is_err());
        let empty_key: BTreeMap<String, String> = [(String::new(), "v".into())].into();
        assert!(validate_metadata(&empty_key).is_err());
    }
}
