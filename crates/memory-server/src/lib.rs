#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod api;
mod app;
mod auth;
mod conn;
mod console;

use std::future::Future;

pub use api::{
    DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_SHUTDOWN_TIMEOUT, ServerConfig,
};
pub use app::router;
pub use auth::{ApiKeys, ApiKeysError};
pub use conn::{DESCRIPTOR_HEADROOM, MAX_DEFAULT_CONNECTIONS, default_max_connections};
pub use console::CSP as CONSOLE_CSP;
use memory_store::MemoryStores;

/// Serves `engine` on `listener` until `shutdown` completes, then stops accepting, lets the
/// requests in flight finish and returns, at the latest after
/// [`ServerConfig::shutdown_timeout`] (connections still open then are closed).
///
/// Connections are bounded in number ([`ServerConfig::max_connections`]) and in time: one that
/// sends no complete request head within [`ServerConfig::header_read_timeout`], or stalls for
/// [`ServerConfig::idle_timeout`], is closed, before any authentication.
///
/// # Errors
/// None today: failed accepts (out of descriptors, a reset) are logged and retried.
pub async fn serve(
    listener: tokio::net::TcpListener,
    engine: MemoryStores,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = config.limits();
    conn::run(listener, router(engine, config), limits, shutdown).await
}

/// Completes on SIGTERM or SIGINT (Ctrl-C); pass it to [`serve`].
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}
