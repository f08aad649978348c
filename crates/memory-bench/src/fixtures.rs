//! The stores the criterion benches run on, each filled before timing starts.
//!
//! [`Backend::open`] builds a [`BenchStore`]: a [`MemoryTool`] over one backend, in its durable
//! default configuration (the folder store syncs every write, SQLite commits with
//! `synchronous = FULL`), already holding the files a bench needs. Filling is done through a
//! second, non-syncing handle on the same folder or database, so that laying out 2,000 files
//! takes a moment instead of 2,000 disk flushes; the handle the bench times is opened after.
//!
//! ```
//! use memory_bench::fixtures::Backend;
//! use memory_core::MemoryPath;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let scratch = tempfile::tempdir().unwrap();
//! let files = vec![(MemoryPath::parse("/memories/a.md").unwrap(), b"hello\n".to_vec())];
//! let store = Backend::Sqlite.open(scratch.path(), &files).await.unwrap();
//! let out = store.execute_ok(&json!({"command": "view", "path": "/memories/a.md"})).await.unwrap();
//! assert!(out.text().unwrap().ends_with("     1\thello\n     2\t"));
//! # });
//! ```

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use memory_core::{
    InMemoryStorage, MemoryHandler, MemoryPath, MemoryTool, Storage, ToolOutput, WriteMode,
};
use memory_encrypted::{Encrypted, Key, Keyring};
use memory_fs::{FsOptions, FsStorage};
use memory_s3::ObjectStoreStorage;
use memory_s3::object_store::memory::InMemory;
use memory_sqlite::{SqliteOptions, SqliteStorage, SyncMode};
use serde_json::Value;
use tempfile::TempDir;

/// A backend the benches measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// `InMemoryStorage`: the tool's own cost, no I/O.
    Memory,
    /// `FsStorage`: a folder, every write synced.
    Fs,
    /// `SqliteStorage`: one database file, WAL, `synchronous = FULL`.
    Sqlite,
    /// `Encrypted<InMemoryStorage>`: the wrapper's whole cost.
    EncryptedMemory,
    /// `Encrypted<FsStorage>`.
    EncryptedFs,
    /// `Encrypted<SqliteStorage>`.
    EncryptedSqlite,
    /// `ObjectStoreStorage` (memory-s3) over object_store's `InMemory`: the object-store
    /// mapping's own cost (conditional puts, listings, copy-based renames), no network.
    S3Memory,
}

impl Backend {
    /// Every backend, plain ones first.
    pub const ALL: [Backend; 7] = [
        Backend::Memory,
        Backend::Fs,
        Backend::Sqlite,
        Backend::EncryptedMemory,
        Backend::EncryptedFs,
        Backend::EncryptedSqlite,
        Backend::S3Memory,
    ];

