//! Mounts through the memory tool: the table, read-only enforcement for every writing command,
//! writes outside every mount, renames within and across mounts, and attribution of every
//! version to the session actor. Here the fixture (three stores mounted) and the tool's
//! helpers; the tests are in a module per area.

#[path = "../common/mod.rs"]
mod common;
mod search;
mod table;
mod writes;

use std::sync::Arc;

use common::{SESSION, new_store, p};
use memory_core::{
    Error, InMemoryStorage, MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode,
};
use memory_mounts::{Access, MAX_MOUNTS, Mount, Mounts, MountsError, StoreStorage};
use memory_store::{Actor, ListVersions, MemoryStores, Operation, View};
use serde_json::{Value, json};

struct Fixture {
    engine: MemoryStores,
    handbook: String,
    notes: String,
    tool: MemoryTool<Mounts>,
}

/// A read-only "Team Handbook" store holding `/onboarding.md`, and an empty read-write "User
/// Notes" store, mounted in that order.
async fn fixture() -> Fixture {
    let engine = MemoryStores::open_in_memory().unwrap();
    let handbook = new_store(&engine, "Team Handbook", "How the team works.").await;
    let notes = new_store(&engine, "User Notes", "").await;
    engine
        .create_memory(
            &handbook,
            "/onboarding.md",
            "Read the runbook.\n",
            Some(Actor::user("user_admin")),
        )
        .await
        .unwrap();
    let mounts = Mounts::new([
        store_mount(&engine, &handbook, Access::ReadOnly).await,
        store_mount(&engine, &notes, Access::ReadWrite).await,
    ])
    .unwrap();
    Fixture {
        engine,
        handbook,
        notes,
        tool: MemoryTool::new(mounts),
    }
}

/// The store `id` of `engine` mounted with `access`, for the session [`SESSION`].
async fn store_mount(engine: &MemoryStores, id: &str, access: Access) -> Mount {
    Mount::store(
        StoreStorage::local(engine.clone(), id, SESSION).unwrap(),
        access,
    )
    .await
    .unwrap()
}

async fn run(tool: &MemoryTool<Mounts>, input: Value) -> (String, bool) {
    let out = tool.execute(&input).await;
    (out.text().unwrap_or_default().to_owned(), out.is_error)
}

async fn ok(tool: &MemoryTool<Mounts>, input: Value) -> String {
    let (text, is_error) = run(tool, input.clone()).await;
    assert!(!is_error, "{input}: {text}");
    text
}

async fn versions(engine: &MemoryStores, store: &str) -> Vec<memory_store::MemoryVersion> {
    engine
        .list_versions(
            store,
            ListVersions {
                limit: Some(100),
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data
}
