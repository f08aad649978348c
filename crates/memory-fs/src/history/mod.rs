//! Each file's earlier versions, kept in `base/.memory-history` beside `memories/` (never
//! inside it: no memory path reaches history, and listings, counts and search never see it).
//!
//! One folder per memory path, named by the hex SHA-256 of the path and fanned out by its
//! first two digits (`.memory-history/ab/cdef…`), holds:
//! - `log`: the path's records, a line of JSON each, oldest first ([`record`]), appended as
//!   changes go and written whole (a temporary file and a rename) when pruning, redaction or
//!   a move changes earlier ones;
//! - `<number>`: the content of each past revision that has content. The newest revision of
//!   a file that exists has none here: it is the current file.
//!
//! How a change stays safe from a crash at any instant (all under the store lock):
//! 1. the path's log is *settled* first ([`changes`]): if its newest record does not describe
//!    the current file (size and modification time, else the SHA-256), a record of what
//!    happened is appended (`created`, `modified` or `deleted`): a change whose record a
//!    crash cut off, or one made by another program;
//! 2. the content the change replaces becomes its revision's content file before the current
//!    file changes: the current file is hard-linked into history (copied where links fail)
//!    and the change then renames a new file over it, so the linked file is never written
//!    again;
//! 3. the change's record is appended after the change.
//!
//! A crash between 2 and 3 leaves a content file and a changed current file: the next access
//! settles it (step 1). A content file with no record is never shown (versions come from the
//! log only) and is replaced when its number is reached.

mod api;
mod changes;
mod record;

use std::io::{self, Read as _, Write as _};
use std::path::PathBuf;

use cap_std::fs::{Dir, OpenOptions};
use memory_core::options::SyncMode;
use memory_core::{Error, MemoryPath, Result, history::sha256_hex};

use crate::error::FsError;
use crate::layout::{DIR_MODE, is_not_found};
use crate::store::Store;
use crate::sys;

pub(crate) use changes::Content;
pub(crate) use record::{Log, nanos};

/// A path's log file, in the path's folder.
const LOG: &str = "log";

/// The folder of `path`'s history below `.memory-history`: `ab/cdef…` from the hex SHA-256 of
/// the path.
fn path_folder(path: &MemoryPath) -> PathBuf {
    let hash = sha256_hex(path.as_str().as_bytes());
    PathBuf::from(&hash[..2]).join(&hash[2..])
}

/// The name of revision `number`'s content file.
fn content_name(number: u64) -> String {
    number.to_string()
}

/// A path's history as loaded: its records and, when it exists, its folder.
#[derive(Debug)]
pub(crate) struct Kept {
    pub(crate) log: Log,
    pub(crate) folder: Option<Dir>,
}

fn hist_err<'p>(path: &'p MemoryPath, op: &'static str) -> impl FnOnce(io::Error) -> FsError + 'p {
    move |e| FsError::io(op, path, e)
}

impl Store {
    /// The history folder, when history is on: [`Error::HistoryOff`] when it is off, `None`
    /// for a read-only store whose folder holds no history yet.
    pub(crate) fn history_root(&self) -> Result<Option<&Dir>> {
        if !self.options.history.enabled {
            return Err(Error::HistoryOff);
        }
        Ok(self.history.as_ref())
    }

    /// Loads `path`'s log (an empty one when it has none).
    pub(crate) fn load_history(&self, hist: &Dir, path: &MemoryPath) -> Result<Kept, FsError> {
        let folder = match hist.open_dir(path_folder(path)) {
            Ok(folder) => folder,
            Err(e) if is_not_found(&e) => {
                return Ok(Kept {
                    log: Log::parse(b""),
                    folder: None,
                });
            }
            Err(e) => return Err(FsError::io("open the history of", path, e)),
        };
        let text = match folder.open(LOG) {
            Ok(mut file) => {
                let mut text = Vec::new();
                file.read_to_end(&mut text)
                    .map_err(hist_err(path, "read the history of"))?;
                text
            }
            Err(e) if is_not_found(&e) => Vec::new(),
            Err(e) => return Err(FsError::io("open the history of", path, e)),
        };
        Ok(Kept {
            log: Log::parse(&text),
            folder: Some(folder),
        })
    }

