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

/// What a store can hold beyond plain text files at ordinary paths.
///
/// Most backends have every capability ([`Capabilities::FULL`]). A store with rules of its
/// own (a versioned memory store holds NFC-named UTF-8 text of at most 102,400 bytes; a store
/// mounted one level below `/memories` has one level and a few bytes less) declares what it
/// lacks, and the suite runs the narrower form of the checks that need it, or leaves them
/// out: never silently, since the declaration is in the caller's test.
///
/// ```
/// use memory_core::conformance::Capabilities;
/// let text_only = Capabilities { binary_files: false, non_nfc_names: false, ..Capabilities::FULL };
/// assert!(text_only.large_files);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Files of any bytes (images, non-UTF-8 data), not only UTF-8 text.
    pub binary_files: bool,
    /// Names in any Unicode normalization form (`e\u{301}` beside `\u{e9}`).
    pub non_nfc_names: bool,
    /// Files larger than the tool's 102,400-byte limit, written through the storage.
    pub large_files: bool,
    /// How many levels below `/memories` a path may go.
    pub max_depth: usize,
    /// How long a path may be, in bytes, `/memories` included.
    pub max_path_bytes: usize,
}

impl Capabilities {
    /// Everything: any bytes, any names, the full path limits.
    pub const FULL: Capabilities = Capabilities {
        binary_files: true,
        non_nfc_names: true,
        large_files: true,
        max_depth: crate::MAX_SEGMENTS,
        max_path_bytes: crate::MAX_PATH_BYTES,
    };
}

/// Runs both tiers on `storage`, which must be empty: every storage-level check, then every
/// command-level check (golden outputs, concurrency, limits). Panics on the first failure.
pub async fn run_all(storage: Arc<dyn Storage>) {
    run_all_with(storage, Capabilities::FULL).await;
}

/// [`run_all`] for a store with fewer [`Capabilities`].
pub async fn run_all_with(storage: Arc<dyn Storage>, caps: Capabilities) {
    storage::run_all_with(storage.clone(), caps).await;
    commands::run_all_with(storage, caps).await;
}
