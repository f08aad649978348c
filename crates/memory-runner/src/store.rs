//! Store URLs: which backend a store is, chosen by configuration ([`open`], [`open_with`],
//! [`open_url`]).
//!
//! | URL | store | feature |
//! |---|---|---|
//! | `PATH`, `file:PATH`, `file:///abs/path` | a directory; `/memories/x` is `PATH/memories/x` | `fs` |
//! | `mem:` | in memory, gone when the program exits | always |
//! | `sqlite:PATH` | one SQLite database file | `sqlite` |
//! | `s3://BUCKET[/PREFIX]` | an S3 bucket; with [`OpenOptions::with_environment`], endpoint, region and credentials from the `AWS_*` variables (`AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP=true`...) | `s3` |
//! | `postgres://USER@HOST[:PORT]/DATABASE` | a PostgreSQL database (options `schema`, `root`...: see memory-postgres) | `postgres` |
//! | `store+sqlite:PATH#STORE_ID` | one versioned memory store of the engine's database file (the one `memory serve --db` uses); every write a version by the session actor | `stores` |
//! | `store+http://HOST:PORT#STORE_ID`, `store+https://HOST[/BASE]#STORE_ID` | one versioned memory store on a `memory serve` (or any server with the memory-stores API); with [`OpenOptions::with_environment`], the API key from `MEMORY_STORE_API_KEY` | `stores` |
//!
//! This module only reads the scheme ([`StoreUrl`]) and hands the URL and its options to the
//! backend that owns the scheme: each backend parses its own URL form and its `?key=value`
//! options (documented in its crate), and an option it does not know is an error naming the
//! ones it accepts. Options can also come from the program ([`OpenOptions::store_options`]).
//!
//! Wrappers come from the same configuration: [`OpenOptions::with_encryption_key_file`] or
//! [`OpenOptions::with_keyring`] wrap any store in the encrypted envelope (feature
//! `encrypted`); [`OpenOptions::with_session_id`] names the session actor of a versioned
//! store's versions. Several stores under one `/memories`: [`open_mount`]
//! (feature `stores`).
//!
//! Without a key, an encrypted store (one that holds a key-check record, or whose files are
//! envelopes) is refused with [`OpenError::Encrypted`] before anything is read or written
//! through it, unless [`OpenOptions::with_plaintext_only`] asks for its plaintext files
//! anyway; a wrong key is refused by the envelope's key check.
//!
//! A scheme this build lacks is an [`OpenError::NotCompiled`] naming the feature to enable;
//! an unknown scheme is a [`StoreUrlError::UnknownScheme`]; both list the schemes this build
//! has ([`compiled_schemes`]).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use memory_runner::store::{OpenError, StoreUrlError, open};
//!
//! let store = open("mem:").await.unwrap();
//! let err = open("ftp://example/x").await.unwrap_err();
//! assert!(matches!(err, OpenError::InvalidUrl { source: StoreUrlError::UnknownScheme { .. }, .. }));
//! let err = open("mem:?colour=blue").await.unwrap_err();
//! assert!(err.to_string().contains("unknown store option `colour`"), "{err}");
//! # });
//! ```

use std::sync::Arc;

use memory_core::Storage;

pub use crate::options::{BoxError, OpenError, OpenOptions};
use crate::options::{after_scheme, finish_options, split_options};
pub use crate::url::{Scheme, StoreUrl, StoreUrlError, compiled_schemes};

/// Opens the store a URL names (see the [module docs](self) for the URLs), with no
/// encryption and without reading the environment.
///
/// ```no_run
/// # async fn demo() -> Result<(), memory_runner::OpenError> {
/// let store = memory_runner::open("./memory").await?; // a folder; needs feature `fs`
/// let tool = memory_core::MemoryTool::new(store);
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`open_with`].
pub async fn open(url: &str) -> Result<Arc<dyn Storage>, OpenError> {
    open_with(url, &OpenOptions::new()).await
}

/// Opens the store a URL names, wrapped as `options` say.
///
/// # Errors
/// [`OpenError::InvalidUrl`] for a string that is no store URL, and the errors of
/// [`open_url`].
pub async fn open_with(url: &str, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
    let parsed: StoreUrl = url.parse().map_err(|source| OpenError::InvalidUrl {
        url: url.split_once('?').map_or(url, |(base, _)| base).to_owned(),
        source,
    })?;
    open_url(&parsed, options).await
}

