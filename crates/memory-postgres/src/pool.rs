//! The connection pool, and the first connection that checks and migrates the schema (or, read-only, only checks it).

use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};

use crate::config::Settings;
use crate::error::{ConnectTimeout, PostgresOpenError};
use crate::schema::{self, PrepareError};
use crate::tls::{HandshakeError, MakeRustls};

/// Builds the pool, connects once (so that an unreachable server or a refused login is an
/// error now, naming host and port), and prepares the schema (and `root`'s row, if given);
/// for read-only settings, only checks them ([`schema::check_read_only`]).
pub(crate) async fn connect(
    settings: &Settings,
    root: Option<&str>,
) -> Result<Pool, PostgresOpenError> {
    let pool = bare(settings)?;
    let mut client = pool.get().await.map_err(|e| connect_error(settings, e))?;
    let prepared = if settings.read_only {
        schema::check_read_only(&client, &settings.database, &settings.schema, root).await
    } else {
        schema::prepare(&mut client, &settings.database, &settings.schema, root).await
    };
    drop(client);
    match prepared {
        Ok(()) => Ok(pool),
        Err(PrepareError::Refused(e)) => Err(e),
        Err(PrepareError::Query(source)) => Err(PostgresOpenError::Database {
            host: settings.host.clone(),
            port: settings.port,
            source,
        }),
    }
}

/// The pool of `settings`, not connected yet, nothing checked or prepared.
pub(crate) fn bare(settings: &Settings) -> Result<Pool, PostgresOpenError> {
    let manager = Manager::from_config(
        settings.pg.clone(),
        MakeRustls {
            config: settings.tls.clone(),
        },
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(settings.pool_size)
        .runtime(Runtime::Tokio1)
        .create_timeout(Some(settings.connect_timeout))
        .wait_timeout(Some(settings.connect_timeout * 6))
        .recycle_timeout(Some(settings.connect_timeout))
        .build()
        .map_err(|e| PostgresOpenError::InvalidUrl {
            reason: format!("the connection pool cannot be built ({e})"),
        })
}

/// The error for a failed first connection: no answer, or the server's refusal.
pub(crate) fn connect_error(settings: &Settings, e: PoolError) -> PostgresOpenError {
    match e {
        PoolError::Backend(source) if is_handshake(&source) => PostgresOpenError::Tls {
            host: settings.host.clone(),
            port: settings.port,
            source,
        },
        PoolError::Backend(source) if source.code().is_some() => PostgresOpenError::Rejected {
            host: settings.host.clone(),
            port: settings.port,
            user: settings.user.clone(),
            database: settings.database.clone(),
            source,
        },
        PoolError::Backend(source) => PostgresOpenError::Unreachable {
            host: settings.host.clone(),
            port: settings.port,
            source: Box::new(source),
        },
        // The pool's create timeout: the server did not answer within connect_timeout.
        PoolError::Timeout(_) => PostgresOpenError::Unreachable {
            host: settings.host.clone(),
            port: settings.port,
            source: Box::new(ConnectTimeout(settings.connect_timeout)),
        },
        other => PostgresOpenError::InvalidUrl {
            reason: format!("the connection pool failed ({other})"),
        },
    }
}

/// Whether the TLS handshake is what failed (a [`HandshakeError`] in the error's chain).
fn is_handshake(e: &tokio_postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<HandshakeError>() {
            return true;
        }
        source = s.source();
    }
    false
}
