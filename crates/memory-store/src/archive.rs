//! The portable archive of a store's files (format `memory-archive`, version 1), written and
//! read by `memory export` / `memory import` and by the web console of `memory serve`.
//!
//! JSON Lines: a header, one line per file, an end line with the counts.
//!
//! ```text
//! {"type":"header","format":"memory-archive","version":1,"created":"2025-01-31T12:00:00Z"}
//! {"type":"file","path":"/memories/notes.md","size":6,"sha256":"<64 hex>","modified":"2025-01-30T09:00:00Z","encoding":"utf-8","data":"hello\n"}
//! {"type":"end","files":1,"bytes":6}
//! ```
//!
//! A store's memory at `/notes.md` is the archive's `/memories/notes.md` (the memory tool's
//! view of a store). Text is stored as `utf-8`, anything else as `base64`. [`parse`] checks
//! the whole archive before anything is written: header and version, every size and
//! SHA-256, duplicate paths, a path that is both a file and a folder, and the end line's
//! counts (so a truncated archive is refused).
//!
//! ```
//! use memory_store::archive;
//!
//! let mut text = archive::header_line("2026-01-01T00:00:00Z");
//! text += &archive::file_line("/memories/a.md", b"hello\n", None);
//! text += &archive::end_line(1, 6);
//! let files = archive::parse(text.as_bytes()).unwrap();
//! assert_eq!(files[0].path.as_str(), "/memories/a.md");
//! assert_eq!(files[0].contents, b"hello\n");
//! assert!(archive::parse(b"{\"type\":\"header\"}\n").is_err());
//! ```

use std::collections::BTreeSet;

use memory_core::{MemoryPath, PathError};

use base64::Engine as _;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The format's name, in the header line.
pub const FORMAT: &str = "memory-archive";
/// The format version written and read.
pub const VERSION: u64 = 1;
/// The folder every archived path is under.
pub const ROOT: &str = "/memories";

/// One file of a verified archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedFile {
    /// Its path, below `/memories` (checked against the memory tool's path rules).
    pub path: MemoryPath,
    /// The 1-based line of the archive it is on (for messages about it).
    pub line: usize,
    /// Its bytes.
    pub contents: Vec<u8>,
    /// Its `modified` field as written (an RFC 3339 time), when the line has one: for an
    /// import that keeps each file's modification time.
    pub modified: Option<String>,
}

/// Why an archive was refused (nothing was imported).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
#[non_exhaustive]
pub struct ArchiveError {
    /// The 1-based line at fault (the last line for a truncated archive).
    pub line: usize,
    /// What is wrong with it.
    pub what: String,
}

fn bad(line: usize, what: impl Into<String>) -> ArchiveError {
    ArchiveError {
        line,
        what: what.into(),
    }
}

fn line_of(value: &Value) -> String {
    let mut line = value.to_string();
    line.push('\n');
    line
}

/// The header line (with its newline); `created` is an RFC 3339 time.
pub fn header_line(created: &str) -> String {
    line_of(&json!({
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "created": created,
    }))
}

/// One file's line (with its newline); `modified` is an RFC 3339 time when known.
pub fn file_line(path: &str, contents: &[u8], modified: Option<&str>) -> String {
    let (encoding, data) = match std::str::from_utf8(contents) {
        Ok(text) => ("utf-8", text.to_owned()),
        Err(_) => (
            "base64",
            base64::engine::general_purpose::STANDARD.encode(contents),
        ),
    };
    line_of(&json!({
        "type": "file",
        "path": path,
        "size": contents.len(),
        "sha256": hex::encode(Sha256::digest(contents)),
        "modified": modified,
        "encoding": encoding,
        "data": data,
    }))
}

/// The end line (with its newline): how many files and bytes came before it.
pub fn end_line(files: u64, bytes: u64) -> String {
    line_of(&json!({"type": "end", "files": files, "bytes": bytes}))
}