/// Opens the store `url` names, wrapped as `options` say.
///
/// # Errors
/// [`OpenError`] when the build lacks the backend's feature, when an option is not accepted,
/// when the backend refuses (a directory that is a file, a database that cannot be created),
/// or when encryption cannot be applied (an unusable key file, a store that holds only text).
pub async fn open_url(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    if !options.read_only {
        return open_wrapped(url, options).await;
    }
    let options = read_only_options(url, options);
    let store = open_wrapped(url, &options).await?;
    // Core's one read-only policy refuses every change before it reaches the store.
    Ok(Arc::new(memory_core::ReadOnly::new(store)))
}

/// Deletes the persistent search index of the store `url` names, and every word of its files
/// it held: for a store that has just been encrypted (an encrypted store keeps no index; its
/// search scans its decrypted reads in memory), as `memory rekey` does.
///
/// - a folder store (feature `search-index`): the side index beside `memories/`
///   (`.memory-search/index.sqlite3` and its `-wal`, `-shm`, `-journal`), and the file a
///   `search_index=PATH` option names;
/// - an S3 store (feature `search-index`): its cache file under the user's cache folder (with
///   [`OpenOptions::with_environment`], as [`open_url`] places it), and the file a
///   `search_index=PATH` option names;
/// - a SQLite store: its FTS5 table is emptied and the database scrubbed (see
///   `memory_sqlite::SqliteStorage::clear_search_index`);
/// - other stores have no index of the files' words outside what they store (PostgreSQL's
///   search reads the rows): nothing to do.
///
/// Opens the store (a SQLite file) but not through encryption: call it with the options the
/// store is opened with, minus the key.
///
/// # Errors
/// [`OpenError`] when the URL or its options are refused, the SQLite store cannot be opened
/// or cleared (e.g. another program keeps reading it: [`OpenError::IndexNotDiscarded`], close
/// it and try again), or an index file cannot be removed.
pub async fn discard_search_index(url: &StoreUrl, options: &OpenOptions) -> Result<(), OpenError> {
    match url.scheme() {
        #[cfg(feature = "sqlite")]
        Scheme::Sqlite => {
            let (owned, given) = (url.clone(), options.store_options.clone());
            let store = tokio::task::spawn_blocking(move || {
                memory_sqlite::SqliteStorage::from_url(owned.as_str(), given)
            })
            .await
            .map_err(|e| OpenError::Backend {
                url: url.to_string(),
                source: memory_core::Error::backend("open", e),
            })?
            .map_err(|source| OpenError::Open {
                url: url.to_string(),
                source: Box::new(source),
            })?;
            let cleared = store.clear_search_index().await;
            // Closing joins the writer thread: blocking work.
            let _ = tokio::task::spawn_blocking(move || drop(store)).await;
            cleared.map_err(|source| OpenError::IndexNotDiscarded {
                url: url.to_string(),
                source,
            })
        }
        #[cfg(feature = "search-index")]
        _ => crate::indexing::discard(url, options),
        #[cfg(not(feature = "search-index"))]
        _ => {
            let _ = options;
            Ok(())
        }
    }
}

/// The options of a read-only open: a search side index, unless one is named, is kept in
/// memory, so that searching writes no index file into the store's folder.
fn read_only_options(url: &StoreUrl, options: &OpenOptions) -> OpenOptions {
    #[allow(unused_mut, reason = "only with feature `search-index`")]
    let mut options = options.clone();
    #[cfg(feature = "search-index")]
    {
        let option = crate::indexing::OPTION;
        let in_url = memory_core::options::StoreOptions::from_url(url.as_str())
            .is_ok_and(|(_, query)| query.keys().any(|key| key == option));
        let indexed = matches!(url.scheme(), Scheme::Dir | Scheme::S3);
        if indexed && !in_url && !options.store_options.keys().any(|key| key == option) {
            options.store_options.insert(option, "memory");
        }
    }
    let _ = url;
    options
}

/// The backend, wrapped as `options` say.
async fn open_wrapped(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    #[cfg(feature = "search-index")]
    {
        // Folder and S3 stores answer search from a side index (never under encryption).
        let (url, options, asked) = crate::indexing::take(url, options)?;
        let store = open_backend(&url, &options)
            .await
            .map_err(|e| crate::indexing::with_option_accepted(&url, e))?;
        let store = crate::indexing::wrap(store, &url, &options, asked)?;
        return encrypt(store, &url, &options).await;
    }
    #[cfg(not(feature = "search-index"))]
    {
        let store = open_backend(url, options).await?;
        encrypt(store, url, options).await
    }
}

