//! [`MemoryStores`]: the engine. Every rule of the API lives here, once.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::Timestamp;
use crate::cursor::Cursor;
use crate::error::{Reason, Result, StoreError};
use crate::id::{self, MEMORY_PREFIX, STORE_PREFIX, VERSION_PREFIX};
use crate::model::{
    Actor, DeletedMemory, ListMemories, Memory, MemoryListItem, MemoryPrefix, MemoryVersion,
    Operation, Page, Store, UpdateMemory, View,
};
use crate::persist::{AnyPersistence, MemoryScan, Persistence, Tx};
use crate::sqlite::SqlitePersistence;
use crate::validate::{validate_content, validate_path, validate_prefix, validate_sha};

mod stores;
mod versions;

/// Default of [`EngineOptions::max_memories_per_store`].
pub const DEFAULT_MAX_MEMORIES_PER_STORE: u64 = 2_000;
/// Default page size of every listing.
pub const DEFAULT_PAGE_SIZE: usize = 20;
/// Largest page size of every listing.
pub const MAX_PAGE_SIZE: usize = 100;
/// Largest page size of a listing with [`View::Full`].
pub const MAX_FULL_PAGE_SIZE: usize = 20;

/// Engine settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EngineOptions {
    /// Most memories one store holds; creating one more is a 400. Default 2,000.
    pub max_memories_per_store: u64,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            max_memories_per_store: DEFAULT_MAX_MEMORIES_PER_STORE,
        }
    }
}

impl EngineOptions {
    /// Sets [`max_memories_per_store`](Self::max_memories_per_store).
    pub fn max_memories_per_store(mut self, max: u64) -> Self {
        self.max_memories_per_store = max;
        self
    }
}

/// The memory-store engine: stores, memories and versions over a [`Persistence`]
/// ([`AnyPersistence`] by default: SQLite from [`open`](Self::open), or any other).
///
/// Its methods mirror the endpoints of the hosted API one to one. Every change to a memory
/// writes the memory and its version in one transaction. Writes take an optional [`Actor`],
/// recorded as the version's `created_by` (or `redacted_by`).
///
/// Methods return objects with their content; apply [`Memory::with_view`] /
/// [`MemoryVersion::with_view`] to show the API's default views. Cloning is cheap.
#[derive(Debug)]
pub struct MemoryStores<P: Persistence = AnyPersistence> {
    persistence: Arc<P>,
    options: EngineOptions,
    /// The workspace this handle acts in (`None`: the default workspace).
    workspace: Option<String>,
}

impl<P: Persistence> Clone for MemoryStores<P> {
    fn clone(&self) -> Self {
        MemoryStores {
            persistence: Arc::clone(&self.persistence),
            options: self.options.clone(),
            workspace: self.workspace.clone(),
        }
    }
}

impl MemoryStores {
    /// Opens (creating if needed) the SQLite database at `path`, on a blocking thread.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let p = tokio::task::spawn_blocking(move || SqlitePersistence::open(path))
            .await
            .map_err(crate::error::SqliteError::from)??;
        Ok(Self::new(p))
    }

    /// Opens the existing SQLite database at `path` read-only, on a blocking thread
    /// ([`SqlitePersistence::open_read_only`]: nothing on disk changes). Writes fail; a
    /// caller that reads only (a dream's source) puts a read-only policy in front.
    pub async fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let p = tokio::task::spawn_blocking(move || SqlitePersistence::open_read_only(path))
            .await
            .map_err(crate::error::SqliteError::from)??;
        Ok(Self::new(p))
    }

    /// An engine over a private in-memory SQLite database (for tests).
    pub fn open_in_memory() -> Result<Self> {
        Ok(Self::new(SqlitePersistence::open_in_memory()?))
    }
}

fn sha256_hex(content: &str) -> String {
    hex::encode(Sha256::digest(content.as_bytes()))
}

fn page_size(limit: Option<i64>, view: View) -> Result<usize> {
    let n = match limit {
        None => DEFAULT_PAGE_SIZE,
        Some(n) if (1..=MAX_PAGE_SIZE as i64).contains(&n) => n as usize,
        Some(_) => return Err(StoreError::invalid("limit must be between 1 and 100")),
    };
    Ok(if view == View::Full {
        n.min(MAX_FULL_PAGE_SIZE)
    } else {
        n
    })
}

