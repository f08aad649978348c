//! Store URLs: which backend `memory` runs on, parsed from `--store` / `MEMORY_STORE`.
//!
//! | URL | store |
//! |---|---|
//! | `PATH`, `file:PATH`, `file:///abs/path` | a directory; `/memories/x` is `PATH/memories/x` |
//! | `mem:` | in memory, gone when the program exits |
//! | `sqlite:PATH` | one SQLite database file (feature `sqlite`) |
//! | `s3://BUCKET[/PREFIX]` | an S3 bucket (feature `s3`); endpoint, region and credentials from the `AWS_*` variables (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP=true`) |
//!
//! A word of two or more letters followed by `:` is read as a scheme, so a directory whose name
//! looks like one (`notes:2024`) is written `./notes:2024` or `file:notes:2024`.
//!
//! Parsing and opening are memory-runner's ([`memory_runner::store`]), the one implementation
//! Rust applications use too; this module re-exports them and adds the program's own policy
//! on top: an `s3://` store is checked with one request when it is opened, so a wrong
//! endpoint, bucket or credentials stop the program at start (exit status 2, naming the
//! endpoint) instead of failing every command.
//!
//! ```
//! use memory_cli::store_url::StoreUrl;
//!
//! assert_eq!("mem:".parse::<StoreUrl>().unwrap(), StoreUrl::Memory);
//! assert_eq!(
//!     "file:./memory".parse::<StoreUrl>().unwrap(),
//!     StoreUrl::Dir("./memory".into())
//! );
//! assert!("ftp://example/x".parse::<StoreUrl>().is_err());
//! ```

use std::sync::Arc;

use memory_core::{MemoryPath, Storage};
pub use memory_runner::store::{OpenError, OpenOptions, StoreUrl, StoreUrlError};

/// Opens the store `url` names, wrapped as `options` say.
///
/// # Errors
/// [`OpenError`] when the backend refuses (a directory that is a file, a database that cannot
/// be created, an S3 endpoint that cannot be reached), when the build lacks the backend's
/// feature, or when the key file is unusable.
pub async fn open(url: &StoreUrl, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
    let store = memory_runner::open_url(url, options).await?;
    if let StoreUrl::S3 { .. } = url {
        // Building an S3 store sends nothing: ask once now (a HEAD and one LIST page, through
        // any wrapper), so that an unreachable endpoint is one clear message at start.
        let probe =
            MemoryPath::parse("/memories/.memory-open-check").map_err(|e| OpenError::Backend {
                url: url.to_string(),
                source: memory_core::Error::backend("s3", e.to_string()),
            })?;
        store
            .stat(&probe)
            .await
            .map_err(|source| OpenError::Backend {
                url: url.to_string(),
                source,
            })?;
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "s3"))]
    #[tokio::test]
    async fn s3_needs_the_feature() {
        let url: StoreUrl = "s3://bucket".parse().unwrap();
        let err = open(&url, &OpenOptions::new())
            .await
            .expect_err("s3 must not open");
        assert!(err.to_string().contains("s3"), "{err}");
    }

    #[tokio::test]
    async fn memory_store_opens() {
        let store = open(&StoreUrl::Memory, &OpenOptions::new()).await.unwrap();
        let root = memory_core::MemoryPath::parse("/memories").unwrap();
        assert!(store.list(&root).await.unwrap().is_empty());
    }
}
