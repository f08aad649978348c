//! The routes, handlers, request parsing and the error envelope.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use memory_store::{
    Actor, CreateMemory, CreateStore, ErrorBody, ErrorEnvelope, ListMemories, ListStores,
    ListVersions, MemoryStores, Operation, Reason, StoreError, Timestamp, UpdateMemory,
    UpdateStore, View,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ApiKeys;
use crate::app::App;

/// Default of [`ServerConfig::body_limit`]: 1 MiB (a 100 kB memory fits even with every
/// character JSON-escaped as `\uXXXX`).
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// Default of [`ServerConfig::header_read_timeout`]: 10 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Default of [`ServerConfig::idle_timeout`]: 30 seconds.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Default of [`ServerConfig::body_timeout`]: 30 seconds.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Default of [`ServerConfig::shutdown_timeout`]: 10 seconds.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// How the server behaves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Accepted API keys; `None` accepts every request and records no actor.
    pub api_keys: Option<ApiKeys>,
    /// Largest request body in bytes; a larger one gets 413.
    pub body_limit: usize,
    /// How long a connection may take to send a complete request head, counted from when the
    /// server starts waiting for it: when the connection opens, and after each response (so
    /// it is also how long an idle keep-alive connection stays open). Then it is closed.
    pub header_read_timeout: Duration,
    /// How long a connection may go without a byte read or written while a request is read
    /// or answered (a stalled body, a client that stops reading). Then it is closed.
    pub idle_timeout: Duration,
    /// How long a request body may take to arrive in full; a slower one gets 408.
    pub body_timeout: Duration,
    /// Most connections open at once; further clients wait in the listen backlog until one
    /// closes. `None`: [`default_max_connections`](crate::default_max_connections), below
    /// the descriptor limit.
    pub max_connections: Option<usize>,
    /// After the shutdown signal, how long requests in flight may take to finish; then every
    /// connection still open is closed and [`serve`](crate::serve) returns.
    pub shutdown_timeout: Duration,
    /// Whether the web console is served at `/console/` (`memory serve --no-console` turns
    /// it off; then `/console/` is a 404).
    pub console: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            api_keys: None,
            body_limit: DEFAULT_BODY_LIMIT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: None,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            console: true,
        }
    }
}

impl ServerConfig {
    /// Sets [`api_keys`](Self::api_keys).
    pub fn api_keys(mut self, keys: Option<ApiKeys>) -> Self {
        self.api_keys = keys;
        self
    }

    /// Sets [`body_limit`](Self::body_limit).
    pub fn body_limit(mut self, limit: usize) -> Self {
        self.body_limit = limit;
        self
    }

    /// Sets [`header_read_timeout`](Self::header_read_timeout).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets [`idle_timeout`](Self::idle_timeout).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets [`body_timeout`](Self::body_timeout).
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Sets [`max_connections`](Self::max_connections).
    pub fn max_connections(mut self, max: Option<usize>) -> Self {
        self.max_connections = max;
        self
    }

    /// Sets [`shutdown_timeout`](Self::shutdown_timeout).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Sets [`console`](Self::console).
    pub fn console(mut self, on: bool) -> Self {
        self.console = on;
        self
    }

    pub(crate) fn limits(&self) -> crate::conn::Limits {
        crate::conn::Limits {
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
            max_connections: self
                .max_connections
                .unwrap_or_else(crate::default_max_connections),
            shutdown_timeout: self.shutdown_timeout,
        }
    }

    /// Refuses a non-loopback `addr` when there are no API keys: without keys anyone who can
    /// reach the port could read and change every store.
    pub fn check_listen(&self, addr: SocketAddr) -> Result<(), String> {
        if self.api_keys.is_none() && !addr.ip().is_loopback() {
            return Err(format!(
                "refusing to listen on {addr} without API keys: pass --api-keys FILE, or listen on 127.0.0.1"
            ));
        }
        Ok(())
    }
}

