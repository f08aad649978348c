//! Storage-level conformance checks: one `pub async fn` per behaviour of [`Storage`].
//!
//! Each check expects an empty store, leaves whatever it wrote behind (the caller clears the
//! store between checks; [`run_all`] does) and panics with a message naming the behaviour and
//! the backend (its `Display`) when the backend breaks the contract.
//!
//! A backend crate runs them all with one line:
//!
//! ```no_run
//! # async fn demo() {
//! use std::sync::Arc;
//! use memory_core::InMemoryStorage;
//!
//! memory_core::conformance::storage::run_all(Arc::new(InMemoryStorage::new())).await;
//! # }
//! ```
//!
//! The checks that spawn tasks take an `Arc<dyn Storage>`; run them on a multi-threaded tokio
//! runtime (`#[tokio::test(flavor = "multi_thread")]`) to get real parallelism.
//!
//! One file per operation, as OpenDAL's behaviour tests are laid out: `read.rs`, `stat.rs`
//! (with `set_modified`), `write.rs` (the three modes, alone and racing), `delete.rs`,
//! `list.rs`, `rename.rs`, `file_count.rs`, `create_within.rs`, `names.rs` (names and content
//! every operation carries) and `read_only.rs`. Every check is re-exported here, so a check is
//! `conformance::storage::<name>` whichever file holds it; the helpers the checks share live
//! in this file.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Arc;

use super::Capabilities;
use crate::{Entry, Error, FileMeta, MemoryPath, Result, Storage, Version, WriteMode};

/// Parses a path the suite knows to be valid.
pub(super) fn p(raw: &str) -> MemoryPath {
    match MemoryPath::parse(raw) {
        Ok(path) => path,
        Err(e) => panic!("conformance suite bug: {raw:?} is not a valid path: {e}"),
    }
}

/// Unwraps a result the check needs, naming the step and the backend on failure.
pub(super) fn ok<T>(storage: &dyn Storage, what: &str, result: Result<T>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("{storage}: {what}: unexpected error: {e:?}"),
    }
}

/// Returns the error of a result that had to fail, naming the behaviour on success.
fn err<T: Debug>(storage: &dyn Storage, what: &str, result: Result<T>) -> Error {
    match result {
        Ok(value) => panic!("{storage}: {what}: expected an error, got Ok({value:?})"),
        Err(e) => e,
    }
}

/// Writes a file whatever is there, panicking on failure.
pub(super) async fn put(
    storage: &dyn Storage,
    path: &str,
    contents: impl Into<Vec<u8>>,
) -> Version {
    ok(
        storage,
        &format!("setup: overwrite {path}"),
        storage
            .write(&p(path), contents.into(), WriteMode::Overwrite)
            .await,
    )
}

/// Reads a file's bytes, panicking on failure.
async fn get(storage: &dyn Storage, path: &str) -> Vec<u8> {
    ok(
        storage,
        &format!("read {path}"),
        storage.read(&p(path)).await,
    )
    .contents
}

async fn stat(storage: &dyn Storage, path: &str) -> Option<Entry> {
    ok(
        storage,
        &format!("stat {path}"),
        storage.stat(&p(path)).await,
    )
}

/// The paths of every file below `dir`, as strings, in the backend's order.
async fn list_paths(storage: &dyn Storage, dir: &str) -> Vec<String> {
    ok(storage, &format!("list {dir}"), storage.list(&p(dir)).await)
        .into_iter()
        .map(|meta| meta.path.as_str().to_owned())
        .collect()
}

fn strings(paths: &[&str]) -> Vec<String> {
    paths.iter().map(|s| (*s).to_owned()).collect()
}

fn is_dir(entry: &Option<Entry>) -> bool {
    matches!(entry, Some(Entry::Directory))
}

fn file_size(entry: &Option<Entry>) -> Option<u64> {
    match entry {
        Some(Entry::File(meta)) => Some(meta.size),
        _ => None,
    }
}

