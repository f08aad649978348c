//! [`StoreStorage`]: one versioned memory store as the memory tool's [`Storage`].

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use memory_core::search::{self, Bm25Index, SearchHit, SearchQuery};
use memory_core::{
    Capabilities, Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version,
    WriteMode,
};
use memory_store::{
    Actor, ListMemories, Memory, MemoryListItem, MemoryStores, Precondition, Reason, Store,
    StoreError, StoresApi, UpdateMemory, View,
};

use crate::error::{
    check_store_path, conflict_error, memory_path_of, not_text, prefix_of, store_path_of, to_core,
};
#[cfg(feature = "http")]
use crate::http::HttpStores;

/// Page size of the listings the bridge reads (the API's largest).
const PAGE: i64 = 100;

/// Page size of the listings with content (the API's largest for `view=full`).
const FULL_PAGE: i64 = 20;

/// One memory store as a [`Storage`], so [`MemoryTool`](memory_core::MemoryTool) runs on it
/// unchanged.
///
/// - Each memory is the file `/memories<its path>` (the memory `/prefs/units.md` is
///   `/memories/prefs/units.md`); directories are implicit, as in the store.
/// - Every change the tool makes is a version of the store: `created`, `modified` (new content
///   or a rename, which keeps the memory's id and history) or `deleted`, attributed to the
///   session actor the application names (on a local engine; a remote server records its
///   own actor, see [`HttpStores`](crate::HttpStores)).
/// - The version token of compare-and-swap is the memory's `content_sha256`: edits are
///   updates with a `content_sha256` precondition, so concurrent writers (other agents, people,
///   scripts using the API) never lose an update.
/// - The store's rules hold: UTF-8 content of at most 102,400 bytes, NFC paths without format
///   characters, the memory limit, archived stores read-only. A write that breaks one is
///   [`Error::Refused`] with a reason the model can act on (chosen by the store's typed
///   [`Reason`], never its message), and changes nothing.
/// - [`create_within`](Storage::create_within) is exact across processes: the store counts
///   and creates in one transaction (over HTTP through `memory serve`'s `max_memories`
///   extension); a full store is [`Error::StoreFull`]. [`file_count`](Storage::file_count) is
///   the store's own count on a local engine.
/// - Memories whose path the memory tool cannot name (written through the API with characters
///   the tool refuses, such as a backslash) are left out of listings.
///
/// ```no_run
/// use memory_core::MemoryTool;
/// use memory_mounts::StoreStorage;
/// use memory_store::{CreateStore, MemoryStores};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let engine = MemoryStores::open("memory-stores.db").await?;
/// let store = engine.create_store(CreateStore { name: "Notes".into(), ..Default::default() }).await?;
/// let tool = MemoryTool::new(StoreStorage::local(engine, &store.id, "sesn_01")?);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct StoreStorage {
    api: Arc<dyn StoresApi>,
    store_id: String,
}

impl StoreStorage {
    /// The store `store_id` of a local engine; every write is a version by the session actor
    /// `session_id` (e.g. one id per conversation).
    ///
    /// # Errors
    /// [`StoreError::InvalidRequest`] for a session id that is not 1 to 64 characters from
    /// `[0-9A-Za-z_-]` (the rule `memory serve` applies to `x-memory-session-id`, so every
    /// kind of store gets the same ids).
    pub fn local(
        engine: MemoryStores,
        store_id: impl Into<String>,
        session_id: impl Into<String>,
    ) -> std::result::Result<Self, StoreError> {
        let session_id = session_id.into();
        check_session_id(&session_id)?;
        Ok(Self::new(
            Arc::new(engine.acting_as(Some(Actor::session(session_id)))),
            store_id,
        ))
    }

