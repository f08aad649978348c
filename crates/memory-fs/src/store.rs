//! The synchronous engine behind [`FsStorage`](crate::FsStorage): the opened [`Store`], how it
//! opens, and its lock. Every call on it blocks; the operations are in their own modules
//! (`read`, `list`, `count`, `write`, `delete`, `rename`), each an `impl Store` block.
//!
//! Confinement: all access goes through `root`, a cap-std [`Dir`] capability for
//! `base/memories`, with relative paths made only of plain names, resolved one name at a time
//! without following any link (`resolve.rs`), or on Linux by one `openat2` call that refuses
//! links and escapes in the kernel ([`Fast`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Mutex, MutexGuard};

use cap_fs_ext::DirExt as _;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use memory_core::{MemoryPath, Result};

use crate::error::FsError;
use crate::layout::{
    COUNT_FILE, DIR_MODE, HISTORY_DIR, LOCK_FILE, MEMORIES, TEMP_DIR, is_not_found,
    windows_path_problem,
};
use crate::options::FsOptions;
use crate::sys::{self, Fast};

/// The opened store.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) base: PathBuf,
    /// `base/memories`, the root every memory path is resolved in.
    pub(crate) root: Dir,
    /// The folder of temporary files, `base/.memory-tmp`, beside `memories/` (for a read-only
    /// store, a second handle on the root that nothing is ever written to).
    pub(crate) temp: Dir,
    /// The folder of each file's earlier versions, `base/.memory-history` (see `history/`):
    /// `None` with `history=off`, and for a read-only store whose folder has none yet.
    pub(crate) history: Option<Dir>,
    /// The lock file, opened once (`None` for a read-only store, which changes nothing). The
    /// mutex serialises this process's writers (an advisory lock is held per open file, so
    /// threads sharing it would not exclude each other); the file lock serialises processes
    /// and other `FsStorage`s on the same folder.
    lock: Option<Mutex<std::fs::File>>,
    /// The file count ([`COUNT_FILE`]), read and written under the lock only (`None` for a
    /// read-only store: every count is a walk).
    pub(crate) count: Option<std::fs::File>,
    /// Set when this process failed to update the count file: the next count is a walk.
    pub(crate) count_stale: AtomicBool,
    /// The count this process last read or wrote (`usize::MAX` before any): a hint, read
    /// without the lock, of whether a create should check the limit before writing anything.
    pub(crate) seen_count: AtomicUsize,
    /// The Linux fast paths, where the kernel has them and the store is not `portable`.
    pub(crate) fast: Option<Fast>,
    /// Whether created files and folders need their mode set again
    /// ([`sys::umask_narrows_modes`]).
    pub(crate) chmod_after_create: bool,
    pub(crate) options: FsOptions,
}

/// Holds the store-wide lock: the in-process mutex and the advisory file lock.
pub(crate) struct Locked<'a> {
    file: Option<MutexGuard<'a, std::fs::File>>,
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Some(file) = &self.file
            && let Err(e) = file.unlock()
        {
            tracing::warn!(error = %e, "memory-fs: cannot release the store lock");
        }
    }
}

impl Store {
    pub(crate) fn open(base: &Path, options: FsOptions) -> Result<Self, FsError> {
        if options.read_only {
            return Self::open_read_only(base, options);
        }
        let open_err = |source| FsError::Open {
            base: base.to_path_buf(),
            source,
        };
        sys::create_private_dirs(base).map_err(open_err)?;
        let base_dir = Dir::open_ambient_dir(base, ambient_authority()).map_err(open_err)?;
        let mut own_dirs = vec![MEMORIES, TEMP_DIR];
        if options.history.enabled {
            own_dirs.push(HISTORY_DIR);
        }
        for name in own_dirs {
            match base_dir.create_dir_with(name, &sys::private_dir_builder()) {
                // Explicitly, whatever the umask did to the mode given at creation.
                Ok(()) => sys::set_mode(&base_dir, Path::new(name), DIR_MODE).map_err(open_err)?,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(open_err(e)),
            }
        }
        // `memories` may be a link the owner made (it is followed, as by the SDKs); the folder
        // of temporary files and the lock and count files are the store's own and never
        // followed.
        let root = sys::open_readable_dir(&base.join(MEMORIES)).map_err(open_err)?;
        let temp = base_dir.open_dir_nofollow(TEMP_DIR).map_err(open_err)?;
        let history = if options.history.enabled {
            Some(base_dir.open_dir_nofollow(HISTORY_DIR).map_err(open_err)?)
        } else {
            None
        };
        if !sys::same_file_system(&root, &temp).map_err(open_err)? {
            return Err(FsError::TempElsewhere {
                base: base.to_path_buf(),
                temp_dir: base.join(TEMP_DIR),
                memories: base.join(MEMORIES),
            });
        }
        let own_file = |name| {
            base_dir
                .open_with(name, &sys::own_file_options())
                .map(|f| f.into_std())
                .map_err(open_err)
        };
        let lock = own_file(LOCK_FILE)?;
        let count = own_file(COUNT_FILE)?;
        let store = Store {
            base: base.to_path_buf(),
            fast: Self::fast_paths(&root, &options),
            root,
            temp,
            history,
            lock: Some(Mutex::new(lock)),
            count: Some(count),
            count_stale: AtomicBool::new(false),
            seen_count: AtomicUsize::new(usize::MAX),
            chmod_after_create: sys::umask_narrows_modes(),
            options,
        };
        let removed = store.remove_stale_temps();
        if removed > 0 {
            tracing::info!(base = %base.display(), removed, "memory-fs: removed stale temporary files");
        }
        {
            // Files placed or removed by hand since the last open are counted from here on.
            let _locked = store.lock()?;
            let files = store.recount()?;
            tracing::debug!(base = %base.display(), files, "memory-fs: counted the files");
        }
        Ok(store)
    }

