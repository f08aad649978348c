//! [`FileHistory`]: the revisions of one path, and the rules every store applies to them.

use std::time::SystemTime;

use super::{Change, HistoryOptions, Redaction, Revision, sha256_hex};
use crate::{Error, MemoryPath, Result};

/// The revisions of one path, oldest first, and the rules that change them: what the next
/// revision's number is, what a rename does, what pruning and redaction drop.
///
/// A store keeps the records however it likes (rows, a log file, object metadata); it loads
/// those of one path into a `FileHistory`, applies a rule, and stores what changed. The
/// in-memory store keeps its history as `FileHistory` values.
///
/// The invariant a store keeps: every revision but the newest of a file that exists holds its
/// content in the history (unless it is a deletion or was redacted); the newest is the
/// current file.
///
/// ```
/// use std::time::SystemTime;
/// use memory_core::MemoryPath;
/// use memory_core::history::{Change, FileHistory, HistoryOptions};
///
/// let path = MemoryPath::parse("/memories/notes.md").unwrap();
/// let options = HistoryOptions::default().with_max_per_file(2);
/// let mut file = FileHistory::new();
/// let now = SystemTime::now();
/// file.record(Change::Created, &path, None, Some(b"one"), &options, now);
/// file.record(Change::Modified, &path, None, Some(b"two"), &options, now);
/// file.record(Change::Modified, &path, None, Some(b"three"), &options, now);
/// assert_eq!(file.prune(&options, now), vec![1]);
/// assert_eq!(file.latest().unwrap().number, 3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileHistory {
    revisions: Vec<Revision>,
}

impl FileHistory {
    /// No revisions.
    pub fn new() -> Self {
        Self::default()
    }

    /// The history made of `revisions` (in any order; they are sorted by number).
    pub fn from_revisions(mut revisions: Vec<Revision>) -> Self {
        revisions.sort_by_key(|revision| revision.number);
        FileHistory { revisions }
    }

    /// The revisions, oldest first.
    pub fn revisions(&self) -> &[Revision] {
        &self.revisions
    }

    /// The revisions, newest first, as [`Storage::history`](crate::Storage::history) returns
    /// one file's.
    pub fn newest_first(&self) -> Vec<Revision> {
        self.revisions.iter().rev().cloned().collect()
    }

    /// Whether there are no revisions.
    pub fn is_empty(&self) -> bool {
        self.revisions.is_empty()
    }

    /// The newest revision.
    pub fn latest(&self) -> Option<&Revision> {
        self.revisions.last()
    }

    /// The revision numbered `number`.
    pub fn get(&self, number: u64) -> Option<&Revision> {
        self.revisions
            .binary_search_by_key(&number, |revision| revision.number)
            .ok()
            .map(|at| &self.revisions[at])
    }

    /// The number the next revision gets: one more than the newest.
    pub fn next_number(&self) -> u64 {
        self.latest().map_or(1, |revision| revision.number + 1)
    }

    /// The number of the revision that is the current file: the newest, unless it records a
    /// deletion.
    pub fn current_number(&self) -> Option<u64> {
        self.latest()
            .filter(|revision| revision.change != Change::Deleted)
            .map(|revision| revision.number)
    }

    /// Records a change: the revision it makes (numbered [`next_number`](Self::next_number),
    /// at `now`, under `options`' session), appended and returned. `content` is the file's
    /// content after the change (`None` for a deletion).
    pub fn record(
        &mut self,
        change: Change,
        path: &MemoryPath,
        old_path: Option<&MemoryPath>,
        content: Option<&[u8]>,
        options: &HistoryOptions,
        now: SystemTime,
    ) -> Revision {
        let revision = Revision {
            number: self.next_number(),
            change,
            path: path.clone(),
            old_path: old_path.cloned(),
            time: now,
            size: content.map_or(0, |content| content.len() as u64),
            sha256: content.map(sha256_hex),
            session: options.session.clone(),
            redacted: false,
        };
        self.revisions.push(revision.clone());
        revision
    }

    /// Appends the revisions of a file that a rename moves here (`moved`, the history of the
    /// path it leaves), renumbered after the ones this path already has (a deleted file's):
    /// returns each moved revision's `(old number, new number)`, oldest first, so that a
    /// store moves each one's content to its new number.
    pub fn append_moved(&mut self, moved: FileHistory) -> Vec<(u64, u64)> {
        let first = self.next_number();
        let mut renumbered = Vec::with_capacity(moved.revisions.len());
        for (offset, mut revision) in moved.revisions.into_iter().enumerate() {
            let number = first + offset as u64;
            renumbered.push((revision.number, number));
            revision.number = number;
            self.revisions.push(revision);
        }
        renumbered
    }

