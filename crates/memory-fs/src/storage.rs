//! [`FsStorage`]: the async [`Storage`] over the blocking [`Store`], deciding per call where
//! its file-system work runs ([`Blocking`]).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use memory_core::options::SyncMode;
use memory_core::{Entry, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode};

use crate::error::FsError;
use crate::options::{Blocking, FsOptions, Work};
use crate::store::Store;

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
    /// Creates `base`, `base/memories`, the folder of temporary files `base/.memory-tmp` and
    /// (unless `history=off`) the history folder `base/.memory-history` (mode 0700) if missing, opens `base/memories` as a capability, creates the lock file
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

    /// Whether this store takes the Linux fast paths (`openat2` resolution,
    /// `RENAME_NOREPLACE`, raw folder reads): on Linux where the kernel has `openat2`, unless
    /// opened with [`FsOptions::portable`]. Elsewhere every operation takes its portable path,
    /// with the same results.
    pub fn uses_fast_paths(&self) -> bool {
        self.store.uses_fast_paths()
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

    /// Sets the file's own modification time on disk (what `stat` and `list` report).
    async fn set_modified(
        &self,
        path: &MemoryPath,
        modified: std::time::SystemTime,
    ) -> Result<bool> {
        let path = path.clone();
        self.blocking(Work::Change, move |s| s.set_modified(&path, modified))
            .await
    }

    /// Reads the path's log in `base/.memory-history` (a folder's: every log there).
    async fn history(&self, path: &MemoryPath) -> Result<Vec<memory_core::history::Revision>> {
        let path = path.clone();
        self.blocking(Work::List, move |s| s.history(&path)).await
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        let path = path.clone();
        self.blocking(Work::Read, move |s| s.read_revision(&path, number))
            .await
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        let path = path.clone();
        self.blocking(Work::Change, move |s| {
            s.write_restored(&path, number, &contents)
        })
        .await
    }

    /// Deletes the content files and rewrites the log; then sweeps the whole history folder
    /// for copies a crash left behind.
    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: memory_core::history::Redaction,
    ) -> Result<u64> {
        let path = path.clone();
        self.blocking(Work::Change, move |s| s.redact_revisions(&path, which))
            .await
    }

    fn capabilities(&self) -> memory_core::Capabilities {
        memory_core::Capabilities::FULL
    }
    /// [`list`](Storage::list): a folder's names that no memory path can hold are skipped
    /// without a count (they are files of the folder's own, not foreign rows).
    async fn listing(&self, dir: &MemoryPath) -> Result<memory_core::Listing> {
        Ok(self.list(dir).await?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_core::Error;

    fn p(raw: &str) -> MemoryPath {
        MemoryPath::parse(raw).unwrap()
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

        crate::temp::FAIL_TEMP_WRITES.with(|f| f.set(true));
        for mode in [WriteMode::Overwrite, WriteMode::Update(version.clone())] {
            let e = store.write(&path, b"new", &mode).unwrap_err();
            assert!(matches!(e, Error::Backend { backend: "Fs", .. }), "{e:?}");
        }
        let e = store
            .write(&p("/memories/fresh/deep/b.md"), b"new", &WriteMode::Create)
            .unwrap_err();
        assert!(matches!(e, Error::Backend { .. }), "{e:?}");
        crate::temp::FAIL_TEMP_WRITES.with(|f| f.set(false));

        let file = store.read(&path).unwrap();
        assert_eq!(file.contents, b"old");
        assert_eq!(file.version, version);
        drop(store);
        assert_eq!(
            files_on_disk(&dir.path().join("memories")),
            ["notes/a.md"],
            "no temporary file and no new folder is left behind"
        );
        assert!(
            files_on_disk(&dir.path().join(crate::layout::TEMP_DIR)).is_empty(),
            "no temporary file is left in the folder of temporary files"
        );
    }
}
