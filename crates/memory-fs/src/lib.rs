#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

#[cfg(not(unix))]
compile_error!("memory-fs supports Unix-like systems only (it relies on file modes and flock)");

mod error;
mod kept_open;
mod spare;
mod store;
mod url;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
pub use memory_core::options::SyncMode;
use memory_core::{Entry, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode};

use crate::error::FsError;
use crate::store::Store;
pub use crate::url::{FsOpenError, URL_OPTIONS, fs_url_path};

/// Settings of an [`FsStorage`]; the defaults suit every normal use.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FsOptions {
    /// How much of a write is synced to disk before it returns (the `sync` option):
    /// [`SyncMode::Full`] (the default) syncs the written file and its folder, so a power loss
    /// cannot lose or tear an acknowledged write; [`SyncMode::Data`] syncs the file only (a
    /// crash may lose the newest names, never tear a file); [`SyncMode::None`] syncs nothing,
    /// for throw-away stores (tests, caches): a killed process loses nothing, a power loss may
    /// leave recent files empty or old. Every mode writes through a temporary file and a
    /// rename (or, over an existing file, a name exchange), so no mode ever shows a torn file
    /// to a reader.
    pub sync: SyncMode,
    /// Temporary files at least this old are left-overs of a crashed writer and are removed
    /// when the store is opened; younger ones may belong to a writer in another process that
    /// is still running. Default 10 minutes.
    pub stale_temp_age: Duration,
    /// Where the blocking file-system work of each call runs. Default [`Blocking::Auto`].
    pub blocking: Blocking,
    /// Open without changing anything on disk (default `false`): no folder, lock file or
    /// count file is created, no stale temporary file removed, and every change is refused
    /// ([`memory_core::Error::Refused`], "/memories is read-only"). `base/memories` must
    /// exist. For reading a store that must stay byte for byte as it is (a dream's source).
    pub read_only: bool,
}

impl Default for FsOptions {
    fn default() -> Self {
        FsOptions {
            sync: SyncMode::Full,
            stale_temp_age: Duration::from_secs(600),
            blocking: Blocking::Auto,
            read_only: false,
        }
    }
}

/// Where an [`FsStorage`] call does its blocking file-system work.
///
/// Handing each call to tokio's blocking pool costs a thread hop, several times the work of
/// reading a small file. Running it inline on the caller's thread is free, but while a call
/// waits for the disk (an fsync can take milliseconds) the thread runs nothing else: on a
/// multi-thread runtime serving many tasks that stalls every task queued on that worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Blocking {
    /// Decide per call (the default): inline outside a tokio runtime and on a current-thread
    /// runtime (one command at a time, as in `memory exec`); on a multi-thread runtime, reads
    /// (`read`, `stat`, `file_count`: page-cache work of microseconds for the files a memory
    /// holds) and changes that sync nothing run inline, while listings and changes that sync
    /// to disk go to the blocking pool.
    #[default]
    Auto,
    /// Always on the caller's thread.
    Inline,
    /// Always on tokio's blocking pool (`spawn_blocking`), outside a runtime inline.
    Spawn,
}

impl Blocking {
    /// The accepted spellings of the `blocking` option.
    pub const EXPECTED: &'static str = "auto, inline or spawn";

    /// The option's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Blocking::Auto => "auto",
            Blocking::Inline => "inline",
            Blocking::Spawn => "spawn",
        }
    }
}

impl fmt::Display for Blocking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Blocking {
    type Err = memory_core::options::OptionsError;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Blocking::Auto),
            "inline" => Ok(Blocking::Inline),
            "spawn" => Ok(Blocking::Spawn),
            other => Err(memory_core::options::OptionsError::InvalidValue {
                key: "blocking".to_owned(),
                value: other.to_owned(),
                expected: Blocking::EXPECTED,
            }),
        }
    }
}

/// What a call does, for [`Blocking::Auto`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// Reads one file or one entry.
    Read,
    /// Walks a folder.
    List,
    /// Changes the store (and syncs, unless syncing is off).
    Change,
}

impl FsOptions {
    /// Sets [`sync`](Self::sync).
    pub fn sync(mut self, sync: SyncMode) -> Self {
        self.sync = sync;
        self
    }

    /// Shorthand for [`sync`](Self::sync): `true` is [`SyncMode::Full`], `false`
    /// [`SyncMode::None`].
    pub fn fsync(self, fsync: bool) -> Self {
        self.sync(if fsync {
            SyncMode::Full
        } else {
            SyncMode::None
        })
    }

    /// Sets [`stale_temp_age`](Self::stale_temp_age).
    pub fn stale_temp_age(mut self, age: Duration) -> Self {
        self.stale_temp_age = age;
        self
    }

    /// Sets [`blocking`](Self::blocking).
    pub fn blocking(mut self, blocking: Blocking) -> Self {
        self.blocking = blocking;
        self
    }

    /// Sets [`read_only`](Self::read_only).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }
}

/// A memory store in a folder: `/memories/x` lives at `base/memories/x`.
///
/// See the [crate documentation](crate) for the layout, the guarantees and how they are kept.
/// `Display` shows `Fs(<base>)`, for logs.
#[derive(Clone)]
pub struct FsStorage {
    store: Arc<Store>,
}

