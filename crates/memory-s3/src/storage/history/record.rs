//! A revision's record as an object's user metadata (`x-amz-meta-memory-*`), written with the
//! object in the same request, so that an object and its record can never disagree: the current
//! file carries the record of the newest revision, and each history object the record of the
//! revision whose content it holds.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memory_core::MemoryPath;
use memory_core::history::{Change, Revision, sha256_hex};
use object_store::{Attribute, AttributeValue, Attributes};

/// The revision's number (on a current file; a history object's number is its key's).
const NUMBER: &str = "memory-rev";
/// `created`, `modified`, `renamed`, `deleted` or `restored`.
const CHANGE: &str = "memory-change";
/// When the change was made, in nanoseconds since the Unix epoch.
const TIME: &str = "memory-time";
/// The content's SHA-256 (none for a deletion or a redacted revision).
const SHA256: &str = "memory-sha256";
/// The session that made the change.
const SESSION: &str = "memory-session";
/// The path the revision was made at, when not the path of the key it is kept under (a
/// revision moved by a rename), percent-encoded.
const PATH: &str = "memory-path";
/// For a rename, the path the file moved from, percent-encoded.
const OLD_PATH: &str = "memory-old-path";
/// `1` on a redacted revision's marker (which holds no bytes).
const REDACTED: &str = "memory-redacted";
/// A redacted revision's size (its marker holds no bytes).
const SIZE: &str = "memory-size";

/// The most bytes the two paths of a record take (of the 2 KB of metadata S3 keeps).
const MAX_PATHS_BYTES: usize = 1536;

fn get<'a>(attributes: &'a Attributes, key: &'static str) -> Option<&'a str> {
    attributes
        .get(&Attribute::Metadata(key.into()))
        .map(AttributeValue::as_ref)
}

/// The metadata recording `revision`, kept under the key of path `at`.
pub(crate) fn attributes(revision: &Revision, at: &MemoryPath) -> Attributes {
    let mut attributes = Attributes::new();
    let mut set = |key: &'static str, value: String| {
        attributes.insert(Attribute::Metadata(key.into()), value.into());
    };
    set(NUMBER, revision.number.to_string());
    set(CHANGE, revision.change.as_str().to_owned());
    let nanos = revision
        .time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    set(TIME, nanos.to_string());
    if let Some(sha) = &revision.sha256 {
        set(SHA256, sha.clone());
    }
    if let Some(session) = &revision.session {
        set(SESSION, session.clone());
    }
    // S3 keeps at most 2 KB of user metadata: paths that would not fit are left out (the
    // revision then reads as made at the key's path, without its old path).
    let path = (revision.path != *at).then(|| encode(revision.path.as_str()));
    let old_path = revision.old_path.as_ref().map(|old| encode(old.as_str()));
    let fits = |value: &Option<String>| value.as_ref().map_or(0, String::len) <= MAX_PATHS_BYTES;
    let (path, old_path) = match (fits(&path), fits(&old_path)) {
        _ if path.as_ref().map_or(0, String::len) + old_path.as_ref().map_or(0, String::len)
            <= MAX_PATHS_BYTES =>
        {
            (path, old_path)
        }
        (true, _) => (path, None),
        (false, true) => (None, old_path),
        (false, false) => (None, None),
    };
    if let Some(path) = path {
        set(PATH, path);
    }
    if let Some(old) = old_path {
        set(OLD_PATH, old);
    }
    if revision.redacted {
        set(REDACTED, "1".to_owned());
        set(SIZE, revision.size.to_string());
    }
    attributes
}

/// The revision number a current file's metadata records, if any (a file written with
/// history off, or by another tool, has none).
pub(crate) fn number(attributes: &Attributes) -> Option<u64> {
    get(attributes, NUMBER)?.parse().ok()
}

