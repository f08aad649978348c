//! The shared test suite every [`Storage`](crate::Storage) backend and wrapper runs.
//!
//! **Not a stable API**: compiled only with the `conformance` feature (and in this crate's own
//! tests), for the workspace's backend crates to use from their tests. Functions may be added,
//! renamed or tightened at any time.
//!
//! - [`storage`]: one check per behaviour of the `Storage` trait, and
//!   [`storage::run_all`] to run them all on an empty store.
//! - [`faults`]: [`faults::Faulty`], a wrapper that injects failures and conflicts, and
//!   [`faults::Recording`], a wrapper that records every call.

pub mod faults;
pub mod storage;