/// A page of `data`, read with one row more than `limit`: the first `limit` rows, and when
/// there were more, the cursor after the last of them.
fn page_of<T>(mut data: Vec<T>, limit: usize, after: impl FnOnce(&T) -> Cursor) -> Page<T> {
    let more = data.len() > limit;
    data.truncate(limit);
    let next_page = match data.last() {
        Some(last) if more => Some(after(last).encode()),
        _ => None,
    };
    Page { data, next_page }
}

/// The exclusive upper bound of the paths below `dir/` (`'0'` follows `'/'` in byte order).
fn upper_of(dir_with_slash: &str) -> String {
    let mut s = dir_with_slash[..dir_with_slash.len() - 1].to_owned();
    s.push('0');
    s
}

/// The store `store_id` of `workspace` (`None`: the default workspace). A store of another
/// workspace is not found, exactly as one that does not exist.
fn store_in(tx: &mut dyn Tx, workspace: &Option<String>, store_id: &str) -> Result<Store> {
    let not_found = || StoreError::not_found(format!("memory store {store_id} not found"));
    if !id::looks_like(store_id, STORE_PREFIX) {
        return Err(not_found());
    }
    tx.store(store_id)?
        .filter(|s| s.workspace_id == *workspace)
        .ok_or_else(not_found)
}

fn writable_store(tx: &mut dyn Tx, workspace: &Option<String>, store_id: &str) -> Result<Store> {
    let store = store_in(tx, workspace, store_id)?;
    if store.archived_at.is_some() {
        return Err(StoreError::refused(
            Reason::StoreArchived,
            format!(
                "memory store {store_id} is archived: its memories can be read, deleted and redacted but not created or changed"
            ),
        ));
    }
    Ok(store)
}

fn memory_in(tx: &mut dyn Tx, store_id: &str, memory_id: &str) -> Result<Memory> {
    let not_found = || StoreError::not_found(format!("memory {memory_id} not found in {store_id}"));
    if !id::looks_like(memory_id, MEMORY_PREFIX) {
        return Err(not_found());
    }
    tx.memory(store_id, memory_id)?.ok_or_else(not_found)
}

fn version_in(tx: &mut dyn Tx, store_id: &str, version_id: &str) -> Result<MemoryVersion> {
    let not_found = || {
        StoreError::not_found(format!(
            "memory version {version_id} not found in {store_id}"
        ))
    };
    if !id::looks_like(version_id, VERSION_PREFIX) {
        return Err(not_found());
    }
    tx.version(store_id, version_id)?.ok_or_else(not_found)
}

/// The memory (other than `except`) at `path`, at an ancestor of it or below it.
fn occupant(
    tx: &mut dyn Tx,
    store_id: &str,
    path: &str,
    except: Option<&str>,
) -> Result<Option<Memory>> {
    let other = |m: &Memory| Some(m.id.as_str()) != except;
    if let Some(m) = tx.memory_at(store_id, path)?.filter(other) {
        return Ok(Some(m));
    }
    for (i, _) in path.match_indices('/').skip(1) {
        if let Some(m) = tx.memory_at(store_id, &path[..i])?.filter(other) {
            return Ok(Some(m));
        }
    }
    let below = format!("{path}/");
    let scan = MemoryScan {
        upper: upper_of(&below),
        lower: below,
        lower_inclusive: true,
        limit: 2,
        with_content: false,
    };
    Ok(tx.memories(store_id, &scan)?.into_iter().find(other))
}

fn path_conflict(path: &str, m: Memory) -> StoreError {
    let message = if m.path == path {
        format!("a memory already exists at {path}")
    } else if path.starts_with(&format!("{}/", m.path)) {
        format!("{path} is below the memory at {}", m.path)
    } else {
        format!("{path} is an ancestor of the memory at {}", m.path)
    };
    StoreError::PathConflict {
        message,
        conflicting_memory_id: m.id,
        conflicting_path: m.path,
    }
}

impl<P: Persistence> MemoryStores<P> {
    /// An engine over `persistence` (a `P`, or what converts into one: a
    /// [`SqlitePersistence`] for the default [`AnyPersistence`]) with the default
    /// [`EngineOptions`].
    pub fn new(persistence: impl Into<P>) -> Self {
        Self::with_options(persistence, EngineOptions::default())
    }

    /// An engine over `persistence` with `options`.
    pub fn with_options(persistence: impl Into<P>, options: EngineOptions) -> Self {
        MemoryStores {
            persistence: Arc::new(persistence.into()),
            options,
            workspace: None,
        }
    }