    /// The store `store_id` on a remote server. The server records who wrote each version:
    /// with `memory serve`, the session the client names
    /// ([`HttpStores::with_session_id`], with the API key beside it), else the `api_actor` of
    /// the API key, else nobody.
    #[cfg(feature = "http")]
    pub fn http(client: HttpStores, store_id: impl Into<String>) -> Self {
        Self::new(Arc::new(client), store_id)
    }

    /// The store `store_id` behind any [`StoresApi`].
    pub fn new(api: Arc<dyn StoresApi>, store_id: impl Into<String>) -> Self {
        StoreStorage {
            api,
            store_id: store_id.into(),
        }
    }

    /// The store's id (`memstore_…`).
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    /// The API it talks to.
    pub fn api(&self) -> &Arc<dyn StoresApi> {
        &self.api
    }

    /// The actor recorded on each version this storage writes (local engines only).
    pub fn actor(&self) -> Option<&Actor> {
        self.api.actor()
    }

    /// Fetches the store: checks that it exists (and the server answers), and gives its name,
    /// description and archive state for the mount.
    ///
    /// # Errors
    /// The store's error: `NotFound` for an unknown store, `Backend` when the server or the
    /// database cannot be reached.
    pub async fn retrieve(&self) -> std::result::Result<Store, StoreError> {
        self.api.retrieve_store(&self.store_id).await
    }

    async fn list_page(
        &self,
        params: ListMemories,
    ) -> std::result::Result<memory_store::Page<MemoryListItem>, StoreError> {
        self.api.list_memories(&self.store_id, params).await
    }

    /// Every memory below `prefix` (a store path ending with `/`), in path order, without
    /// content.
    async fn list_all(&self, prefix: &str) -> std::result::Result<Vec<Memory>, StoreError> {
        let mut out = Vec::new();
        let mut page = None;
        loop {
            let got = self
                .list_page(ListMemories {
                    path_prefix: Some(prefix.to_owned()),
                    limit: Some(PAGE),
                    page,
                    ..Default::default()
                })
                .await?;
            out.extend(got.data.into_iter().filter_map(|item| match item {
                MemoryListItem::Memory(m) => Some(m),
                MemoryListItem::Prefix(_) => None,
            }));
            match got.next_page {
                Some(next) => page = Some(next),
                None => return Ok(out),
            }
        }
    }

    /// Whether some memory lies below `prefix` (a store path ending with `/`).
    async fn any_below(&self, prefix: &str) -> std::result::Result<bool, StoreError> {
        let got = self
            .list_page(ListMemories {
                path_prefix: Some(prefix.to_owned()),
                limit: Some(1),
                ..Default::default()
            })
            .await?;
        Ok(!got.data.is_empty())
    }

    /// The memory at exactly `store_path` (its content only where it comes at no cost).
    async fn find(&self, store_path: &str) -> std::result::Result<Option<Memory>, StoreError> {
        self.api
            .memory_at_path(&self.store_id, store_path, false)
            .await
    }

    /// The memory at `store_path` with its content.
    async fn fetch(&self, store_path: &str) -> std::result::Result<Option<Memory>, StoreError> {
        self.api
            .memory_at_path(&self.store_id, store_path, true)
            .await
    }

    async fn create(
        &self,
        store_path: &str,
        content: &str,
        max_memories: Option<u64>,
    ) -> std::result::Result<Memory, StoreError> {
        self.api
            .create_memory(&self.store_id, store_path, content, max_memories)
            .await
    }

    async fn update(
        &self,
        memory_id: &str,
        params: UpdateMemory,
    ) -> std::result::Result<Memory, StoreError> {
        self.api
            .update_memory(&self.store_id, memory_id, params)
            .await
    }

    async fn remove(&self, memory_id: &str) -> std::result::Result<(), StoreError> {
        self.api
            .delete_memory(&self.store_id, memory_id, None)
            .await
            .map(drop)
    }

    /// Deletes each memory; one deleted by someone else meanwhile is no failure.
    async fn remove_all(&self, memories: &[Memory], path: &MemoryPath) -> Result<()> {
        for m in memories {
            match self.remove(&m.id).await {
                Ok(()) | Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(to_core(e, path)),
            }
        }
        Ok(())
    }