/// Per-request context the auth middleware puts into the request's extensions.
#[derive(Debug, Clone)]
struct Ctx {
    request_id: String,
    actor: Option<Actor>,
    /// The workspace the request acts in (`anthropic-workspace-id`; `None`: the default one).
    workspace: Option<String>,
}

/// An error response: the hosted API's envelope ([`ErrorEnvelope`]).
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    body: ErrorBody,
    /// `x-should-retry`: `Some(false)` on answers that a retry can only repeat.
    retry: Option<bool>,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: ErrorBody {
                kind: kind.to_owned(),
                message: message.into(),
                reason: None,
                conflicting_memory_id: None,
                conflicting_path: None,
            },
            retry: None,
        }
    }

    fn invalid(message: impl Into<String>) -> Self {
        let mut e = Self::new(StatusCode::BAD_REQUEST, "invalid_request_error", message);
        e.body.reason = Some(Reason::InvalidParameter);
        e
    }

    fn render(self, request_id: &str) -> Response {
        let envelope = ErrorEnvelope {
            kind: "error".to_owned(),
            error: self.body,
            request_id: Some(request_id.to_owned()),
        };
        let mut response = json_response(self.status, &envelope);
        if let Some(retry) = self.retry {
            response.headers_mut().insert(
                "x-should-retry",
                HeaderValue::from_static(if retry { "true" } else { "false" }),
            );
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if let StoreError::Backend { .. } = e {
            tracing::error!(error = %e, "memory store backend failure");
        }
        ApiError {
            status,
            body: ErrorBody::of(&e),
            // The SDKs retry 409 (and 5xx) unless told not to: a conflict, a failed
            // precondition or a refused redaction can only repeat.
            retry: e.is_deterministic().then_some(false),
        }
    }
}

fn json_response(status: StatusCode, value: &impl Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

type Answer = Result<Response, ApiError>;

fn ok(value: &impl Serialize) -> Answer {
    Ok(json_response(StatusCode::OK, value))
}

/// The API's routes: every endpoint of the memory-stores API and `GET /health`.
pub(crate) fn routes() -> Router<App> {
    let stores = "/v1/memory_stores";
    Router::new()
        .route("/health", get(health))
        .route(stores, get(list_stores).post(create_store))
        .route(
            &format!("{stores}/{{store}}"),
            get(retrieve_store).post(update_store).delete(delete_store),
        )
        .route(&format!("{stores}/{{store}}/archive"), post(archive_store))
        .route(
            &format!("{stores}/{{store}}/memories"),
            get(list_memories).post(create_memory),
        )
        .route(
            &format!("{stores}/{{store}}/memories/{{memory}}"),
            get(retrieve_memory)
                .post(update_memory)
                .delete(delete_memory),
        )
        .route(
            &format!("{stores}/{{store}}/memory_versions"),
            get(list_versions),
        )
        .route(
            &format!("{stores}/{{store}}/memory_versions/{{version}}"),
            get(retrieve_version),
        )
        .route(
            &format!("{stores}/{{store}}/memory_versions/{{version}}/redact"),
            post(redact_version),
        )
}

fn new_request_id() -> String {
    const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut bytes = [0u8; 24];
    let _ = getrandom::fill(&mut bytes);
    let tail: String = bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % 62]))
        .collect();
    format!("req_{tail}")
}

fn presented_key(headers: &HeaderMap) -> Option<&str> {
    if let Some(key) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(key);
    }
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// The header naming the agent session a request acts for (an extension of this server).
pub(crate) const SESSION_HEADER: &str = "x-memory-session-id";

/// The session named by [`SESSION_HEADER`]: 1 to 64 characters from `[0-9A-Za-z_-]`.
fn session_of(headers: &HeaderMap) -> Result<Option<String>, &'static str> {
    let Some(value) = headers.get(SESSION_HEADER) else {
        return Ok(None);
    };
    match value.to_str() {
        Ok(id) if Actor::is_valid_session_id(id) => Ok(Some(id.to_owned())),
        _ => Err("x-memory-session-id must be 1 to 64 characters from [0-9A-Za-z_-]"),
    }
}

