//! Each backend's opening. Backends that parse their own URL (`from_url`) get the URL and
//! the options as they are; the others get what this module read from the URL.

use memory_core::history::HistoryOptions;

use super::*;

/// `mem:`: an [`InMemoryStorage`](memory_core::InMemoryStorage), keeping history as the
/// `history*` options say ([`HistoryOptions`]).
pub(super) fn memory(url: &StoreUrl, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
    let (base, store_options) = split_options(url, url.as_str(), options)?;
    if !matches!(after_scheme(&base), "" | "//") {
        return Err(OpenError::unavailable(url, Refusal::MemoryTakesNothing));
    }
    let mut store_options = store_options;
    let history =
        HistoryOptions::take_from(&mut store_options).map_err(|source| OpenError::Options {
            url: url.to_string(),
            source,
        })?;
    finish_options(url, store_options, &HistoryOptions::KEYS)?;
    Ok(Arc::new(memory_core::InMemoryStorage::with_history(
        history,
    )))
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

/// memory-fs owns `PATH`, `file:PATH` and their options; read-only, it is opened with
/// `from_url_read_only` (nothing on disk changes).
#[cfg(feature = "fs")]
pub(super) async fn dir(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    use memory_fs::{FsOpenError, FsStorage};
    let (owned, given) = (url.clone(), options.store_options.clone());
    let read_only = options.read_only;
    // Opening creates and checks the directory: blocking work.
    open_blocking(url, move || {
        let opened = if read_only {
            FsStorage::from_url_read_only(owned.as_str(), given)
        } else {
            FsStorage::from_url(owned.as_str(), given)
        };
        opened.map_err(|e| match e {
            FsOpenError::Options(refused) => open_error(&owned, Ok(refused)),
            other => open_error(&owned, Err(Box::new(other))),
        })
    })
    .await
}

/// memory-sqlite owns `sqlite:PATH` and its options; read-only, it is opened with
/// `from_url_read_only` (`SQLITE_OPEN_READONLY`, nothing migrated).
#[cfg(feature = "sqlite")]
pub(super) async fn sqlite(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    use memory_sqlite::{SqliteOpenError, SqliteStorage};
    let (owned, given) = (url.clone(), options.store_options.clone());
    let read_only = options.read_only;
    // Opening reads (and may wait for) the database file: blocking work.
    open_blocking(url, move || {
        let opened = if read_only {
            SqliteStorage::from_url_read_only(owned.as_str(), given)
        } else {
            SqliteStorage::from_url(owned.as_str(), given)
        };
        opened.map_err(|e| match e {
            SqliteOpenError::Options(refused) => open_error(&owned, Ok(refused)),
            other => open_error(&owned, Err(Box::new(other))),
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
