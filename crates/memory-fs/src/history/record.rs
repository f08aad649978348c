//! One path's log on disk: a line of JSON per revision, oldest first, and what the store keeps
//! beside each [`Revision`]: the file's modification time after the change, for the quick
//! check of whether the newest record still describes the current file.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memory_core::MemoryPath;
use memory_core::history::{Change, FileHistory, Revision};
use serde_json::{Value, json};

/// Nanoseconds since the Unix epoch (0 for a time before it; `u64` holds them until 2554).
pub(crate) fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn from_nanos(n: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(n)
}

/// One path's records as loaded from its log.
#[derive(Debug, Clone, Default)]
pub(crate) struct Log {
    /// The revisions, oldest first.
    pub(crate) file: FileHistory,
    /// Each revision's file modification time after the change (nanoseconds), by number,
    /// where it was recorded.
    pub(crate) mtimes: BTreeMap<u64, u64>,
    /// How many of `file`'s revisions are on disk as they are now, in order; the others are
    /// appended by the next save. `None` when the log must be written whole (a torn last line,
    /// records changed by pruning, redaction or a move).
    pub(crate) stored: Option<usize>,
}

impl Log {
    /// Parses a log's text: every whole line that is a record. A last line without its
    /// newline (a writer killed mid-append) or a line that is not a record is left out, and
    /// the log is marked to be written whole on its next save.
    pub(crate) fn parse(text: &[u8]) -> Log {
        let mut revisions = Vec::new();
        let mut mtimes = BTreeMap::new();
        let mut whole = true;
        let mut lines = text.split(|&b| b == b'\n').peekable();
        while let Some(line) = lines.next() {
            if lines.peek().is_none() {
                // The text after the last newline: empty unless the last append was torn.
                whole &= line.is_empty();
                break;
            }
            match decode(line) {
                Some((revision, mtime)) => {
                    if let Some(mtime) = mtime {
                        mtimes.insert(revision.number, mtime);
                    }
                    revisions.push(revision);
                }
                None => whole = false,
            }
        }
        let count = revisions.len();
        let file = FileHistory::from_revisions(revisions);
        // Numbers must count up in the order of the lines.
        let ordered = file
            .revisions()
            .windows(2)
            .all(|w| w[0].number < w[1].number);
        Log {
            file,
            mtimes,
            stored: (whole && ordered).then_some(count),
        }
    }

    /// The text of the records from `from` on, one line each.
    pub(crate) fn encode_from(&self, from: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for revision in &self.file.revisions()[from..] {
            out.extend(encode(revision, self.mtimes.get(&revision.number).copied()));
            out.push(b'\n');
        }
        out
    }

    /// Keeps only the modification times of revisions still in the log.
    pub(crate) fn forget_dropped(&mut self) {
        let kept: std::collections::BTreeSet<u64> =
            self.file.revisions().iter().map(|r| r.number).collect();
        self.mtimes.retain(|number, _| kept.contains(number));
    }
}

fn encode(revision: &Revision, mtime: Option<u64>) -> Vec<u8> {
    let value = json!({
        "number": revision.number,
        "change": revision.change.as_str(),
        "path": revision.path.as_str(),
        "old_path": revision.old_path.as_ref().map(MemoryPath::as_str),
        "time": nanos(revision.time),
        "size": revision.size,
        "sha256": revision.sha256,
        "session": revision.session,
        "redacted": revision.redacted,
        "mtime": mtime,
    });
    value.to_string().into_bytes()
}

fn decode(line: &[u8]) -> Option<(Revision, Option<u64>)> {
    let value: Value = serde_json::from_slice(line).ok()?;
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    let path = |key: &str| text(key).and_then(|raw| MemoryPath::parse(raw).ok());
    let revision = Revision {
        number: value.get("number")?.as_u64()?,
        change: Change::parse(text("change")?)?,
        path: path("path")?,
        old_path: path("old_path"),
        time: from_nanos(value.get("time")?.as_u64()?),
        size: value.get("size")?.as_u64()?,
        sha256: text("sha256").map(str::to_owned),
        session: text("session").map(str::to_owned),
        redacted: value
            .get("redacted")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    };
    let mtime = value.get("mtime").and_then(Value::as_u64);
    Some((revision, mtime))
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_core::history::HistoryOptions;

    #[test]
    fn records_round_trip_and_a_torn_tail_is_left_out() {
        let path = MemoryPath::parse("/memories/a.md").unwrap();
        let options = HistoryOptions::default().with_session("s1");
        let mut log = Log::default();
        log.file.record(
            Change::Created,
            &path,
            None,
            Some(b"x"),
            &options,
            SystemTime::now(),
        );
        log.mtimes.insert(1, 42);
        log.file.record(
            Change::Deleted,
            &path,
            None,
            None,
            &options,
            SystemTime::now(),
        );
        let text = log.encode_from(0);
        let back = Log::parse(&text);
        assert_eq!(back.file.revisions().len(), 2);
        assert_eq!(back.stored, Some(2));
        assert_eq!(back.mtimes.get(&1), Some(&42));
        assert_eq!(back.file.revisions()[0].session.as_deref(), Some("s1"));
        // Times keep their nanoseconds.
        assert_eq!(
            nanos(back.file.revisions()[0].time),
            nanos(log.file.revisions()[0].time)
        );
        let mut torn = text.clone();
        torn.extend_from_slice(b"{\"number\":3,");
        let back = Log::parse(&torn);
        assert_eq!((back.file.revisions().len(), back.stored), (2, None));
        assert_eq!(Log::parse(b"").stored, Some(0));
    }
}
