//! [`Indexed`]: a store whose [`Storage::search`] is answered from a side index.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use futures_util::stream::{self, StreamExt};
use memory_core::search::{Ranker, SearchHit, SearchQuery, is_searchable, searchable_text};
use memory_core::{
    Capabilities, Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version,
    WriteMode,
};

use crate::error::IndexError;
use crate::index::{Change, Index, IndexLocation, Row};

/// How an [`Indexed`] keeps its side index.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IndexOptions {
    /// Where the index lives: a file ([`IndexLocation::File`], e.g.
    /// [`IndexLocation::beside`] a folder store's `memories/`) or memory only.
    pub location: IndexLocation,
    /// Names the store the index belongs to. An index file that records another identity (a
    /// cache file shared by mistake, a store moved) is rebuilt. Default: empty (the location
    /// alone names the store, as it does for an index beside `memories/`).
    pub identity: String,
    /// A file whose listed modification time is this close to (or after) the moment the
    /// index last confirmed it is read again on the next search, even with its size and time
    /// unchanged: a clock that ticks coarsely (an S3 `LastModified` counts whole seconds)
    /// cannot show a second change within one tick. Default 2 seconds.
    pub racy_window: Duration,
    /// How many changed files one search reads at once from the store (S3 round trips).
    /// Default 16.
    pub read_concurrency: usize,
    /// Hybrid ranking with this embedding model (feature `semantic`).
    #[cfg(feature = "semantic")]
    pub semantic: Option<std::sync::Arc<crate::semantic::Model>>,
    /// Hybrid ranking with the model in this folder, read when the index opens (the first
    /// search), so a program that never searches never reads it (feature `semantic`).
    #[cfg(feature = "semantic")]
    pub semantic_folder: Option<std::path::PathBuf>,
}

impl IndexOptions {
    /// The defaults, with the index at `location`.
    pub fn new(location: IndexLocation) -> Self {
        IndexOptions {
            location,
            identity: String::new(),
            racy_window: Duration::from_secs(2),
            read_concurrency: 16,
            #[cfg(feature = "semantic")]
            semantic: None,
            #[cfg(feature = "semantic")]
            semantic_folder: None,
        }
    }

    /// Sets [`identity`](Self::identity).
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = identity.into();
        self
    }

    /// Sets [`racy_window`](Self::racy_window).
    pub fn racy_window(mut self, window: Duration) -> Self {
        self.racy_window = window;
        self
    }

    /// Sets [`read_concurrency`](Self::read_concurrency) (at least 1).
    pub fn read_concurrency(mut self, n: usize) -> Self {
        self.read_concurrency = n.max(1);
        self
    }

    /// Ranks hits by fusing the keyword list with the nearest files by `model`'s embeddings
    /// (feature `semantic`).
    #[cfg(feature = "semantic")]
    pub fn semantic(mut self, model: std::sync::Arc<crate::semantic::Model>) -> Self {
        self.semantic = Some(model);
        self
    }

    /// Ranks as [`semantic`](Self::semantic) does, with the model in `folder`, read on the
    /// first search (feature `semantic`).
    #[cfg(feature = "semantic")]
    pub fn semantic_folder(mut self, folder: impl Into<std::path::PathBuf>) -> Self {
        self.semantic_folder = Some(folder.into());
        self
    }
}

/// What one reconciliation of the index with the store did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refresh {
    /// Files the listing showed (searchable ones, below the folder searched).
    pub listed: usize,
    /// Files read from the store (new, changed, or possibly changed within one clock tick).
    pub read: usize,
    /// Files whose text was (re)indexed.
    pub indexed: usize,
    /// Rows dropped: files deleted or moved away behind the index's back, or read as gone.
    pub removed: usize,
}

