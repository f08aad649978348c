//! Writes: the new content goes to a fresh temporary file, is synced, and moves into place
//! under the store lock with one rename, so a reader or a crash sees the old file or the new
//! one, never a torn or empty one. A create moves it only if nothing is at the target, in one
//! step; a replace renames over the old file, whose name then leads to the new one at once
//! and whose bytes no name in the store leads to any more.

use std::io;
use std::sync::atomic::Ordering;

use cap_std::fs::Dir;
use memory_core::options::SyncMode;
use memory_core::{Error, MemoryPath, Result, Version, WriteMode};

use memory_core::history::Change;

use crate::error::FsError;
use crate::history::{Content, nanos};
use crate::layout::{MAX_ATTEMPTS, is_not_found, rel, version_of};
use crate::resolve::{Folder, Probe};
use crate::store::Store;
use crate::sys;

/// What a write found at its target, under the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Nothing (or a special file, which is never counted): the write adds a file.
    Absent,
    /// An empty folder tree, removed before the rename: the write adds a file.
    EmptyTree,
    /// A file, replaced.
    File,
}

/// What one try at placing a written file under the lock came to.
enum Commit<'a> {
    /// Placed, in this folder.
    Done(Folder<'a>),
    /// The file's folder is not there: make it and try again.
    NoFolder,
    /// Something changed under the call: try again.
    Retry,
}

/// What a write records in history: the new content, and whether it is a restore.
pub(crate) struct New {
    content: Content,
    restored: bool,
}

/// What moving a new file into place without replacing anything came to.
enum Placed {
    Done,
    /// Something is at the target.
    Exists,
    /// The folder vanished since it was opened.
    Gone,
    /// The file system can neither rename without replacing nor link.
    Unsupported,
}

impl Store {
    pub(crate) fn write(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        mode: &WriteMode,
    ) -> Result<Version> {
        self.write_within(path, contents, mode, None)
    }

    /// [`write`](Self::write); a `WriteMode::Create` with `Some(max_files)` succeeds only while
    /// the store holds fewer files, decided under the lock.
    pub(crate) fn write_within(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        mode: &WriteMode,
        max_files: Option<usize>,
    ) -> Result<Version> {
        self.write_recorded(path, contents, mode, max_files, false)
    }

    /// [`write_within`](Self::write_within), recorded in history as a restore when
    /// `restored` (otherwise as `created` or `modified`).
    pub(crate) fn write_recorded(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        mode: &WriteMode,
        max_files: Option<usize>,
        restored: bool,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        if let Some(reason) = self.unrepresentable(path) {
            return Err(match mode {
                WriteMode::Update(_) => Error::NotFound { path: path.clone() },
                _ => Error::Refused {
                    path: path.clone(),
                    reason: reason.to_owned(),
                },
            });
        }
        if path.is_root() {
            return Err(match mode {
                WriteMode::Update(_) => Error::NotFound { path: path.clone() },
                _ => Error::AlreadyExists { path: path.clone() },
            });
        }
        let version = version_of(contents);
        let new = New {
            content: Content {
                sha256: version.as_str().to_owned(),
                size: contents.len() as u64,
            },
            restored,
        };
        for _ in 0..MAX_ATTEMPTS {
            if self.try_write(path, contents, mode, max_files, &new)? {
                return Ok(version);
            }
        }
        Err(FsError::Vanished {
            path: path.clone(),
            attempts: MAX_ATTEMPTS,
        }
        .into())
    }

