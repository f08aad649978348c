//! Recording changes: settling a path's log with what is on disk, keeping the content a
//! change replaces before it changes, and the record after it (see the [module
//! documentation](super) for the order and why it survives a crash).

use std::time::SystemTime;

use cap_std::fs::Dir;
use memory_core::history::{Change, FileHistory, Revision};
use memory_core::{Error, MemoryPath, Result};

use super::record::nanos;
use super::{Kept, Log, content_name, remove_path_folder};
use crate::error::FsError;
use crate::layout::{FileInfo, is_not_found};
use crate::resolve::Probe;
use crate::store::Store;

/// The content a revision describes: its SHA-256 (hex) and size.
#[derive(Debug, Clone)]
pub(crate) struct Content {
    pub(crate) sha256: String,
    pub(crate) size: u64,
}

/// A change to record: what it was, the path the file moved from (a rename), the content
/// after it (`None` for a deletion) and the file's modification time after it.
#[derive(Debug)]
pub(crate) struct Made<'a> {
    pub(crate) change: Change,
    pub(crate) old_path: Option<&'a MemoryPath>,
    pub(crate) content: Option<Content>,
    pub(crate) mtime: Option<u64>,
}

/// A file a rename moves, with both paths' settled histories, made ready before the rename
/// ([`Store::before_move`]) and recorded after it ([`Store::after_move`]).
#[derive(Debug)]
pub(crate) struct Move {
    from: MemoryPath,
    to: MemoryPath,
    source: Kept,
    target: Kept,
}

/// Adds `revision` (numbered after the others) to `log`, with the file's modification time.
fn push(log: &mut Log, revision: Revision, mtime: Option<u64>) {
    let number = revision.number;
    let mut revisions = log.file.revisions().to_vec();
    revisions.push(revision);
    log.file = FileHistory::from_revisions(revisions);
    if let Some(mtime) = mtime {
        log.mtimes.insert(number, mtime);
    }
}

fn mtime_of(info: &FileInfo) -> Option<u64> {
    info.modified.map(nanos)
}

impl Store {
    /// The history folder, when changes are recorded (history on, store writable).
    pub(crate) fn recording(&self) -> Option<&Dir> {
        if self.options.history.enabled {
            self.history.as_ref()
        } else {
            None
        }
    }

    /// `path`'s history, its newest record made to describe the current file: when it does
    /// not (a change whose record a crash cut off, or one made by another program), a record
    /// of what happened is added (`created`, `modified` or `deleted`, with no session), and
    /// stored when `persist` (under the store lock; a read-only look keeps it in memory).
    pub(crate) fn settled(&self, hist: &Dir, path: &MemoryPath, persist: bool) -> Result<Kept> {
        let mut kept = self.load_history(hist, path)?;
        let current = match self.probe_unlinked(path)? {
            Probe::File(info) => Some(info),
            _ => None,
        };
        let live = kept
            .log
            .file
            .latest()
            .filter(|r| r.change != Change::Deleted)
            .cloned();
        let found = match (&live, current) {
            (None, None) => return Ok(kept),
            (Some(_), None) => Some((Change::Deleted, None, None)),
            (live, Some(info)) => {
                // The current revision's content file exists only while a change of it is in
                // flight (linked before the change, and no longer current once recorded): a
                // crash left it, and only the content tells whether the change was made.
                let in_flight = live.as_ref().is_some_and(|r| {
                    kept.folder
                        .as_ref()
                        .is_some_and(|f| f.symlink_metadata(content_name(r.number)).is_ok())
                });
                let quick = !in_flight
                    && live.as_ref().is_some_and(|r| {
                        r.size == info.size
                            && mtime_of(&info).is_some()
                            && kept.log.mtimes.get(&r.number).copied() == mtime_of(&info)
                    });
                if quick {
                    return Ok(kept);
                }
                match self.read(path) {
                    Ok(file) => {
                        let sha256 = file.version.as_str().to_owned();
                        let change = match &live {
                            Some(r) if r.sha256.as_deref() == Some(&sha256) => {
                                if persist {
                                    self.tidy_unchanged(hist, path, &mut kept, r, &info, in_flight);
                                }
                                return Ok(kept);
                            }
                            Some(_) => Change::Modified,
                            None => Change::Created,
                        };
                        let content = Content {
                            sha256,
                            size: file.contents.len() as u64,
                        };
                        Some((change, Some(content), mtime_of(&info)))
                    }
                    Err(Error::NotFound { .. }) if live.is_some() => {
                        Some((Change::Deleted, None, None))
                    }
                    Err(Error::NotFound { .. }) => None,
                    Err(e) => return Err(e),
                }
            }
        };
        let Some((change, content, mtime)) = found else {
            return Ok(kept);
        };
        let revision = Revision {
            number: kept.log.file.next_number(),
            change,
            path: path.clone(),
            old_path: None,
            time: SystemTime::now(),
            size: content.as_ref().map_or(0, |c| c.size),
            sha256: content.map(|c| c.sha256),
            session: None,
            redacted: false,
        };
        tracing::debug!(%path, %change, "memory-fs: recorded a change history had missed");
        push(&mut kept.log, revision, mtime);
        if persist {
            self.save_history(hist, path, &mut kept)?;
        }
        Ok(kept)
    }