    /// The short name benches and reports use: `mem`, `fs`, `sqlite`, `enc-mem`, ...
    pub fn name(self) -> &'static str {
        match self {
            Backend::Memory => "mem",
            Backend::Fs => "fs",
            Backend::Sqlite => "sqlite",
            Backend::EncryptedMemory => "enc-mem",
            Backend::EncryptedFs => "enc-fs",
            Backend::EncryptedSqlite => "enc-sqlite",
            Backend::S3Memory => "s3-mem",
        }
    }

    /// For an encrypted backend, the backend it wraps.
    pub fn inner(self) -> Option<Backend> {
        match self {
            Backend::EncryptedMemory => Some(Backend::Memory),
            Backend::EncryptedFs => Some(Backend::Fs),
            Backend::EncryptedSqlite => Some(Backend::Sqlite),
            Backend::Memory | Backend::Fs | Backend::Sqlite | Backend::S3Memory => None,
        }
    }

    /// A tool over this backend in `scratch` (an empty folder that outlives the store), holding
    /// `files`. The filling is not part of any measurement.
    pub async fn open(
        self,
        scratch: &Path,
        files: &[(MemoryPath, Vec<u8>)],
    ) -> Result<BenchStore, BenchError> {
        let storage = match self {
            Backend::Memory | Backend::EncryptedMemory => {
                let storage = wrap(self, Arc::new(InMemoryStorage::new()));
                fill(&*storage, files).await?;
                storage
            }
            Backend::S3Memory => {
                let store = ObjectStoreStorage::new(Arc::new(InMemory::new()), "bench")
                    .map_err(|e| BenchError::new("open the object store", e))?;
                let storage: Arc<dyn Storage> = Arc::new(store);
                fill(&*storage, files).await?;
                storage
            }
            Backend::Fs | Backend::EncryptedFs => {
                let fast = FsStorage::with_options(scratch, FsOptions::default().fsync(false))
                    .map_err(|e| BenchError::new("open the folder store", e))?;
                fill(&*wrap(self, Arc::new(fast)), files).await?;
                let durable = FsStorage::new(scratch)
                    .map_err(|e| BenchError::new("reopen the folder store", e))?;
                wrap(self, Arc::new(durable))
            }
            Backend::Sqlite | Backend::EncryptedSqlite => {
                let db = scratch.join("memory.db");
                let fast =
                    SqliteStorage::open_with(&db, SqliteOptions::default().sync(SyncMode::None))
                        .map_err(|e| BenchError::new("open the database", e))?;
                fill(&*wrap(self, Arc::new(fast)), files).await?;
                let durable = SqliteStorage::open(&db)
                    .map_err(|e| BenchError::new("reopen the database", e))?;
                wrap(self, Arc::new(durable))
            }
        };
        Ok(BenchStore {
            backend: self,
            tool: MemoryTool::new(storage),
        })
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The fixed key of the encrypted benches (a benchmark needs no secret).
fn keyring() -> Keyring {
    Keyring::new(Key::from_bytes([0x5a; 32]))
}

fn wrap(backend: Backend, inner: Arc<dyn Storage>) -> Arc<dyn Storage> {
    match backend.inner() {
        Some(_) => Arc::new(Encrypted::new(inner, keyring())),
        None => inner,
    }
}

async fn fill(storage: &dyn Storage, files: &[(MemoryPath, Vec<u8>)]) -> Result<(), BenchError> {
    for (path, contents) in files {
        storage
            .write(path, contents.clone(), WriteMode::Overwrite)
            .await
            .map_err(|e| BenchError::new("fill the store", e))?;
    }
    Ok(())
}

/// A [`MemoryTool`] over one backend, ready to be timed.
#[derive(Debug)]
pub struct BenchStore {
    backend: Backend,
    tool: MemoryTool<Arc<dyn Storage>>,
}

impl BenchStore {
    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The tool.
    pub fn tool(&self) -> &MemoryTool<Arc<dyn Storage>> {
        &self.tool
    }

    /// The storage under the tool, for untimed setup between iterations.
    pub fn storage(&self) -> &dyn Storage {
        &**self.tool.storage()
    }

    /// Runs one tool input; an error result is an error here, so that a bench never times a
    /// failure by mistake.
    pub async fn execute_ok(&self, input: &Value) -> Result<ToolOutput, BenchError> {
        let out = self.tool.execute(input).await;
        if out.is_error {
            return Err(BenchError {
                what: format!("{input} on {}", self.backend),
                detail: out.text().unwrap_or("(non-text content)").to_owned(),
            });
        }
        Ok(out)
    }
}

/// A scratch folder for one bench store, under `parent` (on the disk being measured).
pub fn scratch_dir(parent: &Path) -> Result<TempDir, BenchError> {
    std::fs::create_dir_all(parent).map_err(|e| BenchError::new("create the scratch parent", e))?;
    tempfile::Builder::new()
        .prefix("memory-bench-")
        .tempdir_in(parent)
        .map_err(|e| BenchError::new("create a scratch folder", e))
}

/// A file of exactly `size` bytes of numbered lines of text, holding the word `MARKER-A` once
/// near its middle (the `str_replace` benches swap it for `MARKER-B` and back). Sizes below
/// 256 bytes may cut the marker off.
///
/// ```
/// let text = memory_bench::fixtures::text_file(1024);
/// assert_eq!(text.len(), 1024);
/// assert_eq!(text.matches("MARKER-A").count(), 1);
/// assert!(text.ends_with('\n'));
/// ```
pub fn text_file(size: usize) -> String {
    let mut out = String::with_capacity(size + 64);
    let mut n = 0;
    let mut marked = false;
    while out.len() < size {
        n += 1;
        let line = if out.len() >= size / 2 && !marked {
            marked = true;
            format!("{n:05} MARKER-A the note the benches edit\n")
        } else {
            format!("{n:05} - [ ] a line of an agent's notes, about this long\n")
        };
        out.push_str(&line);
    }
    // Cut to the size, keeping a final newline.
    out.truncate(size - 1);
    while !out.is_char_boundary(out.len()) {
        out.pop();
    }
    out.push('\n');
    out
}

/// Why a bench store could not be built or a timed command failed.
#[derive(Debug)]
pub struct BenchError {
    what: String,
    detail: String,
}

impl BenchError {
    fn new(what: &str, err: impl fmt::Display) -> Self {
        BenchError {
            what: what.to_owned(),
            detail: err.to_string(),
        }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.detail)
    }
}

impl std::error::Error for BenchError {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_files_have_their_size_and_one_marker() {
        for size in [256, 1024, 4000, 64 * 1024] {
            let text = text_file(size);
            assert_eq!(text.len(), size);
            assert_eq!(text.matches("MARKER-A").count(), 1, "{size}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_backend_opens_filled_and_answers() {
        let parent = tempfile::tempdir().unwrap();
        let path = MemoryPath::parse("/memories/dir/a.md").unwrap();
        let files = vec![(path, text_file(1024).into_bytes())];
        for backend in Backend::ALL {
            let scratch = scratch_dir(parent.path()).unwrap();
            let store = backend.open(scratch.path(), &files).await.unwrap();
            let out = store
                .execute_ok(&json!({"command": "view", "path": "/memories/dir"}))
                .await
                .unwrap();
            assert!(
                out.text().unwrap().contains("1K\t/memories/dir/a.md"),
                "{backend}"
            );
            store
                .execute_ok(
                    &json!({"command": "str_replace", "path": "/memories/dir/a.md",
                    "old_str": "MARKER-A", "new_str": "MARKER-B"}),
                )
                .await
                .unwrap();
            let err = store
                .execute_ok(&json!({"command": "view", "path": "/memories/none"}))
                .await
                .unwrap_err();
            assert!(err.to_string().contains("does not exist"), "{err}");
        }
    }
}
