//! Shared helpers of the integration tests.

#![allow(dead_code, unreachable_pub, unused_imports)]

#[cfg(feature = "semantic")]
pub mod model;
/// The S3 test server (memory-s3's `testing` feature).
pub use memory_s3::testing as s3;
