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
//! `encrypted`); [`OpenOptions::with_session_id`] names the session every change is recorded
//! as (a versioned store's session actor; any other store's `history_session`, the session
//! of its [history](memory_core::history)). Several stores under one `/memories`:
//! [`open_mount`] (feature `stores`).
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

pub use crate::options::{BoxError, OpenError, OpenOptions, Refusal};
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
    let with_session = history_session_options(url, options)?;
    let options = with_session.as_ref().unwrap_or(options);
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

/// The store option that names the session a plain store's history records
/// ([`HistoryOptions::session`](memory_core::history::HistoryOptions::session)).
const HISTORY_SESSION: &str = "history_session";

/// `options` with [`OpenOptions::session_id`] as the `history_session` store option, for a
/// store that is not a versioned one (`store+…` stores record the session as their versions'
/// actor instead); `None` when nothing is to be added: no session id, a versioned store, or a
/// `history_session` already given (in the URL or as a store option), which wins.
///
/// # Errors
/// [`Refusal::InvalidHistorySession`] for an id that
/// [`HistoryOptions::is_valid_session`](memory_core::history::HistoryOptions::is_valid_session)
/// refuses.
fn history_session_options(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Option<OpenOptions>, OpenError> {
    let Some(session) = &options.session_id else {
        return Ok(None);
    };
    if url.scheme().is_versioned_store() {
        return Ok(None);
    }
    let given = |options: &memory_core::options::StoreOptions| {
        options.keys().any(|key| key == HISTORY_SESSION)
    };
    let in_url = memory_core::options::StoreOptions::from_url(url.as_str())
        .is_ok_and(|(_, query)| given(&query));
    if in_url || given(&options.store_options) {
        return Ok(None);
    }
    if !memory_core::history::HistoryOptions::is_valid_session(session) {
        return Err(OpenError::unavailable(
            url,
            Refusal::InvalidHistorySession {
                session: session.clone(),
            },
        ));
    }
    let mut options = options.clone();
    options.store_options.insert(HISTORY_SESSION, session);
    Ok(Some(options))
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

mod backends;

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
            .map_err(|e| failed(memory_core::Error::backend("key check", e)))?;
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
        source: Box::new(e),
    };
    let mut keyring = match (&options.keyring, &options.encryption_key_file) {
        (Some(_), Some(_)) => {
            return Err(OpenError::unavailable(url, Refusal::KeyringAndKeyFile));
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
    Err(OpenError::unavailable(url, Refusal::EncryptionNotCompiled))
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
                return Err(OpenError::unavailable(&url, Refusal::MountNeedsName));
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
        return Err(OpenError::unavailable(
            &url,
            memory_mounts::VersionedStoreUrlError::NotAStoreUrl,
        ));
    }
    crate::stores::open_store(&url, options).await
}

#[cfg(test)]
mod tests;