/// The dispatcher: the backend that owns the scheme opens the store.
async fn open_backend(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    match url.scheme() {
        Scheme::Memory => backends::memory(url, options),
        #[cfg(feature = "fs")]
        Scheme::Dir => backends::dir(url, options).await,
        #[cfg(feature = "sqlite")]
        Scheme::Sqlite => backends::sqlite(url, options).await,
        #[cfg(feature = "s3")]
        Scheme::S3 => backends::s3(url, options),
        #[cfg(feature = "postgres")]
        Scheme::Postgres => backends::postgres(url, options).await,
        #[cfg(feature = "stores")]
        Scheme::StoreSqlite | Scheme::StoreHttp | Scheme::StorePostgres => {
            Ok(Arc::new(crate::stores::open_store(url, options).await?.0))
        }
        #[allow(
            unreachable_patterns,
            reason = "every scheme is compiled with all features"
        )]
        scheme => Err(OpenError::NotCompiled {
            url: url.to_string(),
            scheme,
            feature: scheme.feature().unwrap_or("default"),
        }),
    }
}

/// Each backend's opening. Backends that parse their own URL (`from_url`) get the URL and
/// the options as they are; the others get what this module read from the URL.
mod backends {
    use super::*;

    pub(super) fn memory(
        url: &StoreUrl,
        options: &OpenOptions,
    ) -> Result<Arc<dyn Storage>, OpenError> {
        let (base, store_options) = split_options(url, url.as_str(), options)?;
        if !matches!(after_scheme(&base), "" | "//") {
            return Err(OpenError::Unavailable {
                url: url.to_string(),
                reason: "`mem:` takes nothing after the colon".to_owned(),
            });
        }
        finish_options(url, store_options, &[])?;
        Ok(Arc::new(memory_core::InMemoryStorage::new()))
    }

    /// A backend's typed open error: its option refusals as [`OpenError::Options`], the rest
    /// as [`OpenError::Open`] (kept typed behind the box).
    #[cfg(any(feature = "fs", feature = "sqlite", feature = "s3"))]
    fn open_error(
        url: &StoreUrl,
        refused: Result<memory_core::options::OptionsError, BoxError>,
    ) -> OpenError {
        match refused {
            Ok(source) => OpenError::Options {
                url: url.to_string(),
                source,
            },
            Err(source) => OpenError::Open {
                url: url.to_string(),
                source,
            },
        }
    }

