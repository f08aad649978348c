//! The [`Storage`] trait: the few byte-level operations a backend implements.
//!
//! Everything the model sees (listings, line numbers, result strings) is computed once in
//! [`MemoryTool`](crate::MemoryTool) on top of these primitives. A backend never sees a command
//! or a raw string path.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::SystemTime;

use async_trait::async_trait;

use crate::search::{self, SearchHit, SearchQuery};
use crate::{Capabilities, Error, MemoryPath, Result};

/// An opaque token naming one version of one file's content, for compare-and-swap.
///
/// Backends choose what it holds (a counter, a content hash, an ETag); callers only compare it
/// and hand it back in [`WriteMode::Update`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Version(String);

impl Version {
    /// Wraps a backend's token.
    pub fn new(token: impl Into<String>) -> Self {
        Version(token.into())
    }

    /// The backend's token.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Version({})", self.0)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How [`Storage::write`] treats a file that is already there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteMode {
    /// Create-if-absent, in one step: fails with [`Error::AlreadyExists`] if anything (a file or
    /// a directory) is at the path.
    Create,
    /// Create the file or replace its content, whatever its version.
    Overwrite,
    /// Replace the content only if the file's current version is this one (compare-and-swap);
    /// otherwise [`Error::Conflict`], or [`Error::NotFound`] if the file is gone.
    Update(Version),
}

/// A file's content and the version it was read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    /// The bytes, exactly as written.
    pub contents: Vec<u8>,
    /// The version of these bytes, for a later [`WriteMode::Update`].
    pub version: Version,
}

/// What a listing or [`Storage::stat`] knows about a file without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// Where the file is.
    pub path: MemoryPath,
    /// Its length in bytes, as [`Storage::read`] would return it.
    pub size: u64,
    /// When its content last changed, where the backend knows.
    pub modified: Option<SystemTime>,
}

/// A listing with what it left out, from [`Storage::listing`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The files, as [`Storage::list`] returns them.
    pub entries: Vec<FileMeta>,
    /// How many entries below the directory this listing left out because they are not
    /// memory files (see [`Storage::listing`]).
    pub skipped: u64,
}

impl From<Vec<FileMeta>> for Listing {
    /// A listing that skipped nothing.
    fn from(entries: Vec<FileMeta>) -> Self {
        Listing {
            entries,
            skipped: 0,
        }
    }
}

/// What is at a path, from [`Storage::stat`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A file.
    File(FileMeta),
    /// A directory: at least one file lies below the path (or the path is `/memories`).
    Directory,
}

