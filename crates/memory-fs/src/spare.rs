//! File-system work a write need not wait for, done by one helper thread per writable store.
//!
//! Every write fills a temporary file and moves it into place and, when it replaces a file,
//! is left with the old one. Making and removing files are a disk's slowest metadata work on
//! some file systems: ext4 without a journal searches its inode table past every recently
//! freed inode on each create, and mounted with `discard` it trims a removed file's blocks at
//! once. So the helper keeps a few temporary files ready for writers to take, and a write
//! waits for neither making nor removing one. When the helper is behind (no file ready, its
//! queue full) the writer does the work itself, as before.
//!
//! The files ready are, first, the files writes replaced: a replaced file that only the store
//! could have made (a regular file with one link, owned by this process's user) is kept, under
//! its temporary name, and the next write overwrites it from the start (cutting off what is
//! left of the old bytes). Nothing is created or removed, no blocks are freed, and the
//! folder of temporary files does not change, so the write's `fsync` need not write that
//! folder either (ext4 without a journal does for a newly created file). Only when no
//! replaced file is at hand does the helper make empty ones.
//!
//! The helper makes its first files when the store's first write takes one, so a store only
//! read never creates any.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::store::{create_temp, remove_temp, temp_name};

/// How many files are kept ready: enough for a burst of writers in one process.
const READY: usize = 4;

/// How many jobs may wait; past that a writer removes its replaced file itself.
const QUEUE: usize = 64;

/// A temporary file ready for a write, with its name in the folder of temporary files.
pub(crate) struct Spare {
    pub(crate) name: String,
    /// Open for writing, at the start.
    pub(crate) file: std::fs::File,
    /// Bytes it holds already (a replaced file's), which the write must cut off.
    pub(crate) size: u64,
    made: Instant,
}

enum Job {
    /// Make one more file ready, unless enough are.
    Make,
    /// Keep this temporary file (a file a write replaced) ready if it can be, else remove it.
    Replaced(String),
    /// Remove this temporary file.
    Remove(String),
}

impl Job {
    /// The temporary file a `Replaced` or `Remove` is about.
    fn name(&self) -> Option<&str> {
        match self {
            Job::Replaced(name) | Job::Remove(name) => Some(name),
            Job::Make => None,
        }
    }
}

/// The helper thread of one store and the files it keeps ready.
pub(crate) struct Helper {
    /// The folder of temporary files (a handle of the helper's own).
    temp: Arc<OwnedFd>,
    ready: Arc<Mutex<Vec<Spare>>>,
    jobs: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<()>>,
    /// A ready file older than this is not used: another process opening the store removes
    /// temporary files past the store's stale age, and this stays well inside it.
    max_age: Duration,
    /// Whether a write has taken a file yet (the first asks for all of [`READY`]).
    taken: AtomicBool,
}

impl std::fmt::Debug for Helper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Helper")
            .field("ready", &lock(&self.ready).len())
            .finish_non_exhaustive()
    }
}

fn lock(ready: &Mutex<Vec<Spare>>) -> MutexGuard<'_, Vec<Spare>> {
    ready.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Helper {
    /// Starts the helper on `temp` (its own handle on the folder of temporary files). `None`
    /// when the thread cannot be started, or when temporary files go stale too soon to be
    /// made ahead: writers then do all the work themselves.
    pub(crate) fn start(temp: OwnedFd, chmod: bool, stale_temp_age: Duration) -> Option<Self> {
        let max_age = stale_temp_age / 4;
        if max_age < Duration::from_secs(1) {
            return None;
        }
        let temp = Arc::new(temp);
        let ready = Arc::new(Mutex::new(Vec::with_capacity(READY)));
        let (jobs, queue) = sync_channel(QUEUE);
        let spawned = std::thread::Builder::new()
            .name("memory-fs-helper".to_owned())
            .spawn({
                let (temp, ready) = (Arc::clone(&temp), Arc::clone(&ready));
                move || run(&temp, chmod, &ready, &queue)
            });
        let thread = match spawned {
            Ok(thread) => thread,
            Err(e) => {
                tracing::debug!(error = %e, "memory-fs: no helper thread; writers make and remove their files themselves");
                return None;
            }
        };
        Some(Helper {
            temp,
            ready,
            jobs: Some(jobs),
            thread: Some(thread),
            max_age,
            taken: AtomicBool::new(false),
        })
    }

    /// A ready temporary file, if one is (and asks for more to be made when few are left: a
    /// write that replaces a file gives one back).
    pub(crate) fn take(&self) -> Option<Spare> {
        let (spare, left) = {
            let mut ready = lock(&self.ready);
            (ready.pop(), ready.len())
        };
        let asks = if !self.taken.swap(true, Ordering::Relaxed) {
            READY
        } else if left < READY / 2 {
            1
        } else {
            0
        };
        for _ in 0..asks {
            self.send(Job::Make);
        }
        let spare = spare?;
        // Still there, and young enough that no other process's open removes it meanwhile.
        let linked = rustix::fs::fstat(&spare.file).is_ok_and(|st| st.st_nlink > 0);
        if linked && spare.made.elapsed() < self.max_age {
            return Some(spare);
        }
        // Too old to trust (or gone): removed, never kept again.
        self.remove(spare.name);
        None
    }

    /// Takes the temporary file `name` (a file a write replaced, no longer reachable from
    /// `memories/` on disk either): the helper thread keeps it ready for a later write or
    /// removes it; when its queue is full, it is removed here.
    pub(crate) fn replaced(&self, name: String) {
        self.hand_over(Job::Replaced(name));
    }

    /// Removes the temporary file `name`: on the helper thread, or here when its queue is full.
    pub(crate) fn remove(&self, name: String) {
        self.hand_over(Job::Remove(name));
    }

    /// Queues a `Replaced` or `Remove`; when the helper cannot take it, removes the file here.
    fn hand_over(&self, job: Job) {
        let refused = match &self.jobs {
            None => Some(job),
            Some(jobs) => match jobs.try_send(job) {
                Ok(()) => None,
                Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => Some(job),
            },
        };
        if let Some(name) = refused.as_ref().and_then(Job::name) {
            remove_temp(&*self.temp, name);
        }
    }

    fn send(&self, job: Job) {
        if let Some(jobs) = &self.jobs {
            // A full queue has enough to do: a missed `Make` only means a write makes its own.
            let _ = jobs.try_send(job);
        }
    }
}