    /// Opens the store changing nothing on disk ([`FsOptions::read_only`]): no folder, lock
    /// file or count file is created, no stale temporary file is removed and no count is
    /// stored; `base/memories` must exist. There is no store lock (readers need none: files
    /// are replaced whole), every count is a walk, and every change is refused
    /// ([`Store::refuse_if_read_only`]).
    fn open_read_only(base: &Path, options: FsOptions) -> Result<Self, FsError> {
        let open_err = |source| FsError::Open {
            base: base.to_path_buf(),
            source,
        };
        let root = sys::open_readable_dir(&base.join(MEMORIES)).map_err(open_err)?;
        // Never written to: a read-only store makes no temporary file.
        let temp = root.try_clone().map_err(open_err)?;
        // History is read where there is some; nothing is made.
        let history = if options.history.enabled {
            match Dir::open_ambient_dir(base, ambient_authority())
                .and_then(|base_dir| base_dir.open_dir_nofollow(HISTORY_DIR))
            {
                Ok(history) => Some(history),
                Err(e) if is_not_found(&e) => None,
                Err(e) => return Err(open_err(e)),
            }
        } else {
            None
        };
        Ok(Store {
            base: base.to_path_buf(),
            fast: Self::fast_paths(&root, &options),
            root,
            temp,
            history,
            lock: None,
            count: None,
            count_stale: AtomicBool::new(true),
            seen_count: AtomicUsize::new(usize::MAX),
            // It creates nothing, so the umask does not matter.
            chmod_after_create: false,
            options,
        })
    }

    /// The fast paths this store uses: none when `portable`, or where the platform or the
    /// kernel lacks them.
    fn fast_paths(root: &Dir, options: &FsOptions) -> Option<Fast> {
        if options.portable {
            return None;
        }
        let fast = Fast::detect(root);
        if fast.is_none() {
            tracing::debug!("memory-fs: no fast paths here; resolving paths one name at a time");
        }
        fast
    }

    /// Whether this store uses the Linux fast paths (see [`FsStorage::uses_fast_paths`]).
    ///
    /// [`FsStorage::uses_fast_paths`]: crate::FsStorage::uses_fast_paths
    pub(crate) fn uses_fast_paths(&self) -> bool {
        self.fast.is_some()
    }

    /// Why this platform cannot hold a name on `path`, if it cannot: on Windows, the names it
    /// forbids or reserves ([`windows_path_problem`]); elsewhere every name a `MemoryPath`
    /// allows can be a file. Such a path holds nothing (a read of it is not found, never the
    /// file Windows would alias it to) and a change of it is refused.
    pub(crate) fn unrepresentable(&self, path: &MemoryPath) -> Option<&'static str> {
        if cfg!(windows) {
            windows_path_problem(path)
        } else {
            None
        }
    }

    /// Refuses a change of a store opened read-only.
    pub(crate) fn refuse_if_read_only(&self, path: &MemoryPath) -> Result<()> {
        if self.options.read_only {
            return Err(memory_core::read_only_refusal(&MemoryPath::root(), path));
        }
        Ok(())
    }

    /// The options the store was opened with.
    pub(crate) fn options(&self) -> &FsOptions {
        &self.options
    }

    /// Takes the store-wide lock (nothing to take for a read-only store).
    pub(crate) fn lock(&self) -> Result<Locked<'_>, FsError> {
        let Some(lock) = &self.lock else {
            return Ok(Locked { file: None });
        };
        // A panic while locked leaves nothing half-done in memory (the mutex guards a file
        // handle only), so a poisoned mutex is still usable.
        let file = lock.lock().unwrap_or_else(|p| p.into_inner());
        file.lock().map_err(|source| FsError::Lock { source })?;
        Ok(Locked { file: Some(file) })
    }
}
