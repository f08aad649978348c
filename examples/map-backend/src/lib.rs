//! A storage backend written from memory-core's documentation alone: the files of a store in
//! a map behind a mutex, as `Storage`'s own documentation sketches it, with the two overrides
//! its docs ask a real backend for (an exact `create_within`, a native `file_count`).
//!
//! Its tests (`tests/conformance.rs`) run the whole conformance suite against it, which is how
//! a backend outside this workspace proves that it keeps the contract:
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use memory_core::{MemoryHandler, MemoryTool};
//! use serde_json::json;
//!
//! let tool = MemoryTool::new(example_map_backend::MapStorage::default());
//! let create = json!({"command": "create", "path": "/memories/a.md", "file_text": "hi"});
//! assert!(!tool.execute(&create).await.is_error);
//! let view = json!({"command": "view", "path": "/memories/a.md"});
//! assert!(tool.execute(&view).await.text().unwrap().ends_with("     1\thi"));
//! # });
//! ```

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use memory_core::{
    Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode,
};

/// The files of a store, each with the number of the write that made it (its version).
#[derive(Debug, Default)]
pub struct MapStorage {
    state: Mutex<Files>,
}

/// What the mutex guards: the files and how many writes the store has taken.
#[derive(Debug, Default)]
struct Files {
    files: BTreeMap<MemoryPath, (Vec<u8>, u64)>,
    writes: u64,
}

impl std::fmt::Display for MapStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Map")
    }
}

impl MapStorage {
    /// The state, even after a panic in another thread (the map is never left half-changed:
    /// every change is one insert or one retain).
    fn lock(&self) -> MutexGuard<'_, Files> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Files {
    /// Whether `path` is `/memories` or has files below it.
    fn is_directory(&self, path: &MemoryPath) -> bool {
        path.is_root() || self.files.keys().any(|p| p != path && p.starts_with(path))
    }

    /// Writes `bytes` at `path` as `mode` says, under the lock the caller holds.
    fn write(&mut self, path: &MemoryPath, bytes: Vec<u8>, mode: WriteMode) -> Result<Version> {
        if let Some(parent) = path
            .ancestors()
            .into_iter()
            .find(|a| self.files.contains_key(a))
        {
            return Err(Error::ParentIsFile {
                path: path.clone(),
                parent,
            });
        }
        let current = self.files.get(path).map(|(_, n)| n.to_string());
        let path = path.clone();
        match (mode, current) {
            _ if self.is_directory(&path) => return Err(Error::AlreadyExists { path }),
            (WriteMode::Create, Some(_)) => return Err(Error::AlreadyExists { path }),
            (WriteMode::Update(_), None) => return Err(Error::NotFound { path }),
            (WriteMode::Update(expected), Some(current)) if expected.as_str() != current => {
                return Err(Error::Conflict { path });
            }
            _ => {}
        }
        self.writes += 1;
        self.files.insert(path, (bytes, self.writes));
        Ok(Version::new(self.writes.to_string()))
    }
}

#[memory_core::async_trait]
impl Storage for MapStorage {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let state = self.lock();
        let (contents, n) = state
            .files
            .get(path)
            .ok_or_else(|| Error::NotFound { path: path.clone() })?;
        Ok(StoredFile {
            contents: contents.clone(),
            version: Version::new(n.to_string()),
        })
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let state = self.lock();
        Ok(match state.files.get(path) {
            Some((contents, _)) => Some(Entry::File(FileMeta {
                path: path.clone(),
                size: contents.len() as u64,
                modified: None,
            })),
            None => state.is_directory(path).then_some(Entry::Directory),
        })
    }

    async fn write(&self, path: &MemoryPath, bytes: Vec<u8>, mode: WriteMode) -> Result<Version> {
        self.lock().write(path, bytes, mode)
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let mut state = self.lock();
        let before = state.files.len();
        state.files.retain(|p, _| !p.starts_with(path));
        if state.files.len() == before && !path.is_root() {
            return Err(Error::NotFound { path: path.clone() });
        }
        Ok(())
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let state = self.lock();
        let below = state
            .files
            .iter()
            .filter(|(p, _)| *p != dir && p.starts_with(dir));
        Ok(below
            .map(|(p, (contents, _))| FileMeta {
                path: p.clone(),
                size: contents.len() as u64,
                modified: None,
            })
            .collect())
    }

    /// The map's length: no listing.
    async fn file_count(&self) -> Result<usize> {
        Ok(self.lock().files.len())
    }

    /// Counts and creates under one lock, so creates racing at the limit cannot both pass the
    /// count (the provided method counts, then creates: exact for one writer only).
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        let mut state = self.lock();
        if state.files.contains_key(path) || state.is_directory(path) {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        if state.files.len() >= max_files {
            return Err(Error::StoreFull { max_files });
        }
        state.write(path, contents, WriteMode::Create)
    }
}