    /// Create, or replace whatever file is at the path (never a directory).
    async fn overwrite(
        &self,
        path: &MemoryPath,
        store_path: &str,
        content: String,
    ) -> Result<Version> {
        // A file deleted and recreated by someone else between our two steps: go round again.
        for _ in 0..8 {
            match self.create(store_path, &content, None).await {
                Ok(m) => return Ok(Version::new(m.content_sha256)),
                Err(StoreError::PathConflict {
                    conflicting_memory_id,
                    conflicting_path,
                    ..
                }) if conflicting_path == store_path => {
                    let params = UpdateMemory {
                        content: Some(content.clone()),
                        ..Default::default()
                    };
                    match self.update(&conflicting_memory_id, params).await {
                        Ok(m) if m.path == store_path => return Ok(Version::new(m.content_sha256)),
                        // Renamed away while we wrote: ours went with it; write ours here again.
                        Ok(_) | Err(StoreError::NotFound { .. }) => continue,
                        Err(e) => return Err(to_core(e, path)),
                    }
                }
                Err(e) => return Err(to_core(e, path)),
            }
        }
        Err(Error::Conflict { path: path.clone() })
    }
}

impl fmt::Display for StoreStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Store({}#{})", self.api, self.store_id)
    }
}

/// The one session-id rule ([`Actor::is_valid_session_id`]) as a [`StoreError`].
pub(crate) fn check_session_id(session_id: &str) -> std::result::Result<(), StoreError> {
    if Actor::is_valid_session_id(session_id) {
        Ok(())
    } else {
        Err(StoreError::refused(
            Reason::InvalidParameter,
            format!("the session id {session_id:?} must be 1 to 64 characters from [0-9A-Za-z_-]"),
        ))
    }
}

fn modified(m: &Memory) -> Option<SystemTime> {
    let micros = u64::try_from(m.updated_at.as_micros()).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_micros(micros))
}

