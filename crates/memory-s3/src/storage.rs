//! [`ObjectStoreStorage`]: the `Storage` trait over any `object_store::ObjectStore`.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};
use memory_core::history::{HistoryOptions, Redaction, Revision};
use memory_core::{
    Entry, Error, FileMeta, Listing, MemoryPath, Result, Storage, StoredFile, Version, WriteMode,
};
use object_store::path::Path;
use object_store::{
    GetOptions, ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    UpdateVersion,
};

use crate::count::{Change, CounterState, counter_path};
use crate::error::S3Error;
use crate::folders::FolderFacts;
use crate::foreign::Skipped;

mod create;
mod history;
mod rename;
mod views;

use create::{Announced, writable};
use views::{CachedView, ViewCache};

/// How many objects a directory rename copies at once.
const COPY_CONCURRENCY: usize = 8;

/// A memory store on an object store: one object per file, under a key prefix.
///
/// `/memories/notes/a.md` is the object `PREFIX/memories/notes/a.md` (the layout of the
/// directory backend, so a bucket synced to a folder is a directory store and back).
/// Directories are implicit: a directory exists while some object lies below it.
///
/// Writes are conditional, so many processes and hosts can share one store: create is
/// `PutMode::Create` (`If-None-Match: *`), an edit is `PutMode::Update` with the ETag (and
/// version id, where the bucket has versioning) it read, a rename copies with create-if-absent.
/// The crate README lists what every method costs in requests and what is guaranteed.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use memory_core::{MemoryPath, Storage, WriteMode};
/// use memory_s3::ObjectStoreStorage;
///
/// let store = ObjectStoreStorage::new(Arc::new(object_store::memory::InMemory::new()), "tenant-1")?;
/// let path = MemoryPath::parse("/memories/a.md")?;
/// store.write(&path, b"hi".to_vec(), WriteMode::Create).await?;
/// assert_eq!(store.read(&path).await?.contents, b"hi");
/// assert_eq!(store.to_string(), "ObjectStore(InMemory/tenant-1)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct ObjectStoreStorage {
    pub(crate) store: Arc<dyn ObjectStore>,
    /// The key prefix, without slashes at either end; empty for the bucket's root.
    prefix: String,
    /// `PREFIX/memories`: the key of `/memories`.
    pub(crate) base: Path,
    /// `PREFIX/.memory-count`: the file counter (see `count`).
    pub(crate) counter: Path,
    /// The counter as this store last read or wrote it, and its generation.
    pub(crate) counter_cache: Mutex<CounterState>,
    /// What this process knows about folders, to skip a create's checks (see `folders`).
    folders: Mutex<FolderFacts>,
    /// Changes of the count waiting to be applied, and the turn to apply them (see `count`).
    pub(crate) counter_queue: Mutex<Vec<Change>>,
    pub(crate) counter_turn: tokio::sync::Mutex<()>,
    /// What `Display` shows, e.g. `S3(s3://bucket/prefix)`.
    pub(crate) label: String,
    /// Where the store is, for error messages: endpoint and bucket, or the store's name.
    pub(crate) location: String,
    /// Files lately read or written, to revalidate with `If-None-Match` (see `ViewCache`).
    views: Mutex<ViewCache>,
    /// Foreign entries the S3 client's HTTP layer took out of LIST answers.
    filtered: Arc<Skipped>,
    /// Whether and how long each file's earlier versions are kept (see `history`).
    history: HistoryOptions,
    /// `PREFIX/.memory-history`: where they are kept.
    history_base: Path,
}

