//! [`InMemoryStorage`]: the reference backend, a sorted map behind a lock.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

use async_trait::async_trait;

use crate::history::{Change, HistoryOptions, Redaction, Revision};
use crate::search::{Ranker, SearchHit, SearchQuery, is_searchable, searchable_text};
use crate::{
    Capabilities, Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version,
    WriteMode,
};

#[derive(Debug)]
struct Stored {
    contents: Vec<u8>,
    version: u64,
    modified: SystemTime,
}

mod history;

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<MemoryPath, Stored>,
    /// Versions are unique across the whole store, so a file deleted and created again never
    /// repeats an old version.
    next_version: u64,
    /// Every path's revisions, changed under the same lock as the files.
    history: history::History,
}

impl State {
    fn meta(path: &MemoryPath, stored: &Stored) -> FileMeta {
        FileMeta {
            path: path.clone(),
            size: stored.contents.len() as u64,
            modified: Some(stored.modified),
        }
    }

    /// Files at or below `dir`, in path order.
    fn below<'a>(
        &'a self,
        dir: &'a MemoryPath,
    ) -> impl Iterator<Item = (&'a MemoryPath, &'a Stored)> {
        self.files
            .range(dir.clone()..)
            .take_while(move |(p, _)| p.as_str().starts_with(dir.as_str()))
            .filter(move |(p, _)| p.starts_with(dir) && *p != dir)
    }

    /// What [`Storage::stat`] answers for `path`.
    fn entry(&self, path: &MemoryPath) -> Option<Entry> {
        if let Some(stored) = self.files.get(path) {
            return Some(Entry::File(State::meta(path, stored)));
        }
        self.is_dir(path).then_some(Entry::Directory)
    }

    fn is_dir(&self, path: &MemoryPath) -> bool {
        path.is_root() || self.below(path).next().is_some()
    }

    fn file_ancestor(&self, path: &MemoryPath) -> Option<MemoryPath> {
        path.ancestors()
            .into_iter()
            .find(|a| self.files.contains_key(a))
    }

    /// One write, checked against the state it changes.
    fn write(&mut self, path: &MemoryPath, contents: Vec<u8>, mode: &WriteMode) -> Result<Version> {
        self.write_as(path, contents, mode, None)
    }

    /// [`write`](Self::write), recorded as `change` (by default a creation or an edit).
    fn write_as(
        &mut self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: &WriteMode,
        change: Option<Change>,
    ) -> Result<Version> {
        if let Some(parent) = self.file_ancestor(path) {
            return Err(Error::ParentIsFile {
                path: path.clone(),
                parent,
            });
        }
        if self.is_dir(path) {
            return Err(match mode {
                WriteMode::Update(_) => Error::NotFound { path: path.clone() },
                _ => Error::AlreadyExists { path: path.clone() },
            });
        }
        match (mode, self.files.get(path)) {
            (WriteMode::Create, Some(_)) => {
                return Err(Error::AlreadyExists { path: path.clone() });
            }
            (WriteMode::Update(_), None) => {
                return Err(Error::NotFound { path: path.clone() });
            }
            (WriteMode::Update(expected), Some(stored))
                if expected.as_str() != stored.version.to_string() =>
            {
                return Err(Error::Conflict { path: path.clone() });
            }
            _ => {}
        }
        let change = change.unwrap_or(match self.files.contains_key(path) {
            true => Change::Modified,
            false => Change::Created,
        });
        Ok(self.put(path, contents, change))
    }

    /// Stores `contents` at `path` and records the change.
    fn put(&mut self, path: &MemoryPath, contents: Vec<u8>, change: Change) -> Version {
        self.history.record(change, path, None, Some(&contents));
        self.next_version += 1;
        let version = self.next_version;
        self.files.insert(
            path.clone(),
            Stored {
                contents,
                version,
                modified: SystemTime::now(),
            },
        );
        Version::new(version.to_string())
    }
}

/// A store held in memory: fast, shared by clones of an `Arc`, gone when dropped.
///
/// It is the reference implementation of [`Storage`], the inner store of wrapper tests and
/// the backend of the documentation's examples.
///
/// ```
/// use memory_core::{InMemoryStorage, MemoryHandler, MemoryTool};
/// # tokio_test();
/// # fn tokio_test() {
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// let tool = MemoryTool::new(InMemoryStorage::new());
/// let out = tool
///     .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "hi\n"}))
///     .await;
/// assert_eq!(out.text(), Some("File created successfully at: /memories/a.md"));
/// # });
/// # }
/// ```
#[derive(Default)]
pub struct InMemoryStorage {
    state: Mutex<State>,
}