    /// Runs a blocking open on the blocking pool.
    #[cfg(any(feature = "fs", feature = "sqlite"))]
    async fn open_blocking<S: Storage + Send + 'static>(
        url: &StoreUrl,
        open: impl FnOnce() -> Result<S, OpenError> + Send + 'static,
    ) -> Result<Arc<dyn Storage>, OpenError> {
        let store = tokio::task::spawn_blocking(open)
            .await
            .map_err(|e| OpenError::Backend {
                url: url.to_string(),
                source: memory_core::Error::backend("open", e),
            })??;
        Ok(Arc::new(store))
    }

    /// memory-fs owns `PATH`, `file:PATH` and their options.
    #[cfg(feature = "fs")]
    pub(super) async fn dir(
        url: &StoreUrl,
        options: &OpenOptions,
    ) -> Result<Arc<dyn Storage>, OpenError> {
        use memory_fs::{FsOpenError, FsOptions, FsStorage};
        let (owned, given) = (url.clone(), options.store_options.clone());
        let read_only = options.read_only;
        // Opening creates and checks the directory: blocking work.
        open_blocking(url, move || {
            let refused = |e| match e {
                FsOpenError::Options(refused) => open_error(&owned, Ok(refused)),
                other => open_error(&owned, Err(Box::new(other))),
            };
            if !read_only {
                return FsStorage::from_url(owned.as_str(), given).map_err(refused);
            }
            // memory-fs's from_url, with its read-only open.
            let (base, from_query) = memory_core::options::StoreOptions::from_url(owned.as_str())
                .map_err(|e| refused(e.into()))?;
            let path = memory_fs::fs_url_path(&base).map_err(refused)?;
            let fs_options = FsOptions::from_options(from_query.overridden_by(given))
                .map_err(|e| refused(e.into()))?
                .read_only(true);
            FsStorage::with_options(path, fs_options).map_err(|source| OpenError::Backend {
                url: owned.to_string(),
                source,
            })
        })
        .await
    }

    /// memory-sqlite owns `sqlite:PATH` and its options.
    #[cfg(feature = "sqlite")]
    pub(super) async fn sqlite(
        url: &StoreUrl,
        options: &OpenOptions,
    ) -> Result<Arc<dyn Storage>, OpenError> {
        use memory_sqlite::{SqliteOpenError, SqliteOptions, SqliteStorage};
        let (owned, given) = (url.clone(), options.store_options.clone());
        let read_only = options.read_only;
        // Opening reads (and may wait for) the database file: blocking work.
        open_blocking(url, move || {
            let refused = |e| match e {
                SqliteOpenError::Options(refused) => open_error(&owned, Ok(refused)),
                other => open_error(&owned, Err(Box::new(other))),
            };
            if !read_only {
                return SqliteStorage::from_url(owned.as_str(), given).map_err(refused);
            }
            // memory-sqlite's from_url, with its read-only open.
            let (base, from_query) = memory_core::options::StoreOptions::from_url(owned.as_str())
                .map_err(|e| refused(e.into()))?;
            let path = memory_sqlite::sqlite_url_path(&base).map_err(refused)?;
            let sqlite_options = SqliteOptions::from_options(from_query.overridden_by(given))
                .map_err(|e| refused(e.into()))?
                .read_only(true);
            SqliteStorage::open_with(path, sqlite_options).map_err(|source| OpenError::Backend {
                url: owned.to_string(),
                source,
            })
        })
        .await
    }

    /// memory-s3 owns `s3://BUCKET[/PREFIX]` and its options; the `AWS_*` variables are read
    /// only when the options ask for the environment.
    #[cfg(feature = "s3")]
    pub(super) fn s3(url: &StoreUrl, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
        use memory_s3::{ObjectStoreStorage, S3OpenError};
        let given = options.store_options.clone();
        let opened = if options.environment {
            ObjectStoreStorage::from_url_and_env(url.as_str(), given)
        } else {
            ObjectStoreStorage::from_url(url.as_str(), given)
        };
        // Sends nothing: a wrong endpoint shows on first use.
        let store = opened.map_err(|e| match e {
            S3OpenError::Options(refused) => open_error(url, Ok(refused)),
            other => open_error(url, Err(Box::new(other))),
        })?;
        Ok(Arc::new(store))
    }

    /// memory-postgres owns `postgres://` and its options; read-only, it is opened with
    /// `from_url_read_only` (no lock, no DDL, no row written, read-only sessions).
    #[cfg(feature = "postgres")]
    pub(super) async fn postgres(
        url: &StoreUrl,
        options: &OpenOptions,
    ) -> Result<Arc<dyn Storage>, OpenError> {
        use memory_postgres::PostgresStorage;
        let given = options.store_options.clone();
        let store = if options.read_only {
            PostgresStorage::from_url_read_only(url.as_str(), given).await
        } else {
            PostgresStorage::from_url(url.as_str(), given).await
        }
        .map_err(|source| OpenError::Open {
            url: url.to_string(),
            source: Box::new(source),
        })?;
        Ok(Arc::new(store))
    }
}

/// Refuses a store opened without a key that is encrypted ([`OpenError::Encrypted`]),
/// unless [`OpenOptions::with_plaintext_only`] asked for it as its bytes: Claude would read
/// ciphertext, and a write would put a plaintext file beside the encrypted ones. The one
/// check of every open without a key, the `memory` program's and dreams' included.
///
/// With feature `encrypted` it is memory-encrypted's [`probe`](memory_encrypted::probe) (the
/// key-check record, else the first file: an envelope means encrypted); without it, whether
/// the key-check record is there.
async fn refuse_encrypted_without_key(
    store: &dyn Storage,
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<(), OpenError> {
    if options.wants_encryption() || options.plaintext_only {
        return Ok(());
    }
    let failed = |source| OpenError::Backend {
        url: url.to_string(),
        source,
    };
    #[cfg(feature = "encrypted")]
    let key_id = match memory_encrypted::probe(store).await.map_err(failed)? {
        memory_encrypted::EncryptionState::Encrypted { key_id } => {
            Some(key_id.map(|id| id.to_string()))
        }
        _ => None,
    };
    #[cfg(not(feature = "encrypted"))]
    let key_id = {
        let record = memory_core::MemoryPath::parse(KEY_CHECK_PATH)
            .map_err(|e| failed(memory_core::Error::backend("key check", e.to_string())))?;
        store.stat(&record).await.map_err(failed)?.map(|_| None)
    };
    match key_id {
        Some(key_id) => Err(OpenError::Encrypted {
            url: url.to_string(),
            key_id,
        }),
        None => Ok(()),
    }
}

/// memory-encrypted's `KEY_CHECK_PATH`, for builds without it (a test holds them equal).
#[cfg_attr(
    feature = "encrypted",
    allow(dead_code, reason = "probe reads it there")
)]
const KEY_CHECK_PATH: &str = "/memories/.memory-encryption-key-check";