impl FsStorage {
    /// Opens (creating if needed) the store in `base`, with default [`FsOptions`].
    ///
    /// Creates `base`, `base/memories` and the folder of temporary files `base/.memory-tmp`
    /// (mode 0700) if missing, opens `base/memories` as a capability, creates the lock file
    /// `base/.memories.lock`, and removes temporary files left by crashed writers. This does blocking I/O: call it at start-up or inside
    /// `spawn_blocking`. Fails with [`memory_core::Error::Backend`] if the folder cannot be
    /// created or opened.
    pub fn new(base: impl AsRef<Path>) -> Result<Self> {
        Self::with_options(base, FsOptions::default())
    }

    /// Like [`new`](Self::new), with explicit options.
    pub fn with_options(base: impl AsRef<Path>, options: FsOptions) -> Result<Self> {
        let store = Store::open(base.as_ref(), options)?;
        Ok(FsStorage {
            store: Arc::new(store),
        })
    }

    /// The folder holding `memories/` and the lock file.
    pub fn base(&self) -> &Path {
        &self.store.base
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &FsOptions {
        self.store.options()
    }

    /// Whether this store keeps the files it reads open, to read them again with one `pread`
    /// while inotify reports no change on their paths (see the crate README). It may on local
    /// file systems (ext4, XFS, Btrfs, tmpfs, F2FS, bcachefs, ZFS) where the kernel has
    /// `openat2`; it starts at its 16th read, if an inotify instance can be had and this
    /// process keeps files for fewer than 16 stores. Elsewhere every read opens its path.
    pub fn keeps_files_open(&self) -> bool {
        self.store.keeps_files_open()
    }

    /// Whether a call doing `work` runs on the caller's thread.
    fn inline(&self, work: Work) -> bool {
        use tokio::runtime::{Handle, RuntimeFlavor};
        let Ok(handle) = Handle::try_current() else {
            // No tokio runtime to hand the work to.
            return true;
        };
        match self.store.options().blocking {
            Blocking::Inline => true,
            Blocking::Spawn => false,
            Blocking::Auto => match handle.runtime_flavor() {
                RuntimeFlavor::CurrentThread => true,
                RuntimeFlavor::MultiThread => match work {
                    Work::Read => true,
                    Work::List => false,
                    Work::Change => self.store.options().sync == SyncMode::None,
                },
                _ => false,
            },
        }
    }

    async fn blocking<T, F>(&self, work: Work, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T> + Send + 'static,
    {
        if self.inline(work) {
            return f(&self.store);
        }
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(FsError::from)?
    }
}

impl fmt::Debug for FsStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FsStorage")
            .field("base", &self.store.base)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for FsStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fs({})", self.store.base.display())
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Storage for FsStorage {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let path = path.clone();
        self.blocking(Work::Read, move |s| s.read(&path)).await
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let path = path.clone();
        self.blocking(Work::Read, move |s| s.stat(&path)).await
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        let path = path.clone();
        self.blocking(Work::Change, move |s| s.write(&path, &contents, &mode))
            .await
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let path = path.clone();
        self.blocking(Work::Change, move |s| s.delete(&path)).await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let dir = dir.clone();
        self.blocking(Work::List, move |s| s.list(&dir)).await
    }

    /// Moves with one filesystem rename (atomic), for files and whole folders alike.
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let (from, to) = (from.clone(), to.clone());
        self.blocking(Work::Change, move |s| s.rename(&from, &to))
            .await
    }

    /// Reads the count the store keeps beside `memories/` (under the store lock): no listing.
    async fn file_count(&self) -> Result<usize> {
        self.blocking(Work::Read, |s| s.file_count()).await
    }

