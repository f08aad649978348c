//! Files kept open after a read, so that reading one again is a check of the store's change
//! notifications and a `pread`, instead of a confined open of its path.
//!
//! Opening a path with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, checking it is a
//! regular file and closing it again costs about four times the read itself. So the store keeps
//! the files it read open (at most [`FILES`]), and watches with inotify every folder from
//! `memories/` down to each of them. A kept file is used only while no event has said that a
//! name on its path changed: created, removed, moved or its attributes changed, in any of those
//! folders, by this process or any other. Then the path still leads, through the same folders
//! and no link, to the same file; reading the open file is what opening the path would read.
//! Changes to the file's bytes need no event: `pread` reads them.
//!
//! Why this is exact:
//!
//! - The kernel queues an inotify event before the system call that made the change returns,
//!   so a read that starts after a change finished always finds its event.
//! - The folders are watched before the file is opened, so no change between the open and the
//!   watch goes unseen; a file read while events were being taken (by another thread) is not
//!   kept ([`KeptOpen::keep`] compares a count of events).
//! - An event about a name drops every kept file and watched folder at or below that name,
//!   so a folder moved away and replaced (even by a link) is watched anew, by what is there.
//! - A full event queue, or a watch the kernel ended, drops everything.
//!
//! Only local file systems are trusted to report every change (ext4, XFS, Btrfs, tmpfs, F2FS,
//! bcachefs, ZFS): on a network file system another machine's changes raise no event, so there
//! no file is kept. A process keeps files for at most [`STORES`] stores at once (each uses an
//! inotify instance, of which a user has 128 by default); further stores read as before.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use memory_core::MemoryPath;
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::store::BENEATH;

/// Most files kept open per store.
pub(crate) const FILES: usize = 64;

/// Most folders watched per store; past that, everything is dropped and watched anew.
const FOLDERS: usize = 128;

/// Most stores of one process that keep files open.
pub(crate) const STORES: usize = 16;

/// Stores of this process keeping files open now.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// `statfs` magic numbers of the file systems trusted to report every change.
const LOCAL_FILE_SYSTEMS: &[i64] = &[
    0xEF53,      // ext2, ext3, ext4
    0x5846_5342, // XFS
    0x9123_683E, // Btrfs
    0x0102_1994, // tmpfs
    0xF2F5_2010, // F2FS
    0xCA45_1A4E, // bcachefs
    0x2FC1_2FC1, // ZFS
];

/// What a watch reports: every change of a name in the folder, and the folder's own end.
fn watched_events() -> WatchFlags {
    WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::ATTRIB
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR
}

/// Reads a store answers before it starts keeping files: closing an inotify instance that
/// had watches waits for the kernel's grace period (milliseconds), which a process that reads
/// a file or two (`memory cat`, one command per process) should not pay.
const WARM_UP: u64 = 16;

/// What [`KeptOpen::find`] found.
pub(crate) enum Found {
    /// A kept file, to read.
    Kept(Arc<KeptFile>),
    /// None: open the path, then [`KeptOpen::keep`] the file with these events, if any.
    Open(Option<u64>),
}

/// The kept files of one store.
pub(crate) struct KeptOpen {
    /// Reads that found no instance yet.
    reads: AtomicU64,
    /// `None` until the store has answered [`WARM_UP`] reads, and for good when no inotify
    /// instance could be had.
    state: Mutex<Option<State>>,
}

impl std::fmt::Debug for KeptOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("KeptOpen")
            .field("files", &state.as_ref().map_or(0, |s| s.files.len()))
            .field("folders", &state.as_ref().map_or(0, |s| s.folders.len()))
            .finish_non_exhaustive()
    }
}

struct State {
    inotify: OwnedFd,
    /// Watched folders: watch descriptor → the folder's path relative to `memories/` (`""`
    /// for `memories/` itself).
    folders: HashMap<i32, String>,
    /// The same, by path.
    watches: HashMap<String, i32>,
    /// Kept files by path relative to `memories/`.
    files: HashMap<String, Kept>,
    /// Events taken so far (see [`KeptOpen::keep`]).
    events: u64,
    /// The last use, for dropping the least recently used file.
    tick: u64,
    /// Set when a watch cannot be made at all (no `/proc`, no watches left): nothing more is
    /// kept.
    broken: bool,
}

struct Kept {
    file: Arc<KeptFile>,
    used: u64,
}

/// A kept file and its size when last read (the next read asks for one byte more).
pub(crate) struct KeptFile {
    file: std::fs::File,
    size: AtomicUsize,
}