    /// Refuses the write if what is at `path` forbids it in this mode, or tells what the write
    /// will replace.
    fn check_write_target(&self, path: &MemoryPath, mode: &WriteMode) -> Result<Target> {
        let exists = || Error::AlreadyExists { path: path.clone() };
        let not_found = || Error::NotFound { path: path.clone() };
        if let WriteMode::Update(expected) = mode {
            // The file is read whole anyway to compare versions: one open, no probe first.
            // Only when there is no file does the probe tell why.
            match self.read(path) {
                Ok(current) if current.version == *expected => return Ok(Target::File),
                Ok(_) => return Err(Error::Conflict { path: path.clone() }),
                Err(Error::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        match (self.probe_unlinked(path)?, mode) {
            (Probe::BelowFile(parent), _) => Err(Error::ParentIsFile {
                path: path.clone(),
                parent,
            }),
            (Probe::BelowSpecial(at), _) => Err(FsError::NotRegular { path: at }.into()),
            (Probe::Link, _) => Err(Error::SymbolicLink { path: path.clone() }),
            (Probe::Dir, WriteMode::Update(_)) => Err(not_found()),
            (Probe::Dir, _) => {
                if self.has_file_below(path)? {
                    Err(exists())
                } else {
                    Ok(Target::EmptyTree)
                }
            }
            (Probe::File(_) | Probe::Special, WriteMode::Create) => Err(exists()),
            (Probe::Missing | Probe::Special, WriteMode::Update(_)) => Err(not_found()),
            (Probe::File(_), WriteMode::Update(expected)) => {
                // A file appeared since the read above found none.
                let current = self.read(path)?;
                if current.version == *expected {
                    Ok(Target::File)
                } else {
                    Err(Error::Conflict { path: path.clone() })
                }
            }
            (Probe::File(_), _) => Ok(Target::File),
            (Probe::Missing | Probe::Special, _) => Ok(Target::Absent),
        }
    }

    /// One try at the whole write; `Ok(false)` when folders kept vanishing: start over.
    fn try_write(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        mode: &WriteMode,
        max_files: Option<usize>,
        new: &New,
    ) -> Result<bool> {
        // An update replaces a file the caller has just read: its check (a read, to compare
        // versions) is made once, under the lock, and its folder exists while the file does.
        let update = matches!(mode, WriteMode::Update(_));
        // Cheap checks first, without the lock, so that refused writes create nothing.
        if !update {
            self.check_write_target(path, mode)?;
        }
        if let Some(max_files) = max_files
            && self.seen_count.load(Ordering::Relaxed) >= max_files
        {
            // Looked full when last counted: decide under the lock before writing anything.
            // (Otherwise the check under the lock that places the file decides; a create
            // refused there has only written a temporary file.)
            let _locked = self.lock()?;
            self.check_write_target(path, mode)?;
            self.check_room(max_files)?;
        }
        let temp = self.write_temp(path, contents)?;
        let parent = path.parent().unwrap_or_else(MemoryPath::root);
        // Folders this call created for the file, removed again if the write fails.
        let mut created = Vec::new();
        let failed = |e: Error, created: &[MemoryPath]| -> Result<bool> {
            self.remove_temp(&temp);
            let _locked = self.lock()?;
            self.prune_created(created);
            Err(e)
        };
        for _ in 0..MAX_ATTEMPTS {
            let outcome = {
                let _locked = self.lock()?;
                self.commit(path, &parent, &temp, mode, max_files, new)
            };
            match outcome {
                Ok(Commit::Done(folder)) => {
                    // The folder the name went into, synced through the handle it was
                    // placed with.
                    if self.options.sync == SyncMode::Full {
                        sys::sync_dir(&folder)
                            .map_err(|e| FsError::io("sync folder", &parent, e))?;
                    }
                    return Ok(true);
                }
                // The folder is missing: made (outside the lock, as any writer may) and the
                // file placed again. An update's folder exists while its file does: the next
                // check under the lock tells what happened.
                Ok(Commit::NoFolder) if !update => match self.make_parents(path) {
                    Ok(Some(made)) => created.extend(made),
                    // A folder vanished meanwhile: try again.
                    Ok(None) => {}
                    Err(e) => return failed(e, &created),
                },
                Ok(Commit::NoFolder | Commit::Retry) => {}
                Err(e) => return failed(e, &created),
            }
        }
        self.remove_temp(&temp);
        Ok(false)
    }

    /// Moves the temporary file to `name` in `folder` only if nothing is there, in one step:
    /// on Linux a `rename` that refuses to replace ([`Fast::place_new`]), elsewhere (or where
    /// the file system lacks it) a hard link, which fails the same way, and the removal of
    /// the temporary name.
    ///
    /// [`Fast::place_new`]: crate::sys::Fast::place_new
    fn place_new(&self, temp: &str, folder: &Dir, name: &str) -> Result<Placed, io::Error> {
        let placed = match self
            .fast
            .as_ref()
            .and_then(|fast| fast.place_new(&self.temp, temp, folder, name))
        {
            Some(placed) => placed,
            None => match self.temp.hard_link(temp, folder, name) {
                Ok(()) => {
                    self.remove_temp(temp);
                    Ok(())
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::PermissionDenied | io::ErrorKind::Unsupported
                    ) =>
                {
                    return Ok(Placed::Unsupported);
                }
                Err(e) => Err(e),
            },
        };
        match placed {
            Ok(()) => Ok(Placed::Done),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Placed::Exists),
            Err(e) if is_not_found(&e) => Ok(Placed::Gone),
            Err(e) => Err(e),
        }
    }

    /// Under the lock: checks the target again and moves the temporary file into place, in
    /// the folder opened here, under this same lock hold (so no concurrent rename of a folder
    /// can move the place it goes to).
    ///
    /// A create is checked by the one-step create itself, which fails if anything is at the
    /// target; only then does a probe tell what is there (an empty folder tree is replaced).
    /// Other modes probe (or, for an update, read) the target first.
    fn commit(
        &self,
        path: &MemoryPath,
        parent: &MemoryPath,
        temp: &str,
        mode: &WriteMode,
        max_files: Option<usize>,
        new: &New,
    ) -> Result<Commit<'_>> {
        let Some(name) = path.name() else {
            return Err(Error::AlreadyExists { path: path.clone() });
        };
        let target_rel = rel(path)?;
        let mut target = if matches!(mode, WriteMode::Create) {
            Target::Absent
        } else {
            self.check_write_target(path, mode)?
        };
        let count = match max_files {
            Some(max_files) => Some(self.check_room(max_files)?),
            None => None,
        };
        let Some(folder) = self.open_folder(parent)? else {
            return Ok(Commit::NoFolder);
        };
        if target == Target::EmptyTree {
            self.remove_tree(path, &target_rel)?;
        }
        // History: the path's log settled, and the file this write replaces kept as its
        // revision's content before anything changes.
        let mut history = match self.recording() {
            Some(hist) => Some((hist, self.settled(hist, path, true)?)),
            None => None,
        };
        if target == Target::File
            && let Some((hist, kept)) = &mut history
        {
            self.keep_replaced(hist, path, kept, &folder, name)?;
        }
        let rename = || self.temp.rename(temp, &folder, name);
        let result = match mode {
            WriteMode::Create => {
                let mut placed = self.place_new(temp, &folder, name);
                if matches!(placed, Ok(Placed::Exists)) {
                    // Something is there: refused, unless it is an empty folder tree.
                    target = self.check_write_target(path, mode)?;
                    if target == Target::EmptyTree {
                        self.remove_tree(path, &target_rel)?;
                    }
                    placed = self.place_new(temp, &folder, name);
                }
                match placed {
                    Ok(Placed::Done) => Ok(()),
                    Ok(Placed::Exists) => return Err(Error::AlreadyExists { path: path.clone() }),
                    Ok(Placed::Gone) => return Ok(Commit::Retry),
                    Ok(Placed::Unsupported) => {
                        // File systems without a one-step create: a check under the lock
                        // stands in for it.
                        target = self.check_write_target(path, mode)?;
                        if target == Target::EmptyTree {
                            self.remove_tree(path, &target_rel)?;
                        }
                        rename()
                    }
                    Err(e) => Err(e),
                }
            }
            WriteMode::Overwrite | WriteMode::Update(_) => rename(),
        };
        match result {
            Ok(()) => {
                if let Some((hist, mut kept)) = history {
                    let change = if new.restored {
                        Change::Restored
                    } else if target == Target::File {
                        Change::Modified
                    } else {
                        Change::Created
                    };
                    let mtime = folder
                        .symlink_metadata(name)
                        .ok()
                        .and_then(|meta| meta.modified().ok())
                        .map(|time| nanos(time.into_std()));
                    self.record_or_warn(
                        hist,
                        path,
                        &mut kept,
                        change,
                        Some(new.content.clone()),
                        mtime,
                    );
                }
                if target != Target::File {
                    match count {
                        // Read under this same lock hold: no need to read it again.
                        Some(n) => self.store_count(n + 1),
                        None => self.add_to_count(1, 0),
                    }
                }
                Ok(Commit::Done(folder))
            }
            // The folder vanished since it was opened (only a writer that ignores the lock
            // does that): open it again.
            Err(e) if is_not_found(&e) => Ok(Commit::Retry),
            Err(e) if e.kind() == io::ErrorKind::CrossesDevices => Err(FsError::TempElsewhere {
                base: self.base.clone(),
                temp_dir: self.base.join(crate::layout::TEMP_DIR),
                memories: self.base.join(crate::layout::MEMORIES),
            }
            .into()),
            Err(e) => Err(FsError::io("rename into place", path, e).into()),
        }
    }
}