/// The primitive storage a [`MemoryTool`](crate::MemoryTool) runs on.
///
/// Files are keyed by [`MemoryPath`] and carry an opaque [`Version`]. Directories are implicit:
/// a directory exists while some file lies below it, `/memories` always exists, and a file and
/// a directory never share a path. Every behaviour listed on a method has a test in the
/// `conformance` module (feature `conformance`) that each backend runs.
///
/// `Display` names the backend stack, e.g. `Fs(/var/lib/memory)`; it is for logs and operators,
/// never shown to the model.
///
/// # Implementing it
///
/// The methods are `async fn`s made object-safe (`Arc<dyn Storage>`) by the `async-trait`
/// crate, so an implementation carries the same attribute: write `#[memory_core::async_trait]`
/// on the `impl Storage for ...` block ([`async_trait`](crate::async_trait) is re-exported, so
/// the backend needs no dependency of its own on `async-trait`; without the attribute the
/// compiler stops with error E0195). Five methods are required; the others are provided and
/// correct, and a backend overrides them to be fast or, for
/// [`create_within`](Storage::create_within), exact under concurrent writers. A store of
/// files in a map:
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Mutex;
///
/// use memory_core::{
///     Entry, Error, FileMeta, MemoryHandler, MemoryPath, MemoryTool, Result, Storage, StoredFile,
///     Version, WriteMode,
/// };
///
/// /// Each file with the number of the write that made it, its version.
/// #[derive(Debug, Default)]
/// struct MapStorage {
///     state: Mutex<(BTreeMap<MemoryPath, (Vec<u8>, u64)>, u64)>,
/// }
///
/// impl std::fmt::Display for MapStorage {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("Map")
///     }
/// }
///
/// fn is_directory(files: &BTreeMap<MemoryPath, (Vec<u8>, u64)>, path: &MemoryPath) -> bool {
///     path.is_root() || files.keys().any(|p| p != path && p.starts_with(path))
/// }
///
/// #[memory_core::async_trait]
/// impl Storage for MapStorage {
///     async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
///         let (files, _) = &*self.state.lock().unwrap();
///         let (contents, n) = files.get(path).ok_or(Error::NotFound { path: path.clone() })?;
///         Ok(StoredFile { contents: contents.clone(), version: Version::new(n.to_string()) })
///     }
///
///     async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
///         let (files, _) = &*self.state.lock().unwrap();
///         Ok(match files.get(path) {
///             Some((contents, _)) => Some(Entry::File(FileMeta {
///                 path: path.clone(),
///                 size: contents.len() as u64,
///                 modified: None,
///             })),
///             None => is_directory(files, path).then_some(Entry::Directory),
///         })
///     }
///
///     async fn write(&self, path: &MemoryPath, bytes: Vec<u8>, mode: WriteMode) -> Result<Version> {
///         let (files, writes) = &mut *self.state.lock().unwrap();
///         if let Some(parent) = path.ancestors().into_iter().find(|a| files.contains_key(a)) {
///             return Err(Error::ParentIsFile { path: path.clone(), parent });
///         }
///         let current = files.get(path).map(|(_, n)| n.to_string());
///         let path = path.clone();
///         match (mode, current) {
///             _ if is_directory(files, &path) => return Err(Error::AlreadyExists { path }),
///             (WriteMode::Create, Some(_)) => return Err(Error::AlreadyExists { path }),
///             (WriteMode::Update(_), None) => return Err(Error::NotFound { path }),
///             (WriteMode::Update(expected), Some(current)) if expected.as_str() != current => {
///                 return Err(Error::Conflict { path });
///             }
///             _ => {}
///         }
///         *writes += 1;
///         files.insert(path, (bytes, *writes));
///         Ok(Version::new(writes.to_string()))
///     }
///
///     async fn delete(&self, path: &MemoryPath) -> Result<()> {
///         let (files, _) = &mut *self.state.lock().unwrap();
///         let before = files.len();
///         files.retain(|p, _| !p.starts_with(path));
///         if files.len() == before && !path.is_root() {
///             return Err(Error::NotFound { path: path.clone() });
///         }
///         Ok(())
///     }
///
///     async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
///         let (files, _) = &*self.state.lock().unwrap();
///         let below = files.iter().filter(|(p, _)| *p != dir && p.starts_with(dir));
///         Ok(below
///             .map(|(p, (contents, _))| FileMeta {
///                 path: p.clone(),
///                 size: contents.len() as u64,
///                 modified: None,
///             })
///             .collect())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let tool = MemoryTool::new(MapStorage::default());
/// let create = serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "hi"});
/// assert!(!tool.execute(&create).await.is_error);
/// let view = serde_json::json!({"command": "view", "path": "/memories/a.md"});
/// assert!(tool.execute(&view).await.text().unwrap().ends_with("     1\thi"));
/// # });
/// ```
///
/// Its tests run the conformance suite (feature `conformance`, in dev-dependencies):
/// `memory_core::conformance::run_all(Arc::new(MapStorage::default())).await` checks every
/// behaviour listed below.
#[async_trait]
pub trait Storage: fmt::Debug + fmt::Display + Send + Sync {
    /// Reads a whole file.
    ///
    /// # Behavior
    /// - returns the bytes last written and their version;
    /// - a missing path, a directory, or `/memories` → [`Error::NotFound`];
    /// - never returns a torn file: a concurrent write is seen whole or not at all.
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile>;