    /// Drops the revisions `options` no longer keep and returns their numbers, oldest first,
    /// so that a store deletes their records and content:
    /// - those replaced more than [`keep_for`](HistoryOptions::keep_for) before `now` (a
    ///   revision's age counts from the change after it, when it stopped being the file: a
    ///   note left alone for months and then overwritten keeps its old content for the whole
    ///   period, as a revision's own time would drop it at once);
    /// - those beyond [`max_per_file`](HistoryOptions::max_per_file), counted newest first.
    ///
    /// The newest revision (the current file, or a file's deletion) is never dropped.
    pub fn prune(&mut self, options: &HistoryOptions, now: SystemTime) -> Vec<u64> {
        let cutoff = options.cutoff(now);
        let keep_from = options
            .max_per_file
            .map_or(0, |max| self.revisions.len().saturating_sub(max as usize));
        // When each revision was replaced: the time of the one after it (or its own, where a
        // rename put older revisions after it).
        let replaced: Vec<Option<SystemTime>> = (0..self.revisions.len())
            .map(|at| {
                let own = self.revisions[at].time;
                self.revisions.get(at + 1).map(|next| next.time.max(own))
            })
            .collect();
        let mut dropped = Vec::new();
        let mut at = 0;
        self.revisions.retain(|revision| {
            let position = at;
            at += 1;
            let too_old = match (cutoff, replaced[position]) {
                (Some(cutoff), Some(replaced)) => replaced < cutoff,
                _ => false,
            };
            let newest = replaced[position].is_none();
            let drop = !newest && (position < keep_from || too_old);
            if drop {
                dropped.push(revision.number);
            }
            !drop
        });
        dropped
    }

    /// Marks the revisions `which` names as redacted and returns the numbers whose content a
    /// store must now remove (none for a deletion or a revision already redacted).
    ///
    /// # Errors
    /// [`Error::NoRevision`] for a number this path does not have, and
    /// [`Error::RevisionIsCurrent`] for the current file's revision (change or delete the
    /// file first: redaction never touches the current file).
    pub fn redact(&mut self, path: &MemoryPath, which: Redaction) -> Result<Vec<u64>> {
        let current = self.current_number();
        if let Redaction::Revision(number) = which {
            if self.get(number).is_none() {
                return Err(Error::NoRevision {
                    path: path.clone(),
                    number,
                });
            }
            if Some(number) == current {
                return Err(Error::RevisionIsCurrent {
                    path: path.clone(),
                    number,
                });
            }
        }
        let mut redacted = Vec::new();
        for revision in &mut self.revisions {
            let named = match which {
                Redaction::Revision(number) => revision.number == number,
                Redaction::AllPast => Some(revision.number) != current,
            };
            if named && revision.has_content() {
                revision.redacted = true;
                // A digest of a short secret would let anyone confirm a guess of it.
                revision.sha256 = None;
                redacted.push(revision.number);
            }
        }
        Ok(redacted)
    }