    /// This engine (sharing its persistence) acting in `workspace` (`None`: the default
    /// workspace, where a handle from [`new`](Self::new) acts). A store belongs to the
    /// workspace of the handle that created it; through a handle of another workspace it is
    /// not found (every call on it is [`StoreError::NotFound`], exactly as for a store that
    /// does not exist) and [`list_stores`](Self::list_stores) shows only the handle's own.
    /// Workspace ids are opaque (`memory serve` takes them from `anthropic-workspace-id`,
    /// see [`is_valid_workspace_id`](crate::is_valid_workspace_id)).
    pub fn in_workspace(&self, workspace: Option<String>) -> Self {
        MemoryStores {
            persistence: Arc::clone(&self.persistence),
            options: self.options.clone(),
            workspace,
        }
    }

    /// The workspace this handle acts in (`None`: the default workspace).
    pub fn workspace(&self) -> Option<&str> {
        self.workspace.as_deref()
    }

    /// This engine behind the default [`AnyPersistence`] (sharing its persistence), for code
    /// that takes a plain [`MemoryStores`].
    pub fn into_any(self) -> MemoryStores {
        MemoryStores {
            persistence: Arc::new(AnyPersistence::from_shared(self.persistence)),
            options: self.options,
            workspace: self.workspace,
        }
    }

    /// The options in force.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// The persistence layer.
    pub fn persistence(&self) -> &P {
        &self.persistence
    }

    async fn blocking<T, F>(&self, write: bool, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Tx) -> Result<T> + Send + 'static,
    {
        let p = Arc::clone(&self.persistence);
        tokio::task::spawn_blocking(move || if write { p.write(job) } else { p.read(job) })
            .await
            .map_err(crate::error::SqliteError::from)?
    }

    // -------------------------------------------------------------- memories

    /// `POST /v1/memory_stores/{id}/memories`: never overwrites. A path that is taken, or is an
    /// ancestor or descendant of a memory's path, is a [`StoreError::PathConflict`]. Writes a
    /// `created` version by `actor`.
    pub async fn create_memory(
        &self,
        store_id: &str,
        path: &str,
        content: &str,
        actor: Option<Actor>,
    ) -> Result<Memory> {
        self.create_memory_within(store_id, path, content, u64::MAX, actor)
            .await
    }

    /// [`create_memory`](Self::create_memory), only while the store holds fewer than
    /// `max_memories` memories (and fewer than
    /// [`EngineOptions::max_memories_per_store`]): the count and the create are one
    /// transaction, so of creates racing at the limit exactly one wins, across processes.
    /// Over it: [`StoreError::InvalidRequest`] with [`Reason::StoreFull`] (a path that is
    /// taken is a [`StoreError::PathConflict`] first).
    pub async fn create_memory_within(
        &self,
        store_id: &str,
        path: &str,
        content: &str,
        max_memories: u64,
        actor: Option<Actor>,
    ) -> Result<Memory> {
        validate_path(path)?;
        validate_content(content)?;
        let (store_id, path, content) = (store_id.to_owned(), path.to_owned(), content.to_owned());
        let max = self.options.max_memories_per_store.min(max_memories);
        let ws = self.workspace.clone();
        self.blocking(true, move |tx| {
            writable_store(tx, &ws, &store_id)?;
            if let Some(m) = occupant(tx, &store_id, &path, None)? {
                return Err(path_conflict(&path, m));
            }
            if tx.count_memories(&store_id)? >= max {
                return Err(StoreError::refused(Reason::StoreFull, format!(
                    "memory store {store_id} is full: it holds the maximum of {max} memories; delete some or use another store"
                )));
            }
            let now = Timestamp::now();
            let memory = Memory {
                id: id::new_id(MEMORY_PREFIX, now),
                memory_store_id: store_id.clone(),
                path,
                content_sha256: sha256_hex(&content),
                content_size_bytes: content.len() as u64,
                content: Some(content),
                memory_version_id: id::new_id(VERSION_PREFIX, now),
                created_at: now,
                updated_at: now,
            };
            tx.put_memory(&memory)?;
            tx.put_version(&version_of(&memory, Operation::Created, actor))?;
            Ok(memory)
        })
        .await
    }

    /// `GET /v1/memory_stores/{id}/memories/{memory_id}`.
    pub async fn retrieve_memory(&self, store_id: &str, memory_id: &str) -> Result<Memory> {
        let (store_id, memory_id) = (store_id.to_owned(), memory_id.to_owned());
        let ws = self.workspace.clone();
        self.blocking(false, move |tx| {
            store_in(tx, &ws, &store_id)?;
            memory_in(tx, &store_id, &memory_id)
        })
        .await
    }

