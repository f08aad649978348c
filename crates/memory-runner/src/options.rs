//! [`OpenOptions`] (what applies to any store) and [`OpenError`] (why a store did not open).

use std::fmt;
use std::path::PathBuf;

use memory_core::options::{OptionsError, StoreOptions};

use crate::url::{Scheme, StoreUrl, StoreUrlError, compiled_forms};

/// Options that apply to any store: encryption, the environment, the session of versioned
/// stores, and store options given by the program rather than in the URL.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct OpenOptions {
    /// Wrap the store in the encrypted envelope, with the key in this file (64 hex characters).
    pub encryption_key_file: Option<PathBuf>,
    /// Older keys that files may still be encrypted under: read with them, never written
    /// (key rotation; `memory rekey` moves every file to the active key).
    pub old_key_files: Vec<PathBuf>,
    /// Wrap the store in the encrypted envelope with keys the application holds (instead of,
    /// or besides, key files: the files' keys are added to it).
    #[cfg(feature = "encrypted")]
    pub keyring: Option<memory_encrypted::Keyring>,
    /// The session every change is recorded as: a versioned store's session actor (a new
    /// `sesn_…` id when unset), any other store's `history_session`
    /// ([`OpenOptions::with_session_id`]).
    pub session_id: Option<String>,
    /// Read the backends' environment variables: `AWS_*` for `s3://` stores,
    /// `MEMORY_STORE_API_KEY` for `store+http(s):` stores. Off unless asked for.
    pub environment: bool,
    /// Store options besides the URL's `?key=value` ones; each backend documents the ones it
    /// accepts, and what an option given in both means (memory-fs, memory-sqlite and
    /// memory-s3 take the program's; memory-postgres and the in-memory and versioned stores
    /// refuse it).
    pub store_options: StoreOptions,
    /// Open the store read-only: every change is refused by core's
    /// [`ReadOnly`](memory_core::ReadOnly) wrapper, and the backend is opened so that nothing
    /// on disk changes at all (memory-fs: no lock or count file, no cleanup of stale temporary
    /// files; memory-sqlite: `SQLITE_OPEN_READONLY`, no `-wal`/`-shm` file, no migration; the
    /// encrypted envelope writes no key-check record; memory-store: a `store+sqlite:`
    /// database opened read-only, nothing created or migrated; memory-postgres:
    /// `postgres://` and `store+postgres://` opened with `from_url_read_only`, no advisory
    /// lock, no DDL, no row written, every session `default_transaction_read_only`).
    pub read_only: bool,
    /// Open a store that holds encrypted files without a key anyway, as its bytes
    /// ([`OpenOptions::with_plaintext_only`]). Off: such a store is refused
    /// ([`OpenError::Encrypted`]).
    pub plaintext_only: bool,
}

