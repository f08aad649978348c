//! Store URLs: which backend `memory exec` runs on, parsed from `--store` / `MEMORY_STORE`.
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

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use memory_core::Storage;

/// Where a store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// A directory on disk (`PATH` or `file:PATH`), laid out as the official SDKs do.
    Dir(PathBuf),
    /// An in-memory store (`mem:`), gone at exit.
    Memory,
    /// A SQLite database file (`sqlite:PATH`).
    Sqlite(PathBuf),
    /// An S3 bucket and key prefix (`s3://BUCKET[/PREFIX]`).
    S3 {
        /// The bucket name.
        bucket: String,
        /// The key prefix inside the bucket, possibly empty.
        prefix: String,
    },
}

/// Why a string is not a store URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreUrlError {
    /// The URL is empty.
    #[error("the store URL is empty; use a directory path, file:PATH, sqlite:PATH or mem:")]
    Empty,
    /// A scheme this program does not know.
    #[error(
        "unknown store scheme `{scheme}:`; use a directory path, file:PATH, sqlite:PATH, \
         s3://BUCKET[/PREFIX] or mem: (write ./{scheme}:... for a directory with a colon in its name)"
    )]
    UnknownScheme {
        /// The scheme, without its `:`.
        scheme: String,
    },
    /// A scheme that needs a path was given none.
    #[error("`{scheme}:` needs a path, e.g. {scheme}:./memory")]
    MissingPath {
        /// The scheme, without its `:`.
        scheme: &'static str,
    },
    /// `mem:` followed by something.
    #[error("`mem:` takes nothing after the colon")]
    MemoryWithPath,
    /// `s3://` without a bucket.
    #[error("`s3://` needs a bucket: s3://BUCKET[/PREFIX]")]
    MissingBucket,
}

impl FromStr for StoreUrl {
    type Err = StoreUrlError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        if raw.is_empty() {
            return Err(StoreUrlError::Empty);
        }
        let Some(scheme) = scheme_of(raw) else {
            return Ok(StoreUrl::Dir(PathBuf::from(raw)));
        };
        let rest = &raw[scheme.len() + 1..];
        match scheme.to_ascii_lowercase().as_str() {
            "file" => Ok(StoreUrl::Dir(path_part(rest, "file")?)),
            "sqlite" => Ok(StoreUrl::Sqlite(path_part(rest, "sqlite")?)),
            "mem" | "memory" => match rest {
                "" | "//" => Ok(StoreUrl::Memory),
                _ => Err(StoreUrlError::MemoryWithPath),
            },
            "s3" => {
                let rest = rest.strip_prefix("//").unwrap_or(rest);
                let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                if bucket.is_empty() {
                    return Err(StoreUrlError::MissingBucket);
                }
                Ok(StoreUrl::S3 {
                    bucket: bucket.to_owned(),
                    prefix: prefix.trim_matches('/').to_owned(),
                })
            }
            _ => Err(StoreUrlError::UnknownScheme {
                scheme: scheme.to_owned(),
            }),
        }
    }
}

/// The scheme of `raw`, if it starts with one: an ASCII letter, then at least one more letter,
/// digit, `+`, `-` or `.`, then `:`. A single letter (`C:`) is not a scheme.
fn scheme_of(raw: &str) -> Option<&str> {
    let (scheme, _) = raw.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let ok = first.is_ascii_alphabetic()
        && scheme.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then_some(scheme)
}

/// The path after `scheme:`; `scheme:///abs` and `scheme://` + `/abs` give `/abs`.
fn path_part(rest: &str, scheme: &'static str) -> Result<PathBuf, StoreUrlError> {
    let path = match rest.strip_prefix("//") {
        Some(abs) if abs.starts_with('/') => abs,
        _ => rest,
    };
    if path.is_empty() {
        return Err(StoreUrlError::MissingPath { scheme });
    }
    Ok(PathBuf::from(path))
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Dir(path) => write!(f, "file:{}", path.display()),
            StoreUrl::Memory => f.write_str("mem:"),
            StoreUrl::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            StoreUrl::S3 { bucket, prefix } if prefix.is_empty() => write!(f, "s3://{bucket}"),
            StoreUrl::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

/// Options that apply to any store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenOptions {
    /// Wrap the store in the encrypted envelope, with the key in this file (64 hex characters).
    pub encryption_key_file: Option<PathBuf>,
}

impl OpenOptions {
    /// Options with no encryption.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encrypts with the key in `file`.
    pub fn with_encryption_key_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.encryption_key_file = Some(file.into());
        self
    }
}

/// Why a store could not be opened. The text is for the operator (standard error), so it may
/// name host paths; the model never sees it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// This kind of store cannot be used by this build.
    #[error("cannot open store `{url}`: {reason}")]
    Unavailable {
        /// The store asked for.
        url: String,
        /// Why, and what would make it available.
        reason: String,
    },
    /// The backend refused to open.
    #[error("cannot open store `{url}`: {source}")]
    Backend {
        /// The store asked for.
        url: String,
        /// The backend's error.
        #[source]
        source: memory_core::Error,
    },
    /// The encryption key file could not be used.
    #[error("cannot use the encryption key: {reason}")]
    KeyFile {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// Opens the store `url` names, wrapped as `options` say.
///
/// # Errors
/// [`OpenError`] when the backend refuses (a directory that is a file, a database that cannot
/// be created), when the build lacks the backend's feature, or when the key file is unusable.
pub async fn open(url: &StoreUrl, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
    let store = open_plain(url).await?;
    match &options.encryption_key_file {
        None => Ok(store),
        Some(key_file) => encrypt(store, key_file, url),
    }
}

async fn open_plain(url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    match url {
        StoreUrl::Memory => Ok(Arc::new(memory_core::InMemoryStorage::new())),
        StoreUrl::Dir(path) => open_dir(path, url).await,
        StoreUrl::Sqlite(path) => open_sqlite(path, url).await,
        StoreUrl::S3 { .. } => Err(OpenError::Unavailable {
            url: url.to_string(),
            reason: "S3 stores are not available yet in the `memory` program (from Rust, use \
                     the memory-s3 crate); use a directory, sqlite:PATH or mem: for now"
                .to_owned(),
        }),
    }
}

#[cfg(feature = "fs")]
async fn open_dir(path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    let path = path.to_owned();
    // Opening creates and checks the directory: blocking work.
    let opened = tokio::task::spawn_blocking(move || memory_fs::FsStorage::new(path))
        .await
        .map_err(|e| memory_core::Error::backend("fs", e))
        .and_then(|r| r);
    let store = opened.map_err(|source| OpenError::Backend {
        url: url.to_string(),
        source,
    })?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "fs"))]
