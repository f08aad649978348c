//! Every rule of the store engine (STORES-API.md and STORES.md), over any persistence: a module
//! per area (stores, memories, listing, versions), and here the helpers they share.
//!
//! Included as a module by each persistence's test (memory-store's `tests/engine.rs` over
//! SQLite, memory-postgres' `tests/engine.rs` over PostgreSQL); the including file provides
//! `engine()` and `engine_with(options)`, each a new engine over empty storage.

use std::collections::BTreeMap;

use memory_store::{
    Actor, CreateStore, EngineOptions, ListMemories, ListStores, ListVersions, MemoryListItem,
    MemoryStores, Operation, Precondition, StoreError, Timestamp, UpdateMemory, UpdateStore, View,
};

use super::{engine, engine_with};

mod listing;
mod memories;
mod stores;
mod versions;

/// Creates a store named `Test`; its id.
pub(super) async fn store(e: &MemoryStores) -> String {
    e.create_store(CreateStore {
        name: "Test".into(),
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

/// The content of the memory `id` of the store `s`, as retrieved.
async fn content_of(e: &MemoryStores, s: &str, id: &str) -> Option<String> {
    e.retrieve_memory(s, id).await.unwrap().content
}

fn kind(e: &StoreError) -> (&'static str, u16) {
    (e.error_type(), e.status())
}

fn paths(items: &[MemoryListItem]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            MemoryListItem::Memory(m) => m.path.clone(),
            MemoryListItem::Prefix(p) => format!("prefix:{}", p.path),
        })
        .collect()
}

fn upd(content: Option<&str>, path: Option<&str>, pre: Option<&str>) -> UpdateMemory {
    UpdateMemory {
        content: content.map(Into::into),
        path: path.map(Into::into),
        precondition: pre.map(Precondition::content_sha256),
    }
}
