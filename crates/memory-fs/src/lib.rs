#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

#[cfg(not(unix))]
compile_error!("memory-fs supports Unix-like systems only (it relies on file modes and flock)");

mod error;
mod store;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use memory_core::{Entry, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode};

use crate::error::FsError;
use crate::store::Store;

/// Settings of an [`FsStorage`]; the defaults suit every normal use.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FsOptions {
    /// Sync each written file and its folder to disk before a write returns, so a power loss
    /// cannot lose or tear an acknowledged write. Default `true`; turning it off only makes
    /// sense for throw-away stores (tests, caches).
    pub fsync: bool,
    /// Temporary files at least this old are left-overs of a crashed writer and are removed
    /// when the store is opened; younger ones may belong to a writer in another process that
    /// is still running. Default 10 minutes.
    pub stale_temp_age: Duration,
}

impl Default for FsOptions {
    fn default() -> Self {
        FsOptions {
            fsync: true,
            stale_temp_age: Duration::from_secs(600),
        }
    }
}

impl FsOptions {
    /// Sets [`fsync`](Self::fsync).
    pub fn fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// Sets [`stale_temp_age`](Self::stale_temp_age).
    pub fn stale_temp_age(mut self, age: Duration) -> Self {
        self.stale_temp_age = age;
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

    async fn blocking<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T> + Send + 'static,
    {
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
        self.blocking(move |s| s.read(&path)).await
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let path = path.clone();
        self.blocking(move |s| s.stat(&path)).await
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        let path = path.clone();
        self.blocking(move |s| s.write(&path, &contents, &mode))
            .await
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let path = path.clone();
        self.blocking(move |s| s.delete(&path)).await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let dir = dir.clone();
        self.blocking(move |s| s.list(&dir)).await
    }

    /// Moves with one filesystem rename (atomic), for files and whole folders alike.
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let (from, to) = (from.clone(), to.clone());
        self.blocking(move |s| s.rename(&from, &to)).await
    }

    /// Reads the count the store keeps beside `memories/` (under the store lock): no listing.
    async fn file_count(&self) -> Result<usize> {
        self.blocking(|s| s.file_count()).await
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
        self.blocking(move |s| {
            s.write_within(&path, &contents, &WriteMode::Create, Some(max_files))
        })
        .await
    }

    fn capabilities(&self) -> memory_core::Capabilities {
        memory_core::Capabilities::FULL
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
