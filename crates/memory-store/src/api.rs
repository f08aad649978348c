//! [`StoresApi`]: the memory-stores API as one trait, implemented by the engine in this
//! process ([`Acting`]) and by HTTP clients of `memory serve` (memory-mounts' `HttpStores`).

use std::fmt;

use async_trait::async_trait;

use crate::engine::MemoryStores;
use crate::error::Result;
use crate::model::{
    Actor, DeletedMemory, ListMemories, Memory, MemoryListItem, Page, Store, UpdateMemory,
};
use crate::persist::{AnyPersistence, Persistence};

/// Page size of the listings the provided methods read (the API's largest).
const PAGE: i64 = 100;

/// The part of the memory-stores API a client of one store uses (the memory-tool bridge):
/// the same calls, parameters and errors whether the store is in this process or behind
/// `memory serve`. Writes are attributed by the implementation: the engine records the
/// [`Actor`] it was given ([`MemoryStores::acting_as`]); a server records the actor it
/// derives from the request.
#[async_trait]
pub trait StoresApi: fmt::Debug + fmt::Display + Send + Sync {
    /// `GET /v1/memory_stores/{id}`.
    async fn retrieve_store(&self, store_id: &str) -> Result<Store>;

    /// `GET …/memories` (in path order).
    async fn list_memories(
        &self,
        store_id: &str,
        params: ListMemories,
    ) -> Result<Page<MemoryListItem>>;

    /// `GET …/memories/{memory_id}`, with its content.
    async fn retrieve_memory(&self, store_id: &str, memory_id: &str) -> Result<Memory>;

    /// `POST …/memories`, only while the store holds fewer than `max_memories` memories (the
    /// count and the create are one step: of creates racing at the limit one wins). Never
    /// overwrites.
    async fn create_memory(
        &self,
        store_id: &str,
        path: &str,
        content: &str,
        max_memories: Option<u64>,
    ) -> Result<Memory>;

    /// `POST …/memories/{memory_id}`: new content and/or path, with an optional precondition.
    async fn update_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        params: UpdateMemory,
    ) -> Result<Memory>;

    /// `DELETE …/memories/{memory_id}`, with an optional `expected_content_sha256`.
    async fn delete_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        expected_content_sha256: Option<&str>,
    ) -> Result<DeletedMemory>;

    /// The actor this client's writes are recorded as, when it decides it (`None` when the
    /// server does).
    fn actor(&self) -> Option<&Actor> {
        None
    }

    /// The memory at exactly `path`, with its content when `with_content`. The API has no
    /// lookup by path: the provided method scans the parent's direct children (path order,
    /// so it stops at the first item past `path`) and fetches the content by id.
    async fn memory_at_path(
        &self,
        store_id: &str,
        path: &str,
        with_content: bool,
    ) -> Result<Option<Memory>> {
        let parent = &path[..=path.rfind('/').unwrap_or(0)];
        let mut page = None;
        let found = 'scan: loop {
            let got = self
                .list_memories(
                    store_id,
                    ListMemories {
                        path_prefix: Some(parent.to_owned()),
                        depth: Some(1),
                        limit: Some(PAGE),
                        page,
                        ..Default::default()
                    },
                )
                .await?;
            for item in got.data {
                match item {
                    MemoryListItem::Memory(m) if m.path == path => break 'scan Some(m),
                    MemoryListItem::Memory(m) if m.path.as_str() > path => break 'scan None,
                    MemoryListItem::Prefix(d) if d.path.as_str() > path => break 'scan None,
                    _ => {}
                }
            }
            match got.next_page {
                Some(next) => page = Some(next),
                None => break None,
            }
        };
        match found {
            Some(m) if with_content => match self.retrieve_memory(store_id, &m.id).await {
                Ok(full) if full.path == path => Ok(Some(full)),
                // Renamed or deleted since the listing: nothing at the path any more.
                Ok(_) | Err(crate::StoreError::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            },
            other => Ok(other),
        }
    }

    /// How many memories the store holds. The provided method pages through the listing.
    async fn count_memories(&self, store_id: &str) -> Result<u64> {
        let mut n = 0;
        let mut page = None;
        loop {
            let got = self
                .list_memories(
                    store_id,
                    ListMemories {
                        limit: Some(PAGE),
                        page,
                        ..Default::default()
                    },
                )
                .await?;
            n += got.data.len() as u64;
            match got.next_page {
                Some(next) => page = Some(next),
                None => return Ok(n),
            }
        }
    }
}

/// An engine in this process whose writes are recorded as one actor: the local
/// [`StoresApi`]. Made by [`MemoryStores::acting_as`].
#[derive(Debug, Clone)]
pub struct Acting<P: Persistence = AnyPersistence> {
    engine: MemoryStores<P>,
    actor: Option<Actor>,
}

impl<P: Persistence> MemoryStores<P> {
    /// This engine as a [`StoresApi`] whose writes are recorded as `actor`.
    pub fn acting_as(&self, actor: Option<Actor>) -> Acting<P> {
        Acting {
            engine: self.clone(),
            actor,
        }
    }
}

impl<P: Persistence> Acting<P> {
    /// The engine.
    pub fn engine(&self) -> &MemoryStores<P> {
        &self.engine
    }
}

/// The persistence's name (`sqlite:PATH`, or a database's host, port and name).
impl<P: Persistence> fmt::Display for Acting<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.engine.persistence(), f)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<P: Persistence> StoresApi for Acting<P> {
    async fn retrieve_store(&self, store_id: &str) -> Result<Store> {
        self.engine.retrieve_store(store_id).await
    }

    async fn list_memories(
        &self,
        store_id: &str,
        params: ListMemories,
    ) -> Result<Page<MemoryListItem>> {
        self.engine.list_memories(store_id, params).await
    }

    async fn retrieve_memory(&self, store_id: &str, memory_id: &str) -> Result<Memory> {
        self.engine.retrieve_memory(store_id, memory_id).await
    }

    async fn create_memory(
        &self,
        store_id: &str,
        path: &str,
        content: &str,
        max_memories: Option<u64>,
    ) -> Result<Memory> {
        self.engine
            .create_memory_within(
                store_id,
                path,
                content,
                max_memories.unwrap_or(u64::MAX),
                self.actor.clone(),
            )
            .await
    }

    async fn update_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        params: UpdateMemory,
    ) -> Result<Memory> {
        self.engine
            .update_memory(store_id, memory_id, params, self.actor.clone())
            .await
    }

    async fn delete_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        expected_content_sha256: Option<&str>,
    ) -> Result<DeletedMemory> {
        self.engine
            .delete_memory(
                store_id,
                memory_id,
                expected_content_sha256,
                self.actor.clone(),
            )
            .await
    }

    fn actor(&self) -> Option<&Actor> {
        self.actor.as_ref()
    }

    /// One lookup by path (the engine has the index the API lacks).
    async fn memory_at_path(
        &self,
        store_id: &str,
        path: &str,
        with_content: bool,
    ) -> Result<Option<Memory>> {
        let found = self.engine.memory_at_path(store_id, path).await?;
        Ok(found.map(|m| {
            if with_content {
                m
            } else {
                m.with_view(crate::View::Basic)
            }
        }))
    }

    /// The engine's own count, one query.
    async fn count_memories(&self, store_id: &str) -> Result<u64> {
        self.engine.count_memories(store_id).await
    }
}