    /// Tells what is at a path without reading it.
    ///
    /// # Behavior
    /// - a file → `Some(Entry::File(meta))` with its size;
    /// - `/memories`, or a path with at least one file below it → `Some(Entry::Directory)`;
    /// - anything else (including a path below a file) → `None`.
    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>>;

    /// Writes a whole file, creating its parent directories, and returns the new version.
    ///
    /// # Behavior
    /// - [`WriteMode::Create`] on an existing file or directory → [`Error::AlreadyExists`];
    ///   of two concurrent creates of one path exactly one succeeds;
    /// - [`WriteMode::Overwrite`] replaces a file; on a directory → [`Error::AlreadyExists`];
    /// - [`WriteMode::Update`] replaces the file only at the given version; another version →
    ///   [`Error::Conflict`]; no file → [`Error::NotFound`];
    /// - an ancestor that is a file → [`Error::ParentIsFile`] naming that ancestor;
    /// - writing `/memories` itself → [`Error::AlreadyExists`];
    /// - atomic: a reader sees the old content or the new, and a failed write changes nothing;
    /// - every successful write that changes the bytes returns a version different from the
    ///   file's previous one (a backend may give identical bytes the same version, as a
    ///   content hash does: an edit prepared from those bytes is still correct).
    async fn write(&self, path: &MemoryPath, contents: Vec<u8>, mode: WriteMode)
    -> Result<Version>;

    /// Deletes a file, or a directory with every file below it.
    ///
    /// # Behavior
    /// - a file → removed; a directory → every file below it removed;
    /// - `/memories` → every file removed (the root itself always exists);
    /// - nothing at the path → [`Error::NotFound`];
    /// - directories left without files disappear (a filesystem removes the empty folders).
    async fn delete(&self, path: &MemoryPath) -> Result<()>;

    /// Lists every file below a directory, at any depth, sorted by path (byte order).
    ///
    /// # Behavior
    /// - includes hidden files (names starting with `.`); only whole segments match, so listing
    ///   `/memories/a` never returns `/memories/ab`;
    /// - a missing directory, or a file, → an empty list;
    /// - each entry's size is the file's byte length.
    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>>;