impl ObjectStoreStorage {
    /// A store on `store`, keeping every object under `prefix` (`""` for the root of the
    /// bucket; slashes at either end are ignored).
    ///
    /// # Errors
    /// [`memory_core::Error::Backend`] when the prefix is not a valid key prefix (empty
    /// segments, `.` or `..`, control characters).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Self> {
        let prefix = normalize_prefix(prefix)?;
        let label = if prefix.is_empty() {
            format!("ObjectStore({store})")
        } else {
            format!("ObjectStore({store}/{prefix})")
        };
        let location = store.to_string();
        Self::with_names(store, prefix, label, location, Arc::default())
    }

    /// A store with a normalized prefix and the names `Display` and errors show.
    pub(crate) fn with_names(
        store: Arc<dyn ObjectStore>,
        prefix: String,
        label: String,
        location: String,
        filtered: Arc<Skipped>,
    ) -> Result<Self> {
        let raw = if prefix.is_empty() {
            "memories".to_owned()
        } else {
            format!("{prefix}/memories")
        };
        let base = Path::parse(&raw).map_err(|source| S3Error::Key { key: raw, source })?;
        let counter = counter_path(&prefix)?;
        let raw = if prefix.is_empty() {
            history::HISTORY_FOLDER.to_owned()
        } else {
            format!("{prefix}/{}", history::HISTORY_FOLDER)
        };
        let history_base = Path::parse(&raw).map_err(|source| S3Error::Key { key: raw, source })?;
        Ok(ObjectStoreStorage {
            store,
            prefix,
            base,
            counter,
            counter_cache: Mutex::new(CounterState::default()),
            folders: Mutex::new(FolderFacts::default()),
            views: Mutex::new(ViewCache::default()),
            counter_queue: Mutex::new(Vec::new()),
            counter_turn: tokio::sync::Mutex::new(()),
            label,
            location,
            filtered,
            history: HistoryOptions::default(),
            history_base,
        })
    }

    /// Checks that the store answers: one LIST request (a page of at most one listing of
    /// `PREFIX/memories/`). Building a store sends nothing, so a program that wants a wrong
    /// endpoint, missing bucket or bad credentials to show at start (as `memory exec` does)
    /// calls this first.
    ///
    /// # Errors
    /// [`memory_core::Error::Backend`] naming the endpoint and bucket, after the retries.
    pub async fn check(&self) -> Result<()> {
        self.has_children(&self.base).await.map(|_| ())
    }

    /// The object store underneath.
    pub fn object_store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The key prefix (without slashes at either end; empty for the bucket's root).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The object key of a memory path, e.g. `PREFIX/memories/a/b.md`.
    pub fn key(&self, path: &MemoryPath) -> Result<Path> {
        if path.is_root() {
            return Ok(self.base.clone());
        }
        let raw = format!("{}/{}", self.base, path.relative());
        Path::parse(&raw).map_err(|source| S3Error::Key { key: raw, source }.into())
    }

    /// The memory path of an object key, or `None` for a key outside this store's
    /// `PREFIX/memories/` or one no memory path maps to.
    fn memory_path(&self, location: &Path) -> Option<MemoryPath> {
        let rel = location
            .as_ref()
            .strip_prefix(self.base.as_ref())?
            .strip_prefix('/')?;
        MemoryPath::parse(&format!("/memories/{rel}")).ok()
    }

    pub(crate) fn request_error(
        &self,
        operation: &'static str,
        key: &Path,
        source: object_store::Error,
    ) -> Error {
        S3Error::Request {
            operation,
            key: key.to_string(),
            location: self.location.clone(),
            source,
        }
        .into()
    }

    /// HEAD: the object's metadata, or `None` when there is no object at `key`.
    async fn head(&self, key: &Path) -> Result<Option<ObjectMeta>> {
        match self.store.head(key).await {
            Ok(meta) => Ok(Some(meta)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.request_error("HEAD", key, e)),
        }
    }

    /// One LIST request (the first page): whether any memory file lies below `key`.
    /// Foreign objects do not count (more pages are read only while every entry is foreign).
    async fn has_children(&self, key: &Path) -> Result<bool> {
        let mut objects = self.store.list(Some(key));
        loop {
            match objects.next().await {
                None => return Ok(false),
                Some(Ok(meta)) if self.memory_path(&meta.location).is_some() => return Ok(true),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(self.request_error("LIST", key, e)),
            }
        }
    }

    /// Every object below `key` that is a memory file, following the listing's pages to the
    /// end, with its memory path. Foreign entries are skipped (see [`Self::list_below_counted`]).
    pub(crate) async fn list_below(&self, key: &Path) -> Result<Vec<(MemoryPath, ObjectMeta)>> {
        Ok(self.list_below_counted(key).await?.0)
    }

    /// [`Self::list_below`] with how many foreign entries it skipped: objects whose key is not
    /// a memory path (an empty, `.` or `..` segment, a control character, a name a memory path
    /// cannot have), written by some other tool, counted and logged once per listing.
    async fn list_below_counted(&self, key: &Path) -> Result<(Vec<(MemoryPath, ObjectMeta)>, u64)> {
        let filtered_before = self.filtered.total();
        let all: Vec<ObjectMeta> = self
            .store
            .list(Some(key))
            .try_collect()
            .await
            .map_err(|e| self.request_error("LIST", key, e))?;
        let filtered = self.filtered.total().saturating_sub(filtered_before);
        let mut example = (filtered > 0).then(|| self.filtered.last_key()).flatten();
        let mut skipped = filtered;
        let mut files = Vec::with_capacity(all.len());
        for meta in all {
            match self.memory_path(&meta.location) {
                Some(path) => files.push((path, meta)),
                None => {
                    skipped += 1;
                    example.get_or_insert_with(|| meta.location.to_string());
                }
            }
        }
        if skipped > 0 {
            tracing::warn!(
                store = %self.label,
                prefix = %key,
                skipped,
                example = ?example.unwrap_or_default(),
                "skipped objects whose keys are not memory paths (written by another tool?)"
            );
        }
        Ok((files, skipped))
    }

    /// The outermost ancestor of `path` that is a file (one HEAD per ancestor, sent at once).
    async fn file_ancestor(&self, path: &MemoryPath) -> Result<Option<MemoryPath>> {
        let ancestors = path.ancestors();
        let mut keys = Vec::with_capacity(ancestors.len());
        for ancestor in &ancestors {
            keys.push(self.key(ancestor)?);
        }
        let found = futures_util::future::try_join_all(keys.iter().map(|k| self.head(k))).await?;
        Ok(ancestors
            .into_iter()
            .zip(found)
            .find_map(|(ancestor, meta)| meta.map(|_| ancestor)))
    }

    /// The checks before a create or overwrite: an ancestor that is a file, a directory at
    /// the path. One LIST and one HEAD per ancestor, all sent at once.
    async fn check_writable(&self, path: &MemoryPath, key: &Path) -> Result<()> {
        let (ancestor, is_dir) =
            futures_util::try_join!(self.file_ancestor(path), self.has_children(key))?;
        writable(path, ancestor, is_dir)
    }

    /// Why a conditional update failed: the file changed (Conflict), is gone (NotFound), or
    /// never could be there (ParentIsFile). Only runs on the failure path.
    async fn explain_failed_update(&self, path: &MemoryPath, key: &Path) -> Error {
        match self.head(key).await {
            Ok(Some(_)) => return Error::Conflict { path: path.clone() },
            Ok(None) => {}
            Err(e) => return e,
        }
        match self.file_ancestor(path).await {
            Ok(Some(parent)) => Error::ParentIsFile {
                path: path.clone(),
                parent,
            },
            Ok(None) => Error::NotFound { path: path.clone() },
            Err(e) => e,
        }
    }

    fn version_of(
        &self,
        key: &Path,
        e_tag: Option<String>,
        version: Option<String>,
    ) -> Result<Version> {
        match (e_tag, version) {
            (None, None) => Err(S3Error::NoVersion {
                key: key.to_string(),
                location: self.location.clone(),
            }
            .into()),
            (Some(tag), None) => Ok(Version::new(tag)),
            // An ETag never holds a space (RFC 9110 `etagc`), so it separates the two.
            (tag, Some(version)) => Ok(Version::new(format!(
                "{} {version}",
                tag.unwrap_or_default()
            ))),
        }
    }

    fn meta(&self, path: MemoryPath, meta: &ObjectMeta) -> FileMeta {
        FileMeta {
            path,
            size: meta.size,
            modified: Some(SystemTime::from(meta.last_modified)),
        }
    }

    fn folder_facts(&self) -> std::sync::MutexGuard<'_, FolderFacts> {
        // Each change is one step on a set: usable after a panic elsewhere.
        self.folders.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Deletes every key, in the store's batches (S3: one request per 1,000 keys).
    async fn delete_keys(&self, keys: Vec<Path>) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let first = keys[0].clone();
        {
            let mut views = self.views();
            for key in &keys {
                views.remove(key);
            }
        }
        let locations: BoxStream<'static, object_store::Result<Path>> =
            stream::iter(keys.into_iter().map(Ok)).boxed();
        let mut deleted = self.store.delete_stream(locations);
        while let Some(result) = deleted.next().await {
            match result {
                Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.request_error("DELETE", &first, e)),
            }
        }
        Ok(())
    }
}

