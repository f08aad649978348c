//! Store URLs: which backend `memory` runs on, parsed from `--store` / `MEMORY_STORE`.
//!
//! | URL | store |
//! |---|---|
//! | `PATH`, `file:PATH`, `file:///abs/path` | a directory; `/memories/x` is `PATH/memories/x` |
//! | `mem:` | in memory, gone when the program exits |
//! | `sqlite:PATH` | one SQLite database file (feature `sqlite`) |
//! | `s3://BUCKET[/PREFIX]` | an S3 bucket: not available in this program yet (exit status 2) |
//!
//! A word of two or more letters followed by `:` is read as a scheme, so a directory whose name
//! looks like one (`notes:2024`) is written `./notes:2024` or `file:notes:2024`.
//!
//! Parsing and opening are memory-runner's ([`memory_runner::store`]), the one implementation
//! Rust applications use too; this module re-exports them and adds the program's own policy
//! on top: the `memory` program does not offer S3 stores yet.
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

use memory_core::Storage;
pub use memory_runner::store::{OpenError, OpenOptions, StoreUrl, StoreUrlError};

/// Opens the store `url` names, wrapped as `options` say.
///
/// # Errors
/// [`OpenError`] when the backend refuses (a directory that is a file, a database that cannot
/// be created), when the build lacks the backend's feature, when the key file is unusable, or
/// for an `s3://` URL.
pub async fn open(url: &StoreUrl, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
    if let StoreUrl::S3 { .. } = url {
        return Err(OpenError::Unavailable {
            url: url.to_string(),
            reason: "S3 stores are not available yet in the `memory` program (from Rust, use \
                     the memory-s3 crate); use a directory, sqlite:PATH or mem: for now"
                .to_owned(),
        });
    }
    memory_runner::open_url(url, options).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn s3_is_not_available_yet() {
        let url: StoreUrl = "s3://bucket".parse().unwrap();
        let err = open(&url, &OpenOptions::new())
            .await
            .expect_err("s3 must not open");
        assert!(err.to_string().contains("not available yet"), "{err}");
    }

    #[tokio::test]
    async fn memory_store_opens() {
        let store = open(&StoreUrl::Memory, &OpenOptions::new()).await.unwrap();
        let root = memory_core::MemoryPath::parse("/memories").unwrap();
        assert!(store.list(&root).await.unwrap().is_empty());
    }
}
