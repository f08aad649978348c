//! What every handler works with ([`App`]) and the router that puts the API, the console and
//! the middleware together: the one place both halves meet, so neither imports the other.

use axum::Router;
use axum::middleware;
use memory_store::MemoryStores;

use crate::ServerConfig;
use crate::{api, console};

/// What every handler (the API's and the console's) works with.
#[derive(Clone)]
pub(crate) struct App {
    /// The engine: every action of the API and of the console is one of its calls.
    pub(crate) engine: MemoryStores,
    /// The server's settings (its API keys among them).
    pub(crate) config: ServerConfig,
    /// The console's sign-in sessions.
    pub(crate) sessions: console::Sessions,
}

/// The router with every endpoint of the memory-stores API, `GET /health`, the web console
/// at `/console/` (unless [`ServerConfig::console`] is off), and the authentication and
/// request-id middleware.
pub fn router(engine: MemoryStores, config: ServerConfig) -> Router {
    let with_console = config.console;
    let app = App {
        engine,
        config,
        sessions: console::Sessions::default(),
    };
    let routes = if with_console {
        console::routes().merge(api::routes())
    } else {
        api::routes()
    };
    routes
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(middleware::from_fn_with_state(app.clone(), api::context))
        .with_state(app)
}
