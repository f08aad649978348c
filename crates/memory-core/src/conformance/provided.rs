//! [`ProvidedDefaults`]: a wrapper that forwards the six base methods only, so that every
//! provided method of [`Storage`] runs, over any store.

use std::fmt;

use async_trait::async_trait;

use crate::{Entry, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode};

/// Forwards `read`, `stat`, `write`, `delete`, `list` and `rename` to the inner store and
/// nothing else, so [`Storage`]'s provided `file_count`, `create_within`, `search`,
/// `capabilities`, `listing` and `set_modified` run over them, as they do for a backend that
/// overrides none of them. The suite's tests of those defaults run on it; over a
/// [`Faulty`](super::faults::Faulty) with hooks, it also shows how a default behaves when the
/// base methods pause or misbehave.
///
/// ```
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// use memory_core::conformance::ProvidedDefaults;
/// use memory_core::{InMemoryStorage, MemoryPath, Storage};
///
/// let store = ProvidedDefaults::new(InMemoryStorage::new());
/// let path = MemoryPath::parse("/memories/a.md").unwrap();
/// store.create_within(&path, b"x".to_vec(), 1).await.unwrap(); // counts by listing, then writes
/// assert_eq!(store.file_count().await.unwrap(), 1);
/// assert_eq!(store.to_string(), "ProvidedDefaults(InMemory)");
/// # });
/// ```
#[derive(Debug, Default)]
pub struct ProvidedDefaults<S> {
    inner: S,
}

impl<S> ProvidedDefaults<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        ProvidedDefaults { inner }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: fmt::Display> fmt::Display for ProvidedDefaults<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProvidedDefaults({})", self.inner)
    }
}

// Deliberately not `#[deny(clippy::missing_trait_methods)]`: leaving the provided methods to
// the trait is this wrapper's purpose.
#[async_trait]
impl<S: Storage> Storage for ProvidedDefaults<S> {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        self.inner.read(path).await
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        self.inner.stat(path).await
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        self.inner.write(path, contents, mode).await
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.inner.delete(path).await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        self.inner.list(dir).await
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.inner.rename(from, to).await
    }
}
