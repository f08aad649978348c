#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod count;
mod error;
mod folders;
mod foreign;
mod s3;
mod storage;
#[cfg(feature = "testing")]
pub mod testing;

pub use s3::{S3OpenError, S3Options, URL_OPTIONS};
pub use storage::ObjectStoreStorage;

/// The object_store crate this backend is built on, re-exported so that callers can build a
/// store (`object_store::memory::InMemory`, a custom `AmazonS3Builder`...) with the same version.
pub use object_store;