/// The version token split back into object_store's parts.
pub(crate) fn update_version(version: &Version) -> UpdateVersion {
    match version.as_str().split_once(' ') {
        Some((tag, v)) => UpdateVersion {
            e_tag: (!tag.is_empty()).then(|| tag.to_owned()),
            version: Some(v.to_owned()),
        },
        None => UpdateVersion {
            e_tag: Some(version.as_str().to_owned()),
            version: None,
        },
    }
}

/// Trims slashes and checks every segment of a key prefix.
pub(crate) fn normalize_prefix(prefix: &str) -> Result<String> {
    let trimmed = prefix.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    let bad = |reason: String| -> Error {
        S3Error::Prefix {
            prefix: prefix.to_owned(),
            reason,
        }
        .into()
    };
    for segment in trimmed.split('/') {
        if segment.is_empty() {
            return Err(bad("empty segment (`//`)".into()));
        }
        if let Err(e) = object_store::path::PathPart::parse(segment) {
            return Err(bad(e.to_string()));
        }
    }
    Ok(trimmed.to_owned())
}

impl fmt::Debug for ObjectStoreStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStoreStorage")
            .field("store", &self.label)
            .field("base", &self.base.as_ref())
            .finish()
    }
}

impl fmt::Display for ObjectStoreStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

