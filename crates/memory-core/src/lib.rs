#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

#[cfg(any(feature = "conformance", test))]
pub mod conformance;
mod error;
mod in_memory;
mod path;
mod storage;

pub use error::{BoxError, Error, Result};
pub use in_memory::InMemoryStorage;
pub use path::{MAX_PATH_BYTES, MAX_SEGMENT_BYTES, MAX_SEGMENTS, MemoryPath, PathError, PathRule, ROOT};
pub use storage::{Entry, FileMeta, Storage, StoredFile, Version, WriteMode, copy_then_delete};
