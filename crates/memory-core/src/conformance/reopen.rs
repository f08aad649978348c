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

use super::storage::refuses_every_change;
use crate::{Error, MemoryPath, Storage, WriteMode};

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

fn p(raw: &str) -> MemoryPath {
    match MemoryPath::parse(raw) {
        Ok(path) => path,
        Err(e) => panic!("conformance suite bug: {raw:?} is not a valid path: {e}"),
    }
}

/// Empties the store through a read-write open.
async fn clear(storage: &dyn Storage) {
    if let Err(e) = storage.delete(&MemoryPath::root()).await {
        panic!("{storage}: clearing the store after a check: {e:?}");
    }
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

/// Creates racing at `max_files - 1` from separately opened stores on one place: exactly one
/// succeeds, every other one is StoreFull, and the store holds `max_files` files.
pub async fn creates_from_separate_opens_keep_the_limit(backend: &dyn Reopen) {
    const MAX_FILES: usize = 3;
    const OPENS: usize = 4;
    let mut stores = Vec::new();
    for _ in 0..OPENS {
        stores.push(backend.open().await);
    }
    for round in 0..3 {
        for path in ["/memories/full/a.md", "/memories/full/b.md"] {
            if let Err(e) = stores[0]
                .write(&p(path), b"x".to_vec(), WriteMode::Overwrite)
                .await
            {
                panic!("{}: setup: write {path}: {e:?}", stores[0]);
            }
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(OPENS));
        let mut handles = Vec::new();
        for (i, store) in stores.iter().enumerate() {
            let store = Arc::clone(store);
            let barrier = Arc::clone(&barrier);
            handles.push(tokio::spawn(async move {
                let path = p(&format!("/memories/full/new{i}.md"));
                barrier.wait().await;
                store.create_within(&path, b"n".to_vec(), MAX_FILES).await
            }));
        }
        let mut winners = 0;
        for (i, handle) in handles.into_iter().enumerate() {
            let result = match handle.await {
                Ok(result) => result,
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            };
            match result {
                Ok(_) => winners += 1,
                Err(Error::StoreFull {
                    max_files: MAX_FILES,
                }) => {}
                Err(e) => panic!(
                    "{}: creates racing from separate opens: the losers get StoreFull, open {i} \
                     got {e:?} (round {round})",
                    stores[i]
                ),
            }
        }
        assert_eq!(
            winners, 1,
            "{}: of creates racing at max_files - 1 from {OPENS} separate opens exactly one \
             succeeds (round {round})",
            stores[0]
        );
        let count = stores[0].list(&MemoryPath::root()).await.map(|f| f.len());
        assert!(
            matches!(count, Ok(MAX_FILES)),
            "{}: the store holds max_files files after the race, got {count:?}",
            stores[0]
        );
        clear(&*stores[0]).await;
    }
}

/// Separately opened stores each append lines to one file by compare-and-swap (read, then
/// `Update` at the version read, again on Conflict): every line of every open is there once.
pub async fn edits_from_separate_opens_lose_nothing(backend: &dyn Reopen) {
    const OPENS: usize = 4;
    const LINES: usize = 10;
    let file = p("/memories/shared.md");
    let first = backend.open().await;
    if let Err(e) = first.write(&file, Vec::new(), WriteMode::Create).await {
        panic!("{first}: setup: create {file}: {e:?}");
    }
    let mut handles = Vec::new();
    for open in 0..OPENS {
        let store = if open == 0 {
            Arc::clone(&first)
        } else {
            backend.open().await
        };
        let file = file.clone();
        handles.push(tokio::spawn(async move {
            for line in 0..LINES {
                loop {
                    let current = match store.read(&file).await {
                        Ok(current) => current,
                        Err(e) => panic!("{store}: read {file} to edit it: {e:?}"),
                    };
                    let mut contents = current.contents;
                    contents.extend_from_slice(format!("open {open} line {line}\n").as_bytes());
                    match store
                        .write(&file, contents, WriteMode::Update(current.version))
                        .await
                    {
                        Ok(_) => break,
                        Err(Error::Conflict { .. }) => tokio::task::yield_now().await,
                        Err(e) => panic!("{store}: compare-and-swap of {file}: {e:?}"),
                    }
                }
            }
        }));
    }
    for handle in handles {
        if let Err(e) = handle.await {
            std::panic::resume_unwind(e.into_panic());
        }
    }
    let text = match first.read(&file).await {
        Ok(file) => String::from_utf8_lossy(&file.contents).into_owned(),
        Err(e) => panic!("{first}: read {file} after the edits: {e:?}"),
    };
    for open in 0..OPENS {
        for line in 0..LINES {
            let wanted = format!("open {open} line {line}\n");
            assert_eq!(
                text.matches(&wanted).count(),
                1,
                "{first}: every edit from {OPENS} separate opens is kept once: {wanted:?}"
            );
        }
    }
    clear(&*first).await;
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
