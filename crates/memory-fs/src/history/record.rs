//! One path's log on disk: a line of JSON per revision, oldest first, and what the store keeps
//! beside each [`Revision`]: the file's modification time after the change, for the quick
//! check of whether the newest record still describes the current file, and two summaries
//! of the log up to the record ([`Summary`]) so that a change can read the last line alone
//! ([`Log::parse_last`]): how many records the log holds and when pruning can first be due.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memory_core::MemoryPath;
use memory_core::history::{Change, FileHistory, HistoryOptions, Revision};
use serde_json::{Value, json};

/// Nanoseconds since the Unix epoch (0 for a time before it; `u64` holds them until 2554).
pub(crate) fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn from_nanos(n: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(n)
}

/// What a log holds up to one of its records, written on each line so that the last line tells
/// it for the whole log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    /// How many records the log holds from its start to this one.
    pub(crate) count: u64,
    /// The earliest time (nanoseconds) at which a record before this one was replaced (the
    /// later of the next record's time and its own, as [`FileHistory::prune`] ages it): pruning
    /// by days can drop nothing while this is not before the cutoff. `None` for the first.
    pub(crate) replaced_min: Option<u64>,
}

impl Summary {
    /// The summary one record later: `previous` and `next` are the times (nanoseconds) of the
    /// record this summary ends at and of the next one.
    fn then(self, previous: u64, next: u64) -> Summary {
        let replaced = previous.max(next);
        Summary {
            count: self.count + 1,
            replaced_min: Some(self.replaced_min.map_or(replaced, |m| m.min(replaced))),
        }
    }
}

/// One path's records as loaded from its log: all of them, or only the last
/// ([`Log::parse_last`], what a change needs).
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
    /// The summary of the records before the first loaded one (`count` 0 when all are loaded;
    /// for a last-line load, `replaced_min` also covers when the one before it was replaced).
    pub(crate) before: Summary,
    /// Whether only the last record was loaded: such a log may only be appended to, never
    /// written whole (the store loads it all first).
    pub(crate) partial: bool,
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
                Some((revision, mtime, _)) => {
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
            before: Summary::default(),
            partial: false,
        }
    }

    /// The log from its last line alone (the text ends with it: `tail` is the end of the log,
    /// and `whole` says whether it is the log from its start). `None` when that is not enough:
    /// the last line is torn or not a record, is from before lines carried their summary, or
    /// does not start within `tail` (read more, or the whole log).
    pub(crate) fn parse_last(tail: &[u8], whole: bool) -> Option<Log> {
        let body = tail.strip_suffix(b"\n")?;
        let line = match body.iter().rposition(|&b| b == b'\n') {
            Some(at) => &body[at + 1..],
            None if whole => body,
            None => return None,
        };
        let (revision, mtime, summary) = decode(line)?;
        let summary = summary?;
        let mut mtimes = BTreeMap::new();
        if let Some(mtime) = mtime {
            mtimes.insert(revision.number, mtime);
        }
        Some(Log {
            file: FileHistory::from_revisions(vec![revision]),
            mtimes,
            stored: Some(1),
            before: Summary {
                count: summary.count.checked_sub(1)?,
                replaced_min: summary.replaced_min,
            },
            partial: true,
        })
    }

    /// The summary of the log through each loaded record, in order.
    fn summaries(&self) -> Vec<Summary> {
        let revisions = self.file.revisions();
        let mut out: Vec<Summary> = Vec::with_capacity(revisions.len());
        for (at, revision) in revisions.iter().enumerate() {
            let summary = match (at, out.last()) {
                (0, _) | (_, None) => Summary {
                    count: self.before.count + 1,
                    replaced_min: self.before.replaced_min,
                },
                (_, Some(last)) => last.then(nanos(revisions[at - 1].time), nanos(revision.time)),
            };
            out.push(summary);
        }
        out
    }

    /// Whether [`FileHistory::prune`] would drop a revision of the whole log now: more
    /// revisions than `max_per_file`, or one replaced before the cutoff. Told from the last
    /// record's summary, without the others.
    pub(crate) fn prune_due(&self, options: &HistoryOptions, now: SystemTime) -> bool {
        let Some(summary) = self.summaries().last().copied() else {
            return false;
        };
        let too_many = options.max_per_file.is_some_and(|max| summary.count > max);
        let too_old = match (options.cutoff(now), summary.replaced_min) {
            (Some(cutoff), Some(replaced)) => replaced < nanos(cutoff),
            _ => false,
        };
        too_many || too_old
    }

    /// The text of the records from `from` on, one line each.
    pub(crate) fn encode_from(&self, from: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let summaries = self.summaries();
        for (revision, summary) in self.file.revisions()[from..].iter().zip(&summaries[from..]) {
            let mtime = self.mtimes.get(&revision.number).copied();
            out.extend(encode(revision, mtime, *summary));
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

fn encode(revision: &Revision, mtime: Option<u64>, summary: Summary) -> Vec<u8> {
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
        "count": summary.count,
        "replaced_min": summary.replaced_min,
    });
    value.to_string().into_bytes()
}

