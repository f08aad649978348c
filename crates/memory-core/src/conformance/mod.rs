//! The shared test suite every [`Storage`](crate::Storage) backend and wrapper runs.
//!
//! **Not a stable API**: compiled only with the `conformance` feature (and in this crate's own
//! tests), for the workspace's backend crates to use from their tests. Functions may be added,
//! renamed or tightened at any time.
//!
//! - [`storage`]: one check per behaviour of the `Storage` trait, and
//!   [`storage::run_all`] to run them all on an empty store.
//! - [`commands`]: the six commands through `MemoryTool`, against golden outputs.
//! - [`faults`]: [`faults::Faulty`], a wrapper that injects failures and conflicts, and
//!   [`faults::Recording`], a wrapper that records every call.

pub mod commands;
pub mod faults;
pub mod storage;

use std::sync::Arc;

use crate::Storage;

/// Runs both tiers on `storage`, which must be empty: every storage-level check, then every
/// command-level check (golden outputs, concurrency, limits). Panics on the first failure.
pub async fn run_all(storage: Arc<dyn Storage>) {
    storage::run_all(storage.clone()).await;
    commands::run_all(storage).await;
}
