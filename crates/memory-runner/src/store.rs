//! Store URLs: which backend a store is, chosen at run time ([`open`], [`open_url`]).
//!
//! | URL | store | feature |
//! |---|---|---|
//! | `PATH`, `file:PATH`, `file:///abs/path` | a directory; `/memories/x` is `PATH/memories/x` | `fs` |
//! | `mem:` | in memory, gone when the program exits | always |
//! | `sqlite:PATH` | one SQLite database file | `sqlite` |
//! | `s3://BUCKET[/PREFIX]` | an S3 bucket; endpoint, region and credentials from the `AWS_*` variables (`AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP=true`...) | `s3` |
//! | `store+sqlite:PATH#STORE_ID` | one versioned memory store of the engine's database file (the one `memory serve --db` uses); every write a version by the session actor | `stores` |
//! | `store+http://HOST:PORT#STORE_ID`, `store+https://HOST[/BASE]#STORE_ID` | one versioned memory store on a `memory serve` (or any server with the memory-stores API); the API key from `MEMORY_STORE_API_KEY` | `stores` |
//!
//! [`OpenOptions::with_encryption_key_file`] wraps any of them in the encrypted envelope
//! (feature `encrypted`); [`OpenOptions::with_session_id`] names the session actor of a
//! `store+sqlite:` store's versions (a new `sesn_…` id otherwise). Several stores under one
//! `/memories`: [`open_mount`](crate::open_mount) (feature `stores`). A backend this build lacks is a clear "compiled without feature"
//! error, not a parse error.
//!
//! A word of two or more letters followed by `:` is read as a scheme, so a directory whose name
//! looks like one (`notes:2024`) is written `./notes:2024` or `file:notes:2024`.
//!
//! ```
//! use memory_runner::store::StoreUrl;
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
    /// One versioned memory store in an engine's database file (`store+sqlite:PATH#STORE_ID`).
    StoreSqlite {
        /// The engine's SQLite database.
        db: PathBuf,
        /// The store's id (`memstore_…`).
        store_id: String,
    },
    /// One versioned memory store on a server (`store+http://HOST:PORT#STORE_ID`, or
    /// `store+https://…`).
    StoreHttp {
        /// The server's base URL (`http://HOST:PORT`).
        base_url: String,
        /// The store's id (`memstore_…`).
        store_id: String,
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
    /// A `store+` URL without its `#STORE_ID`, or with one that is not an id.
    #[error(
        "`{scheme}:` needs the store's id after `#`, e.g. store+sqlite:./memory-stores.db#memstore_... \
         or store+http://127.0.0.1:8080#memstore_..."
    )]
    MissingStoreId {
        /// The scheme, without its `:`.
        scheme: &'static str,
    },
    /// `store+http:` or `store+https:` without `//HOST`.
    #[error("`store+http:` needs a server: store+http://HOST:PORT#STORE_ID")]
    MissingServer,
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
            "store+sqlite" => {
                let (path, store_id) = store_id_part(rest, "store+sqlite")?;
                Ok(StoreUrl::StoreSqlite {
                    db: path_part(path, "store+sqlite")?,
                    store_id,
                })
            }
            lower @ ("store+http" | "store+https") => {
                let scheme = if lower == "store+http" {
                    "store+http"
                } else {
                    "store+https"
                };
                let (server, store_id) = store_id_part(rest, scheme)?;
                let base = server.trim_end_matches('/');
                match base.strip_prefix("//") {
                    Some(host) if !host.is_empty() && !host.starts_with('/') => {
                        Ok(StoreUrl::StoreHttp {
                            base_url: format!("{}:{base}", &scheme["store+".len()..]),
                            store_id,
                        })
                    }
                    _ => Err(StoreUrlError::MissingServer),
                }
            }
            _ => Err(StoreUrlError::UnknownScheme {
                scheme: scheme.to_owned(),
            }),
        }
    }
}