impl KeptFile {
    /// The file's bytes now: `pread`s from the start until one comes back short (the end of a
    /// regular file on the local file systems files are kept on).
    pub(crate) fn read(&self) -> std::io::Result<Vec<u8>> {
        let mut contents = vec![0u8; self.size.load(Ordering::Relaxed) + 1];
        let mut filled = 0;
        loop {
            match rustix::io::pread(&self.file, &mut contents[filled..], filled as u64) {
                Ok(n) => filled += n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            if filled < contents.len() {
                contents.truncate(filled);
                self.size.store(filled, Ordering::Relaxed);
                return Ok(contents);
            }
            contents.resize(contents.len() * 2, 0);
        }
    }
}

/// Whether `path` is `prefix` or below it (`""` is above everything).
fn at_or_below(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

impl KeptOpen {
    /// Keeps files for the store whose `memories/` folder is `root`, if it is on a local file
    /// system (the inotify instance comes with the store's [`WARM_UP`]th read).
    pub(crate) fn start(root: impl AsFd) -> Option<Self> {
        let local = rustix::fs::fstatfs(root).is_ok_and(|fs| {
            #[allow(clippy::unnecessary_cast)] // `f_type`'s type differs between platforms
            let kind = fs.f_type as i64;
            LOCAL_FILE_SYSTEMS.contains(&kind)
        });
        local.then(|| KeptOpen {
            reads: AtomicU64::new(0),
            state: Mutex::new(None),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Option<State>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept file at `path`, if one is kept and nothing on its path has changed since;
    /// otherwise the folders down to it are watched for [`keep`](Self::keep), before the
    /// caller opens it.
    pub(crate) fn find(&self, root: impl AsFd, path: &MemoryPath) -> Found {
        let mut guard = self.lock();
        if let Some(state) = guard.as_mut() {
            state.take_events();
            state.tick += 1;
            let tick = state.tick;
            if let Some(kept) = state.files.get_mut(path.relative()) {
                kept.used = tick;
                return Found::Kept(Arc::clone(&kept.file));
            }
        }
        Found::Open(self.prepare(&mut guard, root, path))
    }

    /// Lets go of the kept files at or below `path`: its read failed, or this store is about
    /// to change it. (Its event would do the same at the next read; letting go first closes
    /// the file while its name still holds it, so that the removal of a replaced file, not a
    /// later read, frees its blocks.)
    pub(crate) fn let_go(&self, path: &MemoryPath) {
        if let Some(state) = self.lock().as_mut() {
            state.close_below(path.relative());
        }
    }

    /// Watches every folder from `root` (`memories/`) down to `path`'s parent, before `path`
    /// is opened; returns the count of events taken, for [`keep`](Self::keep), or `None` when
    /// a folder cannot be watched or the store is still warming up (the file is then read
    /// without being kept). The events were taken just before, under the same lock.
    fn prepare(
        &self,
        guard: &mut MutexGuard<'_, Option<State>>,
        root: impl AsFd,
        path: &MemoryPath,
    ) -> Option<u64> {
        if guard.is_none() {
            // The WARM_UP-th read makes the instance; once that failed, no read tries again.
            if self.reads.fetch_add(1, Ordering::Relaxed) != WARM_UP {
                return None;
            }
            **guard = Some(State::new()?);
        }
        let state = guard.as_mut()?;
        if state.broken {
            return None;
        }
        if state.folders.len() + path.segments().count() > FOLDERS {
            state.forget_below("");
        }
        let rel = path.relative();
        // "" (memories/ itself), then each ancestor folder: "a", "a/b", ...
        let mut folders = vec![""];
        folders.extend(rel.match_indices('/').map(|(i, _)| &rel[..i]));
        for folder in folders {
            if state.watches.contains_key(folder) {
                continue;
            }
            match state.watch(root.as_fd(), folder) {
                Ok(wd) => {
                    state.folders.insert(wd, folder.to_owned());
                    state.watches.insert(folder.to_owned(), wd);
                }
                // The folder is gone or not a plain folder: the read that follows says what.
                Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP | Errno::XDEV | Errno::AGAIN) => {
                    return None;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "memory-fs: cannot watch a folder; files are opened for every read");
                    state.broken = true;
                    state.forget_below("");
                    return None;
                }
            }
        }
        Some(state.events)
    }

    /// Keeps `file`, just read at `path` after [`prepare`](Self::prepare) returned `events`,
    /// unless events were taken since (one of them may be about this path, and is gone).
    pub(crate) fn keep(&self, path: &MemoryPath, file: std::fs::File, size: usize, events: u64) {
        let mut guard = self.lock();
        let Some(state) = guard.as_mut() else { return };
        if state.events != events || state.broken {
            return;
        }
        if state.files.len() >= FILES
            && let Some(oldest) = state
                .files
                .iter()
                .min_by_key(|(_, kept)| kept.used)
                .map(|(path, _)| path.clone())
        {
            state.files.remove(&oldest);
        }
        state.tick += 1;
        let used = state.tick;
        let file = Arc::new(KeptFile {
            file,
            size: AtomicUsize::new(size),
        });
        state
            .files
            .insert(path.relative().to_owned(), Kept { file, used });
    }
}

impl State {
    /// A new inotify instance, if this process has fewer than [`STORES`] and one can be had.
    fn new() -> Option<State> {
        if LIVE.fetch_add(1, Ordering::Relaxed) >= STORES {
            LIVE.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        match inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC) {
            Ok(inotify) => Some(State {
                inotify,
                folders: HashMap::new(),
                watches: HashMap::new(),
                files: HashMap::new(),
                events: 0,
                tick: 0,
                broken: false,
            }),
            Err(e) => {
                LIVE.fetch_sub(1, Ordering::Relaxed);
                tracing::debug!(error = %e, "memory-fs: no inotify instance; files are opened for every read");
                None
            }
        }
    }

    /// Watches `folder` (relative to `root`), opened without following any link.
    fn watch(&self, root: BorrowedFd<'_>, folder: &str) -> Result<i32, Errno> {
        let opened = if folder.is_empty() {
            None
        } else {
            Some(rustix::fs::openat2(
                root,
                folder,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
                BENEATH,
            )?)
        };
        let fd = opened
            .as_ref()
            .map_or(root.as_raw_fd(), |fd| fd.as_raw_fd());
        // The folder this process holds, named through its descriptor: no path is resolved
        // again.
        inotify::add_watch(
            &self.inotify,
            format!("/proc/self/fd/{fd}").as_str(),
            watched_events(),
        )
    }

    /// Takes every queued event and drops what each one may have changed.
    fn take_events(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut dropped: Vec<String> = Vec::new();
        let mut overflow = false;
        {
            let mut reader = inotify::Reader::new(&self.inotify, &mut buf);
            loop {
                let event = match reader.next() {
                    Ok(event) => event,
                    Err(Errno::INTR) => continue,
                    // AGAIN: no more. Anything else: treat as lost events.
                    Err(Errno::AGAIN) => break,
                    Err(_) => {
                        overflow = true;
                        break;
                    }
                };
                self.events += 1;
                let flags = event.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    overflow = true;
                    continue;
                }
                let Some(folder) = self.folders.get(&event.wd()) else {
                    continue;
                };
                let ended = ReadFlags::IGNORED
                    | ReadFlags::DELETE_SELF
                    | ReadFlags::MOVE_SELF
                    | ReadFlags::UNMOUNT;
                if flags.intersects(ended) {
                    dropped.push(folder.clone());
                    continue;
                }
                match event.file_name().map(|name| name.to_str()) {
                    Some(Ok(name)) if folder.is_empty() => dropped.push(name.to_owned()),
                    Some(Ok(name)) => dropped.push(format!("{folder}/{name}")),
                    // A name that is not UTF-8 is on no memory path.
                    Some(Err(_)) => {}
                    None => dropped.push(folder.clone()),
                }
            }
        }
        if overflow {
            self.forget_below("");
            return;
        }
        for prefix in dropped {
            self.forget_below(&prefix);
        }
    }

    /// Closes the kept files at or below `prefix`.
    fn close_below(&mut self, prefix: &str) {
        self.files.retain(|path, _| !at_or_below(path, prefix));
    }

    /// Drops the kept files and the watched folders at or below `prefix`.
    fn forget_below(&mut self, prefix: &str) {
        self.close_below(prefix);
        let gone: Vec<(String, i32)> = self
            .watches
            .iter()
            .filter(|(folder, _)| at_or_below(folder, prefix))
            .map(|(folder, wd)| (folder.clone(), *wd))
            .collect();
        for (folder, wd) in gone {
            self.watches.remove(&folder);
            self.folders.remove(&wd);
            // Already gone when the kernel ended the watch itself.
            let _ = inotify::remove_watch(&self.inotify, wd);
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::at_or_below;

    #[test]
    fn below_means_whole_names() {
        assert!(at_or_below("a/b.md", ""));
        assert!(at_or_below("a/b.md", "a"));
        assert!(at_or_below("a/b.md", "a/b.md"));
        assert!(!at_or_below("ab/c.md", "a"));
        assert!(!at_or_below("a", "a/b.md"));
    }
}