fn meta_of(m: &Memory) -> Option<FileMeta> {
    let path = memory_path_of(&m.path);
    if path.is_none() {
        tracing::debug!(memory = %m.id, "memory path has no memory-tool name; not listed");
    }
    Some(FileMeta {
        path: path?,
        size: m.content_size_bytes,
        modified: modified(m),
    })
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Storage for StoreStorage {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let not_found = || Error::NotFound { path: path.clone() };
        let store_path = store_path_of(path).ok_or_else(not_found)?;
        let memory = self
            .fetch(&store_path)
            .await
            .map_err(|e| to_core(e, path))?
            .ok_or_else(not_found)?;
        Ok(StoredFile {
            contents: memory.content.unwrap_or_default().into_bytes(),
            version: Version::new(memory.content_sha256),
        })
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let Some(store_path) = store_path_of(path) else {
            return Ok(Some(Entry::Directory));
        };
        let found = self.find(&store_path).await.map_err(|e| to_core(e, path))?;
        if let Some(m) = found {
            return Ok(Some(Entry::File(FileMeta {
                path: path.clone(),
                size: m.content_size_bytes,
                modified: modified(&m),
            })));
        }
        let below = self
            .any_below(&prefix_of(path))
            .await
            .map_err(|e| to_core(e, path))?;
        Ok(below.then_some(Entry::Directory))
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        let Some(store_path) = store_path_of(path) else {
            return Err(Error::AlreadyExists { path: path.clone() });
        };
        let content = String::from_utf8(contents).map_err(|_| not_text(path))?;
        check_store_path(path, &store_path)?;
        match mode {
            WriteMode::Create => match self.create(&store_path, &content, None).await {
                Ok(m) => Ok(Version::new(m.content_sha256)),
                Err(e) => Err(to_core(e, path)),
            },
            WriteMode::Overwrite => self.overwrite(path, &store_path, content).await,
            WriteMode::Update(version) => {
                let found = self.find(&store_path).await.map_err(|e| to_core(e, path))?;
                let Some(memory) = found else {
                    // No file: say so, or name the file in the way, as a create would.
                    for ancestor in path.ancestors() {
                        let Some(above) = store_path_of(&ancestor) else {
                            continue;
                        };
                        if self
                            .find(&above)
                            .await
                            .map_err(|e| to_core(e, path))?
                            .is_some()
                        {
                            return Err(Error::ParentIsFile {
                                path: path.clone(),
                                parent: ancestor,
                            });
                        }
                    }
                    return Err(Error::NotFound { path: path.clone() });
                };
                let sha = version.as_str();
                if sha.len() != 64 || !sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                    // Not a token of ours: it cannot be the current version.
                    return Err(Error::Conflict { path: path.clone() });
                }
                let params = UpdateMemory {
                    content: Some(content),
                    precondition: Some(Precondition::content_sha256(sha)),
                    ..Default::default()
                };
                // Edits follow the memory (its id): if someone renamed it meanwhile, the edit
                // lands on the renamed memory, as an update through the API would.
                match self.update(&memory.id, params).await {
                    Ok(m) => Ok(Version::new(m.content_sha256)),
                    Err(e) => Err(to_core(e, path)),
                }
            }
        }
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let Some(store_path) = store_path_of(path) else {
            let all = self.list_all("/").await.map_err(|e| to_core(e, path))?;
            return self.remove_all(&all, path).await;
        };
        if let Some(m) = self.find(&store_path).await.map_err(|e| to_core(e, path))? {
            return match self.remove(&m.id).await {
                Ok(()) => Ok(()),
                Err(e) => Err(to_core(e, path)),
            };
        }
        let below = self
            .list_all(&prefix_of(path))
            .await
            .map_err(|e| to_core(e, path))?;
        if below.is_empty() {
            return Err(Error::NotFound { path: path.clone() });
        }
        self.remove_all(&below, path).await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let all = self
            .list_all(&prefix_of(dir))
            .await
            .map_err(|e| to_core(e, dir))?;
        Ok(all.iter().filter_map(meta_of).collect())
    }

    /// A file is one update of its path (the memory keeps its id and history); a directory
    /// is one such update per memory below it, so a failure part-way leaves every memory
    /// present exactly once.
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let Some(from_store) = store_path_of(from) else {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        };
        let file = self.find(&from_store).await.map_err(|e| to_core(e, from))?;
        let moves: Vec<Memory> = match file {
            Some(m) => vec![m],
            None => {
                let below = self
                    .list_all(&prefix_of(from))
                    .await
                    .map_err(|e| to_core(e, from))?;
                if below.is_empty() {
                    return Err(Error::NotFound { path: from.clone() });
                }
                below
            }
        };
        if to.starts_with(from) {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        }
        let Some(to_store) = store_path_of(to) else {
            return Err(Error::AlreadyExists { path: to.clone() });
        };
        if self.stat(to).await?.is_some() {
            return Err(Error::AlreadyExists { path: to.clone() });
        }
        let mut targets = Vec::with_capacity(moves.len());
        for m in &moves {
            let target = format!("{to_store}{}", &m.path[from_store.len()..]);
            let Some(target_path) = memory_path_of(&target) else {
                return Err(Error::backend(
                    crate::error::BACKEND,
                    format!(
                        "{} cannot move below {to}: the path would be too long",
                        m.path
                    ),
                ));
            };
            check_store_path(&target_path, &target)?;
            targets.push((target, target_path));
        }
        for (m, (target, _)) in moves.iter().zip(targets) {
            let params = UpdateMemory {
                path: Some(target),
                ..Default::default()
            };
            match self.update(&m.id, params).await {
                Ok(_) => {}
                // Deleted by someone else meanwhile: nothing left to move.
                Err(StoreError::NotFound { .. }) if moves.len() > 1 => {}
                Err(StoreError::PathConflict {
                    conflicting_path, ..
                }) => return Err(conflict_error(to, &conflicting_path)),
                Err(e) => return Err(to_core(e, from)),
            }
        }
        Ok(())
    }

    /// The store's own count (one query on a local engine; the listing over HTTP).
    async fn file_count(&self) -> Result<usize> {
        let n = self
            .api
            .count_memories(&self.store_id)
            .await
            .map_err(|e| to_core(e, &MemoryPath::root()))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// Exact across processes: the store counts and creates in one transaction, so of
    /// creates racing at `max_files - 1` one wins; the store's own memory limit holds too.
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        let Some(store_path) = store_path_of(path) else {
            return Err(Error::AlreadyExists { path: path.clone() });
        };
        let content = String::from_utf8(contents).map_err(|_| not_text(path))?;
        check_store_path(path, &store_path)?;
        let max = u64::try_from(max_files).unwrap_or(u64::MAX);
        match self.create(&store_path, &content, Some(max)).await {
            Ok(m) => Ok(Version::new(m.content_sha256)),
            Err(e) if e.reason() == Reason::StoreFull => Err(Error::StoreFull { max_files }),
            Err(e) => Err(to_core(e, path)),
        }
    }

    /// A scan as [`search::scan`] does it, but from the store's own listing with content
    /// (`view=full`, 20 memories a page, one request each over HTTP) instead of one read per
    /// file, ranked with the shared [`Bm25Index`]: the store has no word index of its own.
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let under = query.under();
        let mut index = Bm25Index::new();
        let mut page = None;
        loop {
            let got = self
                .list_page(ListMemories {
                    path_prefix: Some(prefix_of(under)),
                    limit: Some(FULL_PAGE),
                    page,
                    view: View::Full,
                    ..Default::default()
                })
                .await
                .map_err(|e| to_core(e, under))?;
            for item in got.data {
                let MemoryListItem::Memory(m) = item else {
                    continue;
                };
                if let (Some(path), Some(content)) = (memory_path_of(&m.path), m.content)
                    && search::is_searchable(&path, under)
                {
                    index.insert(path, content);
                }
            }
            match got.next_page {
                Some(next) => page = Some(next),
                None => return Ok(index.search(query)),
            }
        }
    }

    /// A store holds NFC-named UTF-8 text of at most 102,400 bytes a memory, 20 levels and
    /// 1,024 bytes of store path (`/memories` is not part of it).
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            binary_files: false,
            non_nfc_names: false,
            large_files: false,
            ..Capabilities::FULL
        }
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<memory_core::Listing> {
        Ok(self.list(dir).await?.into())
    }

    /// A memory's time is its newest version's, made by the engine: nothing to set.
    async fn set_modified(&self, _path: &MemoryPath, _modified: SystemTime) -> Result<bool> {
        Ok(false)
    }
    /// A versioned store keeps versions of its own, with their authors (`memory store
    /// history`), not this history: unsupported here.
    async fn history(&self, path: &MemoryPath) -> Result<Vec<memory_core::history::Revision>> {
        let _ = path;
        Err(Error::Unsupported {
            operation: "history",
            backend: "a versioned memory store (see `memory store history`)",
        })
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        let _ = (path, number);
        Err(Error::Unsupported {
            operation: "read_revision",
            backend: "a versioned memory store (see `memory store history`)",
        })
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        let _ = (path, number, contents);
        Err(Error::Unsupported {
            operation: "restore",
            backend: "a versioned memory store (see `memory store history`)",
        })
    }

    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: memory_core::history::Redaction,
    ) -> Result<u64> {
        let _ = (path, which);
        Err(Error::Unsupported {
            operation: "redact",
            backend: "a versioned memory store (see `memory store redact`)",
        })
    }
}