    /// `path`'s folder in history, made if missing.
    fn path_folder_made(&self, hist: &Dir, path: &MemoryPath) -> Result<Dir, FsError> {
        let rel = path_folder(path);
        let builder = sys::private_dir_builder();
        let fan = rel.parent().map(PathBuf::from).unwrap_or_default();
        for dir in [&fan, &rel] {
            match hist.create_dir_with(dir, &builder) {
                Ok(()) => {
                    if self.chmod_after_create {
                        sys::set_mode(hist, dir, DIR_MODE)
                            .map_err(hist_err(path, "chmod the history of"))?;
                    }
                    if self.options.sync == SyncMode::Full {
                        let parent = if dir == &fan { None } else { Some(&fan) };
                        let synced = match parent {
                            None => sys::sync_dir(hist),
                            Some(fan) => hist.open_dir(fan).and_then(|d| sys::sync_dir(&d)),
                        };
                        synced.map_err(hist_err(path, "sync the history of"))?;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(FsError::io("make the history of", path, e)),
            }
        }
        hist.open_dir(&rel)
            .map_err(hist_err(path, "open the history of"))
    }

    /// The folder of `kept`, made if missing.
    pub(crate) fn kept_folder<'k>(
        &self,
        hist: &Dir,
        path: &MemoryPath,
        kept: &'k mut Kept,
    ) -> Result<&'k Dir, FsError> {
        if kept.folder.is_none() {
            kept.folder = Some(self.path_folder_made(hist, path)?);
        }
        match &kept.folder {
            Some(folder) => Ok(folder),
            None => Err(FsError::io(
                "open the history of",
                path,
                io::ErrorKind::NotFound.into(),
            )),
        }
    }

    /// Stores `kept`'s records: appends those not yet on disk, or writes the log whole (a
    /// temporary file renamed over it) when earlier ones changed. A path left with no record
    /// loses its folder.
    pub(crate) fn save_history(
        &self,
        hist: &Dir,
        path: &MemoryPath,
        kept: &mut Kept,
    ) -> Result<(), FsError> {
        let count = kept.log.file.revisions().len();
        if count == 0 {
            if let Some(folder) = kept.folder.take() {
                remove_path_folder(hist, path, &folder);
            }
            kept.log.stored = Some(0);
            return Ok(());
        }
        if kept.log.stored == Some(count) {
            return Ok(());
        }
        let sync = self.options.sync;
        self.kept_folder(hist, path, kept)?;
        let Some(folder) = &kept.folder else {
            return Ok(());
        };
        match kept.log.stored {
            Some(stored) if stored < count => {
                let mut options = OpenOptions::new();
                options.append(true).create(true);
                #[cfg(unix)]
                cap_std::fs::OpenOptionsExt::mode(&mut options, crate::layout::FILE_MODE);
                let mut file = folder
                    .open_with(LOG, &options)
                    .map_err(hist_err(path, "open the history of"))?;
                file.write_all(&kept.log.encode_from(stored))
                    .map_err(hist_err(path, "record the history of"))?;
                if sync != SyncMode::None {
                    file.sync_data()
                        .map_err(hist_err(path, "sync the history of"))?;
                }
            }
            _ => {
                let text = kept.log.encode_from(0);
                let temp = self.write_temp(path, &text)?;
                if let Err(e) = self.temp.rename(&temp, folder, LOG) {
                    self.remove_temp(&temp);
                    return Err(FsError::io("record the history of", path, e));
                }
                if sync == SyncMode::Full {
                    sys::sync_dir(folder).map_err(hist_err(path, "sync the history of"))?;
                }
            }
        }
        kept.log.stored = Some(count);
        Ok(())
    }

