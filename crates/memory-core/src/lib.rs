#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod backoff;
mod capabilities;
mod command;
#[cfg(any(feature = "conformance", test))]
pub mod conformance;
mod error;
mod handler;
pub mod history;
mod in_memory;
mod limits;
#[cfg(feature = "runner")]
pub mod messages;
pub mod options;
mod output;
mod path;
mod policy;
mod render;
pub mod search;
mod storage;
mod tool;
mod windows_names;

/// The attribute on every `impl` of this crate's async traits ([`Storage`], [`MemoryHandler`],
/// and, with the `runner` feature, `messages::Tool` and `messages::MessagesTransport`): write `#[memory_core::async_trait]` on
/// the `impl` block (without it the compiler stops with error E0195). Re-exported from the
/// `async-trait` crate, so an implementation needs no dependency of its own on it.
pub use async_trait::async_trait;
pub use capabilities::Capabilities;
pub use command::{COMMAND_NAMES, InputError, MemoryCommand, ViewRange};
pub use error::{BoxError, Error, Result};
pub use handler::MemoryHandler;
pub use in_memory::InMemoryStorage;
pub use limits::{CreateMode, Limits};
pub use output::{ToolContent, ToolOutput};
pub use path::{
    MAX_PATH_BYTES, MAX_SEGMENT_BYTES, MAX_SEGMENTS, MemoryPath, PathError, PathRule, ROOT,
};
pub use policy::{Prefixed, ReadOnly, read_only_refusal};
pub use render::format_size;
pub use storage::{
    Entry, FileMeta, Listing, Storage, StoredFile, Version, WriteMode, check_rename_preconditions,
    check_rename_preconditions_with, copy_then_delete,
};
pub use tool::MemoryTool;
pub use windows_names::windows_name_problem;
