//! Which store a `postgres://` URL names, whatever names its server: the server's system
//! identifier (the same through `localhost`, `127.0.0.1` or any other name of the host),
//! the database, the schema and the root. Dreams use it to refuse writing into their source.

use memory_core::options::StoreOptions;

use crate::config::Settings;
use crate::error::PostgresOpenError;

/// A PostgreSQL memory store, as the server knows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreIdentity {
    /// `pg_control_system().system_identifier`: one per cluster (a streaming replica shares
    /// its primary's, and it holds the same data).
    pub system_identifier: String,
    /// `current_database()`.
    pub database: String,
    /// The schema holding the store's tables (the `schema` option).
    pub schema: String,
    /// The store's root (the `root` option).
    pub root: String,
}

/// Connects to the server `url` names, with a read-only session that changes nothing (no
/// lock, no DDL, no row), and returns the identity of the store the URL names. The store need
/// not exist: only the server is asked.
///
/// # Errors
/// A [`PostgresOpenError`] for a URL or option that is not accepted, a server that cannot be
/// reached or refuses the login, or a query that fails; none contains the password.
pub async fn store_identity(
    url: &str,
    options: StoreOptions,
) -> Result<StoreIdentity, PostgresOpenError> {
    identity_of(Settings::parse(url, options)?.read_only()).await
}

/// [`store_identity`] of the versioned-store engine's tables at `url` (the options of
/// [`PostgresPersistence::from_url`](crate::PostgresPersistence::from_url)); `root` is empty,
/// since the engine's stores are told apart by their ids.
///
/// # Errors
/// As [`store_identity`].
#[cfg(feature = "stores")]
pub async fn engine_identity(
    url: &str,
    options: StoreOptions,
) -> Result<StoreIdentity, PostgresOpenError> {
    let settings =
        Settings::parse_accepting(url, options, crate::STORES_ACCEPTED_OPTIONS)?.read_only();
    let mut identity = identity_of(settings).await?;
    identity.root = String::new();
    Ok(identity)
}

async fn identity_of(settings: Settings) -> Result<StoreIdentity, PostgresOpenError> {
    let pool = crate::pool::bare(&settings)?;
    let client = pool
        .get()
        .await
        .map_err(|e| crate::pool::connect_error(&settings, e))?;
    let row = client
        .query_one(
            "SELECT system_identifier::text, current_database()::text FROM pg_control_system()",
            &[],
        )
        .await
        .map_err(|source| PostgresOpenError::Database {
            host: settings.host.clone(),
            port: settings.port,
            source,
        })?;
    Ok(StoreIdentity {
        system_identifier: row.get(0),
        database: row.get(1),
        schema: settings.schema.clone(),
        root: settings.root.clone(),
    })
}
