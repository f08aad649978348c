//! [`PostgresOpenError`], why a store could not be opened, and the mapping of database errors
//! into [`memory_core::Error`].
//!
//! No text here ever holds the connection password: errors name the host, port, user,
//! database and schema, and wrap the client's own errors, which do not carry it either.

use memory_core::options::OptionsError;
use tokio_postgres::error::SqlState;

/// The name this backend gives in [`memory_core::Error::Backend`].
pub(crate) const BACKEND: &str = "Postgres";

/// Why [`PostgresStorage::from_url`](crate::PostgresStorage::from_url) could not open a store.
///
/// Every message says what to change; none contains the password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PostgresOpenError {
    /// The URL is not a `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` URL.
    #[error(
        "invalid PostgreSQL store URL: {reason}; write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?schema=NAME&root=NAME]"
    )]
    InvalidUrl {
        /// What is wrong with it.
        reason: String,
    },
    /// An option in the URL's query or in the given options is unknown or has a bad value.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// The `root` option is not a root name.
    #[error(
        "store option `root` has the invalid value `{root}`: use 1 to 63 letters, digits, `-` or `_`"
    )]
    InvalidRoot {
        /// The value given.
        root: String,
    },
    /// The `schema` option is not a schema name this crate uses.
    #[error(
        "store option `schema` has the invalid value `{schema}`: use 1 to 63 lowercase letters, digits or `_`, starting with a letter or `_`, and not starting with `pg_`"
    )]
    InvalidSchema {
        /// The value given.
        schema: String,
    },
    /// TLS was asked for (`sslmode=require`, `verify-ca` or `verify-full`) without saying
    /// which CA certificates to trust.
    #[error(
        "sslmode={mode} verifies the server's certificate: name the CA certificates to trust with sslrootcert=PATH (a PEM file) or sslrootcert=system (the system's trust store)"
    )]
    TlsNeedsRoots {
        /// The mode given.
        mode: String,
    },
    /// The CA certificates of `sslrootcert` cannot be used.
    #[error("cannot use the CA certificates of sslrootcert={roots}: {reason}")]
    TlsRoots {
        /// The `sslrootcert` value (a file the operator named, or `system`).
        roots: String,
        /// What is wrong.
        reason: String,
    },
    /// The TLS handshake failed: the server's certificate did not verify against the trusted
    /// CA certificates or does not name the host, or the server offers no TLS.
    #[error("TLS to PostgreSQL at {host}:{port} failed: {source}")]
    Tls {
        /// The host of the URL.
        host: String,
        /// The port of the URL.
        port: u16,
        /// The client's error, with the handshake's below it.
        #[source]
        source: tokio_postgres::Error,
    },
    /// No server answered at the address (refused, unreachable, timed out).
    #[error("cannot reach PostgreSQL at {host}:{port}: {source}")]
    Unreachable {
        /// The host of the URL.
        host: String,
        /// The port of the URL.
        port: u16,
        /// The client's error, or the timeout that ran out.
        #[source]
        source: memory_core::BoxError,
    },
    /// The server answered but refused the connection (wrong password, unknown user or
    /// database, too many connections).
    #[error("PostgreSQL at {host}:{port} refused user {user} on database {database}: {source}")]
    Rejected {
        /// The host of the URL.
        host: String,
        /// The port of the URL.
        port: u16,
        /// The user of the URL.
        user: String,
        /// The database of the URL.
        database: String,
        /// The server's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// The database is not UTF-8, so it cannot hold every memory path.
    #[error(
        "database {database} has the encoding {encoding}; memory stores need a UTF8 database (CREATE DATABASE ... ENCODING 'UTF8')"
    )]
    NotUtf8 {
        /// The database.
        database: String,
        /// Its encoding.
        encoding: String,
    },
    /// The schema holds tables but no memory-postgres migration record: another
    /// application's schema, left untouched.
    #[error(
        "schema {schema} already holds tables of another application ({tables}), not a memory store; refusing to touch it: pick another schema with ?schema=NAME"
    )]
    ForeignSchema {
        /// The schema.
        schema: String,
        /// Some of its tables.
        tables: String,
    },
    /// The schema was migrated by a newer release of this crate.
    #[error(
        "schema {schema} is at memory-postgres schema version {found}, newer than the version {supported} this build knows; upgrade memory-postgres (migrations only go forward)"
    )]
    SchemaTooNew {
        /// The schema.
        schema: String,
        /// The version found in the database.
        found: i32,
        /// The newest version this build knows ([`SCHEMA_VERSION`](crate::SCHEMA_VERSION)).
        supported: i32,
    },
    /// A read-only open found no such schema in the database: a read-only open creates
    /// nothing.
    #[error(
        "schema {schema} does not exist in database {database}; a read-only open creates nothing: check ?schema=NAME, or open the store once without read-only to create it"
    )]
    SchemaMissing {
        /// The schema.
        schema: String,
        /// The database.
        database: String,
    },
    /// A read-only open found the schema at an older version than this build's (or not yet
    /// made: version 0): a read-only open migrates nothing.
    #[error(
        "schema {schema} is at memory-postgres schema version {found}, older than the version {supported} this build reads; a read-only open migrates nothing: open the store once without read-only to upgrade it"
    )]
    SchemaNeedsUpgrade {
        /// The schema.
        schema: String,
        /// The version found (0 for a schema holding no memory-postgres tables yet).
        found: i32,
        /// The version this build reads ([`SCHEMA_VERSION`](crate::SCHEMA_VERSION)).
        supported: i32,
    },
    /// A read-only open of a memory-tool store found no row for its root: a read-only open
    /// creates nothing.
    #[error(
        "schema {schema} holds no store with root {root}; a read-only open creates nothing: check ?root=NAME, or open the store once without read-only to create it"
    )]
    RootMissing {
        /// The schema.
        schema: String,
        /// The root.
        root: String,
    },
    /// A query failed while the store was being opened (migrations, the root's row).
    #[error("PostgreSQL at {host}:{port} failed while opening the store: {source}")]
    Database {
        /// The host of the URL.
        host: String,
        /// The port of the URL.
        port: u16,
        /// The error.
        #[source]
        source: tokio_postgres::Error,
    },
}

