//! `memory log [PATH] [--json]`: the versions a store's history keeps of a file, or of every
//! file below a folder (deleted ones included), newest first.

use memory_core::history::Revision;
use memory_core::{Entry, MemoryPath};
use serde::Serialize;

use super::versions::failure;
use super::{
    Exit, Failure, OpenMode, Outcome, StoreArgs, human_size, parse_path, rfc3339, write_stdout,
};

/// `memory log --help`.
pub(crate) const LOG_LONG_ABOUT: &str = "\
List the versions the store keeps of a file, newest first: every change made through
the store (created, modified, renamed, deleted, restored) is one version, numbered
from 1 per file; the newest version of a file that exists is its current content.
For a folder (default /memories: the whole store), the versions of every file below
it, deleted files included. History is on by default and kept 30 days (store options
history=on|off, history_days=N, history_max=N).

One line per version: its number, time (RFC 3339, UTC), operation, size, the first
12 hex digits of its SHA-256 (- for a deletion or a redacted version), its path, then
`from OLD` for a rename, `session ID` when a session made it, `redacted` when its
content was removed (memory redact).

--json prints one object:
  {\"path\": \"/memories/notes.md\", \"versions\": [{\"version\": 2, \"time\":
   \"2025-01-31T12:00:00Z\", \"operation\": \"renamed\", \"size\": 12, \"sha256\": \"9f86...\",
   \"path\": \"/memories/notes.md\", \"old_path\": \"/memories/draft.md\", \"session\":
   \"sesn_01\"}, ...]}
\"sha256\" is null for a deletion and for a redacted version; \"old_path\" is there for a
rename only, \"session\" only when a session made the change, and \"redacted\": true only
for a redacted version.

Examples:
  memory log /memories/notes.md
  memory log --json --store sqlite:memory.db";

/// Arguments of `memory log`.
#[derive(Debug, clap::Args)]
pub(crate) struct LogArgs {
    /// The file, or the folder whose files' versions to list.
    #[arg(default_value = "/memories")]
    path: String,

    /// Print one JSON object (see above) instead of lines.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// `--json`'s document.
#[derive(Debug, Serialize)]
struct Log<'a> {
    path: &'a str,
    versions: Vec<VersionJson<'a>>,
}

/// One version in `--json`.
#[derive(Debug, Serialize)]
struct VersionJson<'a> {
    version: u64,
    time: String,
    operation: &'static str,
    size: u64,
    sha256: Option<&'a str>,
    path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    redacted: bool,
}

impl<'a> From<&'a Revision> for VersionJson<'a> {
    fn from(revision: &'a Revision) -> Self {
        VersionJson {
            version: revision.number,
            time: rfc3339(revision.time),
            operation: revision.change.as_str(),
            size: revision.size,
            sha256: revision.sha256.as_deref(),
            path: revision.path.as_str(),
            old_path: revision.old_path.as_ref().map(MemoryPath::as_str),
            session: revision.session.as_deref(),
            redacted: revision.redacted,
        }
    }
}

pub(crate) async fn run(args: LogArgs) -> Outcome {
    let path = parse_path(&args.path)?;
    let store = args.store.open(OpenMode::ReadOnly).await?;
    let revisions = store
        .history(&path)
        .await
        .map_err(|e| failure(&format!("list the versions of {path}"), e))?;
    if revisions.is_empty() && !path.is_root() {
        let exists = store
            .stat(&path)
            .await
            .map_err(|e| Failure::storage(&format!("look up {path}"), e))?;
        match exists {
            None => {
                return Err(Failure::new(
                    Exit::NotFound,
                    format!(
                        "{path} has no versions and does not exist (never written, or its \
                         versions are past the store's history_days)"
                    ),
                ));
            }
            Some(Entry::File(_)) if !args.json => {
                eprintln!(
                    "memory: {path} has no recorded versions (it was written before the store \
                     kept history, or its versions were pruned)"
                );
            }
            Some(_) => {}
        }
    }
    let text = if args.json {
        let log = Log {
            path: path.as_str(),
            versions: revisions.iter().map(VersionJson::from).collect(),
        };
        let json = serde_json::to_string(&log).map_err(|e| {
            Failure::new(Exit::Failed, format!("cannot write the log as JSON: {e}"))
        })?;
        format!("{json}\n")
    } else {
        lines(&revisions)
    };
    write_stdout(text.as_bytes())
}

/// The SHA-256 digits a line shows, as `git log --oneline` shows a commit's.
const SHORT_SHA: usize = 12;

/// One line per revision, the columns aligned.
fn lines(revisions: &[Revision]) -> String {
    let sizes: Vec<String> = revisions.iter().map(|r| human_size(r.size)).collect();
    let number_width = revisions
        .iter()
        .map(|r| r.number.to_string().len())
        .max()
        .unwrap_or(1);
    let size_width = sizes.iter().map(String::len).max().unwrap_or(1);
    let mut text = String::new();
    for (revision, size) in revisions.iter().zip(&sizes) {
        let sha = revision
            .sha256
            .as_deref()
            .map_or("-", |sha| &sha[..sha.len().min(SHORT_SHA)]);
        text.push_str(&format!(
            "{:>number_width$}  {}  {:<8}  {size:>size_width$}  {sha:<SHORT_SHA$}  {}",
            revision.number,
            rfc3339(revision.time),
            revision.change.as_str(),
            revision.path,
        ));
        if let Some(old) = &revision.old_path {
            text.push_str(&format!("  from {old}"));
        }
        if let Some(session) = &revision.session {
            text.push_str(&format!("  session {session}"));
        }
        if revision.redacted {
            text.push_str("  redacted");
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use memory_core::history::Change;

    use super::*;

    fn revision(number: u64, change: Change) -> Revision {
        Revision {
            number,
            change,
            path: MemoryPath::parse("/memories/b.md").unwrap(),
            old_path: None,
            time: UNIX_EPOCH + Duration::from_secs(1_738_324_800),
            size: 12,
            sha256: Some("ab".repeat(32)),
            session: None,
            redacted: false,
        }
    }

    #[test]
    fn a_line_holds_every_field_and_json_only_what_is_there() {
        let mut renamed = revision(10, Change::Renamed);
        renamed.old_path = Some(MemoryPath::parse("/memories/a.md").unwrap());
        renamed.session = Some("sesn_1".into());
        let mut redacted = revision(2, Change::Modified);
        redacted.redacted = true;
        redacted.sha256 = None;
        let text = lines(&[renamed.clone(), redacted.clone()]);
        assert_eq!(
            text,
            "10  2025-01-31T12:00:00Z  renamed   12B  abababababab  /memories/b.md  from \
             /memories/a.md  session sesn_1\n \
             2  2025-01-31T12:00:00Z  modified  12B  -             /memories/b.md  redacted\n"
        );
        let json = serde_json::to_value(VersionJson::from(&renamed)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"version": 10, "time": "2025-01-31T12:00:00Z",
                "operation": "renamed", "size": 12, "sha256": "ab".repeat(32),
                "path": "/memories/b.md", "old_path": "/memories/a.md", "session": "sesn_1"})
        );
        let json = serde_json::to_value(VersionJson::from(&redacted)).unwrap();
        assert_eq!(json["sha256"], serde_json::Value::Null);
        assert_eq!(json["redacted"], true);
        assert!(json.get("old_path").is_none() && json.get("session").is_none());
    }
}