async fn open_dir(_path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    Err(OpenError::Unavailable {
        url: url.to_string(),
        reason: "this `memory` was built without the `fs` feature of memory-cli".to_owned(),
    })
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    let path = path.to_owned();
    // Opening reads (and may wait for) the database file: blocking work.
    let opened = tokio::task::spawn_blocking(move || memory_sqlite::SqliteStorage::open(path))
        .await
        .map_err(|e| memory_core::Error::backend("sqlite", e))
        .and_then(|r| r);
    let store = opened.map_err(|source| OpenError::Backend {
        url: url.to_string(),
        source,
    })?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    Err(OpenError::Unavailable {
        url: url.to_string(),
        reason: "this `memory` was built without the `sqlite` feature of memory-cli".to_owned(),
    })
}

#[cfg(feature = "encrypted")]
fn encrypt(
    store: Arc<dyn Storage>,
    key_file: &Path,
    _url: &StoreUrl,
) -> Result<Arc<dyn Storage>, OpenError> {
    let key = memory_encrypted::Key::from_hex_file(key_file).map_err(|e| OpenError::KeyFile {
        path: key_file.to_owned(),
        reason: e.to_string(),
    })?;
    tracing::info!(key_id = %key.id(), "encrypting the store");
    let keyring = memory_encrypted::Keyring::new(key);
    Ok(Arc::new(memory_encrypted::Encrypted::new(store, keyring)))
}

#[cfg(not(feature = "encrypted"))]
fn encrypt(
    _store: Arc<dyn Storage>,
    _key_file: &Path,
    url: &StoreUrl,
) -> Result<Arc<dyn Storage>, OpenError> {
    Err(OpenError::Unavailable {
        url: url.to_string(),
        reason: "encryption was asked for, but this `memory` was built without the \
                 `encrypted` feature of memory-cli"
            .to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<StoreUrl, StoreUrlError> {
        raw.parse()
    }

    #[test]
    fn plain_paths_are_directories() {
        for raw in [
            "./memory",
            "memory",
            "/var/lib/memory",
            "C:/x",
            "../a:b",
            "dir/x:y",
        ] {
            assert_eq!(parse(raw), Ok(StoreUrl::Dir(raw.into())), "{raw}");
        }
    }

    #[test]
    fn schemes() {
        assert_eq!(parse("file:./m"), Ok(StoreUrl::Dir("./m".into())));
        assert_eq!(parse("file:///abs/m"), Ok(StoreUrl::Dir("/abs/m".into())));
        assert_eq!(parse("FILE:m"), Ok(StoreUrl::Dir("m".into())));
        assert_eq!(parse("sqlite:m.db"), Ok(StoreUrl::Sqlite("m.db".into())));
        assert_eq!(
            parse("sqlite:///tmp/m.db"),
            Ok(StoreUrl::Sqlite("/tmp/m.db".into()))
        );
        assert_eq!(parse("mem:"), Ok(StoreUrl::Memory));
        assert_eq!(parse("mem://"), Ok(StoreUrl::Memory));
        assert_eq!(
            parse("s3://bucket/some/prefix/"),
            Ok(StoreUrl::S3 {
                bucket: "bucket".into(),
                prefix: "some/prefix".into()
            })
        );
        assert_eq!(
            parse("s3://bucket"),
            Ok(StoreUrl::S3 {
                bucket: "bucket".into(),
                prefix: String::new()
            })
        );
    }

    #[test]
    fn refused() {
        assert_eq!(parse(""), Err(StoreUrlError::Empty));
        assert_eq!(
            parse("file:"),
            Err(StoreUrlError::MissingPath { scheme: "file" })
        );
        assert_eq!(
            parse("sqlite:"),
            Err(StoreUrlError::MissingPath { scheme: "sqlite" })
        );
        assert_eq!(parse("mem:x"), Err(StoreUrlError::MemoryWithPath));
        assert_eq!(parse("s3://"), Err(StoreUrlError::MissingBucket));
        assert_eq!(
            parse("ftp://host/x"),
            Err(StoreUrlError::UnknownScheme {
                scheme: "ftp".into()
            })
        );
        assert_eq!(
            parse("notes:2024"),
            Err(StoreUrlError::UnknownScheme {
                scheme: "notes".into()
            })
        );
    }

    #[test]
    fn display_round_trips() {
        for raw in ["file:./m", "mem:", "sqlite:/x/m.db", "s3://b", "s3://b/p/q"] {
            let url = parse(raw).unwrap();
            assert_eq!(url.to_string(), raw);
            assert_eq!(parse(&url.to_string()), Ok(url));
        }
    }

    #[tokio::test]
    async fn s3_is_not_available_yet() {
        let err = open(&parse("s3://bucket").unwrap(), &OpenOptions::new())
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