/// Wraps `store` in the encrypted envelope when `options` ask for it, and runs the envelope's
/// key check: a wrong key, a plaintext store or a store that holds only text is refused here.
/// Without a key, an encrypted store is refused ([`refuse_encrypted_without_key`]).
#[cfg(feature = "encrypted")]
async fn encrypt(
    store: Arc<dyn Storage>,
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    use memory_encrypted::{Encrypted, Key, KeyError, Keyring};
    use std::path::Path;

    if !options.wants_encryption() {
        refuse_encrypted_without_key(&*store, url, options).await?;
        return Ok(store);
    }
    let key_error = |path: &Path, e: KeyError| OpenError::KeyFile {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let mut keyring = match (&options.keyring, &options.encryption_key_file) {
        (Some(_), Some(_)) => {
            return Err(OpenError::Unavailable {
                url: url.to_string(),
                reason: "both a keyring and an encryption key file were given; give one".to_owned(),
            });
        }
        (Some(ring), None) => ring.clone(),
        (None, Some(file)) => {
            Keyring::new(Key::from_hex_file(file).map_err(|e| key_error(file, e))?)
        }
        (None, None) => return Ok(store),
    };
    for old in &options.old_key_files {
        let key = Key::from_hex_file(old).map_err(|e| key_error(old, e))?;
        keyring.add_decryption_key(key);
    }
    tracing::info!(key_id = %keyring.active_id(), "encrypting the store");
    let encrypted = Encrypted::open(store, keyring)
        .await
        .map_err(|source| OpenError::Open {
            url: url.to_string(),
            source: Box::new(source),
        })?;
    Ok(Arc::new(encrypted))
}

#[cfg(not(feature = "encrypted"))]
async fn encrypt(
    store: Arc<dyn Storage>,
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    if !options.wants_encryption() {
        refuse_encrypted_without_key(&*store, url, options).await?;
        return Ok(store);
    }
    Err(OpenError::Unavailable {
        url: url.to_string(),
        reason: "this build was compiled without feature `encrypted` (encryption was asked \
                 for with a key file)"
            .to_owned(),
    })
}

/// Opens one mount of `memory run --mount [NAME=]URL[:ro]`: any store URL, mounted at
/// `/memories/<slug of NAME>` with the spec's access. A versioned store (`store+…`) is fetched
/// at once, so a wrong id, key or server is reported here; its name and description go into
/// the mount note, and without `NAME=` its display name names the folder (any other store
/// needs `NAME=`). An archived store is refused: [`OpenError::Open`] whose source is
/// [`memory_mounts::MountError::Archived`].
///
/// Give every mount of one run the same [`OpenOptions::with_session_id`], so that all its
/// writes are one session's.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use memory_runner::mounts::{MountSpec, Mounts, new_session_id};
/// use memory_runner::{OpenOptions, open_mount};
///
/// let options = OpenOptions::new().with_session_id(new_session_id());
/// // Mounted at /memories/<slug of each store's display name>, e.g. /memories/team-handbook.
/// let handbook: MountSpec = "store+sqlite:stores.db#memstore_01abc:ro".parse()?;
/// let notes: MountSpec = "store+sqlite:stores.db#memstore_01def".parse()?;
/// let mounts = Mounts::new([
///     open_mount(&handbook, &options).await?,
///     open_mount(&notes, &options).await?,
/// ])?;
/// let system_prompt = mounts.note();
/// let tool = memory_core::MemoryTool::new(mounts);
/// # let _ = (system_prompt, tool);
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`OpenError`] for a string that is no store URL and for a store that cannot be opened.
#[cfg(feature = "stores")]
pub async fn open_mount(
    spec: &memory_mounts::MountSpec,
    options: &OpenOptions,
) -> Result<memory_mounts::Mount, OpenError> {
    use memory_mounts::Mount;

    let url: StoreUrl = spec.url.parse().map_err(|source| OpenError::InvalidUrl {
        url: spec
            .url
            .split_once('?')
            .map_or(&*spec.url, |(base, _)| base)
            .to_owned(),
        source,
    })?;
    match url.scheme() {
        // Without `NAME=`, the folder is named after the store, as the hosted product does.
        Scheme::StoreSqlite | Scheme::StoreHttp | Scheme::StorePostgres => {
            crate::stores::open_store_mount(&url, spec, options).await
        }
        _ => {
            let Some(name) = spec.name.clone() else {
                return Err(OpenError::Unavailable {
                    url: url.to_string(),
                    reason: "only a versioned memory store (store+…) names its own folder; \
                             write the mount as NAME=URL[:ro]"
                        .to_owned(),
                });
            };
            let storage = open_url(&url, options).await?;
            Ok(Mount::new(name, storage, spec.access))
        }
    }
}