    /// Moves a file, or a directory with everything below it, to a new path. Never overwrites.
    ///
    /// # Behavior
    /// - nothing at `from` → [`Error::NotFound`] (checked first);
    /// - anything at `to` → [`Error::AlreadyExists`];
    /// - `to` at or below `from` → [`Error::RenameIntoItself`];
    /// - an ancestor of `to` that is a file → [`Error::ParentIsFile`];
    /// - parents of `to` come into being; directories left empty at `from` disappear;
    /// - content is kept byte for byte.
    ///
    /// The provided method copies each file with [`WriteMode::Create`] and then deletes the
    /// sources, so a crash part-way leaves every file present at least once, never lost.
    /// Backends that can move atomically (a filesystem rename, one SQL transaction) override it.
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        copy_then_delete(self, from, to).await
    }

    /// How many files the store holds, hidden ones included, at any depth.
    ///
    /// # Behavior
    /// - equals `list(/memories).len()`;
    /// - an overwrite or an update leaves it unchanged.
    ///
    /// The provided method lists `/memories`; backends override it with a native count.
    async fn file_count(&self) -> Result<usize> {
        Ok(self.list(&MemoryPath::root()).await?.len())
    }

    /// Creates a file (create-if-absent, as [`WriteMode::Create`]) only while the store holds
    /// fewer than `max_files` files, and returns its version.
    ///
    /// # Behavior
    /// - anything at `path` (a file, a directory, `/memories`) → [`Error::AlreadyExists`],
    ///   checked before fullness, so a full store still says a taken path is taken;
    /// - `max_files` or more files in the store → [`Error::StoreFull`] and nothing written;
    /// - an ancestor that is a file → [`Error::ParentIsFile`] naming that ancestor;
    /// - otherwise as [`Storage::write`] with [`WriteMode::Create`];
    /// - exact under concurrency: of creates racing at `max_files - 1` files, exactly one
    ///   succeeds and the others get [`Error::StoreFull`].
    ///
    /// The provided method counts, then writes with [`WriteMode::Create`]: exact for one
    /// writer only. Backends override it to check and create in one step (under a lock, in
    /// one transaction), so that it is exact across tasks and processes.
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        if self.file_count().await? >= max_files {
            return Err(match self.stat(path).await? {
                Some(_) => Error::AlreadyExists { path: path.clone() },
                None => Error::StoreFull { max_files },
            });
        }
        self.write(path, contents, WriteMode::Create).await
    }

    /// The files that meet a keyword query, best first, at most `query.limit()`.
    ///
    /// # Behavior
    /// - a hit holds at least one clause of the query, every `+` clause and no `-` clause
    ///   (see [`search::ParsedQuery`]): a plain word by its English stem, a phrase word for
    ///   word, a `prefix*` as the start of a word, compared as [`search::tokenize`] folds
    ///   words (case and diacritics do not matter);
    /// - only files strictly below `query.under()` (whole segments) that
    ///   [`search::is_searchable`] admits (no hidden name, no `node_modules`), and only UTF-8
    ///   content;
    /// - a file's current content only: words overwritten or deleted are gone, a renamed
    ///   file is found at its new path, on the next search;
    /// - hits, their scores, `lines` and `snippet` are those a [`search::Ranker`] gives over
    ///   the files searched (the same on every backend), best first, ties by path;
    /// - nothing matches → an empty list; an engine that refuses a query it was given →
    ///   [`Error::InvalidQuery`].
    ///
    /// The provided method is [`search::scan`] (list, read, rank): right for any store, with
    /// work proportional to its size. Backends with an index override it; wrappers forward it.
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        search::scan(self, query).await
    }

    /// What the store can hold: the provided method answers [`Capabilities::FULL`]; a store
    /// with rules of its own (text only, NFC names, a shallower root) declares what it lacks.
    fn capabilities(&self) -> Capabilities {
        Capabilities::FULL
    }

    /// [`list`](Self::list), and how many entries that listing left out because they are not
    /// memory files: an object or row whose key is not a valid [`MemoryPath`] (a `..` or empty
    /// segment, a control character), put there by something other than this library. A
    /// listing skips such entries (and logs them) instead of failing; the count is for an
    /// operator's report (`memory stats` lists `/memories` with it).
    ///
    /// # Behavior
    /// - `entries` is what [`list`](Self::list) returns for `dir`;
    /// - `skipped` counts the foreign entries below `dir` this listing met, `0` if none;
    /// - wrappers report their inner store's figure; a mount table, the sum over its stores.
    ///
    /// The provided method is [`list`](Self::list) with `skipped: 0`, right for stores that
    /// cannot hold foreign entries. Stores that can override it and answer `list` from it.
    async fn listing(&self, dir: &MemoryPath) -> Result<Listing> {
        Ok(self.list(dir).await?.into())
    }

    /// Sets a file's modification time (what [`FileMeta::modified`] reports) without changing
    /// its content, for tools that move files between stores (`memory copy`, `memory import`)
    /// and must keep each file's age, so that expiry after a migration or a restore is right.
    ///
    /// Answers `true` when the store now reports `modified` for the file, `false` when it
    /// keeps times of its own it cannot be told (then nothing changed).
    ///
    /// # Behavior
    /// - a store that answers `true` reports `modified` (to the millisecond at least) in
    ///   [`stat`](Self::stat) and [`list`](Self::list) until the file is written again;
    /// - the content is unchanged; the version may change;
    /// - a missing path or a directory → [`Error::NotFound`] (for a store that answers
    ///   `true`; the provided method checks nothing);
    /// - wrappers forward it (a read-only one refuses it as it refuses a write).
    ///
    /// The provided method does nothing and answers `false`: right for a store whose times
    /// come from elsewhere (S3's `Last-Modified`). Stores that can keep a given time
    /// (memory-fs, memory-sqlite, memory-postgres, `InMemoryStorage`) override it.
    async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        let _ = (path, modified);
        Ok(false)
    }

    /// The earlier versions of `path` ([`history`](crate::history)): for a file, its
    /// revisions newest first, the current content first of all; for a folder (the root
    /// included), the revisions of every file below it, deleted ones too, newest first across
    /// files ([`history::newest_first`](crate::history::newest_first)).
    ///
    /// # Behavior
    /// - each change through the store (a [`write`](Self::write) of any mode,
    ///   [`create_within`](Self::create_within), [`delete`](Self::delete),
    ///   [`rename`](Self::rename), [`write_restored`](Self::write_restored)) adds one revision
    ///   per file it changes, in the same atomic step as the change: `created`, `modified`,
    ///   `deleted`, `renamed` (with `old_path`; the file's earlier revisions move with it,
    ///   renumbered after the new path's own, see
    ///   [`FileHistory::append_moved`](crate::history::FileHistory::append_moved)) or
    ///   `restored`; a change that fails adds none;
    /// - numbers count up from 1 per path; `size` and `sha256` describe the content after the
    ///   change (none for a deletion); `session` is the store's
    ///   [`HistoryOptions::session`](crate::history::HistoryOptions::session);
    /// - history is invisible to the six commands: [`list`](Self::list),
    ///   [`file_count`](Self::file_count), [`search`](Self::search) and
    ///   [`stat`](Self::stat) see only current files;
    /// - pruning ([`HistoryOptions`](crate::history::HistoryOptions)) happens as a file is
    ///   changed, drops only that file's revisions, never the current one;
    /// - a path with no revisions (never written, or every revision pruned) → an empty list;
    /// - a store opened with `history=off` → [`Error::HistoryOff`] and records nothing;
    /// - wrappers forward it (mapping paths where they map them).
    ///
    /// The provided method answers [`Error::Unsupported`]: right for a store that keeps no
    /// history (a versioned store keeps its own versions, see `memory store`).
    async fn history(&self, path: &MemoryPath) -> Result<Vec<crate::history::Revision>> {
        let _ = path;
        Err(Error::Unsupported {
            operation: "history",
            backend: "this store",
        })
    }

    /// The content of revision `number` of the file at `path` (the path the file has now:
    /// revisions moved by a rename are read at the new path).
    ///
    /// # Behavior
    /// - the bytes the file held after that change, whether it is the current revision or a
    ///   past one;
    /// - a number the path does not have → [`Error::NoRevision`];
    /// - a deletion or a redacted revision → [`Error::RevisionWithoutContent`];
    /// - `history=off` → [`Error::HistoryOff`].
    ///
    /// The provided method answers [`Error::Unsupported`].
    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        let _ = (path, number);
        Err(Error::Unsupported {
            operation: "read_revision",
            backend: "this store",
        })
    }

    /// Writes `contents` (revision `number`'s content, as the caller read it with
    /// [`read_revision`](Self::read_revision)) back as the current file at `path`, creating it
    /// if it was deleted; the change is recorded as a `restored` revision, and the content it
    /// replaces is kept like any write's. [`history::restore`](crate::history::restore) reads
    /// and writes back in one call.
    ///
    /// # Behavior
    /// - afterwards [`read`](Self::read) returns `contents` and the newest revision is
    ///   `restored`;
    /// - a number the path does not have → [`Error::NoRevision`], nothing written;
    /// - a folder at `path` → [`Error::AlreadyExists`]; a file above it →
    ///   [`Error::ParentIsFile`];
    /// - `history=off` → [`Error::HistoryOff`];
    /// - a read-only wrapper refuses it as it refuses a write.
    ///
    /// The provided method answers [`Error::Unsupported`].
    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        let _ = (path, number, contents);
        Err(Error::Unsupported {
            operation: "restore",
            backend: "this store",
        })
    }

    /// Removes the stored content of the past revisions of `path` that `which` names, keeping
    /// their records (who, when, what change): the way to make a secret that was once written
    /// truly gone from the store's files, free pages and logs. Returns how many revisions lost
    /// their content.
    ///
    /// # Behavior
    /// - afterwards [`read_revision`](Self::read_revision) of each →
    ///   [`Error::RevisionWithoutContent`] with `redacted`, and [`history`](Self::history)
    ///   shows them `redacted`; no copy of their bytes is left in the store;
    /// - the current file is never touched: naming its revision →
    ///   [`Error::RevisionIsCurrent`];
    /// - a number the path does not have → [`Error::NoRevision`];
    /// - a deletion or an already redacted revision counts 0;
    /// - [`Redaction::AllPast`](crate::history::Redaction::AllPast) on a path that is not a
    ///   file (a folder, the root, a folder whose files are all deleted) → every past revision
    ///   of every file with history below it, in one call (so a store scrubs once: how
    ///   `memory rekey` makes a plaintext store's history go when it encrypts it); a store
    ///   without a bulk way uses [`history::redact_below`](crate::history::redact_below);
    /// - `history=off` → [`Error::HistoryOff`];
    /// - a read-only wrapper refuses it as it refuses a write.
    ///
    /// The provided method answers [`Error::Unsupported`].
    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: crate::history::Redaction,
    ) -> Result<u64> {
        let _ = (path, which);
        Err(Error::Unsupported {
            operation: "redact",
            backend: "this store",
        })
    }
}