    /// How many memories the store holds (no API endpoint; for the memory tool bridge).
    pub async fn count_memories(&self, store_id: &str) -> Result<u64> {
        let store_id = store_id.to_owned();
        let ws = self.workspace.clone();
        self.blocking(false, move |tx| {
            store_in(tx, &ws, &store_id)?;
            tx.count_memories(&store_id)
        })
        .await
    }

    /// The memory at exactly `path`, if any (no API endpoint; for the memory tool bridge).
    pub async fn memory_at_path(&self, store_id: &str, path: &str) -> Result<Option<Memory>> {
        let (store_id, path) = (store_id.to_owned(), path.to_owned());
        let ws = self.workspace.clone();
        self.blocking(false, move |tx| {
            store_in(tx, &ws, &store_id)?;
            tx.memory_at(&store_id, &path)
        })
        .await
    }

    /// `POST /v1/memory_stores/{id}/memories/{memory_id}`: new content and/or path.
    ///
    /// - A `precondition` whose hash is not the current content's: [`StoreError::PreconditionFailed`],
    ///   unless the memory already holds exactly the requested content and path (a retried
    ///   write that went through): then the memory, unchanged.
    /// - Every given field already equal to the stored one: the memory, no new version.
    /// - A new path that is taken (or an ancestor or descendant of another memory's):
    ///   [`StoreError::PathConflict`]; a rename never overwrites.
    /// - Otherwise one `modified` version by `actor`.
    pub async fn update_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        params: UpdateMemory,
        actor: Option<Actor>,
    ) -> Result<Memory> {
        if params.content.is_none() && params.path.is_none() {
            return Err(StoreError::invalid(
                "at least one of content and path is required",
            ));
        }
        if let Some(path) = &params.path {
            validate_path(path)?;
        }
        if let Some(content) = &params.content {
            validate_content(content)?;
        }
        if let Some(pre) = &params.precondition {
            validate_sha("precondition.content_sha256", &pre.content_sha256)?;
        }
        let (store_id, memory_id) = (store_id.to_owned(), memory_id.to_owned());
        let ws = self.workspace.clone();
        self.blocking(true, move |tx| {
            writable_store(tx, &ws, &store_id)?;
            let current = memory_in(tx, &store_id, &memory_id)?;
            let same_content = params
                .content
                .as_ref()
                .is_none_or(|c| Some(c) == current.content.as_ref());
            let same_path = params.path.as_ref().is_none_or(|p| *p == current.path);
            if let Some(pre) = &params.precondition
                && pre.content_sha256 != current.content_sha256
            {
                if same_content && same_path {
                    return Ok(current);
                }
                return Err(StoreError::PreconditionFailed {
                    message: format!(
                        "precondition failed: memory {memory_id} has content_sha256 {}, not {}",
                        current.content_sha256, pre.content_sha256
                    ),
                });
            }
            if same_content && same_path {
                return Ok(current);
            }
            let mut memory = current;
            if let Some(path) = params.path
                && path != memory.path
            {
                if let Some(m) = occupant(tx, &store_id, &path, Some(&memory.id))? {
                    return Err(path_conflict(&path, m));
                }
                memory.path = path;
            }
            if let Some(content) = params.content {
                memory.content_sha256 = sha256_hex(&content);
                memory.content_size_bytes = content.len() as u64;
                memory.content = Some(content);
            }
            let now = Timestamp::now();
            memory.updated_at = now;
            memory.memory_version_id = id::new_id(VERSION_PREFIX, now);
            tx.put_memory(&memory)?;
            tx.put_version(&version_of(&memory, Operation::Modified, actor))?;
            Ok(memory)
        })
        .await
    }

    /// `DELETE /v1/memory_stores/{id}/memories/{memory_id}`: with `expected_content_sha256`,
    /// only if the content still has that hash ([`StoreError::PreconditionFailed`] otherwise,
    /// nothing deleted). Writes a `deleted` version by `actor`; earlier versions stay.
    pub async fn delete_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        expected_content_sha256: Option<&str>,
        actor: Option<Actor>,
    ) -> Result<DeletedMemory> {
        if let Some(sha) = expected_content_sha256 {
            validate_sha("expected_content_sha256", sha)?;
        }
        let expected = expected_content_sha256.map(str::to_owned);
        let (store_id, memory_id) = (store_id.to_owned(), memory_id.to_owned());
        let ws = self.workspace.clone();
        self.blocking(true, move |tx| {
            store_in(tx, &ws, &store_id)?;
            let memory = memory_in(tx, &store_id, &memory_id)?;
            if let Some(expected) = expected
                && expected != memory.content_sha256
            {
                return Err(StoreError::PreconditionFailed {
                    message: format!(
                        "precondition failed: memory {memory_id} has content_sha256 {}, not {expected}; nothing was deleted",
                        memory.content_sha256
                    ),
                });
            }
            tx.delete_memory(&store_id, &memory_id)?;
            let now = Timestamp::now();
            tx.put_version(&MemoryVersion {
                id: id::new_id(VERSION_PREFIX, now),
                memory_store_id: store_id,
                memory_id: memory_id.clone(),
                operation: Operation::Deleted,
                created_at: now,
                created_by: actor,
                path: Some(memory.path),
                content: None,
                content_sha256: None,
                content_size_bytes: None,
                redacted_at: None,
                redacted_by: None,
            })?;
            Ok(DeletedMemory { id: memory_id })
        })
        .await
    }

    /// `GET /v1/memory_stores/{id}/memories`: in byte order of `path`. With `depth = 1`, the
    /// memories directly in `path_prefix` and one [`MemoryPrefix`] per subdirectory, interleaved
    /// in path order (prefixes count toward `limit`).
    pub async fn list_memories(
        &self,
        store_id: &str,
        params: ListMemories,
    ) -> Result<Page<MemoryListItem>> {
        let limit = page_size(params.limit, params.view)?;
        let depth = params.depth.unwrap_or(0);
        if depth != 0 && depth != 1 {
            return Err(StoreError::invalid("depth must be 0 or 1"));
        }
        let prefix = params.path_prefix.unwrap_or_else(|| "/".to_owned());
        validate_prefix(&prefix)?;
        let (mut lower, mut inclusive) = (prefix.clone(), true);
        if let Some(token) = &params.page {
            match Cursor::decode(token)? {
                Cursor::Memories { p, d, l, x } if p == prefix && d == depth => {
                    (lower, inclusive) = (l, x);
                }
                _ => {
                    return Err(StoreError::invalid(
                        "page is not a page token of this listing",
                    ));
                }
            }
        }
        let with_content = params.view == View::Full;
        let upper = upper_of(&prefix);
        let store_id = store_id.to_owned();
        let ws = self.workspace.clone();
        self.blocking(false, move |tx| {
            store_in(tx, &ws, &store_id)?;
            let mut data = Vec::new();
            let scan = |lower: &str, inclusive: bool, limit: usize| MemoryScan {
                lower: lower.to_owned(),
                lower_inclusive: inclusive,
                upper: upper.clone(),
                limit,
                with_content,
            };
            while data.len() < limit {
                let want = if depth == 0 { limit - data.len() } else { 1 };
                let rows = tx.memories(&store_id, &scan(&lower, inclusive, want))?;
                let got = rows.len();
                for m in rows {
                    let rest = &m.path[prefix.len()..];
                    match rest.find('/') {
                        Some(i) if depth == 1 => {
                            let dir = format!("{prefix}{}", &rest[..=i]);
                            (lower, inclusive) = (upper_of(&dir), true);
                            data.push(MemoryListItem::Prefix(MemoryPrefix { path: dir }));
                        }
                        _ => {
                            (lower, inclusive) = (m.path.clone(), false);
                            data.push(MemoryListItem::Memory(m));
                        }
                    }
                }
                if got < want {
                    break;
                }
            }
            let more = data.len() == limit
                && !tx
                    .memories(&store_id, &scan(&lower, inclusive, 1))?
                    .is_empty();
            let next_page = more.then(|| {
                Cursor::Memories {
                    p: prefix.clone(),
                    d: depth,
                    l: lower.clone(),
                    x: inclusive,
                }
                .encode()
            });
            Ok(Page { data, next_page })
        })
        .await
    }
}

/// The version recording `memory` as it now is.
fn version_of(memory: &Memory, operation: Operation, actor: Option<Actor>) -> MemoryVersion {
    MemoryVersion {
        id: memory.memory_version_id.clone(),
        memory_store_id: memory.memory_store_id.clone(),
        memory_id: memory.id.clone(),
        operation,
        created_at: memory.updated_at,
        created_by: actor,
        path: Some(memory.path.clone()),
        content: memory.content.clone(),
        content_sha256: Some(memory.content_sha256.clone()),
        content_size_bytes: Some(memory.content_size_bytes),
        redacted_at: None,
        redacted_by: None,
    }
}
