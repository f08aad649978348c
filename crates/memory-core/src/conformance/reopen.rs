//! Checks that open one store more than once: read-only opens change nothing, and stores
//! opened separately on one place (as separate processes open it, each with its own
//! connections, caches and counters) keep the file limit and lose no edit between them.
//!
//! A backend describes how to open its store again with [`Reopen`], then runs them all with
//! [`run_all`]:
//!
//! ```
//! use std::sync::Arc;
//!
//! use memory_core::conformance::reopen::{self, Reopen};
//! use memory_core::{InMemoryStorage, MemoryPath, ReadOnly, Storage};
//!
//! /// One in-memory store "opened" again: the same map, or the same map read-only.
//! struct Shared(Arc<InMemoryStorage>);
//!
//! #[memory_core::async_trait]
//! impl Reopen for Shared {
//!     async fn open(&self) -> Arc<dyn Storage> {
//!         self.0.clone()
//!     }
//!     async fn open_read_only(&self) -> Arc<dyn Storage> {
//!         Arc::new(ReadOnly::new(self.0.clone()))
//!     }
//!     async fn snapshot(&self) -> String {
//!         let mut text = String::new();
//!         for meta in self.0.list(&MemoryPath::root()).await.unwrap() {
//!             let file = self.0.read(&meta.path).await.unwrap();
//!             text += &format!("{} {:?} {:?}\n", meta.path, file.version, file.contents);
//!         }
//!         text
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_multi_thread().build().unwrap().block_on(async {
//! reopen::run_all(&Shared(Arc::new(InMemoryStorage::new()))).await;
//! # });
//! ```
//!
//! Each check expects the store empty and leaves it empty. The checks that race spawn tasks;
//! run them on a multi-threaded tokio runtime.

use std::sync::Arc;

use async_trait::async_trait;

use super::storage::{
    clear, concurrent_updates_lose_nothing_across, create_within_race_at_limit_across, p,
    refuses_every_change,
};
use crate::{MemoryPath, Storage, WriteMode};

/// How a backend opens one store again, for the checks of this module.
#[async_trait]
pub trait Reopen: Send + Sync {
    /// The store, opened read-write (creating it on the first call if the backend does).
    async fn open(&self) -> Arc<dyn Storage>;
    /// The same store opened read-only.
    async fn open_read_only(&self) -> Arc<dyn Storage>;
    /// Everything the backend keeps for this store (its folder's entries with their bytes
    /// and times, its rows, its objects), as text to compare: a read-only open must leave it
    /// as it was.
    async fn snapshot(&self) -> String;
}

/// Runs every check of this module, in order. Panics on the first failure.
pub async fn run_all(backend: &dyn Reopen) {
    read_only_open_changes_nothing(backend).await;
    creates_from_separate_opens_keep_the_limit(backend).await;
    edits_from_separate_opens_lose_nothing(backend).await;
}

/// A read-only open reads what the store holds (read, stat, list, file count) and refuses
/// every change, and the backend's state is byte for byte as it was before the open.
pub async fn read_only_open_changes_nothing(backend: &dyn Reopen) {
    let writer = backend.open().await;
    for (path, text) in [("/memories/tea.md", "green\n"), ("/memories/a/b.md", "b")] {
        if let Err(e) = writer
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
        {
            panic!("{writer}: setup: create {path}: {e:?}");
        }
    }
    drop(writer);
    let before = backend.snapshot().await;
    let reader = backend.open_read_only().await;
    let tea = reader.read(&p("/memories/tea.md")).await;
    assert!(
        matches!(&tea, Ok(file) if file.contents == b"green\n"),
        "{reader}: a read-only open reads the store's files, got {tea:?}"
    );
    let listed = reader
        .list(&MemoryPath::root())
        .await
        .map(|files| files.len());
    assert!(
        matches!(listed, Ok(2)),
        "{reader}: a read-only open lists the store's two files, got {listed:?}"
    );
    refuses_every_change(&*reader, &p("/memories/tea.md")).await;
    drop(reader);
    let after = backend.snapshot().await;
    if before != after {
        panic!(
            "a read-only open changed the backend's state; lines that differ:\n{}",
            differing_lines(&before, &after)
        );
    }
    clear(&*backend.open().await).await;
}

/// The lines of one snapshot missing from the other, each cut to 200 characters.
fn differing_lines(before: &str, after: &str) -> String {
    let cut = |line: &str| line.chars().take(200).collect::<String>();
    let gone = before.lines().filter(|l| !after.lines().any(|a| a == *l));
    let new = after.lines().filter(|l| !before.lines().any(|b| b == *l));
    gone.map(|l| format!("- {}\n", cut(l)))
        .chain(new.map(|l| format!("+ {}\n", cut(l))))
        .collect()
}

/// Stores opened separately on one place, for the races below.
async fn separate_opens(backend: &dyn Reopen) -> Vec<Arc<dyn Storage>> {
    const OPENS: usize = 4;
    let mut stores = Vec::new();
    for _ in 0..OPENS {
        stores.push(backend.open().await);
    }
    stores
}

/// Creates racing at `max_files - 1` from separately opened stores on one place: exactly one
/// succeeds, every other one is StoreFull, and the store holds `max_files` files (the storage
/// tier's race, [`create_within_race_at_limit_across`], over four opens).
pub async fn creates_from_separate_opens_keep_the_limit(backend: &dyn Reopen) {
    create_within_race_at_limit_across(&separate_opens(backend).await).await;
}

/// Separately opened stores each append lines to one file by compare-and-swap (read, then
/// `Update` at the version read, again on Conflict): every line of every open is there once
/// (the storage tier's [`concurrent_updates_lose_nothing_across`], over four opens).
pub async fn edits_from_separate_opens_lose_nothing(backend: &dyn Reopen) {
    let stores = separate_opens(backend).await;
    concurrent_updates_lose_nothing_across(&stores).await;
    clear(&*stores[0]).await;
}

/// A [`Reopen::snapshot`] for a backend that keeps its store in a folder: every entry below
/// `dir` (hidden ones included, links not followed), in order, with its kind, its bytes and
/// its modification time.
///
/// # Panics
/// When `dir` or an entry below it cannot be read.
pub fn folder_snapshot(dir: &std::path::Path) -> String {
    let mut entries = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let listing = std::fs::read_dir(&at)
            .unwrap_or_else(|e| panic!("snapshot: read folder {}: {e}", at.display()));
        for entry in listing {
            let path = entry
                .unwrap_or_else(|e| panic!("snapshot: list {}: {e}", at.display()))
                .path();
            let meta = std::fs::symlink_metadata(&path)
                .unwrap_or_else(|e| panic!("snapshot: stat {}: {e}", path.display()));
            let bytes = if meta.is_file() {
                std::fs::read(&path)
                    .unwrap_or_else(|e| panic!("snapshot: read {}: {e}", path.display()))
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            let name = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            entries.insert(name, (meta.file_type(), bytes, meta.modified().ok()));
        }
    }
    entries
        .iter()
        .map(|(name, (kind, bytes, modified))| format!("{name} {kind:?} {modified:?} {bytes:?}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InMemoryStorage, ReadOnly};

    /// One in-memory map opened again; `sloppy` makes the read-only open rewrite a file with
    /// the bytes it holds (a new version, nothing a read would see).
    struct Shared {
        store: Arc<InMemoryStorage>,
        sloppy: bool,
    }

    #[async_trait]
    impl Reopen for Shared {
        async fn open(&self) -> Arc<dyn Storage> {
            self.store.clone()
        }
        async fn open_read_only(&self) -> Arc<dyn Storage> {
            if self.sloppy {
                let tea = p("/memories/tea.md");
                let bytes = self.store.read(&tea).await.unwrap().contents;
                self.store
                    .write(&tea, bytes, WriteMode::Overwrite)
                    .await
                    .unwrap();
            }
            Arc::new(ReadOnly::new(self.store.clone()))
        }
        async fn snapshot(&self) -> String {
            let mut text = String::new();
            for meta in self.store.list(&MemoryPath::root()).await.unwrap() {
                let version = self.store.read(&meta.path).await.unwrap().version;
                text += &format!("{} {version:?}\n", meta.path);
            }
            text
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[should_panic(expected = "a read-only open changed the backend's state")]
    async fn catches_a_read_only_open_that_writes() {
        let backend = Shared {
            store: Arc::new(InMemoryStorage::new()),
            sloppy: true,
        };
        read_only_open_changes_nothing(&backend).await;
    }

    /// "Opens" that are separate stores share no limit: the race check sees several winners.
    struct Separate;

    #[async_trait]
    impl Reopen for Separate {
        async fn open(&self) -> Arc<dyn Storage> {
            Arc::new(InMemoryStorage::new())
        }
        async fn open_read_only(&self) -> Arc<dyn Storage> {
            Arc::new(ReadOnly::new(InMemoryStorage::new()))
        }
        async fn snapshot(&self) -> String {
            String::new()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[should_panic(expected = "exactly one succeeds")]
    async fn catches_opens_that_do_not_share_the_limit() {
        creates_from_separate_opens_keep_the_limit(&Separate).await;
    }
}
