//! [`Prefixed`]: the sub-tree of an inner store, seen as a whole store.

use std::fmt;
use std::time::SystemTime;

use async_lock::Mutex;
use async_trait::async_trait;

use crate::history::{Redaction, Revision};

use crate::search::{SearchHit, SearchQuery};
use crate::{
    Capabilities, Entry, Error, FileMeta, Listing, MemoryPath, Result, Storage, StoredFile,
    Version, WriteMode,
};

/// The sub-tree `prefix` of an inner store, seen as a whole store: `/memories/x` of this
/// store is `prefix/x` of the inner one (in the manner of object_store's `PrefixStore`).
///
/// - Errors of the inner store name the paths this store was called with.
/// - `/memories` of this store always exists, cannot be read or written, and deleting it
///   deletes every file below `prefix` (only those).
/// - [`capabilities`](Storage::capabilities) are the inner store's with `prefix`'s depth and
///   length taken off the path limits; a path that would exceed the inner store's limits once
///   prefixed is [`Error::Refused`] ("paths here may be at most N bytes and M levels deep").
/// - [`file_count`](Storage::file_count) counts the files below `prefix`, and
///   [`create_within`](Storage::create_within) limits that count. It is exact for every task
///   that goes through this one `Prefixed` (creates are checked and made one at a time); other
///   writers of the same sub-tree (another process, another wrapper) can race it. With the
///   root as prefix, both go straight to the inner store's exact methods.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use memory_core::{InMemoryStorage, MemoryPath, Prefixed, Storage, WriteMode};
///
/// let shared = Arc::new(InMemoryStorage::new());
/// let alice = Prefixed::new(shared.clone(), MemoryPath::parse("/memories/users/alice").unwrap());
/// let a = MemoryPath::parse("/memories/a.md").unwrap();
/// alice.write(&a, b"hi".to_vec(), WriteMode::Create).await.unwrap();
/// let inner = MemoryPath::parse("/memories/users/alice/a.md").unwrap();
/// assert_eq!(shared.read(&inner).await.unwrap().contents, b"hi");
/// assert_eq!(alice.to_string(), "Prefixed(/memories/users/alice, InMemory)");
/// # });
/// ```
#[derive(Debug)]
pub struct Prefixed<S> {
    inner: S,
    prefix: MemoryPath,
    /// Held while a `create_within` counts and creates, so creates through this wrapper
    /// take turns.
    creates: Mutex<()>,
}

impl<S> Prefixed<S> {
    /// The sub-tree `prefix` of `inner` as a store of its own.
    pub fn new(inner: S, prefix: MemoryPath) -> Self {
        Prefixed {
            inner,
            prefix,
            creates: Mutex::new(()),
        }
    }