/// Splits `…#STORE_ID`: the id is what follows the last `#`, one or more of `[0-9A-Za-z_]`.
fn store_id_part<'a>(
    rest: &'a str,
    scheme: &'static str,
) -> Result<(&'a str, String), StoreUrlError> {
    match rest.rsplit_once('#') {
        Some((before, id))
            if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
        {
            Ok((before, id.to_owned()))
        }
        _ => Err(StoreUrlError::MissingStoreId { scheme }),
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
            StoreUrl::StoreSqlite { db, store_id } => {
                write!(f, "store+sqlite:{}#{store_id}", db.display())
            }
            StoreUrl::StoreHttp { base_url, store_id } => write!(f, "store+{base_url}#{store_id}"),
        }
    }
}

/// Options that apply to any store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenOptions {
    /// Wrap the store in the encrypted envelope, with the key in this file (64 hex characters).
    pub encryption_key_file: Option<PathBuf>,
    /// Older keys that files may still be encrypted under: read with them, never written
    /// (key rotation; `memory rekey` moves every file to the active key).
    pub old_key_files: Vec<PathBuf>,
    /// The session actor of a `store+sqlite:` store's versions (a new `sesn_…` id when unset).
    pub session_id: Option<String>,
}

impl OpenOptions {
    /// Options with no encryption.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encrypts with the key in `file` (feature `encrypted`).
    pub fn with_encryption_key_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.encryption_key_file = Some(file.into());
        self
    }

    /// Also reads files encrypted under the older key in `file` (feature `encrypted`).
    pub fn with_old_key_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.old_key_files.push(file.into());
        self
    }

    /// Records a `store+sqlite:` store's versions as written by the session `id` (feature
    /// `stores`).
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }
}

/// Why a store could not be opened. The text is for the operator (standard error, logs), so
/// it may name host paths; the model never sees it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The string is not a store URL.
    #[error("invalid store URL `{url}`: {source}")]
    InvalidUrl {
        /// The string given.
        url: String,
        /// What is wrong with it.
        #[source]
        source: StoreUrlError,
    },
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

/// Opens the store a URL names (see the [module docs](self) for the URLs).
///
/// ```no_run
/// # async fn demo() -> Result<(), memory_runner::OpenError> {
/// let store = memory_runner::open("./memory").await?; // a folder; needs feature `fs`
/// let tool = memory_core::MemoryTool::new(store);
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`OpenError::InvalidUrl`] for a string that is no store URL, and the errors of
/// [`open_url`].
pub async fn open(url: &str) -> Result<Arc<dyn Storage>, OpenError> {
    let parsed: StoreUrl = url.parse().map_err(|source| OpenError::InvalidUrl {
        url: url.to_owned(),
        source,
    })?;
    open_url(&parsed, &OpenOptions::new()).await
}

/// Opens the store `url` names, wrapped as `options` say.
///
/// # Errors
/// [`OpenError`] when the backend refuses (a directory that is a file, a database that cannot
/// be created), when the build lacks the backend's feature, or when the key file is unusable.
pub async fn open_url(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    let store = open_plain(url, options).await?;
    match &options.encryption_key_file {
        None => Ok(store),
        Some(key_file) => encrypt(store, key_file, &options.old_key_files, url),
    }
}

#[cfg(not(all(
    feature = "fs",
    feature = "sqlite",
    feature = "s3",
    feature = "encrypted",
    feature = "stores"
)))]
pub(crate) fn without_feature(url: &StoreUrl, feature: &str, what: &str) -> OpenError {
    OpenError::Unavailable {
        url: url.to_string(),
        reason: format!("this build was compiled without feature `{feature}` ({what})"),
    }
}