/// Checks a rename's preconditions in the contract's order, returning what is at `from`:
///
/// 1. nothing at `from` → [`Error::NotFound`];
/// 2. `to` at or below `from` → [`Error::RenameIntoItself`];
/// 3. anything at `to` → [`Error::AlreadyExists`];
/// 4. an ancestor of `to` that is a file → [`Error::ParentIsFile`] naming `to` and that ancestor.
///
/// Every backend's `rename` starts with these checks; this is the one implementation of them
/// (over [`Storage::stat`]). A backend that checks under its own lock or transaction uses
/// [`check_rename_preconditions_with`] with its own synchronous lookup.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use memory_core::{check_rename_preconditions, Error, InMemoryStorage, MemoryPath, Storage, WriteMode};
/// let store = InMemoryStorage::new();
/// let a = MemoryPath::parse("/memories/a.md").unwrap();
/// let b = MemoryPath::parse("/memories/b.md").unwrap();
/// let e = check_rename_preconditions(&store, &a, &b).await.unwrap_err();
/// assert!(matches!(e, Error::NotFound { .. }));
/// store.write(&a, b"x".to_vec(), WriteMode::Create).await.unwrap();
/// assert!(check_rename_preconditions(&store, &a, &b).await.is_ok());
/// # });
/// ```
pub async fn check_rename_preconditions<S: Storage + ?Sized>(
    storage: &S,
    from: &MemoryPath,
    to: &MemoryPath,
) -> Result<Entry> {
    rename_preconditions(from, to, |path| async move { storage.stat(&path).await }).await
}