    /// After settling found the current file unchanged (its bytes are the newest record's):
    /// removes the content file a change cut short left for it, and records the file's new
    /// modification time (set by `set_modified` or another program) so that the next look is
    /// quick again. Failures only cost a hash next time.
    fn tidy_unchanged(
        &self,
        hist: &Dir,
        path: &MemoryPath,
        kept: &mut Kept,
        live: &Revision,
        info: &FileInfo,
        in_flight: bool,
    ) {
        if in_flight && let Err(e) = self.remove_contents(path, kept, &[live.number]) {
            tracing::debug!(error = %e, %path, "memory-fs: cannot remove a left-over version file");
        }
        if let Some(mtime) = mtime_of(info)
            && kept.log.mtimes.get(&live.number) != Some(&mtime)
        {
            kept.log.mtimes.insert(live.number, mtime);
            kept.log.stored = None;
            if let Err(e) = self.save_history(hist, path, kept) {
                tracing::debug!(error = %e, %path, "memory-fs: cannot record a file's time");
            }
        }
    }

    /// Keeps the current file `name` in `folder` (the file at `path`, about to be replaced or
    /// removed) as the content of its revision in history.
    pub(crate) fn keep_replaced(
        &self,
        hist: &Dir,
        path: &MemoryPath,
        kept: &mut Kept,
        folder: &Dir,
        name: &str,
    ) -> Result<(), FsError> {
        let Some(number) = kept.log.file.current_number() else {
            // Settled just before: the newest record is the file. Nothing to keep otherwise.
            return Ok(());
        };
        let into = self.kept_folder(hist, path, kept)?;
        self.keep_file_as(folder, name, into, number, path)
    }

    /// Records a change made to `path` (its content after it, `None` for a deletion), then
    /// prunes the path's revisions as the options say. The log is written before the pruned
    /// content files go, so a crash between leaves only files no record names.
    pub(crate) fn record_change(
        &self,
        hist: &Dir,
        path: &MemoryPath,
        kept: &mut Kept,
        made: Made<'_>,
    ) -> Result<(), FsError> {
        let Made {
            change,
            old_path,
            content,
            mtime,
        } = made;
        let options = &self.options.history;
        let now = SystemTime::now();
        let revision = Revision {
            number: kept.log.file.next_number(),
            change,
            path: path.clone(),
            old_path: old_path.cloned(),
            time: now,
            size: content.as_ref().map_or(0, |c| c.size),
            sha256: content.map(|c| c.sha256),
            session: options.session.clone(),
            redacted: false,
        };
        push(&mut kept.log, revision, mtime);
        let dropped = kept.log.file.prune(options, now);
        if dropped.is_empty() {
            return self.save_history(hist, path, kept);
        }
        kept.log.forget_dropped();
        kept.log.stored = None;
        self.save_history(hist, path, kept)?;
        self.remove_contents(path, kept, &dropped)
    }

    /// Records a change, logging (not returning) a failure: the change itself is made, and
    /// the next access of the path records it from what is on disk.
    pub(crate) fn record_or_warn(
        &self,
        hist: &Dir,
        path: &MemoryPath,
        kept: &mut Kept,
        change: Change,
        content: Option<Content>,
        mtime: Option<u64>,
    ) {
        let made = Made {
            change,
            old_path: None,
            content,
            mtime,
        };
        if let Err(e) = self.record_change(hist, path, kept, made) {
            tracing::warn!(error = %e, %path, "memory-fs: cannot record a change in history");
        }
    }

    /// The regular files a delete or rename of `path` changes: the file, or every file below
    /// the folder.
    fn files_at(&self, path: &MemoryPath) -> Result<Vec<MemoryPath>> {
        if !path.is_root() {
            match self.probe_unlinked(path)? {
                Probe::File(_) => return Ok(vec![path.clone()]),
                Probe::Dir => {}
                _ => return Ok(Vec::new()),
            }
        }
        let mut files = Vec::new();
        self.walk(path, false, &mut |file, _| {
            files.push(file);
            true
        })?;
        Ok(files)
    }