/// Deletes everything, and checks that the store is then empty.
pub async fn clear(storage: &dyn Storage) {
    ok(
        storage,
        "delete /memories removes every file",
        storage.delete(&MemoryPath::root()).await,
    );
    let left = list_paths(storage, "/memories").await;
    assert!(
        left.is_empty(),
        "{storage}: delete /memories must remove every file, left: {left:?}"
    );
}

async fn count(storage: &dyn Storage, what: &str) -> usize {
    ok(storage, what, storage.file_count().await)
}

mod create_within;
mod delete;
mod file_count;
mod list;
mod names;
mod read;
mod read_only;
mod rename;
mod stat;
mod write;

pub use create_within::*;
pub use delete::*;
pub use file_count::*;
pub use list::*;
pub use names::*;
pub use read::*;
pub use read_only::*;
pub use rename::*;
pub use stat::*;
pub use write::*;

// ---------------------------------------------------------------------------------------------
// run_all

/// Runs every check in this module on `storage`, clearing the store (delete `/memories`)
/// before each one.
///
/// The store must be empty when called, and is empty again afterwards. Panics (with the
/// behaviour and the backend's `Display` in the message) on the first check that fails.
///
/// What the store can hold is read from [`Storage::capabilities`]: for a store with fewer
/// [`Capabilities`], the checks that need more run in their narrower form (text instead of
/// bytes, NFC names only, shallower paths) or, for binary content, not at all. The store's own
/// refusals are for its crate's tests to check.
pub async fn run_all(storage: Arc<dyn Storage>) {
    let caps = storage.capabilities();
    run_all_with(storage, caps).await;
}

