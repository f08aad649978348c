#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod error;
mod index;
mod indexed;
#[cfg(feature = "semantic")]
pub mod semantic;

pub use error::LinkedIndex;
pub use index::{INDEX_DIR, INDEX_FILE, IndexLocation, user_cache_dir};
pub use indexed::{IndexOptions, Indexed, Refresh};
