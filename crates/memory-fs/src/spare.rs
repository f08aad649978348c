//! File-system work a write need not wait for, done by one helper thread per writable store.
//!
//! Every write makes a new file (the temporary file it moves into place) and, when it replaces
//! a file, removes the old one. Making and removing files are a disk's slowest metadata work
//! on some file systems: ext4 without a journal searches its inode table past every recently
//! freed inode on each create, and mounted with `discard` it trims a removed file's blocks at
//! once. So the helper keeps a few empty temporary files made ahead for writers to take, and
//! removes the files that writes replaced; a write waits for neither. When the helper is
//! behind (no file ready, its queue full) the writer does the work itself, as before.
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

/// How many empty files are kept ready: enough for a burst of writers in one process.
const READY: usize = 4;

/// How many jobs may wait; past that a writer removes its replaced file itself.
const QUEUE: usize = 64;

/// An empty temporary file, made ahead, with its name in the folder of temporary files.
pub(crate) struct Spare {
    pub(crate) name: String,
    pub(crate) file: std::fs::File,
    made: Instant,
}

enum Job {
    /// Make one more file ready, unless enough are.
    Make,
    /// Remove this temporary file (a file a write replaced).
    Remove(String),
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

    /// A ready empty temporary file, if one is (and asks for another to be made).
    pub(crate) fn take(&self) -> Option<Spare> {
        let spare = lock(&self.ready).pop();
        let asks = if self.taken.swap(true, Ordering::Relaxed) {
            1
        } else {
            READY
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
        self.remove(spare.name);
        None
    }

    /// Removes the temporary file `name` (a file a write replaced): on the helper thread, or
    /// here when its queue is full.
    pub(crate) fn remove(&self, name: String) {
        let Some(jobs) = &self.jobs else {
            return remove_temp(&*self.temp, &name);
        };
        if let Err(
            TrySendError::Full(Job::Remove(name)) | TrySendError::Disconnected(Job::Remove(name)),
        ) = jobs.try_send(Job::Remove(name))
        {
            remove_temp(&*self.temp, &name);
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
            Job::Make => {
                if lock(ready).len() >= READY {
                    continue;
                }
                let name = temp_name();
                match create_temp(temp, &name, chmod) {
                    Ok(file) => lock(ready).push(Spare {
                        name,
                        file,
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

    /// Returns once the helper has done every job queued before: it removes a file queued
    /// after them, and takes its jobs in order.
    fn wait_idle(helper: &Helper, dir: &std::path::Path) {
        std::fs::write(dir.join("barrier.tmp"), b"").unwrap();
        helper.remove("barrier.tmp".to_owned());
        let deadline = Instant::now() + Duration::from_secs(10);
        while dir.join("barrier.tmp").exists() {
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
        // The taken file is the caller's: the helper makes another, and leaves the taken one.
        wait_ready(&helper, READY);
        drop(helper);
        assert_eq!(names(dir.path()), [spare.name]);
    }

    #[test]
    fn replaced_files_are_removed_by_the_helper_or_here() {
        let dir = tempfile::tempdir().unwrap();
        let mut helper = start(dir.path());
        for name in ["a.tmp", "b.tmp"] {
            std::fs::write(dir.path().join(name), b"old").unwrap();
        }
        helper.remove("a.tmp".to_owned());
        // With no thread to take it (as when its queue is full), the caller's thread removes it.
        helper.jobs = None;
        helper.remove("b.tmp".to_owned());
        assert!(!dir.path().join("b.tmp").exists());
        drop(helper);
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

    #[test]
    fn no_helper_where_temporary_files_go_stale_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        let temp = folder.as_fd().try_clone_to_owned().unwrap();
        assert!(Helper::start(temp, false, Duration::ZERO).is_none());
    }
}
