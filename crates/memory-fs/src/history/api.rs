//! The history methods of the store: a path's log (a file's, or every file's below a folder),
//! a revision's bytes, a restore and a redaction.

use std::io::Read as _;

use cap_std::fs::Dir;
use memory_core::history::{Redaction, Revision, newest_first};
use memory_core::{Error, MemoryPath, Result, Version, WriteMode};

use super::{LOG, Log, path_folder};
use crate::error::FsError;
use crate::layout::is_not_found;
use crate::store::Store;

/// What a folder's log found in one path folder of history.
fn key_of(folder: &Dir, fan: &str, name: &str) -> Option<MemoryPath> {
    let mut text = Vec::new();
    folder.open(LOG).ok()?.read_to_end(&mut text).ok()?;
    // Every change appends a record made at the path the log belongs to, so the newest names
    // it; a folder whose name is not that path's hash is not one of ours.
    let key = Log::parse(&text).file.latest()?.path.clone();
    (path_folder(&key) == std::path::Path::new(fan).join(name)).then_some(key)
}

impl Store {
    /// [`Storage::history`](memory_core::Storage::history): a file's revisions newest first,
    /// or for a folder those of every path below it (a walk of the whole history folder).
    pub(crate) fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        let Some(hist) = self.history_root()? else {
            return Ok(Vec::new());
        };
        let kept = self.settled(hist, path, false)?;
        if !kept.log.file.is_empty() {
            return Ok(kept.log.file.newest_first());
        }
        let mut below = Vec::new();
        for key in self.history_keys(hist)? {
            if key.starts_with(path) && key != *path {
                below.extend(self.settled(hist, &key, false)?.log.file.newest_first());
            }
        }
        newest_first(&mut below);
        Ok(below)
    }

    /// Every path that has a log in history.
    fn history_keys(&self, hist: &Dir) -> Result<Vec<MemoryPath>> {
        let root = MemoryPath::root();
        let listed = |e| FsError::io("list the history of", &root, e);
        let mut keys = Vec::new();
        for fan in hist.entries().map_err(listed)? {
            let fan = fan.map_err(listed)?;
            let Some(fan_name) = fan.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Ok(fan_dir) = hist.open_dir(&fan_name) else {
                continue;
            };
            for entry in fan_dir.entries().map_err(listed)? {
                let entry = entry.map_err(listed)?;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if let Ok(folder) = fan_dir.open_dir(&name)
                    && let Some(key) = key_of(&folder, &fan_name, &name)
                {
                    keys.push(key);
                }
            }
        }
        Ok(keys)
    }

    /// [`Storage::read_revision`](memory_core::Storage::read_revision).
    pub(crate) fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        let Some(hist) = self.history_root()? else {
            return Err(Error::NoRevision {
                path: path.clone(),
                number,
            });
        };
        let kept = self.settled(hist, path, false)?;
        kept.log.file.readable(path, number)?;
        if kept.log.file.current_number() == Some(number) {
            return Ok(self.read(path)?.contents);
        }
        match self.read_content(path, &kept, number)? {
            Some(contents) => Ok(contents),
            None => Err(FsError::LostVersion {
                path: path.clone(),
                number,
            }
            .into()),
        }
    }

    /// [`Storage::write_restored`](memory_core::Storage::write_restored): checks the revision
    /// exists, then writes as an overwrite recorded as `restored`.
    pub(crate) fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: &[u8],
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        let no_revision = || Error::NoRevision {
            path: path.clone(),
            number,
        };
        let Some(hist) = self.history_root()? else {
            return Err(no_revision());
        };
        if self
            .load_history(hist, path)?
            .log
            .file
            .get(number)
            .is_none()
        {
            return Err(no_revision());
        }
        self.write_recorded(path, contents, &WriteMode::Overwrite, None, true)
    }

    /// [`Storage::redact_revisions`](memory_core::Storage::redact_revisions): under the lock,
    /// the content files go first (a crash then leaves records whose content is gone, and the
    /// redaction can be run again), then the log is written whole marking them, then every
    /// content file no record names is removed from the whole history folder (copies a crash
    /// left behind): O(all history), as redaction is rare. [`Redaction::AllPast`] on a path
    /// with no history of its own (a folder, the root) does this for every file with history
    /// below it, under the same lock hold, with one sweep at the end.
    pub(crate) fn redact_revisions(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.refuse_if_read_only(path)?;
        let hist = match self.history_root()? {
            Some(hist) => hist,
            None => return Err(Error::HistoryOff),
        };
        let _locked = self.lock()?;
        let redacted = match self.redact_file(hist, path, which)? {
            Some(0) => return Ok(0),
            Some(n) => n,
            None => match which {
                Redaction::Revision(number) => {
                    return Err(Error::NoRevision {
                        path: path.clone(),
                        number,
                    });
                }
                Redaction::AllPast => {
                    let mut redacted = 0;
                    for key in self.history_keys(hist)? {
                        if key.starts_with(path) && key != *path {
                            redacted += self.redact_file(hist, &key, which)?.unwrap_or(0);
                        }
                    }
                    redacted
                }
            },
        };
        self.sweep_history(hist)?;
        Ok(redacted)
    }

    /// Redacts `which` of `path`'s own revisions (content files first, then the log written
    /// whole), under the lock: how many, or `None` when the path has no history.
    fn redact_file(&self, hist: &Dir, path: &MemoryPath, which: Redaction) -> Result<Option<u64>> {
        let mut kept = self.settled(hist, path, true)?;
        if kept.log.file.is_empty() {
            return Ok(None);
        }
        let redacted = kept.log.file.redact(path, which)?;
        if redacted.is_empty() {
            return Ok(Some(0));
        }
        self.remove_contents(path, &kept, &redacted)?;
        kept.log.stored = None;
        self.save_history(hist, path, &mut kept)?;
        Ok(Some(redacted.len() as u64))
    }

    /// Removes from every path folder the content files no record needs (not a past revision
    /// with content), and the folders with no log at all. Under the lock only.
    fn sweep_history(&self, hist: &Dir) -> Result<()> {
        let root = MemoryPath::root();
        let listed = |e| FsError::io("sweep the history of", &root, e);
        for fan in hist.entries().map_err(listed)? {
            let fan = fan.map_err(listed)?;
            let Some(fan_name) = fan.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Ok(fan_dir) = hist.open_dir(&fan_name) else {
                continue;
            };
            for entry in fan_dir.entries().map_err(listed)? {
                let entry = entry.map_err(listed)?;
                let name = entry.file_name();
                let Ok(folder) = fan_dir.open_dir(&name) else {
                    continue;
                };
                let text = match folder.open(LOG) {
                    Ok(mut file) => {
                        let mut text = Vec::new();
                        file.read_to_end(&mut text).map_err(listed)?;
                        Some(text)
                    }
                    Err(e) if is_not_found(&e) => None,
                    Err(e) => return Err(listed(e).into()),
                };
                let needed: Vec<String> = match &text {
                    Some(text) => {
                        let log = Log::parse(text);
                        let current = log.file.current_number();
                        log.file
                            .revisions()
                            .iter()
                            .filter(|r| r.has_content() && Some(r.number) != current)
                            .map(|r| r.number.to_string())
                            .collect()
                    }
                    None => Vec::new(),
                };
                for file in folder.entries().map_err(listed)? {
                    let file = file.map_err(listed)?;
                    let file_name = file.file_name();
                    let keep = text.is_some()
                        && file_name
                            .to_str()
                            .is_some_and(|n| n == LOG || needed.iter().any(|k| k == n));
                    if !keep {
                        match folder.remove_file(&file_name) {
                            Ok(()) => {}
                            Err(e) if is_not_found(&e) => {}
                            Err(e) => return Err(listed(e).into()),
                        }
                    }
                }
                if text.is_none() {
                    let _ = fan_dir.remove_dir(&name);
                }
            }
            let _ = hist.remove_dir(&fan_name);
        }
        Ok(())
    }
}