async fn open_plain(url: &StoreUrl, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
    match url {
        StoreUrl::Memory => Ok(Arc::new(memory_core::InMemoryStorage::new())),
        StoreUrl::Dir(path) => open_dir(path, url).await,
        StoreUrl::Sqlite(path) => open_sqlite(path, url).await,
        StoreUrl::S3 { bucket, prefix } => open_s3(bucket, prefix, url),
        StoreUrl::StoreSqlite { .. } | StoreUrl::StoreHttp { .. } => {
            crate::stores::open_store_url(url, options).await
        }
    }
}

#[cfg(feature = "s3")]
fn open_s3(bucket: &str, prefix: &str, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    // Reads the `AWS_*` variables; sends nothing (a wrong endpoint shows on first use).
    let store = memory_s3::S3Options::new(bucket, prefix)
        .with_env()
        .build()
        .map_err(|source| OpenError::Backend {
            url: url.to_string(),
            source,
        })?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "s3"))]
fn open_s3(_bucket: &str, _prefix: &str, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    Err(without_feature(url, "s3", "S3 stores"))
}

/// Runs a blocking open on the blocking pool.
#[cfg(any(feature = "fs", feature = "sqlite"))]
async fn open_blocking<S: Storage + Send + 'static>(
    url: &StoreUrl,
    backend: &'static str,
    open: impl FnOnce() -> memory_core::Result<S> + Send + 'static,
) -> Result<Arc<dyn Storage>, OpenError> {
    let opened = tokio::task::spawn_blocking(open)
        .await
        .map_err(|e| memory_core::Error::backend(backend, e))
        .and_then(|r| r);
    let store = opened.map_err(|source| OpenError::Backend {
        url: url.to_string(),
        source,
    })?;
    Ok(Arc::new(store))
}

#[cfg(feature = "fs")]
async fn open_dir(path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    let path = path.to_owned();
    // Opening creates and checks the directory: blocking work.
    open_blocking(url, "fs", move || memory_fs::FsStorage::new(path)).await
}

#[cfg(not(feature = "fs"))]
async fn open_dir(_path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    Err(without_feature(url, "fs", "directory stores"))
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    let path = path.to_owned();
    // Opening reads (and may wait for) the database file: blocking work.
    open_blocking(url, "sqlite", move || {
        memory_sqlite::SqliteStorage::open(path)
    })
    .await
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_path: &Path, url: &StoreUrl) -> Result<Arc<dyn Storage>, OpenError> {
    Err(without_feature(url, "sqlite", "SQLite stores"))
}