/// [`check_rename_preconditions`] over a synchronous lookup (what `stat` would answer for a
/// path), for a backend that must check and move under one lock or in one transaction.
pub fn check_rename_preconditions_with(
    from: &MemoryPath,
    to: &MemoryPath,
    mut lookup: impl FnMut(&MemoryPath) -> Result<Option<Entry>>,
) -> Result<Entry> {
    let check = rename_preconditions(from, to, |path| std::future::ready(lookup(&path)));
    let mut check = std::pin::pin!(check);
    // Every lookup is ready, so one poll finishes the check.
    match check.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(Error::backend(
            "rename",
            "the rename precondition check did not finish on ready lookups",
        )),
    }
}

/// The one place the order of the rename preconditions is written down.
async fn rename_preconditions<F, Fut>(
    from: &MemoryPath,
    to: &MemoryPath,
    mut stat: F,
) -> Result<Entry>
where
    F: FnMut(MemoryPath) -> Fut,
    Fut: Future<Output = Result<Option<Entry>>>,
{
    let Some(source) = stat(from.clone()).await? else {
        return Err(Error::NotFound { path: from.clone() });
    };
    if to.starts_with(from) {
        return Err(Error::RenameIntoItself {
            from: from.clone(),
            to: to.clone(),
        });
    }
    if stat(to.clone()).await?.is_some() {
        return Err(Error::AlreadyExists { path: to.clone() });
    }
    // Name the ancestor of `to` that is a file, as the write of a file below `to` would name
    // `to` itself instead.
    for ancestor in to.ancestors() {
        if let Some(Entry::File(_)) = stat(ancestor.clone()).await? {
            return Err(Error::ParentIsFile {
                path: to.clone(),
                parent: ancestor,
            });
        }
    }
    Ok(source)
}