impl PostgresOpenError {
    /// Whether trying again later may succeed (the server is down or busy).
    pub fn is_retryable(&self) -> bool {
        match self {
            PostgresOpenError::Unreachable { .. } => true,
            PostgresOpenError::Rejected { source, .. }
            | PostgresOpenError::Database { source, .. } => is_retryable(source),
            _ => false,
        }
    }
}

/// SQLSTATE classes and codes that a retry can get past: the connection (class 08), the server
/// shutting down or starting (57P01-57P03), too many connections, serialization failures and
/// deadlocks, lock timeouts.
fn retryable_state(code: &SqlState) -> bool {
    let code = code.code();
    code.starts_with("08")
        || matches!(
            code,
            "40001" | "40P01" | "55P03" | "57P01" | "57P02" | "57P03" | "53300" | "53400"
        )
}

/// Whether a client error may go away on retry: a lost or closed connection, an I/O error or
/// timeout (no SQLSTATE), or a retryable SQLSTATE.
pub(crate) fn is_retryable(e: &tokio_postgres::Error) -> bool {
    e.is_closed() || e.code().is_none_or(retryable_state)
}

/// A database error as the storage error callers see: retryable when the connection or the
/// server's state is to blame.
pub(crate) fn backend(e: tokio_postgres::Error) -> memory_core::Error {
    if is_retryable(&e) {
        memory_core::Error::retryable(BACKEND, e)
    } else {
        memory_core::Error::backend(BACKEND, e)
    }
}

/// A pool failure: no connection could be had in time (every one busy, or the server gone).
pub(crate) fn pool(e: deadpool_postgres::PoolError) -> memory_core::Error {
    match e {
        deadpool_postgres::PoolError::Backend(e) => backend(e),
        other => memory_core::Error::retryable(BACKEND, other),
    }
}

/// No answer from the server within the connect timeout.
#[derive(Debug, thiserror::Error)]
#[error("no answer within {0:?}")]
pub(crate) struct ConnectTimeout(pub(crate) std::time::Duration);

/// A row that breaks the store's rules (edited by hand).
#[derive(Debug, thiserror::Error)]
#[error(
    "schema {schema}, root {root} holds a row whose path {stored:?} is not a valid memory path"
)]
pub(crate) struct BadRow {
    pub(crate) schema: String,
    pub(crate) root: String,
    pub(crate) stored: String,
}

/// A rename whose destination would break a path rule.
#[derive(Debug, thiserror::Error)]
#[error("cannot move {source_path} below {to}: the path would be too long or too deep")]
pub(crate) struct RenameTooLong {
    pub(crate) source_path: String,
    pub(crate) to: String,
}
