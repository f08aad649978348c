//! Shared helpers of the integration tests.

#![allow(dead_code, unreachable_pub)]

#[cfg(feature = "semantic")]
pub mod model;
pub mod s3;
