//! [`ReadOnly`]: a store whose content can be read but never changed.

use std::fmt;
use std::time::SystemTime;

use async_trait::async_trait;

use crate::history::{Redaction, Revision};

use crate::search::{SearchHit, SearchQuery};
use crate::{
    Capabilities, Entry, Error, FileMeta, Listing, MemoryPath, Result, Storage, StoredFile,
    Version, WriteMode,
};

/// A store whose content can be read but never changed.
///
/// Reads (`read`, `stat`, `list`, `file_count`) go to the inner store. Every change (`write`,
/// `delete`, `rename`, `create_within`) is refused, before it reaches the inner store, with
/// [`Error::Refused`] naming the path that was to change and one fixed reason:
/// `{root} is read-only`, where `root` is `/memories` ([`ReadOnly::new`]) or the folder the
/// store is seen at ([`ReadOnly::at`], e.g. a mount). [`MemoryTool`](crate::MemoryTool) shows
/// it to the model as `Error: Cannot change {path}: {root} is read-only`.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use memory_core::{InMemoryStorage, MemoryHandler, MemoryTool, ReadOnly};
/// use serde_json::json;
///
/// let tool = MemoryTool::new(ReadOnly::new(InMemoryStorage::new()));
/// let out = tool
///     .execute(&json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
///     .await;
/// assert_eq!(out.text(), Some("Error: Cannot change /memories/a.md: /memories is read-only"));
/// assert_eq!(tool.storage().to_string(), "ReadOnly(InMemory)");
/// # });
/// ```
#[derive(Debug)]
pub struct ReadOnly<S> {
    inner: S,
    root: MemoryPath,
}

impl<S> ReadOnly<S> {
    /// `inner`, read-only; refusals name `/memories` as the read-only folder.
    pub fn new(inner: S) -> Self {
        ReadOnly {
            inner,
            root: MemoryPath::root(),
        }
    }

    /// `inner`, read-only, as seen at `root` (a mount's folder): refusals name `root` as the
    /// read-only folder. The paths of the refusals are those the wrapper was called with.
    pub fn at(inner: S, root: MemoryPath) -> Self {
        ReadOnly { inner, root }
    }

    /// The folder refusals name.
    pub fn root(&self) -> &MemoryPath {
        &self.root
    }

    /// The refusal this wrapper answers a change of `path` with.
    pub fn refusal(&self, path: &MemoryPath) -> Error {
        read_only_refusal(&self.root, path)
    }

