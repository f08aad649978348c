//! The shared test suite every [`Storage`] backend and wrapper runs.
//!
//! **Not a stable API**: compiled only with the `conformance` feature (and in this crate's own
//! tests), for the workspace's backend crates to use from their tests. Functions may be added,
//! renamed or tightened at any time.
//!
//! - [`storage`]: one check per behaviour of the `Storage` trait, and
//!   [`storage::run_all`] to run them all on an empty store.
//! - [`commands`]: the six commands through `MemoryTool`, against golden outputs.
//! - [`search`]: one check per behaviour of `Storage::search`, run by [`storage::run_all`].
//! - [`faults`]: [`faults::Faulty`], a wrapper that injects failures and conflicts and runs
//!   hooks in place of methods, and [`faults::Recording`], a wrapper that records every call.
//! - [`ProvidedDefaults`]: a wrapper that forwards the six base methods only, so every
//!   provided method of the trait runs.
//! - [`reopen`]: checks that open one store more than once (a read-only open changes
//!   nothing; separate opens keep the file limit and lose no edit), for backends that describe
//!   how to reopen their store ([`reopen::Reopen`]).
//! - [`processes`]: checks with several OS processes on one store (edits of one file lose
//!   nothing, creates racing at the limit leave one winner), for a backend's `harness = false`
//!   test binary that describes how a process opens its store ([`processes::OpenAt`]).
//! - [`history`]: each file's earlier versions (every change a version, restore, redact,
//!   renames, pruning, `history=off`), for backends that describe how to open a fresh store
//!   with given history options ([`history::OpenHistory`]).
//! - [`notes`]: generated notes for the search benches.

pub mod commands;
pub mod faults;
pub mod history;
pub mod notes;
pub mod processes;
mod provided;
pub mod reopen;
pub mod search;
pub mod storage;

use std::sync::Arc;

use crate::Storage;

pub use provided::ProvidedDefaults;

/// Moved to [`memory_core::Capabilities`](crate::Capabilities); re-exported here for the
/// tests written against the old place.
pub use crate::Capabilities;

/// Runs both tiers on `storage`, which must be empty: every storage-level check, then every
/// command-level check (golden outputs, concurrency, limits), in the form the store's
/// [`Storage::capabilities`] allows. Panics on the first failure.
pub async fn run_all(storage: Arc<dyn Storage>) {
    let caps = storage.capabilities();
    run_all_with(storage, caps).await;
}

/// [`run_all`] with capabilities given by the caller instead of read from the store (for a
/// test that narrows them further than the store declares).
pub async fn run_all_with(storage: Arc<dyn Storage>, caps: Capabilities) {
    storage::run_all_with(storage.clone(), caps).await;
    commands::run_all_with(storage, caps).await;
}