/// A store whose [`Storage::search`] is answered from a side index, for stores without an
/// index of their own (a folder, an S3 bucket).
///
/// The index is an SQLite FTS5 database ([`IndexLocation`]): a file outside `memories/`, or
/// memory only. It is a cache of the store, never the truth:
///
/// - **Lazy**: nothing is opened until the first search, so a program that never searches
///   (`memory exec`) pays nothing but an atomic load per write.
/// - **Reconciled before every search** against one listing of the folder searched: a file
///   whose size or modification time changed, that is new, or that was written through this
///   wrapper since the last search is read again; a file the listing no longer shows is
///   dropped. So a file written by hand or by another process is found, and a deleted one
///   gone, on the next search. Files unchanged since are not read.
/// - **Shared safely**: the file is in WAL mode with a busy timeout, so processes sharing it
///   take turns; an index that is unreadable, of another schema version or of another store
///   ([`IndexOptions::identity`]) is rebuilt.
///
/// Every other method forwards to the inner store unchanged.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
/// use memory_core::search::SearchQuery;
/// use memory_search::{IndexLocation, IndexOptions, Indexed};
///
/// let store = Indexed::new(InMemoryStorage::new(), IndexOptions::new(IndexLocation::Memory));
/// let path = MemoryPath::parse("/memories/ops/deploy.md").unwrap();
/// store.write(&path, b"Roll back with make rollback.".to_vec(), WriteMode::Create).await.unwrap();
/// let hits = store.search(&SearchQuery::new("rollback").unwrap()).await.unwrap();
/// assert_eq!(hits[0].path, path);
/// assert_eq!(store.to_string(), "Indexed(InMemory)");
/// # });
/// ```
pub struct Indexed<S> {
    inner: S,
    options: IndexOptions,
    /// The open index; `None` until the first search (or after damage was found).
    index: tokio::sync::Mutex<Option<Index>>,
    /// Whether the index was opened in this process (writes record their paths only then).
    opened: AtomicBool,
    /// Paths written through this wrapper since the index opened, read again on the next
    /// search whatever the listing says.
    dirty: Mutex<HashSet<String>>,
    /// What the last reconciliation did.
    last: Mutex<Refresh>,
    /// The embedding model, once read (feature `semantic`).
    #[cfg(feature = "semantic")]
    model: std::sync::OnceLock<Option<std::sync::Arc<crate::semantic::Model>>>,
}

impl<S: Storage> Indexed<S> {
    /// Wraps `inner`; opens nothing yet.
    pub fn new(inner: S, options: IndexOptions) -> Self {
        Indexed {
            inner,
            options,
            index: tokio::sync::Mutex::new(None),
            opened: AtomicBool::new(false),
            dirty: Mutex::new(HashSet::new()),
            last: Mutex::new(Refresh::default()),
            #[cfg(feature = "semantic")]
            model: std::sync::OnceLock::new(),
        }
    }

    /// The embedding model: the one given, or the one read from the folder given.
    #[cfg(feature = "semantic")]
    fn model(&self) -> Result<Option<std::sync::Arc<crate::semantic::Model>>> {
        if let Some(model) = self.model.get() {
            return Ok(model.clone());
        }
        let model = match (&self.options.semantic, &self.options.semantic_folder) {
            (Some(model), _) => Some(model.clone()),
            (None, Some(folder)) => Some(std::sync::Arc::new(
                crate::semantic::Model::load(folder)
                    .map_err(|e| Error::backend(crate::error::BACKEND, e))?,
            )),
            (None, None) => None,
        };
        Ok(self.model.get_or_init(|| model).clone())
    }

    /// The store underneath.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The store underneath, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// How the index is kept.
    pub fn options(&self) -> &IndexOptions {
        &self.options
    }