    /// The revision `number`, checked to hold content that can be read.
    ///
    /// # Errors
    /// [`Error::NoRevision`] for a number this path does not have, and
    /// [`Error::RevisionWithoutContent`] for a deletion or a redacted revision.
    pub fn readable(&self, path: &MemoryPath, number: u64) -> Result<&Revision> {
        let revision = self.get(number).ok_or_else(|| Error::NoRevision {
            path: path.clone(),
            number,
        })?;
        if !revision.has_content() {
            return Err(Error::RevisionWithoutContent {
                path: path.clone(),
                number,
                redacted: revision.redacted,
            });
        }
        Ok(revision)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn path(p: &str) -> MemoryPath {
        MemoryPath::parse(p).unwrap()
    }

    #[test]
    fn numbers_count_up_and_a_deletion_ends_the_current_file() {
        let (p, options, now) = (
            path("/memories/a.md"),
            HistoryOptions::default(),
            SystemTime::now(),
        );
        let mut file = FileHistory::new();
        assert_eq!(file.next_number(), 1);
        let first = file.record(Change::Created, &p, None, Some(b"abc"), &options, now);
        assert_eq!((first.number, first.size), (1, 3));
        assert_eq!(first.sha256.as_deref(), Some(sha256_hex(b"abc").as_str()));
        assert_eq!(file.current_number(), Some(1));
        let gone = file.record(Change::Deleted, &p, None, None, &options, now);
        assert_eq!((gone.number, gone.size, gone.sha256), (2, 0, None));
        assert_eq!(file.current_number(), None);
        assert!(matches!(
            file.readable(&p, 2),
            Err(Error::RevisionWithoutContent {
                redacted: false,
                ..
            })
        ));
        assert!(matches!(
            file.readable(&p, 9),
            Err(Error::NoRevision { number: 9, .. })
        ));
    }

    #[test]
    fn a_moved_history_continues_after_the_deleted_files_it_joins() {
        let (a, b, options, now) = (
            path("/memories/a.md"),
            path("/memories/b.md"),
            HistoryOptions::default(),
            SystemTime::now(),
        );
        let mut target = FileHistory::new();
        target.record(Change::Created, &b, None, Some(b"old b"), &options, now);
        target.record(Change::Deleted, &b, None, None, &options, now);
        let mut source = FileHistory::new();
        source.record(Change::Created, &a, None, Some(b"1"), &options, now);
        source.record(Change::Modified, &a, None, Some(b"2"), &options, now);
        assert_eq!(target.append_moved(source), vec![(1, 3), (2, 4)]);
        let renamed = target.record(Change::Renamed, &b, Some(&a), Some(b"2"), &options, now);
        assert_eq!(renamed.number, 5);
        let numbers: Vec<u64> = target.newest_first().iter().map(|r| r.number).collect();
        assert_eq!(numbers, vec![5, 4, 3, 2, 1]);
        assert_eq!(target.get(4).unwrap().path, a);
    }

    #[test]
    fn pruning_keeps_the_current_file_and_the_newest() {
        let p = path("/memories/a.md");
        let now = SystemTime::now();
        let old = now - Duration::from_secs(40 * 86_400);
        let options = HistoryOptions::default();
        let mut file = FileHistory::new();
        file.record(Change::Created, &p, None, Some(b"1"), &options, old);
        file.record(Change::Modified, &p, None, Some(b"2"), &options, old);
        // Both were made more than 30 days ago; the first was replaced then too.
        assert_eq!(file.prune(&options, now), vec![1]);
        assert_eq!(file.current_number(), Some(2));
        // Replaced just now, the old current content is kept for the whole period.
        file.record(Change::Modified, &p, None, Some(b"3"), &options, now);
        assert_eq!(file.prune(&options, now), Vec::<u64>::new());
        assert_eq!(file.revisions().len(), 2);
        let max = HistoryOptions::default().with_max_per_file(3);
        for n in 0..5 {
            file.record(Change::Modified, &p, None, Some(&[n]), &max, now);
        }
        assert_eq!(file.prune(&max, now), vec![2, 3, 4, 5]);
        let left: Vec<u64> = file.revisions().iter().map(|r| r.number).collect();
        assert_eq!(left, vec![6, 7, 8]);
    }

    #[test]
    fn redaction_spares_the_current_file() {
        let (p, options, now) = (
            path("/memories/a.md"),
            HistoryOptions::default(),
            SystemTime::now(),
        );
        let mut file = FileHistory::new();
        file.record(Change::Created, &p, None, Some(b"secret"), &options, now);
        file.record(Change::Modified, &p, None, Some(b"clean"), &options, now);
        assert!(matches!(
            file.redact(&p, Redaction::Revision(2)),
            Err(Error::RevisionIsCurrent { number: 2, .. })
        ));
        assert!(matches!(
            file.redact(&p, Redaction::Revision(7)),
            Err(Error::NoRevision { number: 7, .. })
        ));
        assert_eq!(file.redact(&p, Redaction::AllPast).unwrap(), vec![1]);
        assert_eq!(
            file.redact(&p, Redaction::Revision(1)).unwrap(),
            Vec::<u64>::new()
        );
        assert!(file.get(1).unwrap().redacted);
        assert_eq!(file.get(1).unwrap().sha256, None);
        assert!(matches!(
            file.readable(&p, 1),
            Err(Error::RevisionWithoutContent { redacted: true, .. })
        ));
        assert!(file.readable(&p, 2).is_ok());
    }
}
