//! Versioned memory stores behind store URLs (`store+sqlite:`, `store+http(s):`, and with
//! feature `postgres` `store+postgres:`; feature
//! `stores`, re-exporting memory-mounts as [`crate::mounts`]). The dispatcher
//! ([`crate::store`]) uses this module; memory-mounts parses the URL
//! (`memory_mounts::VersionedStoreUrl`) and this module opens what it names.

/// The variable holding the API key of `store+http(s):` stores, read with
/// [`OpenOptions::with_environment`](crate::OpenOptions::with_environment).
pub const STORE_API_KEY_VAR: &str = "MEMORY_STORE_API_KEY";

#[cfg(feature = "stores")]
pub(crate) use imp::{open_store, open_store_mount};

impl crate::url::Scheme {
    /// Whether the scheme names one versioned memory store (`store+…`): a store with a display
    /// name (which names its mount folder), history and a session actor for its writes.
    ///
    /// ```
    /// use memory_runner::store::Scheme;
    ///
    /// assert!(Scheme::StoreSqlite.is_versioned_store());
    /// assert!(Scheme::StoreHttp.is_versioned_store());
    /// assert!(!Scheme::Sqlite.is_versioned_store());
    /// ```
    pub fn is_versioned_store(self) -> bool {
        use crate::url::Scheme;
        // Every variant named, so a new scheme has to answer.
        match self {
            Scheme::StoreSqlite | Scheme::StoreHttp | Scheme::StorePostgres => true,
            Scheme::Dir | Scheme::Memory | Scheme::Sqlite | Scheme::S3 | Scheme::Postgres => false,
        }
    }
}

#[cfg(feature = "stores")]
mod imp {
    use memory_mounts::memory_store::{Actor, MemoryStores, Store, StoreError};
    use memory_mounts::{
        Mount, MountSpec, StoreLocation, StoreStorage, VersionedStoreUrl, VersionedStoreUrlError,
    };

    use super::STORE_API_KEY_VAR;
    use crate::options::{OpenError, OpenOptions, Refusal};
    use crate::url::StoreUrl;

    /// Opens a `store+` URL's store and fetches it (so a wrong id, key or server stops here).
    /// memory-mounts parses the URL ([`VersionedStoreUrl`]).
    pub(crate) async fn open_store(
        url: &StoreUrl,
        options: &OpenOptions,
    ) -> Result<(StoreStorage, Store), OpenError> {
        let backend = |source: StoreError| OpenError::Backend {
            url: url.to_string(),
            source: source.into(),
        };
        if options.wants_encryption() {
            return Err(OpenError::unavailable(
                url,
                Refusal::VersionedStoreEncrypted,
            ));
        }
        let parsed = VersionedStoreUrl::from_url(url.as_str(), options.store_options.clone())
            .map_err(|e| match e {
                VersionedStoreUrlError::Options(source) => OpenError::Options {
                    url: url.to_string(),
                    source,
                },
                other => OpenError::unavailable(url, other),
            })?;
        let session = options
            .session_id
            .clone()
            .unwrap_or_else(memory_mounts::new_session_id);
        // One rule for every kind of store, checked before anything is opened (the engine and
        // the HTTP client check it too).
        if !Actor::is_valid_session_id(&session) {
            return Err(OpenError::unavailable(
                url,
                Refusal::InvalidSessionId { session },
            ));
        }
        let (location, store_id) = parsed.into_parts();
        let storage = match location {
            StoreLocation::Sqlite { path: db } => {
                // Opening would create an empty database: a missing file is a mistake to report.
                if !tokio::fs::try_exists(&db).await.unwrap_or(false) {
                    return Err(OpenError::unavailable(
                        url,
                        Refusal::NoStoresDatabase { path: db },
                    ));
                }
                // Read-only (a dream's source): no table created or migrated, no file added.
                let engine = if options.read_only {
                    MemoryStores::open_read_only(&db).await
                } else {
                    MemoryStores::open(&db).await
                }
                .map_err(backend)?;
                StoreStorage::local(engine, store_id, session).map_err(backend)?
            }
            StoreLocation::Postgres {
                url: db_url,
                options: store_options,
            } => {
                let engine =
                    postgres_engine(url, &db_url, store_options, options.read_only).await?;
                StoreStorage::local(engine, store_id, session).map_err(backend)?
            }
            StoreLocation::Http { base_url } => {
                let key = if options.environment {
                    std::env::var(STORE_API_KEY_VAR)
                        .ok()
                        .filter(|k| !k.is_empty())
                } else {
                    None
                };
                let client = memory_mounts::HttpStores::new(&base_url, key)
                    .and_then(|client| client.with_session_id(&session))
                    .map_err(backend)?;
                StoreStorage::http(client, store_id)
            }
        };
        let store = storage.retrieve().await.map_err(backend)?;
        Ok((storage, store))
    }

    /// The engine of a `store+postgres://` URL: its tables in that database (created or
    /// migrated when missing, as `memory serve --db postgres://...` does; read-only, only
    /// checked, with nothing created, locked or written).
    #[cfg(feature = "postgres")]
    async fn postgres_engine(
        url: &StoreUrl,
        db_url: &str,
        store_options: memory_core::options::StoreOptions,
        read_only: bool,
    ) -> Result<MemoryStores, OpenError> {
        use memory_postgres::PostgresPersistence;
        let opened = if read_only {
            PostgresPersistence::from_url_read_only(db_url, store_options).await
        } else {
            PostgresPersistence::from_url(db_url, store_options).await
        };
        let p = opened.map_err(|source| OpenError::Open {
            url: url.to_string(),
            source: Box::new(source),
        })?;
        Ok(MemoryStores::new(p))
    }

    /// Without feature `postgres`: [`OpenError::NotCompiled`].
    #[cfg(not(feature = "postgres"))]
    async fn postgres_engine(
        url: &StoreUrl,
        _db_url: &str,
        _store_options: memory_core::options::StoreOptions,
        _read_only: bool,
    ) -> Result<MemoryStores, OpenError> {
        Err(OpenError::NotCompiled {
            url: url.to_string(),
            scheme: crate::url::Scheme::StorePostgres,
            feature: "postgres",
        })
    }

    /// Opens a `store+` URL's store as a mount of `spec`: the folder is the slug of the
    /// store's display name, or of `spec`'s `NAME=` (the note still names the store); its
    /// description goes into the mount note. An archived store is refused
    /// ([`OpenError::Open`] holding a [`memory_mounts::MountError::Archived`]).
    pub(crate) async fn open_store_mount(
        url: &StoreUrl,
        spec: &MountSpec,
        options: &OpenOptions,
    ) -> Result<Mount, OpenError> {
        let (storage, store) = open_store(url, options).await?;
        let mount =
            Mount::from_store(storage, store, spec.access).map_err(|source| OpenError::Open {
                url: url.to_string(),
                source: Box::new(source),
            })?;
        Ok(match &spec.name {
            Some(folder) => mount.with_folder(folder.clone()),
            None => mount,
        })
    }
}