    /// Checks the count and creates under the store lock, so that the limit is exact across
    /// tasks, `FsStorage`s and processes sharing the folder.
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        let path = path.clone();
        self.blocking(Work::Change, move |s| {
            s.write_within(&path, &contents, &WriteMode::Create, Some(max_files))
        })
        .await
    }

    /// The provided scan (list, read, rank): a folder keeps no index of its own (memory-search
    /// adds one beside it).
    async fn search(
        &self,
        query: &memory_core::search::SearchQuery,
    ) -> Result<Vec<memory_core::search::SearchHit>> {
        memory_core::search::scan(self, query).await
    }

    fn capabilities(&self) -> memory_core::Capabilities {
        memory_core::Capabilities::FULL
    }
    fn skipped_entries(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use memory_core::Error;

    thread_local! {
        static FAIL_TEMP_WRITES: Cell<bool> = const { Cell::new(false) };
    }

    /// Whether the current (blocking) thread should fail writing temporary files.
    pub(crate) fn fail_temp_writes() -> bool {
        FAIL_TEMP_WRITES.with(Cell::get)
    }

    fn p(raw: &str) -> MemoryPath {
        MemoryPath::parse(raw).unwrap()
    }

    /// The names in one folder, sorted.
    pub(crate) fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn files_on_disk(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                for inner in files_on_disk(&entry.path()) {
                    out.push(format!("{name}/{inner}"));
                }
            } else {
                out.push(name);
            }
        }
        out.sort();
        out
    }

    /// Where the work of each call runs, for every option, runtime flavor and sync mode.
    #[test]
    fn blocking_work_runs_inline_only_where_the_runtime_allows_it() {
        let dir = tempfile::tempdir().unwrap();
        let storage = |blocking, sync| {
            FsStorage::with_options(
                dir.path(),
                FsOptions::default().blocking(blocking).sync(sync),
            )
            .unwrap()
        };
        let all = [Work::Read, Work::List, Work::Change];
        // Outside any runtime there is nowhere else to run.
        for blocking in [Blocking::Auto, Blocking::Inline, Blocking::Spawn] {
            let s = storage(blocking, SyncMode::Full);
            assert!(all.iter().all(|&w| s.inline(w)), "{blocking}");
        }
        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        current.block_on(async {
            let s = storage(Blocking::Auto, SyncMode::Full);
            assert!(
                all.iter().all(|&w| s.inline(w)),
                "current-thread: all inline"
            );
            let s = storage(Blocking::Spawn, SyncMode::None);
            assert!(all.iter().all(|&w| !s.inline(w)), "spawn: never inline");
        });
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        multi.block_on(async {
            for sync in [SyncMode::Full, SyncMode::Data] {
                let s = storage(Blocking::Auto, sync);
                assert!(s.inline(Work::Read));
                assert!(!s.inline(Work::List));
                assert!(
                    !s.inline(Work::Change),
                    "a change that syncs ({sync}) is handed off"
                );
            }
            let s = storage(Blocking::Auto, SyncMode::None);
            assert!(s.inline(Work::Read) && s.inline(Work::Change) && !s.inline(Work::List));
            let s = storage(Blocking::Inline, SyncMode::Full);
            assert!(all.iter().all(|&w| s.inline(w)));
        });
    }

    #[test]
    fn blocking_options_parse() {
        for b in [Blocking::Auto, Blocking::Inline, Blocking::Spawn] {
            assert_eq!(b.as_str().parse::<Blocking>().unwrap(), b);
        }
        let e = "sometimes".parse::<Blocking>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "store option `blocking` has the invalid value `sometimes`: use auto, inline or spawn"
        );
    }

    /// The component-by-component resolution (kernels without `openat2`) keeps the whole
    /// contract and never follows a link either.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_openat2_the_walk_keeps_the_contract_and_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let store = Store::open(dir.path(), FsOptions::default().fsync(false)).unwrap();
            FsStorage {
                store: Arc::new(store.without_openat2()),
            }
        };
        memory_core::conformance::storage::run_all(Arc::new(open())).await;

        let storage = open();
        let memories = dir.path().join("memories");
        std::fs::write(dir.path().join("outside.md"), b"outside").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.md"), memories.join("file")).unwrap();
        std::os::unix::fs::symlink(dir.path(), memories.join("dir")).unwrap();
        for path in [
            "/memories/file",
            "/memories/dir",
            "/memories/dir/outside.md",
        ] {
            let e = storage.read(&p(path)).await.unwrap_err();
            assert!(
                matches!(e, Error::SymbolicLink { .. }),
                "read {path}: {e:?}"
            );
            let e = storage.stat(&p(path)).await.unwrap_err();
            assert!(
                matches!(e, Error::SymbolicLink { .. }),
                "stat {path}: {e:?}"
            );
        }
        assert!(storage.list(&MemoryPath::root()).await.unwrap().is_empty());
    }

    /// A write that fails after its temporary file was created leaves the old content, no
    /// temporary file and no new folder behind. (Runs the store synchronously so the
    /// thread-local fault switch applies.)
    #[test]
    fn failed_write_leaves_old_content_and_no_litter() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), FsOptions::default()).unwrap();
        let path = p("/memories/notes/a.md");
        store.write(&path, b"old", &WriteMode::Create).unwrap();
        let version = store.read(&path).unwrap().version;

        FAIL_TEMP_WRITES.with(|f| f.set(true));
        for mode in [WriteMode::Overwrite, WriteMode::Update(version.clone())] {
            let e = store.write(&path, b"new", &mode).unwrap_err();
            assert!(matches!(e, Error::Backend { backend: "Fs", .. }), "{e:?}");
        }
        let e = store
            .write(&p("/memories/fresh/deep/b.md"), b"new", &WriteMode::Create)
            .unwrap_err();
        assert!(matches!(e, Error::Backend { .. }), "{e:?}");
        FAIL_TEMP_WRITES.with(|f| f.set(false));

        let file = store.read(&path).unwrap();
        assert_eq!(file.contents, b"old");
        assert_eq!(file.version, version);
        // Closed, so that the helper has removed the empty files it made ahead.
        drop(store);
        assert_eq!(
            files_on_disk(&dir.path().join("memories")),
            ["notes/a.md"],
            "no temporary file and no new folder is left behind"
        );
        assert!(
            files_on_disk(&dir.path().join(store::TEMP_DIR)).is_empty(),
            "no temporary file is left in the folder of temporary files"
        );
    }
}