/// [`run_all`] with capabilities given by the caller instead of read from the store (for a
/// test that narrows them further than the store declares).
pub async fn run_all_with(storage: Arc<dyn Storage>, caps: Capabilities) {
    let s: &dyn Storage = &*storage;
    let existing = ok(
        s,
        "list before the suite",
        s.list(&MemoryPath::root()).await,
    );
    assert!(
        existing.is_empty(),
        "{s}: conformance::storage::run_all needs an empty store, found {} files: {:?}",
        existing.len(),
        existing
            .iter()
            .take(5)
            .map(|m: &FileMeta| m.path.as_str())
            .collect::<Vec<_>>()
    );

    macro_rules! check {
        ($($name:ident),* $(,)?) => {
            $(
                $name(s).await;
                clear(s).await;
            )*
        };
    }
    macro_rules! check_shared {
        ($($name:ident),* $(,)?) => {
            $(
                $name(Arc::clone(&storage)).await;
                clear(s).await;
            )*
        };
    }

    check!(
        read_returns_last_written,
        read_missing_is_not_found,
        stat_file_has_size,
        stat_directories,
        stat_missing_is_none,
        write_create,
        write_overwrite_replaces_file,
        write_overwrite_directory_is_already_exists,
        write_root_is_refused,
        write_update_at_current_version,
        write_update_stale_version_is_conflict,
        write_update_missing_is_not_found,
        write_parent_is_file_names_ancestor,
        write_creates_parents,
        write_failure_changes_nothing,
        write_versions_change,
        write_same_content_version_still_valid,
        delete_file,
        delete_directory_removes_subtree,
        delete_root_removes_everything,
        delete_missing_is_not_found,
        delete_leaves_no_empty_directories,
        list_sorted_with_sizes,
        list_includes_hidden_files,
        list_whole_segment_prefix,
        list_missing_or_file_is_empty,
        listing_matches_list,
        rename_file,
        rename_directory_moves_every_file,
        rename_missing_is_not_found,
        rename_never_overwrites,
        rename_into_itself,
        rename_to_below_file,
        rename_after_emptied_directory,
        empty_files,
        file_count_counts_every_file,
        create_within_limit,
        set_modified_is_reported,
    );
    unicode_and_spaces_in_names_with(s, caps.non_nfc_names).await;
    clear(s).await;
    if caps.binary_files {
        binary_content_round_trip(s).await;
        clear(s).await;
    }
    deep_nesting_to(s, caps.max_depth, caps.max_path_bytes).await;
    clear(s).await;
    check_shared!(
        read_never_torn,
        write_create_race_one_winner,
        concurrent_creates_one_winner,
        concurrent_updates_lose_nothing,
        create_within_race_at_limit,
        create_within_race_same_path,
    );
    super::search::run_all_with(Arc::clone(&storage), caps).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InMemoryStorage;
    use crate::conformance::ProvidedDefaults;
    use crate::conformance::faults::Faulty;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn conformance_in_memory_multi_thread() {
        run_all(Arc::new(InMemoryStorage::new())).await;
    }

    #[tokio::test]
    async fn conformance_in_memory_current_thread() {
        run_all(Arc::new(InMemoryStorage::new())).await;
    }

    /// The trait's provided rename (copy then delete) over the in-memory store's other
    /// methods: it must conform too.
    fn provided_rename() -> Faulty<InMemoryStorage> {
        Faulty::new(InMemoryStorage::new())
            .on_rename(|inner, from, to| Box::pin(crate::copy_then_delete(inner, from, to)))
    }

    /// A store that breaks compare-and-swap and create-if-absent (both become plain
    /// overwrites), which the suite must catch.
    fn sloppy() -> Faulty<InMemoryStorage> {
        Faulty::new(InMemoryStorage::new()).on_write(|inner, path, contents, _mode| {
            inner.write(path, contents, WriteMode::Overwrite)
        })
    }

    /// The provided methods are right for one writer (racing creates need an override).
    #[tokio::test]
    async fn provided_file_count_and_create_within_for_one_writer() {
        let storage = ProvidedDefaults::new(InMemoryStorage::new());
        file_count_counts_every_file(&storage).await;
        clear(&storage).await;
        create_within_limit(&storage).await;
        clear(&storage).await;
        // The provided listing and set_modified too (the rename test's store has the
        // in-memory store's own).
        listing_matches_list(&storage).await;
        clear(&storage).await;
        set_modified_is_reported(&storage).await;
    }

    /// The provided `create_within` (count, then create) with a pause between the two steps,
    /// as any backend that awaits I/O between them has: the write yields once first.
    fn count_then_create() -> Arc<dyn Storage> {
        let yields_then_writes =
            Faulty::new(InMemoryStorage::new()).on_write(|inner, path, contents, mode| {
                Box::pin(async move {
                    tokio::task::yield_now().await;
                    inner.write(path, contents, mode).await
                })
            });
        Arc::new(ProvidedDefaults::new(yields_then_writes))
    }

    /// A `create_within` that is not one step passes every single-task check, so the races
    /// must catch it, on one thread as on several.
    #[tokio::test]
    #[should_panic(expected = "exactly one succeeds")]
    async fn suite_catches_a_create_within_that_is_not_atomic_on_one_thread() {
        create_within_race_at_limit(count_then_create()).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[should_panic(expected = "exactly one succeeds")]
    async fn suite_catches_a_create_within_that_is_not_atomic() {
        create_within_race_at_limit(count_then_create()).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn conformance_provided_rename() {
        run_all(Arc::new(provided_rename())).await;
    }

    #[tokio::test]
    #[should_panic(expected = "Faulty(InMemory): create over a file: expected an error")]
    async fn suite_catches_create_that_overwrites() {
        write_create(&sloppy()).await;
    }

    #[tokio::test]
    #[should_panic(expected = "loses no update")]
    async fn suite_catches_lost_updates() {
        concurrent_updates_lose_nothing(Arc::new(sloppy())).await;
    }

    #[tokio::test]
    #[should_panic(expected = "needs an empty store")]
    async fn run_all_refuses_a_non_empty_store() {
        let storage = Arc::new(InMemoryStorage::new());
        storage
            .write(&p("/memories/x"), Vec::new(), WriteMode::Create)
            .await
            .unwrap();
        run_all(storage).await;
    }
}