impl fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("OpenOptions");
        d.field("encryption_key_file", &self.encryption_key_file)
            .field("old_key_files", &self.old_key_files);
        #[cfg(feature = "encrypted")]
        d.field(
            "keyring",
            &self.keyring.as_ref().map(|ring| ring.key_ids().len()),
        );
        d.field("session_id", &self.session_id)
            .field("environment", &self.environment)
            .field("read_only", &self.read_only)
            .field("plaintext_only", &self.plaintext_only)
            .field(
                "store_options",
                &self.store_options.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl OpenOptions {
    /// No encryption, no environment, no extra options.
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

    /// Encrypts with `keyring`, keys the application holds (feature `encrypted`).
    #[cfg(feature = "encrypted")]
    pub fn with_keyring(mut self, keyring: memory_encrypted::Keyring) -> Self {
        self.keyring = Some(keyring);
        self
    }

    /// Records every change this store makes as the session `id`'s.
    ///
    /// - a versioned store (`store+…`, feature `stores`): the session actor of its versions
    ///   (1 to 64 characters from `[0-9A-Za-z_-]`, else [`Refusal::InvalidSessionId`]);
    /// - any other store: the `history_session` store option, so that each revision of its
    ///   history ([`memory_core::history`]) names the session (1 to 128 letters, digits, `-`,
    ///   `_` or `.`, else [`Refusal::InvalidHistorySession`]). A `history_session` the URL or
    ///   [`with_store_option`](Self::with_store_option) gives wins over it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use memory_runner::memory_core::{MemoryPath, WriteMode};
    /// use memory_runner::{OpenOptions, open_with};
    ///
    /// let store = open_with("mem:", &OpenOptions::new().with_session_id("sesn_01"))
    ///     .await
    ///     .unwrap();
    /// let path = MemoryPath::parse("/memories/notes.md").unwrap();
    /// store.write(&path, b"hi".to_vec(), WriteMode::Create).await.unwrap();
    /// let log = store.history(&path).await.unwrap();
    /// assert_eq!(log[0].session.as_deref(), Some("sesn_01"));
    /// # });
    /// ```
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Reads the backends' environment variables (`AWS_*`, `MEMORY_STORE_API_KEY`), as the
    /// `memory` program does.
    pub fn with_environment(mut self) -> Self {
        self.environment = true;
        self
    }

    /// Opens the store read-only ([`OpenOptions::read_only`]).
    pub fn with_read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Opens the store even if it is encrypted and no key is given, to read its plaintext
    /// files only.
    ///
    /// Without a key (a key file or a keyring), a store that holds a key-check record (or,
    /// with feature `encrypted`, whose files are envelopes) is refused with
    /// [`OpenError::Encrypted`] before anything is read or written through it: a create would
    /// otherwise store a plaintext file beside the encrypted ones. With this option it opens as
    /// its bytes: plaintext files read as they are, an encrypted file reads as its envelope,
    /// and a write lands in plaintext. Combine it with [`with_read_only`](Self::with_read_only)
    /// to be sure nothing is written; a program that wraps the store in the envelope itself
    /// (`memory rekey`) opens it this way. Ignored when a key is given.
    ///
    /// ```
    /// # #[cfg(feature = "fs")]
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use memory_runner::{OpenError, OpenOptions, open_with};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let store = dir.path().join("store");
    /// # std::fs::create_dir_all(store.join("memories")).unwrap();
    /// # std::fs::write(store.join("memories/.memory-encryption-key-check"), b"\0").unwrap();
    /// # let url = store.display().to_string();
    /// // An encrypted store, opened without its key:
    /// let err = open_with(&url, &OpenOptions::new()).await.unwrap_err();
    /// assert!(matches!(err, OpenError::Encrypted { .. }), "{err}");
    /// // Asked for explicitly, it opens as its bytes (read-only here: nothing is written).
    /// let raw = OpenOptions::new().with_plaintext_only().with_read_only();
    /// let store = open_with(&url, &raw).await.unwrap();
    /// # let _ = store;
    /// # });
    /// ```
    pub fn with_plaintext_only(mut self) -> Self {
        self.plaintext_only = true;
        self
    }

    /// Adds a store option, as if it were in the URL's query.
    pub fn with_store_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.store_options.insert(key, value);
        self
    }

    /// Whether encryption was asked for (a key file or a keyring).
    pub(crate) fn wants_encryption(&self) -> bool {
        #[cfg(feature = "encrypted")]
        if self.keyring.is_some() {
            return true;
        }
        self.encryption_key_file.is_some()
    }
}

/// A boxed error: a backend's own open error, kept typed behind the box (downcast it); the
/// one `BoxError` of the workspace, memory-core's.
pub use memory_core::BoxError;

/// Why a store could not be opened. The text is for the operator (standard error, logs), so
/// it may name host paths; the model never sees it. URLs are shown without their options.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The string is not a store URL.
    #[error("invalid store URL `{url}`: {source}")]
    InvalidUrl {
        /// The string given, without options.
        url: String,
        /// What is wrong with it.
        #[source]
        source: StoreUrlError,
    },
    /// The URL's scheme is known but this build lacks its backend.
    #[error(
        "cannot open store `{url}`: this build was compiled without feature `{feature}` ({}); \
         this build opens: {}",
        scheme.about(),
        compiled_forms()
    )]
    NotCompiled {
        /// The store asked for.
        url: String,
        /// Its scheme.
        scheme: Scheme,
        /// The memory-runner feature that compiles it.
        feature: &'static str,
    },
    /// The store options (the URL's query or [`OpenOptions::store_options`]) were not accepted.
    #[error("cannot open store `{url}`: {source}")]
    Options {
        /// The store asked for.
        url: String,
        /// The option and what is wrong with it.
        #[source]
        source: OptionsError,
    },
    /// This store cannot be used as asked (e.g. a missing database, encryption over a store
    /// that holds only text).
    #[error("cannot open store `{url}`: {source}")]
    Unavailable {
        /// The store asked for.
        url: String,
        /// Why, and what would make it available: a [`Refusal`] of this crate, a
        /// `memory_mounts::VersionedStoreUrlError` for a `store+` URL memory-mounts refuses,
        /// or a program's own cause (downcast it).
        #[source]
        source: BoxError,
    },
    /// The backend refused to open, with a storage error.
    #[error("cannot open store `{url}`: {source}")]
    Backend {
        /// The store asked for.
        url: String,
        /// The backend's error.
        #[source]
        source: memory_core::Error,
    },
    /// The backend refused to open, with its own typed open error (downcast `source` to the
    /// backend's error type, e.g. `memory_runner::postgres::PostgresOpenError`).
    #[error("cannot open store `{url}`: {source}")]
    Open {
        /// The store asked for.
        url: String,
        /// The backend's error.
        #[source]
        source: BoxError,
    },
    /// The store is encrypted (it holds a key-check record, or its files are envelopes) and
    /// no key was given: refused so that nothing reads ciphertext as text and no plaintext is
    /// written beside the encrypted files. Give the key
    /// ([`OpenOptions::with_encryption_key_file`], [`OpenOptions::with_keyring`]), or open it
    /// as its bytes with [`OpenOptions::with_plaintext_only`].
    #[error(
        "cannot open store `{url}`: the store is encrypted{} and no key was given: give its \
         key (a key file or a keyring), or open it for its plaintext files only",
        key_id.as_deref().map(|id| format!(" under key {id}")).unwrap_or_default()
    )]
    Encrypted {
        /// The store asked for.
        url: String,
        /// The key the store's key-check record (or first file) names, when it could be read.
        key_id: Option<String>,
    },
    /// The store's persistent search index could not be deleted
    /// ([`discard_search_index`](crate::store::discard_search_index)); it may still hold the
    /// words of the store's files.
    #[error(
        "cannot delete the search index of store `{url}` (it may still hold the words of the \
         store's files): {source}"
    )]
    IndexNotDiscarded {
        /// The store asked for.
        url: String,
        /// What failed.
        #[source]
        source: memory_core::Error,
    },
    /// The encryption key file could not be used.
    #[error("cannot use the encryption key: {source}")]
    KeyFile {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it (memory-encrypted's `KeyError`).
        #[source]
        source: BoxError,
    },
}