/// A record, its file's modification time and its summary (`None` in a line from before
/// lines carried one).
fn decode(line: &[u8]) -> Option<(Revision, Option<u64>, Option<Summary>)> {
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
    let summary = value
        .get("count")
        .and_then(Value::as_u64)
        .map(|count| Summary {
            count,
            replaced_min: value.get("replaced_min").and_then(Value::as_u64),
        });
    Some((revision, mtime, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The last line alone tells the count and when pruning is first due, as the whole log
    /// does, and a torn or old-style last line asks for the whole log.
    #[test]
    fn the_last_line_summarizes_the_log() {
        let path = MemoryPath::parse("/memories/a.md").unwrap();
        let options = HistoryOptions::default();
        let day = Duration::from_secs(86_400);
        let start = UNIX_EPOCH + 1000 * day;
        let mut log = Log::default();
        for n in 0..5u32 {
            let at = start + n * day;
            log.file
                .record(Change::Modified, &path, None, Some(b"x"), &options, at);
        }
        let text = log.encode_from(0);
        let last = Log::parse_last(&text[text.len() - 600..], false).unwrap();
        assert_eq!(last.file.latest().map(|r| r.number), Some(5));
        assert_eq!(last.before.count, 4);
        // Revision 1 was replaced a day after the start: due once that is past the cutoff.
        assert_eq!(last.before.replaced_min, Some(nanos(start + day)));
        for now in [start + 30 * day, start + 31 * day, start + 32 * day] {
            let mut whole = Log::parse(&text);
            let due = last.prune_due(&options, now);
            assert_eq!(due, whole.prune_due(&options, now));
            assert_eq!(due, !whole.file.prune(&options, now).is_empty(), "{now:?}");
        }
        let five = HistoryOptions::default().with_max_per_file(5);
        let four = HistoryOptions::default().with_max_per_file(4);
        assert!(!last.prune_due(&five, start));
        assert!(last.prune_due(&four, start));
        // Appended after a last-line load, the summary goes on from it.
        let mut more = last.clone();
        more.file = FileHistory::from_revisions(vec![
            last.file.revisions()[0].clone(),
            Revision {
                number: 6,
                time: start + 5 * day,
                ..last.file.revisions()[0].clone()
            },
        ]);
        let mut appended = text.clone();
        appended.extend(more.encode_from(1));
        assert_eq!(Log::parse_last(&appended, true).unwrap().before.count, 5);
        let torn = &text[..text.len() - 1];
        assert!(Log::parse_last(torn, true).is_none());
        let old_style = b"{\"number\":1,\"change\":\"created\",\"path\":\"/memories/a.md\",\"time\":1,\"size\":1}\n";
        assert!(Log::parse(old_style).file.latest().is_some());
        assert!(Log::parse_last(old_style, true).is_none());
    }
}