/// The header selecting the workspace a request acts in, as the official SDKs send it.
pub(crate) const WORKSPACE_HEADER: &str = "anthropic-workspace-id";

/// The workspace named by [`WORKSPACE_HEADER`] (`None`: the default workspace, also for an
/// empty value): 1 to 64 characters from `[0-9A-Za-z_-]`.
pub(crate) fn workspace_of(headers: &HeaderMap) -> Result<Option<String>, &'static str> {
    let Some(value) = headers.get(WORKSPACE_HEADER) else {
        return Ok(None);
    };
    match value.to_str().map(str::trim) {
        Ok("") => Ok(None),
        Ok(id) if memory_store::is_valid_workspace_id(id) => Ok(Some(id.to_owned())),
        _ => Err("anthropic-workspace-id must be 1 to 64 characters from [0-9A-Za-z_-]"),
    }
}

/// Gives each request an id (the `request-id` response header and `request_id` of errors),
/// checks its API key and records the actor.
pub(crate) async fn context(State(app): State<App>, mut request: Request, next: Next) -> Response {
    let request_id = new_request_id();
    // The console signs its users in itself (with the same keys, see `console`), and every
    // one of its answers carries its security headers.
    if app.config.console && crate::console::is_console_path(request.uri().path()) {
        let mut response = next.run(request).await;
        crate::console::secure(&mut response);
        return with_request_id(response, &request_id);
    }
    let mut api_key_id = None;
    // With the console off, its paths answer 404 to every client.
    if let Some(keys) = &app.config.api_keys
        && request.uri().path() != "/health"
        && !crate::console::is_console_path(request.uri().path())
    {
        match presented_key(request.headers()).and_then(|k| keys.lookup(k)) {
            Some(id) => api_key_id = Some(id.to_owned()),
            None => {
                let message = if presented_key(request.headers()).is_some() {
                    "invalid x-api-key"
                } else {
                    "x-api-key header is required"
                };
                return with_request_id(
                    ApiError::new(StatusCode::UNAUTHORIZED, "authentication_error", message)
                        .render(&request_id),
                    &request_id,
                );
            }
        }
    }
    // Extension: a client running an agent session names it, so each version is attributed
    // to that session (`session_actor`), with the API key that sent it beside it (an
    // extension field of `session_actor`): naming a session never hides the key.
    let actor = match session_of(request.headers()) {
        Ok(Some(session_id)) => Some(match api_key_id {
            Some(key) => Actor::session_via_key(session_id, key),
            None => Actor::session(session_id),
        }),
        Ok(None) => api_key_id.map(Actor::api_key),
        Err(message) => {
            return with_request_id(ApiError::invalid(message).render(&request_id), &request_id);
        }
    };
    // Stores are kept apart by workspace: one of another workspace is not found.
    let workspace = match workspace_of(request.headers()) {
        Ok(workspace) => workspace,
        Err(message) => {
            return with_request_id(ApiError::invalid(message).render(&request_id), &request_id);
        }
    };
    request.extensions_mut().insert(Ctx {
        request_id: request_id.clone(),
        actor,
        workspace,
    });
    with_request_id(next.run(request).await, &request_id)
}

fn with_request_id(mut response: Response, request_id: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(request_id) {
        response.headers_mut().insert("request-id", v);
    }
    response
}

fn ctx_of(request: &Request) -> Ctx {
    request.extensions().get::<Ctx>().cloned().unwrap_or(Ctx {
        request_id: new_request_id(),
        actor: None,
        workspace: None,
    })
}

pub(crate) async fn not_found(request: Request) -> Response {
    let ctx = ctx_of(&request);
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found_error",
        format!("no route for {} {}", request.method(), request.uri().path()),
    )
    .render(&ctx.request_id)
}

pub(crate) async fn method_not_allowed(request: Request) -> Response {
    let ctx = ctx_of(&request);
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
    .render(&ctx.request_id)
}

async fn health() -> Response {
    json_response(StatusCode::OK, &serde_json::json!({"status": "ok"}))
}

