//! [`Recording`]: forwards every call and records it.

use std::fmt;
use std::sync::Mutex;

use async_trait::async_trait;

use super::{Op, lock};
use crate::search::{SearchHit, SearchQuery};
use crate::{
    Capabilities, Entry, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode,
};

/// One call seen by [`Recording`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The method.
    pub op: Op,
    /// The path (for `rename`, the source; for `list`, the directory; for `file_count`,
    /// `/memories`).
    pub path: MemoryPath,
    /// For `rename`, the destination.
    pub to: Option<MemoryPath>,
    /// For `write`, the mode.
    pub mode: Option<WriteMode>,
    /// Whether the inner store answered `Ok`.
    pub ok: bool,
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.op, self.path)?;
        if let Some(to) = &self.to {
            write!(f, " -> {to}")?;
        }
        if let Some(mode) = &self.mode {
            write!(f, " ({mode:?})")?;
        }
        if !self.ok {
            f.write_str(" [error]")?;
        }
        Ok(())
    }
}

/// A wrapper that forwards every call to its inner store and records it, in the order the
/// calls finished, for assertions such as "a rejected create never reached the store" or "an
/// edit retried with a fresh read".
///
/// ```
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// use memory_core::conformance::faults::{Op, Recording};
/// use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
///
/// let store = Recording::new(InMemoryStorage::new());
/// let path = MemoryPath::parse("/memories/a.md").unwrap();
/// store.write(&path, b"x".to_vec(), WriteMode::Create).await.unwrap();
/// store.read(&path).await.unwrap();
/// assert_eq!(store.ops(), [Op::Write, Op::Read]);
/// # });
/// ```
pub struct Recording<S> {
    inner: S,
    calls: Mutex<Vec<Call>>,
}

impl<S> Recording<S> {
    /// Wraps `inner` with an empty record.
    pub fn new(inner: S) -> Self {
        Recording {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// Every call recorded so far, oldest first.
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.calls).clone()
    }

    /// The methods called so far, oldest first.
    pub fn ops(&self) -> Vec<Op> {
        lock(&self.calls).iter().map(|c| c.op).collect()
    }

    /// Returns the record and starts a new, empty one.
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *lock(&self.calls))
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }

    fn record<T>(
        &self,
        op: Op,
        path: &MemoryPath,
        to: Option<&MemoryPath>,
        mode: Option<WriteMode>,
        result: &Result<T>,
    ) {
        lock(&self.calls).push(Call {
            op,
            path: path.clone(),
            to: to.cloned(),
            mode,
            ok: result.is_ok(),
        });
    }
}

impl<S: fmt::Debug> fmt::Debug for Recording<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recording")
            .field("inner", &self.inner)
            .field("calls", &lock(&self.calls).len())
            .finish()
    }
}

impl<S: fmt::Display> fmt::Display for Recording<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Recording({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<S: Storage> Storage for Recording<S> {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let result = self.inner.read(path).await;
        self.record(Op::Read, path, None, None, &result);
        result
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let result = self.inner.stat(path).await;
        self.record(Op::Stat, path, None, None, &result);
        result
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        let result = self.inner.write(path, contents, mode.clone()).await;
        self.record(Op::Write, path, None, Some(mode), &result);
        result
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let result = self.inner.delete(path).await;
        self.record(Op::Delete, path, None, None, &result);
        result
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let result = self.inner.list(dir).await;
        self.record(Op::List, dir, None, None, &result);
        result
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let result = self.inner.rename(from, to).await;
        self.record(Op::Rename, from, Some(to), None, &result);
        result
    }

    async fn file_count(&self) -> Result<usize> {
        let result = self.inner.file_count().await;
        self.record(Op::FileCount, &MemoryPath::root(), None, None, &result);
        result
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        let result = self.inner.create_within(path, contents, max_files).await;
        self.record(Op::CreateWithin, path, None, None, &result);
        result
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let result = self.inner.search(query).await;
        self.record(Op::Search, query.under(), None, None, &result);
        result
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<crate::Listing> {
        self.inner.listing(dir).await
    }

    /// Forwarded as it is (no fault is injected into it, nothing recorded).
    async fn set_modified(
        &self,
        path: &MemoryPath,
        modified: std::time::SystemTime,
    ) -> Result<bool> {
        self.inner.set_modified(path, modified).await
    }

    async fn history(&self, path: &MemoryPath) -> Result<Vec<crate::history::Revision>> {
        self.inner.history(path).await
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.inner.read_revision(path, number).await
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.inner.write_restored(path, number, contents).await
    }

    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: crate::history::Redaction,
    ) -> Result<u64> {
        self.inner.redact_revisions(path, which).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::InMemoryStorage;

    fn p(raw: &str) -> MemoryPath {
        MemoryPath::parse(raw).unwrap()
    }

    #[tokio::test]
    async fn recording_records_calls_in_order() {
        let store = Recording::new(InMemoryStorage::new());
        let a = p("/memories/a.md");
        let b = p("/memories/d/b.md");
        store
            .write(&a, b"x".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store
            .write(&a, b"y".to_vec(), WriteMode::Create)
            .await
            .unwrap_err();
        store.rename(&a, &b).await.unwrap();
        store.stat(&b).await.unwrap();
        store.list(&MemoryPath::root()).await.unwrap();
        store.delete(&b).await.unwrap();
        store.read(&b).await.unwrap_err();
        let calls = store.take();
        let rendered: Vec<String> = calls.iter().map(ToString::to_string).collect();
        assert_eq!(
            rendered,
            [
                "write /memories/a.md (Create)",
                "write /memories/a.md (Create) [error]",
                "rename /memories/a.md -> /memories/d/b.md",
                "stat /memories/d/b.md",
                "list /memories",
                "delete /memories/d/b.md",
                "read /memories/d/b.md [error]",
            ]
        );
        assert!(store.calls().is_empty(), "take() starts a new record");
        assert_eq!(store.to_string(), "Recording(InMemory)");
    }

    #[tokio::test]
    async fn recording_passes_the_suite() {
        let store = Arc::new(Recording::new(InMemoryStorage::new()));
        crate::conformance::storage::run_all(store.clone()).await;
        let ops = store.ops();
        for op in Op::ALL {
            assert!(ops.contains(&op), "the suite calls {op}");
        }
    }
}