    /// What the most recent reconciliation (before a search, or [`refresh`](Self::refresh))
    /// did.
    pub fn last_refresh(&self) -> Refresh {
        *self.last.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the index if needed and brings it up to date with the whole store, as a search
    /// would: call it at start-up so that the first search is quick.
    ///
    /// # Errors
    /// The store's listing and read errors; [`Error::Backend`] when the index cannot be
    /// opened or written.
    pub async fn refresh(&self) -> Result<Refresh> {
        self.run(None).await.map(|(refresh, _)| refresh)
    }

    /// Reconciles (the query's folder, or the whole store) and answers `query` on the open
    /// index, opening it first; on damage found meanwhile, rebuilds the index and tries once
    /// more.
    async fn run(&self, query: Option<&SearchQuery>) -> Result<(Refresh, Vec<SearchHit>)> {
        let mut guard = self.index.lock().await;
        let mut rebuilt = false;
        loop {
            let index = match guard.as_mut() {
                Some(index) => index,
                None => {
                    let index = Index::open(&self.options.location, &self.options.identity)?;
                    self.opened.store(true, Ordering::Release);
                    guard.insert(index)
                }
            };
            let outcome = match query {
                Some(query) => self.search_indexed(index, query).await,
                None => self
                    .reconcile(index, &MemoryPath::root())
                    .await
                    .map(|r| (r, Vec::new())),
            };
            match outcome {
                Ok(done) => return Ok(done),
                Err(Failure::Store(e)) => return Err(e),
                Err(Failure::Index(e)) if e.is_damage() && !rebuilt => {
                    tracing::warn!(error = %e, "memory-search: the side index is damaged; rebuilding it");
                    if let Some(index) = guard.take() {
                        let location = index.location().clone();
                        drop(index);
                        Index::discard(&location)?;
                    }
                    rebuilt = true;
                }
                Err(Failure::Index(e)) => return Err(e.into()),
            }
        }
    }

    /// Brings the index's rows at or below `under` in line with one listing of the store.
    ///
    /// Why this finds every change made behind the index's back (by hand, by another
    /// process), with no read of an unchanged file:
    /// - **created, deleted, renamed**: the listing is the store's own answer, taken after the
    ///   search began; a path it shows that has no row is read, a row whose path it does not
    ///   show is dropped (a rename is both).
    /// - **changed**: a row is trusted only when the listing shows the size and modification
    ///   time the row recorded *and* that time lies more than `racy_window` before the
    ///   moment the row was last confirmed (`checked`, taken before the listing that
    ///   confirmed it). A change after that moment gets a modification time at or after it,
    ///   less the file system's clock lag and granularity, which the window covers; so it
    ///   cannot carry the recorded time again and the next listing shows it. A file whose
    ///   time is too close to `checked` (changed twice within one tick?) is read again, and
    ///   its version compared, at every search until its time is safely in the past.
    ///   Content edited in place does not change its folder's time, so nothing short of
    ///   each file's own size and time (the listing) can prove it unchanged.
    /// - **written through this wrapper**: noted in `dirty` and read whatever the listing
    ///   says.
    ///
    /// The comparison is one merge of two lists sorted by path: the listing (sorted by
    /// contract) and the index's rows (a copy in memory, kept equal to the table: see
    /// `Index::rows_under`), so no SQLite statement runs unless something changed.
    async fn reconcile(&self, index: &mut Index, under: &MemoryPath) -> Outcome<Refresh> {
        // Taken before listing: a write finishing after this is recorded for the next search.
        let dirty: HashSet<String> = {
            let mut all = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
            let (mine, rest): (HashSet<String>, HashSet<String>) = all
                .drain()
                .partition(|p| MemoryPath::parse(p).is_ok_and(|p| p.starts_with(under)));
            *all = rest;
            mine
        };
        let listed_at = now_ns();
        let mut listing = match self.inner.list(under).await {
            Ok(listing) => listing,
            Err(e) => {
                self.restore_dirty(dirty);
                return Err(Failure::Store(e));
            }
        };
        // Sorted by `Storage::list`'s contract; a store that breaks it costs a sort, not a
        // wrong merge.
        if !listing.is_sorted_by(|a, b| a.path.as_str() <= b.path.as_str()) {
            listing.sort_by(|a, b| a.path.as_str().cmp(b.path.as_str()));
        }
        let window = i64::try_from(self.options.racy_window.as_nanos()).unwrap_or(i64::MAX);

        let mut refresh = Refresh::default();
        let mut to_read: Vec<Pending> = Vec::new();
        let mut changes: Vec<Change> = Vec::new();
        {
            let mut rows = index.rows_under(under.as_str())?.peekable();
            for meta in &listing {
                let path = meta.path.as_str();
                // Rows sorting before this listed path are of files no longer there.
                while let Some((gone, _)) = rows.next_if(|(p, _)| p.as_str() < path) {
                    changes.push(Change::Remove { path: gone.clone() });
                }
                let row = rows
                    .next_if(|(p, _)| p.as_str() == path)
                    .map(|(_, row)| row);
                if !is_searchable_folder(&meta.path) {
                    // Hidden files and node_modules are never indexed (a search of a hidden
                    // folder by name scans it instead: see `search`).
                    continue;
                }
                refresh.listed += 1;
                let mtime = meta.modified.and_then(ns_of);
                let fresh = row.is_some_and(|row| {
                    row.size == meta.size
                        && row.mtime.is_some()
                        && row.mtime == mtime
                        && mtime.is_some_and(|m| m.saturating_add(window) < row.checked)
                        && !dirty.contains(path)
                });
                if !fresh {
                    to_read.push(Pending {
                        path: meta.path.clone(),
                        mtime,
                        known: row.map(|row| row.version.clone()),
                    });
                }
            }
            changes.extend(rows.map(|(gone, _)| Change::Remove { path: gone.clone() }));
        }
        refresh.removed = changes.len();

        let inner = &self.inner;
        let reads = stream::iter(to_read.into_iter().map(move |pending| async move {
            let read = inner.read(&pending.path).await;
            (pending, read)
        }))
        .buffer_unordered(self.options.read_concurrency.max(1));
        let mut reads = std::pin::pin!(reads);
        #[cfg(feature = "semantic")]
        let mut texts: Vec<(String, String)> = Vec::new();
        while let Some((pending, read)) = reads.next().await {
            refresh.read += 1;
            let path = pending.path.as_str().to_owned();
            let file = match read {
                Ok(file) => file,
                Err(Error::NotFound { .. }) => {
                    if pending.known.is_some() {
                        refresh.removed += 1;
                        changes.push(Change::Remove { path });
                    }
                    continue;
                }
                Err(e) => return Err(Failure::Store(e)),
            };
            let new_row = Row {
                // The size of what was read, with the listing's time: if the file changed
                // after the listing, its next listing shows a new time and it is read again.
                size: file.contents.len() as u64,
                mtime: pending.mtime,
                version: file.version.as_str().to_owned(),
                checked: listed_at,
            };
            if pending.known.as_deref() == Some(new_row.version.as_str()) {
                changes.push(Change::Confirm { path, row: new_row });
                continue;
            }
            refresh.indexed += 1;
            let text = searchable_text(&file.contents).map(str::to_owned);
            #[cfg(feature = "semantic")]
            if let Some(text) = &text {
                texts.push((path.clone(), text.clone()));
            }
            changes.push(Change::Put {
                path,
                row: new_row,
                text,
            });
        }
        #[allow(unused_mut)]
        let mut vectors = HashMap::new();
        #[cfg(feature = "semantic")]
        if let Some(model) = self.model().map_err(Failure::Store)? {
            for (path, text) in texts {
                vectors.insert(path, (model.id().to_owned(), model.embed_bytes(&text)));
            }
        }
        index.apply(changes, &vectors)?;
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = refresh;
        Ok(refresh)
    }

    fn restore_dirty(&self, dirty: HashSet<String>) {
        self.dirty
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(dirty);
    }

    /// Notes a write through this wrapper, once the index is open.
    fn written(&self, path: &MemoryPath) {
        if self.opened.load(Ordering::Acquire) {
            self.dirty
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(path.as_str().to_owned());
        }
    }

    async fn search_indexed(
        &self,
        index: &mut Index,
        query: &SearchQuery,
    ) -> Outcome<(Refresh, Vec<SearchHit>)> {
        let refresh = self.reconcile(index, query.under()).await?;
        #[cfg(feature = "semantic")]
        if let Some(model) = self.model().map_err(Failure::Store)? {
            let hits = crate::semantic::hybrid(index, &model, query)?;
            return Ok((refresh, hits));
        }
        Ok((refresh, keyword_hits(index, query, query.limit())?))
    }
}

/// The keyword hits of `query` from the (reconciled) index, at most `limit`: the files whose
/// words hold any of the query's index terms, ranked by memory-core's `Ranker` against the
/// files the index holds below the query's folder, as every store ranks.
pub(crate) fn keyword_hits(
    index: &mut Index,
    query: &SearchQuery,
    limit: usize,
) -> std::result::Result<Vec<SearchHit>, IndexError> {
    let under = query.under();
    let searched = index
        .rows_under(under.as_str())?
        .filter(|(path, _)| MemoryPath::parse(path).is_ok_and(|p| is_searchable(&p, under)))
        .count();
    let mut ranker = Ranker::new(query, searched);
    index.keyword(
        &query.parsed().fts5_expression(),
        under.as_str(),
        |path, body| {
            if let Ok(path) = MemoryPath::parse(&path) {
                ranker.add(path, &body);
            }
        },
    )?;
    Ok(ranker.finish_at_most(limit))
}

/// A file a reconciliation reads: new, changed, or possibly changed.
struct Pending {
    path: MemoryPath,
    /// The listing's modification time.
    mtime: Option<i64>,
    /// The version the index holds for it, if any.
    known: Option<String>,
}

/// Why a search on the index failed: the store (reported as is) or the index (rebuilt when
/// damaged).
pub(crate) enum Failure {
    Store(Error),
    Index(IndexError),
}

impl From<IndexError> for Failure {
    fn from(e: IndexError) -> Self {
        Failure::Index(e)
    }
}

pub(crate) type Outcome<T> = std::result::Result<T, Failure>;

fn now_ns() -> i64 {
    ns_of(SystemTime::now()).unwrap_or(0)
}

fn ns_of(t: SystemTime) -> Option<i64> {
    let d = t.duration_since(UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

impl<S: fmt::Debug> fmt::Debug for Indexed<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Indexed")
            .field("inner", &self.inner)
            .field("location", &self.options.location)
            .finish_non_exhaustive()
    }
}

impl<S: fmt::Display> fmt::Display for Indexed<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Indexed({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<S: Storage> Storage for Indexed<S> {
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
        let version = self.inner.write(path, contents, mode).await?;
        self.written(path);
        Ok(version)
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        // The next search's listing no longer shows the files: their rows are dropped then.
        self.inner.delete(path).await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        self.inner.list(dir).await
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        // New paths are new to the index and read on the next search; old ones are dropped.
        self.inner.rename(from, to).await
    }

    async fn file_count(&self) -> Result<usize> {
        self.inner.file_count().await
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        let version = self.inner.create_within(path, contents, max_files).await?;
        self.written(path);
        Ok(version)
    }

    /// Answers from the side index, reconciled first with one listing of `query.under()`.
    /// A search of a hidden folder named as the query's folder (which the index never holds)
    /// scans it, as the provided method does.
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if !is_searchable_folder(query.under()) {
            return memory_core::search::scan(self, query).await;
        }
        self.run(Some(query)).await.map(|(_, hits)| hits)
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn listing(&self, dir: &MemoryPath) -> Result<memory_core::Listing> {
        self.inner.listing(dir).await
    }

    /// Forwarded; the file is noted like a write, so its row is checked at the next search.
    async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        let set = self.inner.set_modified(path, modified).await?;
        self.written(path);
        Ok(set)
    }

    /// Forwarded: history is the inner store's, never indexed.
    async fn history(&self, path: &MemoryPath) -> Result<Vec<memory_core::history::Revision>> {
        self.inner.history(path).await
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.inner.read_revision(path, number).await
    }

    /// Forwarded; the file is noted like a write.
    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        let version = self.inner.write_restored(path, number, contents).await?;
        self.written(path);
        Ok(version)
    }

    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: memory_core::history::Redaction,
    ) -> Result<u64> {
        self.inner.redact_revisions(path, which).await
    }
}

/// Whether files below `dir` can be in the index: no hidden segment and no `node_modules` on
/// the way from `/memories` (the index holds what a search of `/memories` searches).
fn is_searchable_folder(dir: &MemoryPath) -> bool {
    dir.is_root()
        || dir
            .segments()
            .all(|name| !name.starts_with('.') && name != "node_modules")
}