/// The parts of a request every handler needs.
struct Call {
    ctx: Ctx,
    /// The engine, acting in the request's workspace.
    engine: MemoryStores,
    query: Vec<(String, String)>,
    body: Result<Bytes, ApiError>,
}

async fn call(app: &App, query: Option<String>, request: Request) -> Call {
    let ctx = ctx_of(&request);
    let query = query
        .as_deref()
        .and_then(|q| serde_urlencoded::from_str::<Vec<(String, String)>>(q).ok())
        .unwrap_or_default();
    let read = axum::body::to_bytes(request.into_body(), app.config.body_limit);
    let body = match tokio::time::timeout(app.config.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request_error",
            format!(
                "the request body did not arrive within {} seconds",
                app.config.body_timeout.as_secs_f64()
            ),
        )),
        Ok(Err(_)) => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            format!(
                "request body is larger than {} bytes",
                app.config.body_limit
            ),
        )),
    };
    let engine = app.engine.in_workspace(ctx.workspace.clone());
    Call {
        ctx,
        engine,
        query,
        body,
    }
}

impl Call {
    fn finish(self, answer: Answer) -> Response {
        answer.unwrap_or_else(|e| e.render(&self.ctx.request_id))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.get(name)
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| ApiError::invalid(format!("{name} must be an integer")))
            })
            .transpose()
    }

    fn time(&self, name: &str) -> Result<Option<Timestamp>, ApiError> {
        self.get(name)
            .map(|v| {
                v.parse::<Timestamp>()
                    .map_err(|_| ApiError::invalid(format!("{name} must be an RFC 3339 date-time")))
            })
            .transpose()
    }

    fn bool(&self, name: &str) -> Result<bool, ApiError> {
        match self.get(name) {
            None | Some("false") | Some("False") | Some("0") => Ok(false),
            Some("true") | Some("True") | Some("1") => Ok(true),
            Some(_) => Err(ApiError::invalid(format!("{name} must be true or false"))),
        }
    }

    fn view(&self, default: View) -> Result<View, ApiError> {
        match self.get("view") {
            None => Ok(default),
            Some(v) => View::parse(v)
                .ok_or_else(|| ApiError::invalid("view must be \"basic\" or \"full\"")),
        }
    }

    fn text(&self, name: &str) -> Option<String> {
        self.get(name).map(str::to_owned)
    }

    /// The body as JSON of type `T` (unknown fields and wrong types are a 400).
    fn json<T: DeserializeOwned>(&mut self) -> Result<T, ApiError> {
        let body = std::mem::replace(&mut self.body, Ok(Bytes::new()))?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::invalid("request body must be a JSON object"));
        }
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::invalid(format!("invalid request body: {e}")))
    }

    /// A body that must be empty or a JSON object (endpoints without parameters).
    fn no_body(&mut self) -> Result<(), ApiError> {
        let body = std::mem::replace(&mut self.body, Ok(Bytes::new()))?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&body)
            .map(|_| ())
            .map_err(|e| ApiError::invalid(format!("invalid request body: {e}")))
    }
}

/// Runs `f` on the parsed request and renders its answer or error.
macro_rules! handler {
    ($name:ident, ($($p:ident),*), |$app:ident, $c:ident| $body:block) => {
        async fn $name(
            State($app): State<App>,
            Path(($($p,)*)): Path<($(handler!(@string $p),)*)>,
            RawQuery(query): RawQuery,
            request: Request<Body>,
        ) -> Response {
            #[allow(unused_mut)]
            let mut $c = call(&$app, query, request).await;
            let answer: Answer = async { $body }.await;
            $c.finish(answer)
        }
    };
    (@string $p:ident) => { String };
}

async fn list_stores(
    State(app): State<App>,
    RawQuery(query): RawQuery,
    request: Request,
) -> Response {
    let c = call(&app, query, request).await;
    let answer = async {
        let params = ListStores {
            created_at_gte: c.time("created_at[gte]")?,
            created_at_lte: c.time("created_at[lte]")?,
            include_archived: c.bool("include_archived")?,
            limit: c.int("limit")?,
            page: c.text("page"),
        };
        ok(&c.engine.list_stores(params).await?)
    }
    .await;
    c.finish(answer)
}