/// Parses and verifies a whole archive.
///
/// # Errors
/// The first line that is wrong, with what is wrong with it.
pub fn parse(bytes: &[u8]) -> Result<Vec<ArchivedFile>, ArchiveError> {
    let mut lines = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, line)| (i + 1, line.strip_suffix(b"\r").unwrap_or(line)))
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace));
    let Some((n, first)) = lines.next() else {
        return Err(bad(1, "the archive is empty"));
    };
    let header = object(n, first)?;
    if header.get("type").and_then(Value::as_str) != Some("header")
        || header.get("format").and_then(Value::as_str) != Some(FORMAT)
    {
        return Err(bad(n, "not a memory archive (no memory-archive header)"));
    }
    match header.get("version").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(v) if v > VERSION => {
            return Err(bad(
                n,
                format!(
                    "archive version {v} was written by a newer memory; this one reads version {VERSION}"
                ),
            ));
        }
        _ => return Err(bad(n, "missing or unknown archive version")),
    }
    let mut files = Vec::new();
    let mut seen = BTreeSet::new();
    let mut total: u64 = 0;
    let mut ended = false;
    for (n, line) in lines {
        if ended {
            return Err(bad(n, "data after the end line"));
        }
        let value = object(n, line)?;
        match value.get("type").and_then(Value::as_str) {
            Some("file") => {
                let file = file(n, &value)?;
                if !seen.insert(file.path.clone()) {
                    return Err(bad(n, format!("{} appears twice", file.path)));
                }
                total += file.contents.len() as u64;
                files.push(file);
            }
            Some("end") => {
                let count = value.get("files").and_then(Value::as_u64);
                let size = value.get("bytes").and_then(Value::as_u64);
                if count != Some(files.len() as u64) || size != Some(total) {
                    return Err(bad(
                        n,
                        format!(
                            "the end line counts do not match ({} files, {total} bytes read)",
                            files.len()
                        ),
                    ));
                }
                ended = true;
            }
            _ => return Err(bad(n, "unknown line type")),
        }
    }
    if !ended {
        return Err(bad(
            bytes.split(|b| *b == b'\n').count(),
            "no end line: the archive is truncated",
        ));
    }
    // A path cannot be both a file and a folder.
    for f in &files {
        if let Some(dir) = f.path.ancestors().into_iter().find(|a| seen.contains(a)) {
            return Err(bad(
                f.line,
                format!("{dir} is a file and also holds {}", f.path),
            ));
        }
    }
    Ok(files)
}

fn object(n: usize, line: &[u8]) -> Result<Map<String, Value>, ArchiveError> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(bad(n, "not a JSON object")),
        Err(e) => Err(bad(n, format!("not JSON ({e})"))),
    }
}

fn file(n: usize, value: &Map<String, Value>) -> Result<ArchivedFile, ArchiveError> {
    let field = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| bad(n, format!("missing or invalid field `{name}`")))
    };
    let path = MemoryPath::parse(field("path")?).map_err(|e| {
        bad(
            n,
            match e {
                PathError::OutsideRoot { raw } => {
                    format!("{raw} is not a file under {ROOT}: a path must start with {ROOT}")
                }
                PathError::Invalid { raw, reason } => format!("invalid path {raw}: {reason}"),
                other => format!("invalid path: {other}"),
            },
        )
    })?;
    if path.is_root() {
        return Err(bad(n, format!("{ROOT} itself cannot be a file")));
    }
    let data = field("data")?;
    let contents = match field("encoding")? {
        "utf-8" => data.as_bytes().to_vec(),
        "base64" => base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| bad(n, format!("bad base64 data for {path} ({e})")))?,
        other => return Err(bad(n, format!("unknown encoding `{other}`"))),
    };
    let size = value
        .get("size")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad(n, "missing or invalid field `size`"))?;
    if size != contents.len() as u64 {
        return Err(bad(
            n,
            format!(
                "{path} should be {size} bytes but its data is {}",
                contents.len()
            ),
        ));
    }
    if !field("sha256")?.eq_ignore_ascii_case(&hex::encode(Sha256::digest(&contents))) {
        return Err(bad(
            n,
            format!("the SHA-256 of {path} does not match its data"),
        ));
    }
    let modified = value
        .get("modified")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(ArchivedFile {
        path,
        line: n,
        contents,
        modified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(files: &[(&str, &[u8])]) -> String {
        let mut text = header_line("2026-01-01T00:00:00Z");
        let mut bytes = 0;
        for (path, contents) in files {
            text += &file_line(path, contents, Some("2026-01-01T00:00:00Z"));
            bytes += contents.len() as u64;
        }
        text + &end_line(files.len() as u64, bytes)
    }

    #[test]
    fn round_trips_text_and_binary() {
        let text = archive(&[("/memories/a.md", b"hi\n"), ("/memories/b/c", &[0xff, 0])]);
        assert!(text.contains("\"encoding\":\"base64\""));
        let files = parse(text.as_bytes()).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!((files[0].line, files[1].line), (2, 3));
        assert_eq!(files[1].contents, vec![0xff, 0]);
        assert_eq!(files[0].modified.as_deref(), Some("2026-01-01T00:00:00Z"));
    }

    #[test]
    fn refuses_damage() {
        let good = archive(&[("/memories/a.md", b"hi\n")]);
        let truncated = good.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(
            parse(truncated.as_bytes())
                .unwrap_err()
                .what
                .contains("truncated")
        );
        let tampered = good.replace("\"data\":\"hi\\n\"", "\"data\":\"ho\\n\"");
        assert!(
            parse(tampered.as_bytes())
                .unwrap_err()
                .what
                .contains("SHA-256")
        );
        let outside = archive(&[("/etc/passwd", b"x")]);
        assert_eq!(parse(outside.as_bytes()).unwrap_err().line, 2);
        let both = archive(&[("/memories/a", b"x"), ("/memories/a/b", b"y")]);
        assert!(
            parse(both.as_bytes())
                .unwrap_err()
                .what
                .contains("is a file and also holds")
        );
        let twice = archive(&[("/memories/a", b"x"), ("/memories/a", b"x")]);
        assert!(parse(twice.as_bytes()).unwrap_err().what.contains("twice"));
    }
}