impl OpenError {
    /// [`OpenError::Unavailable`] for `url`, caused by `source`.
    pub(crate) fn unavailable(url: &StoreUrl, source: impl Into<BoxError>) -> OpenError {
        OpenError::Unavailable {
            url: url.to_string(),
            source: source.into(),
        }
    }
}

/// Why this crate cannot use a store as asked: the source of an [`OpenError::Unavailable`]
/// (beside the `store+` URL refusals of memory-mounts). The text says what would make it
/// available.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// `mem:` followed by something.
    #[error("`mem:` takes nothing after the colon")]
    MemoryTakesNothing,
    /// Encryption asked for over a versioned store.
    #[error(
        "a versioned memory store holds text, so it cannot be encrypted by the envelope; drop \
         the encryption key file for this store"
    )]
    VersionedStoreEncrypted,
    /// A session id that breaks the one rule (`memory_store::Actor::is_valid_session_id`).
    #[error("the session id {session:?} must be 1 to 64 characters from [0-9A-Za-z_-]")]
    InvalidSessionId {
        /// The id given.
        session: String,
    },
    /// A session id that a plain store's history cannot record
    /// ([`HistoryOptions::is_valid_session`](memory_core::history::HistoryOptions::is_valid_session)).
    #[error(
        "the session id {session:?} must be 1 to 128 letters, digits, `-`, `_` or `.` to be \
         recorded in the store's history"
    )]
    InvalidHistorySession {
        /// The id given.
        session: String,
    },
    /// A `store+sqlite:` URL naming a file that does not exist (opening would create an empty
    /// database).
    #[error(
        "there is no memory-stores database at {} (create stores with `memory serve` or the \
         memory-store crate)",
        path.display()
    )]
    NoStoresDatabase {
        /// The file named.
        path: PathBuf,
    },
    /// Both a keyring and an encryption key file.
    #[error("both a keyring and an encryption key file were given; give one")]
    KeyringAndKeyFile,
    /// Encryption asked for in a build without feature `encrypted`.
    #[error(
        "this build was compiled without feature `encrypted` (encryption was asked for with a \
         key file)"
    )]
    EncryptionNotCompiled,
    /// A mount of a store that is not a versioned store, without `NAME=`.
    #[error(
        "only a versioned memory store (store+…) names its own folder; write the mount as \
         NAME=URL[:ro]"
    )]
    MountNeedsName,
    /// A search index file named for an encrypted store.
    #[error(
        "`{option}` names an index file, but the store is encrypted: an encrypted store's \
         search never writes an index (remove the option)"
    )]
    IndexFileEncrypted {
        /// The store option (`search_index`).
        option: &'static str,
    },
}

/// The `?key=value` options of `raw` (the URL, or the part of it before a `#`) and the
/// program's, as one set (a key in both is an error), and `raw` without its query.
pub(crate) fn split_options(
    url: &StoreUrl,
    raw: &str,
    options: &OpenOptions,
) -> Result<(String, StoreOptions), OpenError> {
    let invalid = |source| OpenError::Options {
        url: url.to_string(),
        source,
    };
    let (base, from_query) = StoreOptions::from_url(raw).map_err(invalid)?;
    let merged = from_query
        .joined(options.store_options.clone())
        .map_err(invalid)?;
    Ok((base, merged))
}

/// Checks that every option was taken by a backend accepting `accepted`.
pub(crate) fn finish_options(
    url: &StoreUrl,
    options: StoreOptions,
    accepted: &[&str],
) -> Result<(), OpenError> {
    options
        .finish(accepted)
        .map_err(|source| OpenError::Options {
            url: url.to_string(),
            source,
        })
}

/// What follows the scheme's `:` in `base` (the whole of it for a plain path).
pub(crate) fn after_scheme(base: &str) -> &str {
    match crate::url::scheme_of(base) {
        Some(scheme) => &base[scheme.len() + 1..],
        None => base,
    }
}