#[async_trait]
impl Storage for ObjectStoreStorage {
    /// One GET; for a file this store read or wrote lately, a conditional GET
    /// (`If-None-Match`) that the server answers `304 Not Modified`, without the bytes, when
    /// the file has not changed.
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        if path.is_root() {
            return Err(Error::NotFound { path: path.clone() });
        }
        let key = self.key(path)?;
        let cached = self.views().get(&key);
        let options = GetOptions {
            if_none_match: cached.as_ref().and_then(|c| c.e_tag.clone()),
            ..GetOptions::default()
        };
        let result = match self.store.get_opts(&key, options).await {
            Ok(result) => result,
            Err(object_store::Error::NotModified { .. }) if cached.is_some() => {
                let cached = cached.expect("checked above");
                return Ok(StoredFile {
                    contents: cached.contents.to_vec(),
                    version: self.version_of(&key, cached.e_tag, cached.version)?,
                });
            }
            Err(object_store::Error::NotFound { .. }) => {
                self.views().remove(&key);
                return Err(Error::NotFound { path: path.clone() });
            }
            Err(e) => return Err(self.request_error("GET", &key, e)),
        };
        let meta = result.meta.clone();
        let attributes = result.attributes.clone();
        let contents = result
            .bytes()
            .await
            .map_err(|e| self.request_error("GET", &key, e))?;
        self.views().put(
            &key,
            CachedView {
                e_tag: meta.e_tag.clone(),
                version: meta.version.clone(),
                contents: contents.clone(),
                attributes: Some(attributes),
            },
        );
        Ok(StoredFile {
            contents: contents.to_vec(),
            version: self.version_of(&key, meta.e_tag, meta.version)?,
        })
    }

    /// A file: one HEAD. Otherwise a HEAD and one LIST page.
    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        if path.is_root() {
            return Ok(Some(Entry::Directory));
        }
        let key = self.key(path)?;
        if let Some(meta) = self.head(&key).await? {
            return Ok(Some(Entry::File(self.meta(path.clone(), &meta))));
        }
        Ok(self.has_children(&key).await?.then_some(Entry::Directory))
    }

    /// Update: one conditional PUT. Create: as `create_within` without a limit. Overwrite:
    /// one PUT after one LIST page, a HEAD of the path and one per ancestor directory, sent at
    /// once (and the counter raised first when the file is new).
    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        if path.is_root() {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        let key = self.key(path)?;
        if self.recording() {
            return match mode {
                WriteMode::Create => self.create(path, &key, contents, None).await,
                WriteMode::Overwrite => self.overwrite_recorded(path, &key, contents, None).await,
                WriteMode::Update(version) => {
                    self.update_recorded(path, &key, contents, &version).await
                }
            };
        }
        let version = match mode {
            WriteMode::Create => return self.create(path, &key, contents, None).await,
            WriteMode::Overwrite => {
                let keys = self.create_keys(path, &key)?;
                self.folder_facts().adding_file(&keys);
                let _announced = Announced {
                    storage: self,
                    keys: &keys,
                };
                let (_, existing) =
                    futures_util::try_join!(self.check_writable(path, &key), self.head(&key))?;
                if existing.is_none() {
                    self.change_count(1, None).await?;
                }
                let options = PutOptions {
                    mode: PutMode::Overwrite,
                    ..PutOptions::default()
                };
                let bytes = Bytes::from(contents);
                let put = self
                    .store
                    .put_opts(&key, PutPayload::from(bytes.clone()), options)
                    .await;
                if put.is_err() && existing.is_none() {
                    self.release(1).await;
                }
                return match put {
                    Ok(result) => self.remember(&key, bytes, result.e_tag, result.version),
                    Err(e) => Err(self.request_error("PUT", &key, e)),
                };
            }
            WriteMode::Update(version) => version,
        };
        let options = PutOptions {
            mode: PutMode::Update(update_version(&version)),
            ..PutOptions::default()
        };
        let bytes = Bytes::from(contents);
        match self
            .store
            .put_opts(&key, PutPayload::from(bytes.clone()), options)
            .await
        {
            Ok(result) => self.remember(&key, bytes, result.e_tag, result.version),
            Err(
                object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. },
            ) => Err(self.explain_failed_update(path, &key).await),
            Err(e) => Err(self.request_error("PUT", &key, e)),
        }
    }

    /// A file: one HEAD, one DELETE and the counter's update. A directory: a HEAD, the LIST
    /// pages, one DELETE per 1,000 files and the counter's update.
    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let key = self.key(path)?;
        if self.recording() {
            if !path.is_root() {
                match self.get_current(&key, None).await {
                    Ok(Some(current)) => return self.delete_recorded(path, &key, &current).await,
                    Ok(None) => {}
                    Err(e) => return Err(self.request_error("GET", &key, e)),
                }
            }
            let below = self.list_below(&key).await?;
            if below.is_empty() && !path.is_root() {
                return Err(Error::NotFound { path: path.clone() });
            }
            let files = below
                .into_iter()
                .map(|(path, meta)| (path, meta.location))
                .collect();
            return self.delete_folder_recorded(files).await;
        }
        if !path.is_root() && self.head(&key).await?.is_some() {
            self.delete_keys(vec![key]).await?;
            self.release(1).await;
            return Ok(());
        }
        let below = self.list_below(&key).await?;
        if below.is_empty() && !path.is_root() {
            return Err(Error::NotFound { path: path.clone() });
        }
        let files = below.len();
        self.delete_keys(below.into_iter().map(|(_, m)| m.location).collect())
            .await?;
        self.release(files).await;
        Ok(())
    }

    /// The LIST pages below the directory.
    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        Ok(self.listing(dir).await?.entries)
    }

    /// The LIST pages below the directory. Objects under `PREFIX/memories/` whose key is not
    /// a memory path are invisible to every command (listings, `view`, the file count,
    /// directory renames and deletes leave them alone); a listing counts them.
    async fn listing(&self, dir: &MemoryPath) -> Result<Listing> {
        let key = self.key(dir)?;
        let (below, skipped) = self.list_below_counted(&key).await?;
        let mut entries: Vec<FileMeta> = below
            .into_iter()
            .map(|(path, meta)| self.meta(path, &meta))
            .collect();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Listing { entries, skipped })
    }

    /// Copy-if-absent of every file, then delete of the sources. See the README for the
    /// requests and for what a crash part-way leaves.
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        // 1. What is at `from` (checked first).
        let from_key = self.key(from)?;
        let sources: Vec<Path> = if from.is_root() {
            Vec::new() // the root always exists; refused below as a move into itself
        } else if self.head(&from_key).await?.is_some() {
            vec![from_key.clone()]
        } else {
            let below = self.list_below(&from_key).await?;
            if below.is_empty() {
                return Err(Error::NotFound { path: from.clone() });
            }
            below.into_iter().map(|(_, m)| m.location).collect()
        };
        let is_file = sources.first() == Some(&from_key);
        // 2. A move into itself.
        if to.starts_with(from) {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        }
        // 3. The destination: free, and not below a file. A file at `to` itself is caught by
        //    the copy-if-absent when moving a file; a directory's files land below `to`, so
        //    then `to` is looked up too.
        let to_key = self.key(to)?;
        let to_is_file = async {
            if is_file {
                Ok(false)
            } else {
                Ok(self.head(&to_key).await?.is_some())
            }
        };
        let (ancestor, to_is_dir, to_is_file) = futures_util::try_join!(
            self.file_ancestor(to),
            self.has_children(&to_key),
            to_is_file
        )?;
        if let Some(parent) = ancestor {
            return Err(Error::ParentIsFile {
                path: to.clone(),
                parent,
            });
        }
        if to_is_dir || to_is_file {
            return Err(Error::AlreadyExists { path: to.clone() });
        }
        // 4. Copy every file with create-if-absent, after telling every process that keeps
        //    facts about folders (see `folders`) that files appear where it cannot say: the
        //    others by a change of the counter, this one by new generations (before the
        //    copies, and after them for what was learned meanwhile).
        self.new_counter_generation();
        self.touch_counter().await?;
        let copied = if self.recording() {
            match self.rebased(from, to, is_file, sources) {
                Ok(moves) => self.move_recorded(from, to, moves).await,
                Err(e) => Err(e),
            }
        } else {
            self.copy_all(from, to, &to_key, is_file, sources).await
        };
        self.new_counter_generation();
        copied
    }

    /// One GET of the counter object (no listing).
    async fn file_count(&self) -> Result<usize> {
        Ok(self.load_counter().await?.0)
    }

    /// The checks of a create (a HEAD per ancestor, one LIST page: no directory at the path),
    /// unless this process's folder facts answer them (see the `folders` module); the
    /// counter raised by a conditional PUT while below the limit; then the conditional PUT of
    /// the file. See the `count` module for what is exact.
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        if path.is_root() {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        let key = self.key(path)?;
        self.create(path, &key, contents, Some(max_files)).await
    }

    fn capabilities(&self) -> memory_core::Capabilities {
        memory_core::Capabilities::FULL
    }

    /// One LIST of the path's history folder and a HEAD of each history object (for its
    /// record) and of the current file; for a folder, of every file below it.
    async fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.recorded_history(path).await
    }

    /// One GET of the history object; for the current revision, a GET of the file too.
    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.recorded_revision(path, number).await
    }

    /// A HEAD (that the revision exists), then an overwrite recorded as `restored`.
    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.restore_recorded(path, number, contents).await
    }

    /// The file's history read (as `history`), then one PUT per redacted revision: its
    /// object replaced by a marker without bytes that keeps the record.
    async fn redact_revisions(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.redact_recorded(path, which).await
    }
}
