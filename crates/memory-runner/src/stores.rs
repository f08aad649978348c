//! Versioned memory stores behind store URLs (`store+sqlite:`, `store+http(s):`), and mounts of
//! several stores under one `/memories` (feature `stores`, re-exporting memory-mounts as
//! [`crate::mounts`]).

use std::sync::Arc;

use memory_core::Storage;

use crate::store::{OpenError, OpenOptions, StoreUrl};

/// The variable holding the API key of `store+http(s):` stores.
pub const STORE_API_KEY_VAR: &str = "MEMORY_STORE_API_KEY";

#[cfg(feature = "stores")]
pub(crate) async fn open_store_url(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    Ok(Arc::new(open_store(url, options).await?.0))
}

#[cfg(not(feature = "stores"))]
pub(crate) async fn open_store_url(
    url: &StoreUrl,
    _options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    Err(crate::store::without_feature(
        url,
        "stores",
        "versioned memory stores",
    ))
}

/// Opens a `store+` URL's store and fetches it (so a wrong id, key or server stops here).
#[cfg(feature = "stores")]
async fn open_store(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<
    (
        memory_mounts::StoreStorage,
        memory_mounts::memory_store::Store,
    ),
    OpenError,
> {
    use memory_mounts::StoreStorage;
    use memory_mounts::memory_store::MemoryStores;

    let backend = |source: memory_mounts::memory_store::StoreError| OpenError::Backend {
        url: url.to_string(),
        source: source.into(),
    };
    if options.encryption_key_file.is_some() {
        return Err(OpenError::Unavailable {
            url: url.to_string(),
            reason: "a versioned memory store holds text, so it cannot be encrypted by the \
                     envelope; drop the encryption key file for this store"
                .to_owned(),
        });
    }
    let storage = match url {
        StoreUrl::StoreSqlite { db, store_id } => {
            // Opening would create an empty database: a missing file is a mistake to report.
            if !tokio::fs::try_exists(db).await.unwrap_or(false) {
                return Err(OpenError::Unavailable {
                    url: url.to_string(),
                    reason: format!(
                        "there is no memory-stores database at {} (create stores with `memory serve` or the memory-store crate)",
                        db.display()
                    ),
                });
            }
            let engine = MemoryStores::open(db).await.map_err(backend)?;
            let session = options
                .session_id
                .clone()
                .unwrap_or_else(memory_mounts::new_session_id);
            StoreStorage::local(engine, store_id, session)
        }
        StoreUrl::StoreHttp { base_url, store_id } => {
            let key = std::env::var(STORE_API_KEY_VAR)
                .ok()
                .filter(|k| !k.is_empty());
            let session = options
                .session_id
                .clone()
                .unwrap_or_else(memory_mounts::new_session_id);
            let client = memory_mounts::HttpStores::new(base_url, key)
                .and_then(|client| client.with_session_id(&session))
                .map_err(backend)?;
            StoreStorage::http(client, store_id)
        }
        other => {
            return Err(OpenError::Unavailable {
                url: other.to_string(),
                reason: "not a versioned memory store".to_owned(),
            });
        }
    };
    let store = storage.retrieve().await.map_err(backend)?;
    Ok((storage, store))
}

/// Opens one mount of `memory run --mount NAME=URL[:ro]`: any store URL, mounted at
/// `/memories/<slug of NAME>` with the spec's access. A versioned store (`store+…`) is fetched
/// at once, so a wrong id, key or server is reported here, and its description goes into the
/// mount note.
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
/// let handbook: MountSpec = "Team Handbook=store+sqlite:stores.db#memstore_01abc:ro".parse()?;
/// let notes: MountSpec = "User Notes=store+sqlite:stores.db#memstore_01def".parse()?;
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
        url: spec.url.clone(),
        source,
    })?;
    match url {
        StoreUrl::StoreSqlite { .. } | StoreUrl::StoreHttp { .. } => {
            let (storage, store) = open_store(&url, options).await?;
            Ok(
                Mount::new(spec.name.clone(), Arc::new(storage), spec.access)
                    .with_id(store.id)
                    .with_description(store.description),
            )
        }
        _ => {
            let storage = crate::store::open_url(&url, options).await?;
            Ok(Mount::new(spec.name.clone(), storage, spec.access))
        }
    }
}