#[cfg(feature = "encrypted")]
fn encrypt(
    store: Arc<dyn Storage>,
    key_file: &Path,
    old_key_files: &[PathBuf],
    _url: &StoreUrl,
) -> Result<Arc<dyn Storage>, OpenError> {
    let key_error = |path: &Path, e: memory_encrypted::KeyError| OpenError::KeyFile {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let key = memory_encrypted::Key::from_hex_file(key_file).map_err(|e| key_error(key_file, e))?;
    tracing::info!(key_id = %key.id(), "encrypting the store");
    let mut keyring = memory_encrypted::Keyring::new(key);
    for old in old_key_files {
        let key = memory_encrypted::Key::from_hex_file(old).map_err(|e| key_error(old, e))?;
        keyring.add_decryption_key(key);
    }
    Ok(Arc::new(memory_encrypted::Encrypted::new(store, keyring)))
}

#[cfg(not(feature = "encrypted"))]
fn encrypt(
    _store: Arc<dyn Storage>,
    _key_file: &Path,
    _old_key_files: &[PathBuf],
    url: &StoreUrl,
) -> Result<Arc<dyn Storage>, OpenError> {
    Err(without_feature(
        url,
        "encrypted",
        "encryption was asked for with a key file",
    ))
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
    fn store_urls() {
        assert_eq!(
            parse("store+sqlite:./stores.db#memstore_01Ab"),
            Ok(StoreUrl::StoreSqlite {
                db: "./stores.db".into(),
                store_id: "memstore_01Ab".into()
            })
        );
        assert_eq!(
            parse("store+sqlite:///var/a#b.db#memstore_1"),
            Ok(StoreUrl::StoreSqlite {
                db: "/var/a#b.db".into(),
                store_id: "memstore_1".into()
            })
        );
        assert_eq!(
            parse("STORE+HTTP://127.0.0.1:8080/#memstore_1"),
            Ok(StoreUrl::StoreHttp {
                base_url: "http://127.0.0.1:8080".into(),
                store_id: "memstore_1".into()
            })
        );
        assert_eq!(
            parse("store+https://memory.example/api#memstore_1"),
            Ok(StoreUrl::StoreHttp {
                base_url: "https://memory.example/api".into(),
                store_id: "memstore_1".into()
            })
        );
        for (raw, scheme) in [
            ("store+sqlite:./stores.db", "store+sqlite"),
            ("store+sqlite:./stores.db#", "store+sqlite"),
            ("store+http://h:1#a/b", "store+http"),
            ("store+https://h", "store+https"),
        ] {
            assert_eq!(
                parse(raw),
                Err(StoreUrlError::MissingStoreId { scheme }),
                "{raw}"
            );
        }
        assert_eq!(
            parse("store+sqlite:#memstore_1"),
            Err(StoreUrlError::MissingPath {
                scheme: "store+sqlite"
            })
        );
        assert_eq!(
            parse("store+http:h#memstore_1"),
            Err(StoreUrlError::MissingServer)
        );
        assert_eq!(
            parse("store+http://#memstore_1"),
            Err(StoreUrlError::MissingServer)
        );
        assert!(matches!(
            parse("store+ftp://h#memstore_1"),
            Err(StoreUrlError::UnknownScheme { .. })
        ));
    }

    #[cfg(not(feature = "stores"))]
    #[tokio::test]
    async fn stores_need_stores() {
        let err = open("store+sqlite:x.db#memstore_1")
            .await
            .expect_err("no stores backend");
        assert!(
            err.to_string()
                .contains("compiled without feature `stores`"),
            "{err}"
        );
    }

    #[cfg(feature = "stores")]
    #[tokio::test]
    async fn store_urls_open_existing_stores_only() {
        use memory_core::{MemoryHandler, MemoryTool};
        use memory_mounts::memory_store::{CreateStore, ListVersions, MemoryStores};

        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("stores.db");
        let missing = format!("store+sqlite:{}#memstore_1", db.display());
        let err = open(&missing).await.expect_err("no database");
        assert!(
            err.to_string().contains("no memory-stores database"),
            "{err}"
        );
        let engine = MemoryStores::open(&db).await.unwrap();
        let store = engine
            .create_store(CreateStore {
                name: "Notes".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let err = open(&format!("store+sqlite:{}#memstore_nope", db.display()))
            .await
            .expect_err("no such store");
        assert!(err.to_string().contains("not found"), "{err}");
        let url: StoreUrl = format!("store+sqlite:{}#{}", db.display(), store.id)
            .parse()
            .unwrap();
        let options = OpenOptions::new().with_session_id("sesn_test");
        let tool = MemoryTool::new(open_url(&url, &options).await.unwrap());
        let out = tool
            .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
            .await;
        assert!(!out.is_error, "{out:?}");
        let versions = engine
            .list_versions(&store.id, ListVersions::default())
            .await
            .unwrap();
        assert_eq!(
            versions.data[0].created_by,
            Some(memory_mounts::memory_store::Actor::session("sesn_test"))
        );
        let encrypted = options.with_encryption_key_file(dir.path().join("key"));
        let err = open_url(&url, &encrypted).await.expect_err("no envelope");
        assert!(err.to_string().contains("cannot be encrypted"), "{err}");
    }

    #[test]
    fn display_round_trips() {
        for raw in [
            "file:./m",
            "mem:",
            "sqlite:/x/m.db",
            "s3://b",
            "s3://b/p/q",
            "store+sqlite:/x/s.db#memstore_1",
            "store+http://127.0.0.1:8080#memstore_1",
            "store+https://h/base#memstore_1",
        ] {
            let url = parse(raw).unwrap();
            assert_eq!(url.to_string(), raw);
            assert_eq!(parse(&url.to_string()), Ok(url));
        }
    }

    #[cfg(not(feature = "s3"))]
    #[tokio::test]
    async fn s3_needs_s3() {
        let err = open("s3://bucket").await.expect_err("no s3 backend");
        assert!(
            err.to_string().contains("compiled without feature `s3`"),
            "{err}"
        );
    }

    #[cfg(feature = "s3")]
    #[tokio::test]
    async fn s3_store_opens_without_sending_anything() {
        // Nothing is sent on open, so no server is needed.
        let store = open("s3://agent-memory/team-a").await.unwrap();
        assert_eq!(store.to_string(), "S3(s3://agent-memory/team-a)");
    }

    #[tokio::test]
    async fn memory_store_opens() {
        let store = open("mem:").await.unwrap();
        let root = memory_core::MemoryPath::parse("/memories").unwrap();
        assert!(store.list(&root).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn invalid_urls_are_refused() {
        let err = open("ftp://host/x").await.expect_err("ftp must not open");
        assert!(matches!(err, OpenError::InvalidUrl { .. }), "{err}");
        assert!(
            err.to_string().contains("unknown store scheme `ftp:`"),
            "{err}"
        );
    }

    #[cfg(feature = "fs")]
    #[tokio::test]
    async fn folder_store_opens() {
        use memory_core::{MemoryHandler, MemoryTool};
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path().to_str().unwrap()).await.unwrap();
        let tool = MemoryTool::new(store);
        let out = tool
            .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
            .await;
        assert!(!out.is_error, "{out:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("memories/a.md")).unwrap(),
            "x"
        );
    }

    #[cfg(not(feature = "fs"))]
    #[tokio::test]
    async fn folder_store_needs_fs() {
        let err = open("./memory").await.expect_err("no fs backend");
        assert!(
            err.to_string().contains("compiled without feature `fs`"),
            "{err}"
        );
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn sqlite_store_opens() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("m.db").display());
        let store = open(&url).await.unwrap();
        assert!(
            store.to_string().to_lowercase().contains("sqlite"),
            "{store}"
        );
        assert!(dir.path().join("m.db").exists());
    }

    #[cfg(not(feature = "sqlite"))]
    #[tokio::test]
    async fn sqlite_store_needs_sqlite() {
        let err = open("sqlite:m.db").await.expect_err("no sqlite backend");
        assert!(
            err.to_string()
                .contains("compiled without feature `sqlite`"),
            "{err}"
        );
    }

    #[cfg(feature = "encrypted")]
    #[tokio::test]
    async fn encrypted_store_wraps_any() {
        use memory_core::{MemoryHandler, MemoryTool};
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("key");
        memory_encrypted::generate_key_file(&key_file).unwrap();
        let options = OpenOptions::new().with_encryption_key_file(&key_file);
        let store = open_url(&StoreUrl::Memory, &options).await.unwrap();
        assert!(store.to_string().contains("Encrypted"), "{store}");
        let tool = MemoryTool::new(store);
        let out = tool
            .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
            .await;
        assert!(!out.is_error, "{out:?}");
        let missing = OpenOptions::new().with_encryption_key_file(dir.path().join("nope"));
        let err = open_url(&StoreUrl::Memory, &missing)
            .await
            .expect_err("no key");
        assert!(matches!(err, OpenError::KeyFile { .. }), "{err}");
    }

    #[cfg(not(feature = "encrypted"))]
    #[tokio::test]
    async fn encryption_needs_encrypted() {
        let options = OpenOptions::new().with_encryption_key_file("key");
        let err = open_url(&StoreUrl::Memory, &options)
            .await
            .expect_err("no encryption");
        assert!(
            err.to_string()
                .contains("compiled without feature `encrypted`"),
            "{err}"
        );
    }
}
