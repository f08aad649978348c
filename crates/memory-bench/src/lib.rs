#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod concurrent_edits;
pub mod fixtures;
pub mod floor;
pub mod workload;