    /// The inner store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the inner store.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

/// The one read-only refusal: a change of `path` refused because `root` is read-only
/// (`Error::Refused` with the reason `{root} is read-only`).
///
/// ```
/// use memory_core::{read_only_refusal, MemoryPath};
/// let root = MemoryPath::parse("/memories/handbook").unwrap();
/// let path = MemoryPath::parse("/memories/handbook/a.md").unwrap();
/// assert_eq!(
///     read_only_refusal(&root, &path).to_string(),
///     "cannot change /memories/handbook/a.md: /memories/handbook is read-only"
/// );
/// ```
pub fn read_only_refusal(root: &MemoryPath, path: &MemoryPath) -> Error {
    Error::Refused {
        path: path.clone(),
        reason: format!("{root} is read-only"),
    }
}

impl<S: fmt::Display> fmt::Display for ReadOnly<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReadOnly({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<S: Storage> Storage for ReadOnly<S> {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        self.inner.read(path).await
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        self.inner.stat(path).await
    }

    async fn write(
        &self,
        path: &MemoryPath,
        _contents: Vec<u8>,
        _mode: WriteMode,
    ) -> Result<Version> {
        Err(self.refusal(path))
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        Err(self.refusal(path))
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        self.inner.list(dir).await
    }

    async fn rename(&self, from: &MemoryPath, _to: &MemoryPath) -> Result<()> {
        Err(self.refusal(from))
    }

    async fn file_count(&self) -> Result<usize> {
        self.inner.file_count().await
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        _contents: Vec<u8>,
        _max_files: usize,
    ) -> Result<Version> {
        Err(self.refusal(path))
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        self.inner.search(query).await
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<Listing> {
        self.inner.listing(dir).await
    }

    async fn set_modified(&self, path: &MemoryPath, _modified: SystemTime) -> Result<bool> {
        Err(self.refusal(path))
    }

    async fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.inner.history(path).await
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.inner.read_revision(path, number).await
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        _number: u64,
        _contents: Vec<u8>,
    ) -> Result<Version> {
        Err(self.refusal(path))
    }

    async fn redact_revisions(&self, path: &MemoryPath, _which: Redaction) -> Result<u64> {
        Err(self.refusal(path))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::conformance::faults::{Faulty, Op, Recording};
    use crate::{InMemoryStorage, MemoryHandler, MemoryTool, Prefixed};

    fn p(raw: &str) -> MemoryPath {
        MemoryPath::parse(raw).unwrap()
    }

    async fn seeded() -> Arc<Recording<InMemoryStorage>> {
        let store = Arc::new(Recording::new(InMemoryStorage::new()));
        store
            .write(
                &p("/memories/a.md"),
                b"one\ntwo\n".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        store
            .write(&p("/memories/d/b.md"), b"b".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store.take();
        store
    }

    #[tokio::test]
    async fn read_only_refuses_every_change_before_the_inner_store() {
        let inner = seeded().await;
        let tool = MemoryTool::new(ReadOnly::at(inner.clone(), p("/memories/handbook")));
        let cases = [
            (
                json!({"command": "create", "path": "/memories/new.md", "file_text": "x"}),
                "/memories/new.md",
            ),
            (
                json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}),
                "/memories/a.md",
            ),
            (
                json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "1"}),
                "/memories/a.md",
            ),
            (
                json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "top"}),
                "/memories/a.md",
            ),
            (
                json!({"command": "delete", "path": "/memories/d"}),
                "/memories/d",
            ),
            (
                json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/c.md"}),
                "/memories/a.md",
            ),
        ];
        for (input, shown) in cases {
            let out = tool.execute(&input).await;
            assert!(out.is_error, "{input}");
            assert_eq!(
                out.text().unwrap(),
                format!("Error: Cannot change {shown}: /memories/handbook is read-only"),
                "{input}"
            );
        }
        assert!(
            inner.ops().iter().all(|op| !op.is_mutation()),
            "no change reached the inner store: {:?}",
            inner.ops()
        );
        assert_eq!(inner.inner().file_count().await.unwrap(), 2);
        assert_eq!(
            inner
                .inner()
                .read(&p("/memories/a.md"))
                .await
                .unwrap()
                .contents,
            b"one\ntwo\n"
        );
        let out = tool
            .execute(&json!({"command": "view", "path": "/memories/a.md"}))
            .await;
        assert!(!out.is_error);
        assert_eq!(tool.storage().to_string(), "ReadOnly(Recording(InMemory))");
        let e = tool
            .storage()
            .write(&p("/memories/x"), Vec::new(), WriteMode::Overwrite)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::Refused { path, reason } if path.as_str() == "/memories/x" && reason == "/memories/handbook is read-only"),
            "{e:?}"
        );
        assert_eq!(tool.storage().capabilities(), Capabilities::FULL);
    }

    #[tokio::test]
    async fn read_only_passes_the_refusal_check() {
        let inner = seeded().await;
        let store = ReadOnly::new(inner.clone());
        crate::conformance::storage::refuses_every_change(&store, &p("/memories/a.md")).await;
        assert!(inner.ops().iter().all(|op| !op.is_mutation()));
    }

    #[tokio::test]
    #[should_panic(expected = "write(Create) of a new file: expected an error")]
    async fn the_refusal_check_catches_a_store_that_writes() {
        let inner = seeded().await;
        crate::conformance::storage::refuses_every_change(&*inner, &p("/memories/a.md")).await;
    }

    #[tokio::test]
    async fn read_only_reads_through() {
        let inner = seeded().await;
        let store = ReadOnly::new(inner.clone());
        assert_eq!(
            store.read(&p("/memories/a.md")).await.unwrap().contents,
            b"one\ntwo\n"
        );
        assert!(matches!(
            store.stat(&p("/memories/d")).await.unwrap(),
            Some(Entry::Directory)
        ));
        assert_eq!(store.list(&MemoryPath::root()).await.unwrap().len(), 2);
        assert_eq!(store.file_count().await.unwrap(), 2);
        assert_eq!(inner.ops(), [Op::Read, Op::Stat, Op::List, Op::FileCount]);
        assert_eq!(store.root(), &MemoryPath::root());
    }

    /// Reads through a `ReadOnly`, writes beside it to the same inner store: the suite then
    /// checks every read-side method of `ReadOnly` (and that refusals are the only change).
    /// Each change is first refused by the read-only side, then made in its inner store.
    fn reads_through_read_only() -> Faulty<ReadOnly<Arc<InMemoryStorage>>> {
        fn refused<T: fmt::Debug>(result: Result<T>) {
            assert!(matches!(result, Err(Error::Refused { .. })), "{result:?}");
        }
        Faulty::new(ReadOnly::new(Arc::new(InMemoryStorage::new())))
            .on_write(|reads, path, contents, mode| {
                Box::pin(async move {
                    refused(reads.write(path, contents.clone(), mode.clone()).await);
                    reads.inner().write(path, contents, mode).await
                })
            })
            .on_delete(|reads, path| {
                Box::pin(async move {
                    refused(reads.delete(path).await);
                    reads.inner().delete(path).await
                })
            })
            .on_rename(|reads, from, to| {
                Box::pin(async move {
                    refused(reads.rename(from, to).await);
                    reads.inner().rename(from, to).await
                })
            })
            .on_create_within(|reads, path, contents, max_files| {
                Box::pin(async move {
                    refused(reads.create_within(path, contents.clone(), max_files).await);
                    reads.inner().create_within(path, contents, max_files).await
                })
            })
            .on_set_modified(|reads, path, modified| {
                Box::pin(async move {
                    refused(reads.set_modified(path, modified).await);
                    reads.inner().set_modified(path, modified).await
                })
            })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn read_only_conforms_on_the_read_side() {
        let store = Arc::new(reads_through_read_only());
        crate::conformance::run_all(store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn read_only_over_prefixed_reads_conform() {
        // The read-only stack still passes the read checks of the golden view lines.
        let view = ReadOnly::new(Prefixed::new(InMemoryStorage::new(), p("/memories/x")));
        assert_eq!(
            view.to_string(),
            "ReadOnly(Prefixed(/memories/x, InMemory))"
        );
        assert!(view.list(&MemoryPath::root()).await.unwrap().is_empty());
    }
}
