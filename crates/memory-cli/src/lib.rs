#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod exec;
pub mod lines;
pub mod store_url;

/// The Rust examples of the workspace's root README, compiled and run as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct RootReadmeDoctests;
