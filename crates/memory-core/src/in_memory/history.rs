//! The in-memory store's history: a [`FileHistory`] per path and every revision's content.

use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::history::{Change, FileHistory, HistoryOptions, Redaction, Revision, newest_first};
use crate::{Error, MemoryPath, Result};

/// One path's revisions and the content of each (the reference store keeps a copy of every
/// revision's bytes, the current one included: simple over small).
#[derive(Debug, Default)]
struct Kept {
    file: FileHistory,
    contents: BTreeMap<u64, Vec<u8>>,
}

/// Every path's history, under the store's one lock.
#[derive(Debug, Default)]
pub(super) struct History {
    pub(super) options: HistoryOptions,
    paths: BTreeMap<MemoryPath, Kept>,
}

impl History {
    /// Records one change of `path` (`content`: the file's bytes after it, `None` for a
    /// deletion), then prunes that path's revisions.
    pub(super) fn record(
        &mut self,
        change: Change,
        path: &MemoryPath,
        old_path: Option<&MemoryPath>,
        content: Option<&[u8]>,
    ) {
        if !self.options.enabled {
            return;
        }
        let now = SystemTime::now();
        let kept = self.paths.entry(path.clone()).or_default();
        let revision = kept
            .file
            .record(change, path, old_path, content, &self.options, now);
        if let Some(content) = content {
            kept.contents.insert(revision.number, content.to_vec());
        }
        for number in kept.file.prune(&self.options, now) {
            kept.contents.remove(&number);
        }
    }

    /// Moves the history of `from` (a file a rename moves) to `to`, renumbered after `to`'s
    /// own, and records the rename.
    pub(super) fn moved(&mut self, from: &MemoryPath, to: &MemoryPath, content: &[u8]) {
        if !self.options.enabled {
            return;
        }
        if let Some(mut source) = self.paths.remove(from) {
            let target = self.paths.entry(to.clone()).or_default();
            for (old, new) in target.file.append_moved(source.file) {
                if let Some(bytes) = source.contents.remove(&old) {
                    target.contents.insert(new, bytes);
                }
            }
        }
        self.record(Change::Renamed, to, Some(from), Some(content));
    }

    fn check_on(&self) -> Result<()> {
        if self.options.enabled {
            Ok(())
        } else {
            Err(Error::HistoryOff)
        }
    }

    pub(super) fn revisions(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.check_on()?;
        if let Some(kept) = self.paths.get(path) {
            return Ok(kept.file.newest_first());
        }
        let mut below: Vec<Revision> = self
            .paths
            .iter()
            .filter(|(p, _)| p.starts_with(path) && *p != path)
            .flat_map(|(_, kept)| kept.file.revisions().iter().cloned())
            .collect();
        newest_first(&mut below);
        Ok(below)
    }

    pub(super) fn read(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.check_on()?;
        let missing = || Error::NoRevision {
            path: path.clone(),
            number,
        };
        let kept = self.paths.get(path).ok_or_else(missing)?;
        kept.file.readable(path, number)?;
        kept.contents.get(&number).cloned().ok_or_else(missing)
    }

    /// Checks that `path` has revision `number` (before a restore writes anything).
    pub(super) fn check_exists(&self, path: &MemoryPath, number: u64) -> Result<()> {
        self.check_on()?;
        match self.paths.get(path).and_then(|kept| kept.file.get(number)) {
            Some(_) => Ok(()),
            None => Err(Error::NoRevision {
                path: path.clone(),
                number,
            }),
        }
    }

    pub(super) fn redact(&mut self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.check_on()?;
        let Some(kept) = self.paths.get_mut(path) else {
            return match which {
                Redaction::Revision(number) => Err(Error::NoRevision {
                    path: path.clone(),
                    number,
                }),
                // Not a file's history: every file's below it.
                Redaction::AllPast => {
                    let mut redacted = 0;
                    for (p, kept) in &mut self.paths {
                        if p.starts_with(path) && p != path {
                            for number in kept.file.redact(p, Redaction::AllPast)? {
                                kept.contents.remove(&number);
                                redacted += 1;
                            }
                        }
                    }
                    Ok(redacted)
                }
            };
        };
        let redacted = kept.file.redact(path, which)?;
        for number in &redacted {
            kept.contents.remove(number);
        }
        Ok(redacted.len() as u64)
    }
}