impl InMemoryStorage {
    /// An empty store, keeping history with the default [`HistoryOptions`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store keeping history as `options` say ([`HistoryOptions::off`] for none).
    pub fn with_history(options: HistoryOptions) -> Self {
        let store = Self::default();
        store.lock().history.options = options;
        store
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map half-updated (every change is
        // one insert or remove), so a poisoned lock is still consistent.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl fmt::Debug for InMemoryStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files = self.lock().files.len();
        f.debug_struct("InMemoryStorage")
            .field("files", &files)
            .finish()
    }
}

impl fmt::Display for InMemoryStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InMemory")
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Storage for InMemoryStorage {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let state = self.lock();
        let stored = state
            .files
            .get(path)
            .ok_or_else(|| Error::NotFound { path: path.clone() })?;
        Ok(StoredFile {
            contents: stored.contents.clone(),
            version: Version::new(stored.version.to_string()),
        })
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        Ok(self.lock().entry(path))
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        let mut state = self.lock();
        state.write(path, contents, &mode)
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let mut state = self.lock();
        if state.files.remove(path).is_some() {
            state.history.record(Change::Deleted, path, None, None);
            return Ok(());
        }
        let doomed: Vec<MemoryPath> = state.below(path).map(|(p, _)| p.clone()).collect();
        if doomed.is_empty() {
            return if path.is_root() {
                Ok(())
            } else {
                Err(Error::NotFound { path: path.clone() })
            };
        }
        for p in doomed {
            state.files.remove(&p);
            state.history.record(Change::Deleted, &p, None, None);
        }
        Ok(())
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let state = self.lock();
        Ok(state
            .below(dir)
            .map(|(p, stored)| State::meta(p, stored))
            .collect())
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let mut state = self.lock();
        let source =
            crate::check_rename_preconditions_with(from, to, |path| Ok(state.entry(path)))?;
        let sources: Vec<MemoryPath> = match source {
            Entry::File(_) => vec![from.clone()],
            Entry::Directory => state.below(from).map(|(p, _)| p.clone()).collect(),
        };
        let mut moves = Vec::with_capacity(sources.len());
        for source in sources {
            let target = source.rebase(from, to).ok_or_else(|| {
                Error::backend(
                    "InMemory",
                    format!("{source} cannot move below {to}: the path would be too long"),
                )
            })?;
            moves.push((source, target));
        }
        for (source, target) in moves {
            if let Some(stored) = state.files.remove(&source) {
                state.history.moved(&source, &target, &stored.contents);
                state.files.insert(target, stored);
            }
        }
        Ok(())
    }

    async fn file_count(&self) -> Result<usize> {
        Ok(self.lock().files.len())
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        // Count and create under one lock: exact however many tasks race.
        let mut state = self.lock();
        if state.files.len() >= max_files {
            let taken = state.files.contains_key(path) || state.is_dir(path);
            return Err(if taken {
                Error::AlreadyExists { path: path.clone() }
            } else {
                Error::StoreFull { max_files }
            });
        }
        state.write(path, contents, &WriteMode::Create)
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        // One snapshot under the lock: the ranking sees the files as they were at one moment.
        let (searched, texts) = {
            let state = self.lock();
            let mut searched = 0;
            let mut texts = Vec::new();
            for (path, stored) in &state.files {
                if is_searchable(path, query.under()) {
                    searched += 1;
                    if let Some(text) = searchable_text(&stored.contents) {
                        texts.push((path.clone(), text.to_owned()));
                    }
                }
            }
            (searched, texts)
        };
        let mut ranker = Ranker::new(query, searched);
        for (path, text) in texts {
            ranker.add(path, &text);
        }
        Ok(ranker.finish())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::FULL
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<crate::Listing> {
        Ok(self.list(dir).await?.into())
    }

    async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        let mut state = self.lock();
        let stored = state
            .files
            .get_mut(path)
            .ok_or_else(|| Error::NotFound { path: path.clone() })?;
        stored.modified = modified;
        Ok(true)
    }

    async fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.lock().history.revisions(path)
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.lock().history.read(path, number)
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        let mut state = self.lock();
        state.history.check_exists(path, number)?;
        state.write_as(
            path,
            contents,
            &WriteMode::Overwrite,
            Some(Change::Restored),
        )
    }

    async fn redact_revisions(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.lock().history.redact(path, which)
    }
}

#[cfg(test)]
mod history_tests {
    use std::sync::Arc;

    use super::*;
    use crate::conformance::history::{self, OpenHistory};

    struct Fresh;

    #[async_trait]
    impl OpenHistory for Fresh {
        async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
            Arc::new(InMemoryStorage::with_history(options))
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn in_memory_history_conforms() {
        history::run_all(&Fresh).await;
    }
}
