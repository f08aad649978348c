#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod error;
#[cfg(feature = "http")]
mod http;
mod mounts;
mod spec;
mod store;
pub mod sync;
mod url;

#[cfg(feature = "http")]
pub use http::HttpStores;
pub use mounts::{
    Access, EMPTY_MARK, MAX_INSTRUCTIONS_CHARS, MAX_MOUNTS, Mount, MountError, Mounts, MountsError,
    slug,
};
pub use spec::{
    MountInstructions, MountInstructionsError, MountSpec, MountSpecError, new_session_id,
};
pub use store::StoreStorage;
pub use url::{StoreLocation, VersionedStoreUrl, VersionedStoreUrlError};

/// The store engine, for opening stores and reading their history.
pub use memory_store;
