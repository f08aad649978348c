#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod api;
mod auth;

use std::future::Future;

pub use api::{DEFAULT_BODY_LIMIT, ServerConfig, router};
pub use auth::{ApiKeys, ApiKeysError};
use memory_store::MemoryStores;

/// Serves `engine` on `listener` until `shutdown` completes, then finishes the requests in
/// flight and returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    engine: MemoryStores,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(engine, config))
        .with_graceful_shutdown(shutdown)
        .await
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