async fn create_store(
    State(app): State<App>,
    RawQuery(query): RawQuery,
    request: Request,
) -> Response {
    let mut c = call(&app, query, request).await;
    let answer = async {
        let params: CreateStore = c.json()?;
        ok(&c.engine.create_store(params).await?)
    }
    .await;
    c.finish(answer)
}

handler!(retrieve_store, (store), |app, c| {
    ok(&c.engine.retrieve_store(&store).await?)
});

handler!(update_store, (store), |app, c| {
    let params: UpdateStore = c.json()?;
    ok(&c.engine.update_store(&store, params).await?)
});

handler!(delete_store, (store), |app, c| {
    ok(&c.engine.delete_store(&store).await?)
});

handler!(archive_store, (store), |app, c| {
    c.no_body()?;
    ok(&c.engine.archive_store(&store).await?)
});

handler!(create_memory, (store), |app, c| {
    let view = c.view(View::Basic)?;
    let body: CreateMemory = c.json()?;
    let Some(content) = body.content else {
        return Err(ApiError::invalid(
            "content is required (use \"\" for an empty memory)",
        ));
    };
    // Extension: `max_memories=N` creates only while the store holds fewer than N memories
    // (one transaction with the create), for clients that keep a limit of their own.
    let max = match c.int("max_memories")? {
        None => u64::MAX,
        Some(n) => {
            u64::try_from(n).map_err(|_| ApiError::invalid("max_memories must be 0 or more"))?
        }
    };
    let actor = c.ctx.actor.clone();
    let memory = c
        .engine
        .create_memory_within(&store, &body.path, &content, max, actor)
        .await?;
    ok(&memory.with_view(view))
});

handler!(retrieve_memory, (store, memory), |app, c| {
    let view = c.view(View::Full)?;
    ok(&c
        .engine
        .retrieve_memory(&store, &memory)
        .await?
        .with_view(view))
});

handler!(update_memory, (store, memory), |app, c| {
    let view = c.view(View::Basic)?;
    let params: UpdateMemory = c.json()?;
    let actor = c.ctx.actor.clone();
    let updated = c
        .engine
        .update_memory(&store, &memory, params, actor)
        .await?;
    ok(&updated.with_view(view))
});

handler!(delete_memory, (store, memory), |app, c| {
    let expected = c.text("expected_content_sha256");
    let actor = c.ctx.actor.clone();
    ok(&c
        .engine
        .delete_memory(&store, &memory, expected.as_deref(), actor)
        .await?)
});

handler!(list_memories, (store), |app, c| {
    let params = ListMemories::from_query(c.query.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    ok(&c.engine.list_memories(&store, params).await?)
});

handler!(list_versions, (store), |app, c| {
    let operation = match c.get("operation") {
        None => None,
        Some(op) => Some(Operation::parse(op).ok_or_else(|| {
            ApiError::invalid("operation must be \"created\", \"modified\" or \"deleted\"")
        })?),
    };
    let params = ListVersions {
        memory_id: c.text("memory_id"),
        operation,
        session_id: c.text("session_id"),
        api_key_id: c.text("api_key_id"),
        service_account_id: c.text("service_account_id"),
        created_at_gte: c.time("created_at[gte]")?,
        created_at_lte: c.time("created_at[lte]")?,
        limit: c.int("limit")?,
        page: c.text("page"),
        view: c.view(View::Basic)?,
    };
    ok(&c.engine.list_versions(&store, params).await?)
});

handler!(retrieve_version, (store, version), |app, c| {
    let view = c.view(View::Full)?;
    ok(&c
        .engine
        .retrieve_version(&store, &version)
        .await?
        .with_view(view))
});

handler!(redact_version, (store, version), |app, c| {
    c.no_body()?;
    let actor = c.ctx.actor.clone();
    ok(&c.engine.redact_version(&store, &version, actor).await?)
});