/// Opens a versioned memory store URL (`store+sqlite:PATH#ID`, `store+http(s)://HOST#ID`
/// with the key of [`STORE_API_KEY_VAR`](crate::STORE_API_KEY_VAR), `store+postgres://…#ID`)
/// as the store itself, not as memory-tool storage: for clients of the store API, such as
/// [`memory_mounts::sync::FolderSync`]. The store is fetched, so a wrong id, key or server
/// stops here; writes are recorded as `options`' session (a new one when it names none).
///
/// # Errors
/// [`OpenError`] for a URL that is not a versioned store's and for a store that cannot be
/// opened.
#[cfg(feature = "stores")]
pub async fn open_versioned_store(
    url: &str,
    options: &OpenOptions,
) -> Result<
    (
        memory_mounts::StoreStorage,
        memory_mounts::memory_store::Store,
    ),
    OpenError,
> {
    let url: StoreUrl = url.parse().map_err(|source| OpenError::InvalidUrl {
        url: url.split_once('?').map_or(url, |(base, _)| base).to_owned(),
        source,
    })?;
    if !url.scheme().is_versioned_store() {
        return Err(OpenError::Unavailable {
            url: url.to_string(),
            reason: memory_mounts::VersionedStoreUrlError::NotAStoreUrl.to_string(),
        });
    }
    crate::stores::open_store(&url, options).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn open_err(url: &str) -> OpenError {
        match open(url).await {
            Ok(store) => panic!("{url} opened as {store}"),
            Err(err) => err,
        }
    }

    #[tokio::test]
    async fn memory_store_opens() {
        for url in ["mem:", "mem://", "MEMORY:"] {
            let store = open(url).await.unwrap();
            let root = memory_core::MemoryPath::parse("/memories").unwrap();
            assert!(store.list(&root).await.unwrap().is_empty());
        }
        let err = open_err("mem:x").await;
        assert!(err.to_string().contains("`mem:` takes nothing"), "{err}");
    }

    #[tokio::test]
    async fn invalid_urls_are_refused_with_the_schemes_of_this_build() {
        let err = open_err("ftp://host/x?password=secret").await;
        let OpenError::InvalidUrl { url, source } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(url, "ftp://host/x");
        assert!(matches!(source, StoreUrlError::UnknownScheme { .. }));
        let text = err.to_string();
        assert!(text.contains("unknown store scheme `ftp:`"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        for scheme in compiled_schemes() {
            assert!(text.contains(scheme.form()), "{text}");
        }
        assert!(matches!(open_err("").await, OpenError::InvalidUrl { .. }));
    }

    #[tokio::test]
    async fn unknown_options_are_named_with_the_accepted_ones() {
        let err = open_err("mem:?bogus=1").await;
        assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "cannot open store `mem:`: unknown store option `bogus`: remove it: this store accepts no options"
        );
        // An option given both in the URL and by the program is refused.
        let options = OpenOptions::new().with_store_option("sync", "full");
        let err = open_with("mem:?sync=none", &options).await.unwrap_err();
        assert!(err.to_string().contains("more than once"), "{err}");
        // The program's options are checked like the URL's.
        let err = open_with("mem:", &options).await.unwrap_err();
        assert!(
            err.to_string().contains("unknown store option `sync`"),
            "{err}"
        );
    }

    /// Every scheme this build lacks says which feature to enable.
    #[tokio::test]
    async fn compiled_out_schemes_name_their_feature() {
        let examples = [
            (Scheme::Dir, "./memory"),
            (Scheme::Sqlite, "sqlite:m.db"),
            (Scheme::S3, "s3://bucket"),
            (Scheme::Postgres, "postgres://u@127.0.0.1:1/db"),
            (Scheme::StoreSqlite, "store+sqlite:x.db#memstore_1"),
            (Scheme::StoreHttp, "store+http://127.0.0.1:1#memstore_1"),
        ];
        for (scheme, url) in examples {
            if scheme.is_compiled() {
                continue;
            }
            let err = open_err(url).await;
            let feature = scheme.feature().unwrap();
            assert!(
                matches!(err, OpenError::NotCompiled { feature: f, .. } if f == feature),
                "{err:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains(&format!("compiled without feature `{feature}`")),
                "{text}"
            );
            assert!(text.contains("this build opens: "), "{text}");
            assert!(text.contains("mem:"), "{text}");
        }
    }

    #[cfg(feature = "fs")]
    #[tokio::test]
    async fn folder_store_opens() {
        use memory_core::{MemoryHandler, MemoryTool};
        let dir = tempfile::tempdir().unwrap();
        for url in [
            dir.path().join("a").display().to_string(),
            format!("file:{}", dir.path().join("b").display()),
            format!("file://{}", dir.path().join("c").display()),
        ] {
            let tool = MemoryTool::new(open(&url).await.unwrap());
            let out = tool
                .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
                .await;
            assert!(!out.is_error, "{out:?}");
        }
        for sub in ["a", "b", "c"] {
            let file = dir.path().join(sub).join("memories/a.md");
            assert_eq!(std::fs::read_to_string(file).unwrap(), "x");
        }
        let err = open_err("file:").await;
        let OpenError::Open { source, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            source.downcast_ref::<memory_fs::FsOpenError>().is_some(),
            "{err:?}"
        );
        // memory-fs's options, from the URL or from the program.
        let url = format!("file:{}?sync=none", dir.path().join("d").display());
        open(&url).await.unwrap();
        let bogus = format!("{}?bogus=1", dir.path().join("e").display());
        let err = open_err(&bogus).await;
        assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
        assert!(err.to_string().contains("`bogus`"), "{err}");
        assert!(err.to_string().contains("sync"), "{err}");
        assert!(
            !dir.path().join("e").exists(),
            "nothing is created for a refused option"
        );
        let options = OpenOptions::new().with_store_option("sync", "fast");
        let err = open_with(&dir.path().join("f").display().to_string(), &options)
            .await
            .unwrap_err();
        assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
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
        assert!(
            open_err("sqlite:")
                .await
                .to_string()
                .contains("sqlite:PATH")
        );
    }

    #[cfg(feature = "s3")]
    #[tokio::test]
    async fn s3_store_opens_without_sending_anything() {
        // Building an S3 store sends nothing, so no server is needed. (Without a key an open
        // asks the store whether it is encrypted, one GET of the key-check record; opened as
        // its plaintext bytes, nothing is asked.)
        let plain = OpenOptions::new().with_plaintext_only();
        let store = open_with("s3://agent-memory/team-a", &plain).await.unwrap();
        // With `search-index`, wrapped in its (in-memory, not yet opened) side index.
        let shown = if cfg!(feature = "search-index") {
            "Indexed(S3(s3://agent-memory/team-a))"
        } else {
            "S3(s3://agent-memory/team-a)"
        };
        assert_eq!(store.to_string(), shown);
        // memory-s3's parser and options, not ours: its typed error, kept behind the box.
        let err = open_err("s3://").await;
        let OpenError::Open { source, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            source.downcast_ref::<memory_s3::S3OpenError>().is_some(),
            "{err:?}"
        );
        let err = open_err("s3://b?bogus=1").await;
        assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
        assert!(err.to_string().contains("`bogus`"), "{err}");
        let store = open_with("s3://b/p?region=eu-west-1", &plain)
            .await
            .unwrap();
        let shown = if cfg!(feature = "search-index") {
            "Indexed(S3(s3://b/p))"
        } else {
            "S3(s3://b/p)"
        };
        assert_eq!(store.to_string(), shown);
    }

    #[cfg(feature = "stores")]
    #[tokio::test]
    async fn store_urls_open_existing_stores_only() {
        use memory_core::{MemoryHandler, MemoryTool};
        use memory_mounts::memory_store::{CreateStore, ListVersions, MemoryStores};

        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("stores.db");
        let missing = format!("store+sqlite:{}#memstore_1", db.display());
        let err = open_err(&missing).await;
        assert!(
            err.to_string().contains("no memory-stores database"),
            "{err}"
        );
        for (url, text) in [
            ("store+sqlite:./stores.db", "the store's id after `#`"),
            ("store+sqlite:./stores.db#", "the store's id after `#`"),
            ("store+http://h:1#a/b", "the store's id after `#`"),
            ("store+sqlite:#memstore_1", "store+sqlite:PATH#STORE_ID"),
            ("store+http:h#memstore_1", "names no server"),
            ("store+http://#memstore_1", "names no server"),
            (
                "store+sqlite:x.db?bogus=1#memstore_1",
                "unknown store option `bogus`",
            ),
        ] {
            let err = open_err(url).await;
            assert!(err.to_string().contains(text), "{url}: {err}");
        }
        let engine = MemoryStores::open(&db).await.unwrap();
        let store = engine
            .create_store(CreateStore {
                name: "Notes".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let err = open_err(&format!("store+sqlite:{}#memstore_nope", db.display())).await;
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

    #[cfg(feature = "stores")]
    #[tokio::test]
    async fn mounts_of_plain_stores_need_a_name() {
        let named: memory_mounts::MountSpec = "notes=mem:".parse().unwrap();
        open_mount(&named, &OpenOptions::new()).await.unwrap();
        let unnamed: memory_mounts::MountSpec = "mem:".parse().unwrap();
        let err = open_mount(&unnamed, &OpenOptions::new()).await.unwrap_err();
        assert!(err.to_string().contains("NAME=URL"), "{err}");
    }

    #[cfg(feature = "encrypted")]
    #[tokio::test]
    async fn encryption_wraps_any_store_from_a_key_file_or_a_keyring() {
        use memory_core::{MemoryHandler, MemoryTool};
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("key");
        let key = memory_encrypted::generate_key_file(&key_file).unwrap();
        let by_file = OpenOptions::new().with_encryption_key_file(&key_file);
        let by_ring = OpenOptions::new().with_keyring(memory_encrypted::Keyring::new(key));
        for options in [by_file, by_ring] {
            let store = open_with("mem:", &options).await.unwrap();
            assert!(store.to_string().contains("Encrypted"), "{store}");
            let tool = MemoryTool::new(store);
            let out = tool
                .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
                .await;
            assert!(!out.is_error, "{out:?}");
        }
        let missing = OpenOptions::new().with_encryption_key_file(dir.path().join("nope"));
        let err = open_with("mem:", &missing).await.expect_err("no key");
        assert!(matches!(err, OpenError::KeyFile { .. }), "{err}");
        // The key check runs at open: a store holding files under another key is refused.
        #[cfg(feature = "fs")]
        {
            let folder = dir.path().join("folder").display().to_string();
            let store = open_with(
                &folder,
                &OpenOptions::new().with_encryption_key_file(&key_file),
            )
            .await
            .unwrap();
            let out = MemoryTool::new(store)
                .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
                .await;
            assert!(!out.is_error, "{out:?}");
            let other = memory_encrypted::Keyring::new(memory_encrypted::Key::generate().unwrap());
            let err = open_with(&folder, &OpenOptions::new().with_keyring(other))
                .await
                .expect_err("wrong key");
            let OpenError::Open { source, .. } = &err else {
                panic!("{err:?}");
            };
            assert!(
                matches!(
                    source.downcast_ref::<memory_encrypted::KeyCheckError>(),
                    Some(memory_encrypted::KeyCheckError::WrongKey { .. })
                ),
                "{err:?}"
            );
        }
    }

    #[cfg(feature = "encrypted")]
    #[test]
    fn the_key_check_record_is_memory_encrypteds() {
        assert_eq!(KEY_CHECK_PATH, memory_encrypted::KEY_CHECK_PATH);
    }

    #[cfg(not(feature = "encrypted"))]
    #[tokio::test]
    async fn encryption_needs_encrypted() {
        let options = OpenOptions::new().with_encryption_key_file("key");
        let err = open_with("mem:", &options)
            .await
            .expect_err("no encryption");
        assert!(
            err.to_string()
                .contains("compiled without feature `encrypted`"),
            "{err}"
        );
    }
}