    /// Keeps the current content of `file` in history before a delete or a move removes it
    /// from its place.
    fn keep_before_removal(&self, hist: &Dir, file: &MemoryPath, kept: &mut Kept) -> Result<()> {
        let (Some(parent), Some(name)) = (file.parent(), file.name()) else {
            return Ok(());
        };
        let Some(folder) = self.open_folder(&parent)? else {
            return Err(Error::NotFound { path: file.clone() });
        };
        Ok(self.keep_replaced(hist, file, kept, &folder, name)?)
    }

    /// Under the lock, before a delete of `path`: every file it removes, settled, its content
    /// kept in history.
    pub(crate) fn before_delete(&self, path: &MemoryPath) -> Result<Vec<(MemoryPath, Kept)>> {
        let Some(hist) = self.recording() else {
            return Ok(Vec::new());
        };
        let mut doomed = Vec::new();
        for file in self.files_at(path)? {
            let mut kept = self.settled(hist, &file, true)?;
            self.keep_before_removal(hist, &file, &mut kept)?;
            doomed.push((file, kept));
        }
        Ok(doomed)
    }

    /// After a delete (whole or not): a `deleted` record for each file that is gone.
    pub(crate) fn after_delete(&self, doomed: Vec<(MemoryPath, Kept)>) {
        let Some(hist) = self.recording() else {
            return;
        };
        for (file, mut kept) in doomed {
            if !matches!(self.probe_unlinked(&file), Ok(Probe::File(_))) {
                self.record_or_warn(hist, &file, &mut kept, Change::Deleted, None, None);
            }
        }
    }

    /// Under the lock, before a rename of `from` to `to`: for each file it moves, both paths'
    /// histories settled, and every content of the moved revisions linked into the new path's
    /// folder under the number it will have there (the current content also under its own
    /// number at the old path, so that a crash before the record leaves both paths whole).
    pub(crate) fn before_move(&self, from: &MemoryPath, to: &MemoryPath) -> Result<Vec<Move>> {
        let Some(hist) = self.recording() else {
            return Ok(Vec::new());
        };
        let mut moves = Vec::new();
        for file in self.files_at(from)? {
            let Some(target_path) = file.rebase(from, to) else {
                continue;
            };
            let mut source = self.settled(hist, &file, true)?;
            let mut target = self.settled(hist, &target_path, true)?;
            self.keep_before_removal(hist, &file, &mut source)?;
            let first = target.log.file.next_number();
            let current = source.log.file.current_number();
            let (Some(parent), Some(name)) = (file.parent(), file.name()) else {
                continue;
            };
            for (offset, revision) in source.log.file.revisions().iter().enumerate() {
                let number = first + offset as u64;
                let into = self.kept_folder(hist, &target_path, &mut target)?;
                if Some(revision.number) == current {
                    let Some(folder) = self.open_folder(&parent)? else {
                        return Err(Error::NotFound { path: file.clone() });
                    };
                    self.keep_file_as(&folder, name, into, number, &target_path)?;
                } else if revision.has_content()
                    && let Some(folder) = &source.folder
                {
                    match self.keep_file_as(
                        folder,
                        &content_name(revision.number),
                        into,
                        number,
                        &target_path,
                    ) {
                        Ok(()) => {}
                        // Lost before (another program's edit): nothing to move.
                        Err(FsError::Io { source, .. }) if is_not_found(&source) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            moves.push(Move {
                from: file,
                to: target_path,
                source,
                target,
            });
        }
        Ok(moves)
    }

    /// After the rename: each moved file's revisions appended to its new path's (renumbered),
    /// the `renamed` record, and the old path's history removed.
    pub(crate) fn after_move(&self, moves: Vec<Move>) {
        let Some(hist) = self.recording() else {
            return;
        };
        for Move {
            from,
            to,
            source,
            mut target,
        } in moves
        {
            let live = source.log.file.latest().cloned();
            let mtimes = source.log.mtimes.clone();
            for (old, new) in target.log.file.append_moved(source.log.file.clone()) {
                if let Some(mtime) = mtimes.get(&old) {
                    target.log.mtimes.insert(new, *mtime);
                }
            }
            let content = live.as_ref().and_then(|r| {
                r.sha256.clone().map(|sha256| Content {
                    sha256,
                    size: r.size,
                })
            });
            let mtime = live.as_ref().and_then(|r| mtimes.get(&r.number).copied());
            let made = Made {
                change: Change::Renamed,
                old_path: Some(&from),
                content,
                mtime,
            };
            match self.record_change(hist, &to, &mut target, made) {
                Ok(()) => {
                    if let Some(folder) = &source.folder {
                        remove_path_folder(hist, &from, folder);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, %from, %to, "memory-fs: cannot record a rename in history");
                }
            }
        }
    }
}