    /// Makes the current file `name` in `dir` the content of revision `number` of `path`:
    /// a hard link (a copy where the file system has none), replacing any content file of
    /// that number a crash left without its record.
    pub(crate) fn keep_file_as(
        &self,
        dir: &Dir,
        name: &str,
        into: &Dir,
        number: u64,
        path: &MemoryPath,
    ) -> Result<(), FsError> {
        let target = content_name(number);
        let linked = match dir.hard_link(name, into, &target) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // Left by a crash (its record never written, or a move cut short).
                into.remove_file(&target)
                    .map_err(hist_err(path, "replace an old version of"))?;
                dir.hard_link(name, into, &target)
            }
            other => other,
        };
        match linked {
            Ok(()) => {}
            Err(e) if is_not_found(&e) => return Err(FsError::io("keep the version of", path, e)),
            Err(_) => {
                // No hard links here (or not across these folders): a copy, placed whole.
                let mut contents = Vec::new();
                dir.open(name)
                    .and_then(|mut f| f.read_to_end(&mut contents))
                    .map_err(hist_err(path, "copy the version of"))?;
                let temp = self.write_temp(path, &contents)?;
                if let Err(e) = self.temp.rename(&temp, into, &target) {
                    self.remove_temp(&temp);
                    return Err(FsError::io("keep the version of", path, e));
                }
            }
        }
        if self.options.sync == SyncMode::Full {
            sys::sync_dir(into).map_err(hist_err(path, "sync the history of"))?;
        }
        Ok(())
    }

    /// Removes the content files of `numbers` from `kept`'s folder (those already gone are
    /// fine).
    pub(crate) fn remove_contents(
        &self,
        path: &MemoryPath,
        kept: &Kept,
        numbers: &[u64],
    ) -> Result<(), FsError> {
        let Some(folder) = &kept.folder else {
            return Ok(());
        };
        for &number in numbers {
            match folder.remove_file(content_name(number)) {
                Ok(()) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(FsError::io("remove an old version of", path, e)),
            }
        }
        Ok(())
    }

    /// The bytes of past revision `number`'s content file, checked against its record's
    /// SHA-256; `None` when there is no such file or it does not hold those bytes.
    pub(crate) fn read_content(
        &self,
        path: &MemoryPath,
        kept: &Kept,
        number: u64,
    ) -> Result<Option<Vec<u8>>, FsError> {
        let Some(folder) = &kept.folder else {
            return Ok(None);
        };
        let mut contents = Vec::new();
        match folder.open(content_name(number)) {
            Ok(mut file) => file
                .read_to_end(&mut contents)
                .map_err(hist_err(path, "read a version of"))?,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(FsError::io("read a version of", path, e)),
        };
        let expected = kept.log.file.get(number).and_then(|r| r.sha256.clone());
        Ok((expected.as_deref() == Some(sha256_hex(&contents).as_str())).then_some(contents))
    }
}

/// Removes a path's history folder: its log first (from then on the path has no versions),
/// then its content files, then the folder and its fan-out folder if left empty. What cannot
/// be removed is left for a later redaction's sweep.
pub(crate) fn remove_path_folder(hist: &Dir, path: &MemoryPath, folder: &Dir) {
    if let Err(e) = folder.remove_file(LOG)
        && !is_not_found(&e)
    {
        tracing::warn!(error = %e, %path, "memory-fs: cannot remove a history log");
        return;
    }
    if let Ok(entries) = folder.entries() {
        for entry in entries.flatten() {
            let _ = folder.remove_file(entry.file_name());
        }
    }
    let rel = path_folder(path);
    let _ = hist.remove_dir(&rel);
    if let Some(fan) = rel.parent() {
        let _ = hist.remove_dir(fan);
    }
}
