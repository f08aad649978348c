#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod count;
mod delete;
mod error;
mod folders;
mod history;
mod layout;
mod list;
mod options;
mod read;
mod rename;
mod resolve;
mod storage;
mod store;
mod sys;
mod temp;
mod times;
mod url;
mod write;

pub use crate::options::{Blocking, FsOptions, HistoryOptions, SyncMode};
pub use crate::storage::FsStorage;
pub use crate::url::{FsOpenError, URL_OPTIONS, fs_url_path};