/// What an object (a current file or a history object kept under the key of `at`) records,
/// as revision `number`. `size` and `modified` are the object's; `content` its bytes when
/// known. An object without a record (written before history, or with history off) reads as
/// a `created` revision when it is the first of its path (`first`), else `modified`, made
/// when the object was.
pub(crate) fn revision(
    attributes: &Attributes,
    at: &MemoryPath,
    number: u64,
    size: u64,
    modified: SystemTime,
    content: Option<&[u8]>,
    first: bool,
) -> Revision {
    let change = get(attributes, CHANGE)
        .and_then(Change::parse)
        .unwrap_or(if first {
            Change::Created
        } else {
            Change::Modified
        });
    let time = get(attributes, TIME)
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(modified, |nanos| UNIX_EPOCH + Duration::from_nanos(nanos));
    let path = get(attributes, PATH)
        .and_then(decode)
        .and_then(|p| MemoryPath::parse(&p).ok())
        .unwrap_or_else(|| at.clone());
    let old_path = get(attributes, OLD_PATH)
        .and_then(decode)
        .and_then(|p| MemoryPath::parse(&p).ok());
    let redacted = get(attributes, REDACTED) == Some("1");
    let deleted = change == Change::Deleted;
    let size = if redacted {
        get(attributes, SIZE)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    } else if deleted {
        0
    } else {
        size
    };
    let sha256 = if redacted || deleted {
        None
    } else {
        get(attributes, SHA256)
            .map(str::to_owned)
            .or_else(|| content.map(sha256_hex))
    };
    Revision {
        number,
        change,
        path,
        old_path,
        time,
        size,
        sha256,
        session: get(attributes, SESSION).map(str::to_owned),
        redacted,
    }
}

/// Percent-encodes every byte but ASCII letters, digits and `/-._~` (metadata values are
/// ASCII).
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written() {
        let at = MemoryPath::parse("/memories/b.md").unwrap();
        let revision = Revision {
            number: 7,
            change: Change::Renamed,
            path: MemoryPath::parse("/memories/é x.md").unwrap(),
            old_path: Some(MemoryPath::parse("/memories/a%b.md").unwrap()),
            time: UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789),
            size: 3,
            sha256: Some(sha256_hex(b"abc")),
            session: Some("sess-1".into()),
            redacted: false,
        };
        let attributes = attributes(&revision, &at);
        assert_eq!(number(&attributes), Some(7));
        let read = super::revision(&attributes, &at, 7, 3, SystemTime::now(), None, false);
        assert_eq!(read, revision);
    }

    #[test]
    fn paths_too_long_for_the_metadata_are_left_out() {
        let long = format!("/memories/{}", "é".repeat(120));
        let at = MemoryPath::parse("/memories/b.md").unwrap();
        let revision = Revision {
            number: 2,
            change: Change::Renamed,
            path: at.clone(),
            old_path: Some(MemoryPath::parse(&long).unwrap()),
            time: UNIX_EPOCH,
            size: 0,
            sha256: None,
            session: None,
            redacted: false,
        };
        let encoded = attributes(&revision, &at);
        assert!(get(&encoded, OLD_PATH).is_some(), "720 bytes encoded fit");
        let longer = format!("/memories/{}/{}", "é".repeat(127), "é".repeat(127));
        let revision = Revision {
            path: MemoryPath::parse(&longer).unwrap(),
            old_path: Some(MemoryPath::parse(&longer).unwrap()),
            ..revision
        };
        let encoded = attributes(&revision, &at);
        let total: usize = encoded.iter().map(|(_, v)| v.as_ref().len()).sum();
        assert!(total < 2048, "{total}");
    }

    #[test]
    fn an_object_without_a_record_is_a_plain_revision() {
        let at = MemoryPath::parse("/memories/a.md").unwrap();
        let modified = SystemTime::now();
        let read = revision(&Attributes::new(), &at, 1, 2, modified, Some(b"hi"), true);
        assert_eq!(
            (read.change, read.time, read.size),
            (Change::Created, modified, 2)
        );
        assert_eq!(read.sha256, Some(sha256_hex(b"hi")));
        assert_eq!(number(&Attributes::new()), None);
    }
}