impl Drop for Helper {
    /// Lets the helper finish its queue (the removals) and remove the files it kept ready.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(temp: &OwnedFd, chmod: bool, ready: &Mutex<Vec<Spare>>, queue: &Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        match job {
            Job::Remove(name) => remove_temp(temp, &name),
            Job::Replaced(name) => {
                if lock(ready).len() < READY
                    && let Some(spare) = reusable(temp, &name)
                {
                    lock(ready).push(spare);
                } else {
                    remove_temp(temp, &name);
                }
            }
            Job::Make => {
                if lock(ready).len() >= READY {
                    continue;
                }
                let name = temp_name();
                match create_temp(temp, &name, chmod) {
                    Ok(file) => lock(ready).push(Spare {
                        name,
                        file,
                        size: 0,
                        made: Instant::now(),
                    }),
                    Err(e) => {
                        tracing::debug!(error = %e, "memory-fs: cannot make a temporary file ahead")
                    }
                }
            }
        }
    }
    for spare in lock(ready).drain(..) {
        remove_temp(temp, &spare.name);
    }
}

/// The replaced file `name`, opened for the next write, if it is one the store could have
/// made itself: a regular file with one link (so no other name sees what the next write puts
/// in it), owned by this process's user; its mode is set to the store's if it differs, and
/// its modification time to now (another process's open takes temporary files for stale by
/// it). `None` for anything else, which is removed instead.
fn reusable(temp: &OwnedFd, name: &str) -> Option<Spare> {
    use rustix::fs::{FileType, Mode, OFlags, Timestamps, UTIME_NOW};
    // NONBLOCK: a FIFO put there by someone else fails to open instead of waiting.
    let fd = rustix::fs::openat(
        temp,
        name,
        OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    let ours = FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
        && st.st_nlink == 1
        && st.st_uid == rustix::process::geteuid().as_raw();
    if !ours {
        return None;
    }
    if st.st_mode & 0o7777 != crate::store::FILE_MODE {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(crate::store::FILE_MODE)).ok()?;
    }
    let now = rustix::fs::Timespec {
        tv_sec: 0,
        tv_nsec: UTIME_NOW,
    };
    rustix::fs::futimens(
        &fd,
        &Timestamps {
            last_access: now,
            last_modification: now,
        },
    )
    .ok()?;
    Some(Spare {
        name: name.to_owned(),
        file: std::fs::File::from(fd),
        size: u64::try_from(st.st_size).unwrap_or(u64::MAX),
        made: Instant::now(),
    })
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;
    use crate::tests::names_in as names;

    fn start(dir: &std::path::Path) -> Helper {
        let folder = std::fs::File::open(dir).unwrap();
        let temp = folder.as_fd().try_clone_to_owned().unwrap();
        Helper::start(temp, false, Duration::from_secs(600)).expect("a helper")
    }

    /// Returns once the helper has done every job queued before: it removes a link queued
    /// after them (never kept for reuse), and takes its jobs in order.
    fn wait_idle(helper: &Helper, dir: &std::path::Path) {
        std::os::unix::fs::symlink("nowhere", dir.join("barrier.tmp")).unwrap();
        helper.replaced("barrier.tmp".to_owned());
        let deadline = Instant::now() + Duration::from_secs(10);
        while dir.join("barrier.tmp").symlink_metadata().is_ok() {
            assert!(
                Instant::now() < deadline,
                "the helper never got to its queue"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits (a little) until the helper has `n` files ready.
    fn wait_ready(helper: &Helper, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while lock(&helper.ready).len() < n {
            assert!(Instant::now() < deadline, "the helper made no files ahead");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn files_are_made_ahead_taken_empty_and_removed_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let helper = start(dir.path());
        wait_idle(&helper, dir.path());
        assert!(
            names(dir.path()).is_empty(),
            "nothing made before a write asks"
        );
        assert!(
            helper.take().is_none(),
            "the first write makes its own file"
        );
        wait_ready(&helper, READY);
        assert_eq!(names(dir.path()).len(), READY);
        let spare = helper.take().expect("a ready file");
        assert!(crate::store::is_temp_name(&spare.name), "{}", spare.name);
        assert_eq!(spare.file.metadata().unwrap().len(), 0);
        // Three left: none is made (a write that replaces a file gives one back). Below half,
        // the helper makes more.
        let second = helper.take().expect("a ready file");
        let third = helper.take().expect("a ready file");
        wait_ready(&helper, 2);
        // The taken files are the callers': the helper leaves them.
        drop(helper);
        let mut taken = vec![spare.name, second.name, third.name];
        taken.sort();
        assert_eq!(names(dir.path()), taken);
    }

    #[test]
    fn a_replaced_file_of_the_stores_own_is_kept_ready_and_reused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let helper = start(dir.path());
        let old = dir.path().join("a.tmp");
        std::fs::write(&old, b"the old bytes").unwrap();
        // Another program's mode: the reused file gets the store's.
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        helper.replaced("a.tmp".to_owned());
        wait_idle(&helper, dir.path());
        assert_eq!(names(dir.path()), ["a.tmp"], "kept, nothing made");
        let spare = helper.take().expect("the replaced file, ready");
        assert_eq!((spare.name.as_str(), spare.size), ("a.tmp", 13));
        assert_eq!(
            spare.file.metadata().unwrap().permissions().mode() & 0o7777,
            0o600
        );
    }

    #[test]
    fn a_replaced_file_another_name_sees_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let helper = start(dir.path());
        std::fs::write(dir.path().join("a.tmp"), b"old").unwrap();
        // A second link: what the next write would put in it would show there too.
        std::fs::hard_link(dir.path().join("a.tmp"), dir.path().join("other-name")).unwrap();
        std::fs::create_dir(dir.path().join("dir.tmp")).unwrap();
        helper.replaced("a.tmp".to_owned());
        wait_idle(&helper, dir.path());
        assert_eq!(names(dir.path()), ["dir.tmp", "other-name"]);
        assert_eq!(
            std::fs::read(dir.path().join("other-name")).unwrap(),
            b"old"
        );
    }

    #[test]
    fn replaced_files_are_removed_here_when_the_helper_cannot_take_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut helper = start(dir.path());
        std::fs::write(dir.path().join("b.tmp"), b"old").unwrap();
        // With no thread to take it (as when its queue is full), the caller's thread removes it.
        helper.jobs = None;
        helper.replaced("b.tmp".to_owned());
        assert!(names(dir.path()).is_empty());
    }

    /// Another process opening the store may remove temporary files it takes for stale: a
    /// ready file removed so is never handed to a writer.
    #[test]
    fn a_ready_file_removed_from_outside_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let helper = start(dir.path());
        assert!(helper.take().is_none());
        wait_ready(&helper, READY);
        for name in names(dir.path()) {
            std::fs::remove_file(dir.path().join(name)).unwrap();
        }
        for _ in 0..READY {
            assert!(helper.take().is_none());
        }
    }

    /// A ready file near the stale age is removed when a writer finds it, not kept again
    /// (keeping it would refresh its time, and it would never go).
    #[test]
    fn a_ready_file_too_old_to_use_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        let temp = folder.as_fd().try_clone_to_owned().unwrap();
        // Files older than a second are not used.
        let helper = Helper::start(temp, false, Duration::from_secs(4)).expect("a helper");
        assert!(helper.take().is_none());
        wait_ready(&helper, READY);
        let old = names(dir.path());
        std::thread::sleep(Duration::from_millis(1100));
        assert!(helper.take().is_none(), "an old file is not handed out");
        wait_idle(&helper, dir.path());
        let left = names(dir.path());
        assert_eq!(
            old.iter().filter(|name| !left.contains(name)).count(),
            1,
            "the old file taken is removed: {old:?} then {left:?}"
        );
    }

    #[test]
    fn no_helper_where_temporary_files_go_stale_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        let temp = folder.as_fd().try_clone_to_owned().unwrap();
        assert!(Helper::start(temp, false, Duration::ZERO).is_none());
    }
}