/// The generic rename behind [`Storage::rename`]'s provided method: copy every file with
/// create-if-absent, then delete the sources. Public so that backends which override `rename`
/// for some cases can fall back to it for others.
pub async fn copy_then_delete<S: Storage + ?Sized>(
    storage: &S,
    from: &MemoryPath,
    to: &MemoryPath,
) -> Result<()> {
    let files = match check_rename_preconditions(storage, from, to).await? {
        Entry::File(meta) => vec![meta],
        Entry::Directory => storage.list(from).await?,
    };
    let mut moves = Vec::with_capacity(files.len());
    for meta in files {
        let target = meta.path.rebase(from, to).ok_or_else(|| {
            Error::backend(
                "rename",
                format!(
                    "{} cannot move below {to}: the path would be too long",
                    meta.path
                ),
            )
        })?;
        moves.push((meta.path, target));
    }
    for (source, target) in &moves {
        let file = storage.read(source).await?;
        storage
            .write(target, file.contents, WriteMode::Create)
            .await?;
    }
    for (source, _) in &moves {
        match storage.delete(source).await {
            Ok(()) | Err(Error::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Forwards every method to the pointee, so `Arc<dyn Storage>` and `Box<dyn Storage>` are
/// storages too (and a wrapper keeps the inner store's native `rename`).
macro_rules! forward_storage {
    ($ptr:ident) => {
        #[async_trait]
        #[deny(clippy::missing_trait_methods)]
        impl<T: Storage + ?Sized> Storage for $ptr<T> {
            async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
                (**self).read(path).await
            }
            async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
                (**self).stat(path).await
            }
            async fn write(
                &self,
                path: &MemoryPath,
                contents: Vec<u8>,
                mode: WriteMode,
            ) -> Result<Version> {
                (**self).write(path, contents, mode).await
            }
            async fn delete(&self, path: &MemoryPath) -> Result<()> {
                (**self).delete(path).await
            }
            async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
                (**self).list(dir).await
            }
            async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
                (**self).rename(from, to).await
            }
            async fn file_count(&self) -> Result<usize> {
                (**self).file_count().await
            }
            async fn create_within(
                &self,
                path: &MemoryPath,
                contents: Vec<u8>,
                max_files: usize,
            ) -> Result<Version> {
                (**self).create_within(path, contents, max_files).await
            }
            async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
                (**self).search(query).await
            }
            fn capabilities(&self) -> Capabilities {
                (**self).capabilities()
            }
            async fn listing(&self, dir: &MemoryPath) -> Result<Listing> {
                (**self).listing(dir).await
            }
            async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
                (**self).set_modified(path, modified).await
            }
            async fn history(&self, path: &MemoryPath) -> Result<Vec<crate::history::Revision>> {
                (**self).history(path).await
            }
            async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
                (**self).read_revision(path, number).await
            }
            async fn write_restored(
                &self,
                path: &MemoryPath,
                number: u64,
                contents: Vec<u8>,
            ) -> Result<Version> {
                (**self).write_restored(path, number, contents).await
            }
            async fn redact_revisions(
                &self,
                path: &MemoryPath,
                which: crate::history::Redaction,
            ) -> Result<u64> {
                (**self).redact_revisions(path, which).await
            }
        }
    };
}

forward_storage!(Arc);
forward_storage!(Box);