    /// Where this store lies in the inner one.
    pub fn prefix(&self) -> &MemoryPath {
        &self.prefix
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

impl<S: Storage> Prefixed<S> {
    /// A path of this store as the inner store's path.
    fn down(&self, path: &MemoryPath) -> Result<MemoryPath> {
        path.rebase(&MemoryPath::root(), &self.prefix)
            .ok_or_else(|| {
                let caps = self.capabilities();
                Error::Refused {
                    path: path.clone(),
                    reason: format!(
                        "paths here may be at most {} bytes and {} levels deep",
                        caps.max_path_bytes, caps.max_depth
                    ),
                }
            })
    }

    /// An inner path as this store's path, or `None` outside `prefix`.
    fn up(&self, path: &MemoryPath) -> Option<MemoryPath> {
        path.rebase(&self.prefix, &MemoryPath::root())
    }

    /// An error of the inner store with this store's paths. One that names a path outside
    /// `prefix` (a file of the inner store above the prefix) cannot be shown in this store's
    /// terms and becomes a backend failure, for the log.
    fn up_error(&self, e: Error) -> Error {
        let mut outside = None;
        if let Error::ParentIsFile { parent, .. } = &e
            && *parent == self.prefix
        {
            // A file exactly at the prefix is not part of this store.
            outside = Some(parent.clone());
        }
        let mapped = e.map_paths(|p| match self.up(&p) {
            Some(up) => up,
            None => {
                outside.get_or_insert(p);
                MemoryPath::root()
            }
        });
        match outside {
            None => mapped,
            Some(p) => Error::backend(
                "Prefixed",
                format!(
                    "{} of {} lies outside {}: {mapped}",
                    p, self.inner, self.prefix
                ),
            ),
        }
    }

    fn up_meta(&self, mut meta: FileMeta) -> Result<FileMeta> {
        meta.path = self.up(&meta.path).ok_or_else(|| {
            Error::backend(
                "Prefixed",
                format!(
                    "{} listed {} outside {}",
                    self.inner, meta.path, self.prefix
                ),
            )
        })?;
        Ok(meta)
    }
}

impl<S: fmt::Display> fmt::Display for Prefixed<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Prefixed({}, {})", self.prefix, self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<S: Storage> Storage for Prefixed<S> {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        // The root, or a path too long to exist in the inner store.
        let Some(inner) = (!path.is_root()).then(|| self.down(path).ok()).flatten() else {
            return Err(Error::NotFound { path: path.clone() });
        };
        self.inner.read(&inner).await.map_err(|e| self.up_error(e))
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        if path.is_root() {
            return Ok(Some(Entry::Directory));
        }
        let Ok(inner) = self.down(path) else {
            // Too long to exist in the inner store.
            return Ok(None);
        };
        match self.inner.stat(&inner).await {
            Ok(Some(Entry::File(meta))) => Ok(Some(Entry::File(self.up_meta(meta)?))),
            Ok(other) => Ok(other),
            Err(e) => Err(self.up_error(e)),
        }
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        if path.is_root() {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        let inner = self.down(path)?;
        self.inner
            .write(&inner, contents, mode)
            .await
            .map_err(|e| self.up_error(e))
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let Ok(inner) = self.down(path) else {
            // Too long to exist in the inner store.
            return Err(Error::NotFound { path: path.clone() });
        };
        if path.is_root() {
            // Every file below the prefix; the prefix itself is never a file of this store.
            return match self.inner.stat(&inner).await {
                Ok(Some(Entry::Directory)) => match self.inner.delete(&inner).await {
                    Ok(()) | Err(Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(self.up_error(e)),
                },
                Ok(_) => Ok(()),
                Err(e) => Err(self.up_error(e)),
            };
        }
        self.inner
            .delete(&inner)
            .await
            .map_err(|e| self.up_error(e))
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        Ok(self.listing(dir).await?.entries)
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let Ok(inner_from) = self.down(from) else {
            return Err(Error::NotFound { path: from.clone() });
        };
        let inner_to = self.down(to)?;
        self.inner
            .rename(&inner_from, &inner_to)
            .await
            .map_err(|e| self.up_error(e))
    }

    async fn file_count(&self) -> Result<usize> {
        if self.prefix.is_root() {
            return self.inner.file_count().await;
        }
        Ok(self.list(&MemoryPath::root()).await?.len())
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        if path.is_root() {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        let inner = self.down(path)?;
        if self.prefix.is_root() {
            return self
                .inner
                .create_within(&inner, contents, max_files)
                .await
                .map_err(|e| self.up_error(e));
        }
        // Count and create one at a time, so that creates through this wrapper never race
        // each other past the limit.
        let _turn = self.creates.lock().await;
        if self.file_count().await? >= max_files {
            return Err(match self.stat(path).await? {
                Some(_) => Error::AlreadyExists { path: path.clone() },
                None => Error::StoreFull { max_files },
            });
        }
        self.inner
            .write(&inner, contents, WriteMode::Create)
            .await
            .map_err(|e| self.up_error(e))
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let Ok(inner_under) = self.down(query.under()) else {
            return Ok(Vec::new());
        };
        let hits = self
            .inner
            .search(&query.clone().with_under(inner_under))
            .await
            .map_err(|e| self.up_error(e))?;
        hits.into_iter()
            .map(|mut hit| {
                hit.path = self.up(&hit.path).ok_or_else(|| {
                    Error::backend(
                        "Prefixed",
                        format!("{} found {} outside {}", self.inner, hit.path, self.prefix),
                    )
                })?;
                Ok(hit)
            })
            .collect()
    }

    fn capabilities(&self) -> Capabilities {
        let inner = self.inner.capabilities();
        let depth = self.prefix.segments().count();
        let bytes = self.prefix.as_str().len() - MemoryPath::root().as_str().len();
        Capabilities {
            max_depth: inner.max_depth.saturating_sub(depth),
            max_path_bytes: inner.max_path_bytes.saturating_sub(bytes),
            ..inner
        }
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<Listing> {
        let Ok(inner) = self.down(dir) else {
            return Ok(Listing::default());
        };
        let listing = self
            .inner
            .listing(&inner)
            .await
            .map_err(|e| self.up_error(e))?;
        Ok(Listing {
            entries: (listing.entries.into_iter())
                .map(|meta| self.up_meta(meta))
                .collect::<Result<_>>()?,
            skipped: listing.skipped,
        })
    }

    async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        let Some(inner) = (!path.is_root()).then(|| self.down(path).ok()).flatten() else {
            return Err(Error::NotFound { path: path.clone() });
        };
        self.inner
            .set_modified(&inner, modified)
            .await
            .map_err(|e| self.up_error(e))
    }

    async fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        let Ok(inner) = self.down(path) else {
            return Ok(Vec::new());
        };
        let revisions = (self.inner.history(&inner).await).map_err(|e| self.up_error(e))?;
        // A revision made outside the prefix (a file moved in by a rename below this
        // wrapper) is shown at the path asked about, and without the path it came from.
        Ok(revisions
            .into_iter()
            .map(|mut revision| {
                revision.path = self.up(&revision.path).unwrap_or_else(|| path.clone());
                revision.old_path = revision.old_path.and_then(|old| self.up(&old));
                revision
            })
            .collect())
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        let Ok(inner) = self.down(path) else {
            return Err(Error::NoRevision {
                path: path.clone(),
                number,
            });
        };
        (self.inner.read_revision(&inner, number).await).map_err(|e| self.up_error(e))
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        if path.is_root() {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        let inner = self.down(path)?;
        (self.inner.write_restored(&inner, number, contents).await).map_err(|e| self.up_error(e))
    }

    async fn redact_revisions(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        let inner = self.down(path)?;
        (self.inner.redact_revisions(&inner, which).await).map_err(|e| self.up_error(e))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::InMemoryStorage;
    use crate::conformance::faults::Recording;

    fn p(raw: &str) -> MemoryPath {
        MemoryPath::parse(raw).unwrap()
    }

    fn alice(inner: Arc<Recording<InMemoryStorage>>) -> Prefixed<Arc<Recording<InMemoryStorage>>> {
        Prefixed::new(inner, p("/memories/users/alice"))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn prefixed_conforms() {
        let inner = Arc::new(Recording::new(InMemoryStorage::new()));
        // A neighbour outside the prefix that the view must never see or touch.
        inner
            .write(
                &p("/memories/users/bob/keep.md"),
                b"bob".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        let view = Arc::new(alice(inner.clone()));
        crate::conformance::run_all(view.clone()).await;
        let left = inner.inner().list(&MemoryPath::root()).await.unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].path.as_str(), "/memories/users/bob/keep.md");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn prefixed_at_root_conforms() {
        let view = Arc::new(Prefixed::new(InMemoryStorage::new(), MemoryPath::root()));
        crate::conformance::run_all(view).await;
    }

    #[tokio::test]
    async fn prefixed_maps_paths_both_ways() {
        let inner = Arc::new(Recording::new(InMemoryStorage::new()));
        let view = alice(inner.clone());
        view.write(&p("/memories/notes/a.md"), b"a".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        assert_eq!(
            inner
                .inner()
                .read(&p("/memories/users/alice/notes/a.md"))
                .await
                .unwrap()
                .contents,
            b"a"
        );
        let listed = view.list(&MemoryPath::root()).await.unwrap();
        assert_eq!(listed[0].path.as_str(), "/memories/notes/a.md");
        let e = view.read(&p("/memories/missing")).await.unwrap_err();
        assert!(
            matches!(&e, Error::NotFound { path } if path.as_str() == "/memories/missing"),
            "{e:?}"
        );
        let e = view
            .write(&p("/memories/notes/a.md/x"), Vec::new(), WriteMode::Create)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::ParentIsFile { path, parent } if path.as_str() == "/memories/notes/a.md/x" && parent.as_str() == "/memories/notes/a.md"),
            "{e:?}"
        );
        let e = view
            .rename(&p("/memories/notes"), &p("/memories/notes/deeper"))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::RenameIntoItself { from, to } if from.as_str() == "/memories/notes" && to.as_str() == "/memories/notes/deeper"),
            "{e:?}"
        );
        // What the inner store was asked: only paths below the prefix.
        for call in inner.calls() {
            assert!(call.path.starts_with(&p("/memories/users/alice")), "{call}");
        }
        // Deleting the view's root deletes only the sub-tree.
        inner
            .inner()
            .write(
                &p("/memories/users/bob.md"),
                b"b".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        view.delete(&MemoryPath::root()).await.unwrap();
        view.delete(&MemoryPath::root()).await.unwrap();
        let left = inner.inner().list(&MemoryPath::root()).await.unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].path.as_str(), "/memories/users/bob.md");
    }

    #[tokio::test]
    async fn prefixed_root_is_a_directory_never_a_file() {
        let inner = Arc::new(InMemoryStorage::new());
        // A file exactly at the prefix is not part of the view.
        inner
            .write(
                &p("/memories/users/alice"),
                b"x".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        let view = Prefixed::new(inner.clone(), p("/memories/users/alice"));
        assert!(matches!(
            view.stat(&MemoryPath::root()).await.unwrap(),
            Some(Entry::Directory)
        ));
        assert!(matches!(
            view.read(&MemoryPath::root()).await.unwrap_err(),
            Error::NotFound { .. }
        ));
        assert!(matches!(
            view.write(&MemoryPath::root(), Vec::new(), WriteMode::Overwrite)
                .await
                .unwrap_err(),
            Error::AlreadyExists { .. }
        ));
        view.delete(&MemoryPath::root()).await.unwrap();
        assert_eq!(
            inner.file_count().await.unwrap(),
            1,
            "the file at the prefix stays"
        );
        // Writing below it: the inner store's ancestor file lies outside the view, so the
        // error is a failure for the log, not a path the model could act on.
        let e = view
            .write(&p("/memories/a.md"), Vec::new(), WriteMode::Create)
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Backend {
                    backend: "Prefixed",
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn prefixed_path_limits_shrink_by_the_prefix() {
        let prefix = p("/memories/users/alice");
        let view = Prefixed::new(InMemoryStorage::new(), prefix);
        let caps = view.capabilities();
        assert_eq!(caps.max_depth, crate::MAX_SEGMENTS - 2);
        assert_eq!(
            caps.max_path_bytes,
            crate::MAX_PATH_BYTES - "/users/alice".len()
        );
        let deep = (0..caps.max_depth + 1)
            .map(|i| format!("d{i}"))
            .collect::<Vec<_>>()
            .join("/");
        let path = p(&format!("/memories/{deep}"));
        let e = view
            .write(&path, Vec::new(), WriteMode::Create)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::Refused { path: got, reason } if *got == path && reason.contains("levels deep")),
            "{e:?}"
        );
        assert_eq!(view.stat(&path).await.unwrap(), None);
        assert!(matches!(
            view.read(&path).await.unwrap_err(),
            Error::NotFound { .. }
        ));
        assert!(matches!(
            view.delete(&path).await.unwrap_err(),
            Error::NotFound { .. }
        ));
        assert!(view.list(&path).await.unwrap().is_empty());
        let e = view.rename(&path, &p("/memories/x")).await.unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
        view.write(&p("/memories/x"), Vec::new(), WriteMode::Create)
            .await
            .unwrap();
        let e = view.rename(&p("/memories/x"), &path).await.unwrap_err();
        assert!(matches!(e, Error::Refused { .. }), "{e:?}");
        let e = view.create_within(&path, Vec::new(), 10).await.unwrap_err();
        assert!(matches!(e, Error::Refused { .. }), "{e:?}");
    }

    #[tokio::test]
    async fn prefixed_counts_only_its_files() {
        let inner = Arc::new(InMemoryStorage::new());
        inner
            .write(&p("/memories/other.md"), b"o".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        let view = Prefixed::new(inner.clone(), p("/memories/mine"));
        view.create_within(&p("/memories/a.md"), b"a".to_vec(), 1)
            .await
            .unwrap();
        assert_eq!(view.file_count().await.unwrap(), 1);
        assert_eq!(inner.file_count().await.unwrap(), 2);
        let e = view
            .create_within(&p("/memories/b.md"), b"b".to_vec(), 1)
            .await
            .unwrap_err();
        assert!(matches!(e, Error::StoreFull { max_files: 1 }), "{e:?}");
    }
}
