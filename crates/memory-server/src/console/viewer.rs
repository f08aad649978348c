//! Who is asking, as axum extractors: [`Viewer`] (anyone the console answers), [`SignedIn`]
//! (a viewer who may use the console, else the sign-in page), [`Post`] and [`AnyPost`] (a
//! checked form of a signed-in viewer, or of anyone: sign-in and sign-out), and
//! [`SignInAttempt`] (the per-address limit of sign-in attempts).

use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;
use maud::Markup;
use memory_store::{Actor, MemoryStores};

use super::error::ConsoleError;
use super::html::{self, Who};
use super::session::{self, Session};
use crate::app::App;

/// Who is asking: their session if they signed in (anonymous visitors have none: nothing is
/// kept for them), the CSRF token of their forms, and the engine acting in their workspace.
#[derive(Clone)]
pub(crate) struct Viewer {
    pub(crate) session: Option<Session>,
    /// The session's token, or an anonymous (stateless) one.
    csrf: String,
    open: bool,
    /// The engine, acting in this viewer's workspace (the API's for the same
    /// `anthropic-workspace-id`).
    pub(crate) engine: MemoryStores,
}

/// Without the form token (a bearer secret).
impl std::fmt::Debug for Viewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Viewer")
            .field("session", &self.session)
            .field("open", &self.open)
            .finish_non_exhaustive()
    }
}

impl Viewer {
    fn new(app: &App, session: Option<Session>, csrf: String) -> Self {
        let workspace = session.as_ref().and_then(|s| s.workspace.clone());
        Viewer {
            session,
            csrf,
            open: app.config.api_keys.is_none(),
            engine: app.engine.in_workspace(workspace),
        }
    }

    /// The actor the engine records for this viewer's writes: the API's for the same key.
    pub(crate) fn actor(&self) -> Option<Actor> {
        self.session
            .as_ref()
            .and_then(|s| s.api_key_id.clone())
            .map(Actor::api_key)
    }

    pub(crate) fn who(&self) -> Who {
        if self.open {
            return Who::Open;
        }
        match &self.session {
            Some(Session {
                api_key_id: Some(id),
                workspace,
                ..
            }) => Who::Key(id.clone(), workspace.clone()),
            _ => Who::Nobody,
        }
    }

    /// Whether the console may be used: signed in with a key, or the server has no keys.
    pub(crate) fn signed_in(&self) -> bool {
        self.open || self.session.is_some()
    }

    /// A whole page for this viewer.
    pub(crate) fn page(&self, status: StatusCode, title: &str, body: Markup) -> Response {
        html::respond(status, html::page(title, &self.who(), &self.csrf, body))
    }

    /// The CSRF field of this viewer's forms.
    pub(crate) fn csrf(&self) -> Markup {
        html::csrf_field(&self.csrf)
    }
}

/// The refusal of a server without keys to a `Host` that is not a loopback name.
fn not_loopback() -> ConsoleError {
    ConsoleError::bare(
        StatusCode::FORBIDDEN,
        "Refused",
        "This console answers only at a loopback address.",
        "The server runs without API keys, so its console can be used only as localhost, 127.0.0.1 or [::1].",
    )
}

/// The viewer of `headers`: its signed-in session, or an anonymous viewer (nothing is made
/// or kept for one). `Err` is the answer instead: on a server without keys, a `Host` that is
/// not a loopback name; or no secret for anonymous tokens.
fn viewer(app: &App, headers: &HeaderMap) -> Result<Viewer, ConsoleError> {
    let open = app.config.api_keys.is_none();
    if open && !host_of(headers).is_some_and(is_loopback_host) {
        return Err(not_loopback());
    }
    // On a server without keys nobody signs in, so no session is ever looked up.
    if !open && let Some(session) = session::cookie_of(headers).and_then(|id| app.sessions.get(&id))
    {
        let csrf = session.csrf.clone();
        return Ok(Viewer::new(app, Some(session), csrf));
    }
    match app.sessions.anonymous_token() {
        Some(csrf) => Ok(Viewer::new(app, None, csrf)),
        None => Err(ConsoleError::bare(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Error",
            "The console cannot show its forms right now.",
            "The server could not get random numbers for its form tokens when it started. Restart it.",
        )),
    }
}

impl FromRequestParts<App> for Viewer {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        viewer(app, &parts.headers)
    }
}

/// A viewer who may use the console (signed in, or a server without keys); anyone else is
/// answered with the sign-in page (401).
#[derive(Debug)]
pub(crate) struct SignedIn(pub(crate) Viewer);

impl FromRequestParts<App> for SignedIn {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        let v = viewer(app, &parts.headers)?;
        if v.signed_in() {
            Ok(SignedIn(v))
        } else {
            Err(ConsoleError::SignIn {
                viewer: v,
                status: StatusCode::UNAUTHORIZED,
                error: None,
            })
        }
    }
}

/// A sign-in attempt, counted against the client address's limit before anything else is
/// looked at (at most [`SIGN_IN_ATTEMPTS`](session::SIGN_IN_ATTEMPTS) a minute); past it,
/// 429 with `Retry-After`.
#[derive(Debug)]
pub(crate) struct SignInAttempt;

impl FromRequestParts<App> for SignInAttempt {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        let address = parts
            .extensions
            .get::<ConnectInfo<std::net::SocketAddr>>()
            .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
        app.sessions
            .limiter
            .attempt(address)
            .map_err(ConsoleError::TooManyAttempts)?;
        Ok(SignInAttempt)
    }
}

/// A checked, state-changing request of a signed-in viewer: its viewer and its form fields.
pub(crate) struct Post {
    pub(crate) viewer: Viewer,
    fields: Vec<(String, String)>,
}

/// A checked form that needs no sign-in (signing in and out).
#[derive(Debug)]
pub(crate) struct AnyPost(pub(crate) Post);

/// Field names only: a sign-in form's value is a key's secret.
impl std::fmt::Debug for Post {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Post")
            .field("viewer", &self.viewer)
            .field(
                "fields",
                &self.fields.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Post {
    /// The last value of field `name`.
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Field `name`, `""` when absent.
    pub(crate) fn text(&self, name: &str) -> &str {
        self.field(name).unwrap_or("")
    }

    /// Whether checkbox `name` is ticked.
    pub(crate) fn ticked(&self, name: &str) -> bool {
        self.field(name).is_some_and(|v| !v.is_empty())
    }
}

impl FromRequest<App> for Post {
    type Rejection = ConsoleError;

    async fn from_request(request: Request, app: &App) -> Result<Self, Self::Rejection> {
        read_post(app, request, true).await
    }
}

impl FromRequest<App> for AnyPost {
    type Rejection = ConsoleError;

    async fn from_request(request: Request, app: &App) -> Result<Self, Self::Rejection> {
        read_post(app, request, false).await.map(AnyPost)
    }
}

/// Reads and checks a `POST`: same origin (Origin, else Referer; not `Sec-Fetch-Site:
/// cross-site`), form-encoded, an existing session, and that session's CSRF token.
/// `needs_sign_in`: whether the session must be signed in (every form but sign-in's).
async fn read_post(app: &App, request: Request, needs_sign_in: bool) -> Result<Post, ConsoleError> {
    let headers = request.headers().clone();
    let refuse = |status, headline: &'static str, detail: &str| {
        Err(ConsoleError::bare(status, "Refused", headline, detail))
    };
    if request.method() != Method::POST {
        return refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            "Only forms of this console can do this.",
            "This address takes a POST from the console's own pages.",
        );
    }
    let open = app.config.api_keys.is_none();
    let host = host_of(&headers).unwrap_or("");
    if open && !is_loopback_host(host) {
        return Err(not_loopback());
    }
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let referer = headers.get(header::REFERER).and_then(|v| v.to_str().ok());
    let from_here = match (origin, referer) {
        (Some(o), _) => same_origin(o, host),
        (None, Some(r)) => same_origin(r, host),
        (None, None) => false,
    };
    let fetch_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("same-origin");
    if !from_here || !matches!(fetch_site, "same-origin" | "none") {
        return refuse(
            StatusCode::FORBIDDEN,
            "This request was refused: it did not come from this console's own page.",
            "A change is accepted only from a form of this console (its Origin or Referer must be this server). Open the console and try again.",
        );
    }
    let form_encoded = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';').next().is_some_and(|t| {
                t.trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            })
        });
    if !form_encoded {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "This request was refused: it is not a form of this console.",
            "The console's forms send application/x-www-form-urlencoded.",
        );
    }
    let session = if open {
        None
    } else {
        session::cookie_of(&headers).and_then(|id| app.sessions.get(&id))
    };
    let not_signed_in = || {
        refuse(
            StatusCode::UNAUTHORIZED,
            "You are not signed in (or your session has ended).",
            "Sign in with an API key, then try again.",
        )
    };
    if session.is_none() && needs_sign_in && !open {
        return not_signed_in();
    }
    let read = axum::body::to_bytes(request.into_body(), app.config.body_limit);
    let body = match tokio::time::timeout(app.config.body_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                "The form did not arrive in time.",
                "Try again.",
            );
        }
        Ok(Err(_)) => {
            let limit = html::size(app.config.body_limit as u64);
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "The form is too large.",
                &format!(
                    "This server takes forms of at most {limit}; for a larger archive use `memory import`."
                ),
            );
        }
    };
    let Ok(fields) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "The form could not be read.",
            "Its fields are not valid form encoding.",
        );
    };
    let token_ok = |t: &str| match &session {
        Some(s) => session::same(t, &s.csrf),
        None => app.sessions.anonymous_token_ok(t),
    };
    // The page a refused anonymous form answers with (a wrong key) has forms too.
    let csrf = match &session {
        Some(s) => s.csrf.clone(),
        None => app.sessions.anonymous_token().unwrap_or_default(),
    };
    let post = Post {
        viewer: Viewer::new(app, session.clone(), csrf),
        fields,
    };
    if !post.field("csrf").is_some_and(token_ok) {
        if session.is_none() && open {
            return refuse(
                StatusCode::FORBIDDEN,
                "This form has expired.",
                "The page it came from is too old, or from before the server restarted. Reload the page and try again.",
            );
        }
        return refuse(
            StatusCode::FORBIDDEN,
            "This request was refused: its security token is missing or out of date.",
            "Each form of the console carries a token of your session. Reload the page and try again.",
        );
    }
    if needs_sign_in && !post.viewer.signed_in() {
        return not_signed_in();
    }
    Ok(post)
}

/// The host the browser addressed (the `Host` header), if readable.
fn host_of(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::HOST).and_then(|v| v.to_str().ok())
}

/// Whether `host` (a `Host` header: name or address, optional port) is a loopback name.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    name.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `url` (an `Origin` or a `Referer`) is `http://` or `https://` this `host`.
fn same_origin(url: &str, host: &str) -> bool {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(rest) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
            authority.eq_ignore_ascii_case(host)
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for h in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "[::1]:80",
            "127.5.0.1",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "evil.example:8080",
            "10.0.0.1",
            "[2001:db8::1]:80",
            "",
            "localhost.evil",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }

    #[test]
    fn origins() {
        assert!(same_origin("http://127.0.0.1:8080", "127.0.0.1:8080"));
        assert!(same_origin(
            "http://127.0.0.1:8080/console/x?y",
            "127.0.0.1:8080"
        ));
        assert!(!same_origin("http://127.0.0.1:8081", "127.0.0.1:8080"));
        assert!(!same_origin("http://127.0.0.1:8080.evil", "127.0.0.1:8080"));
        assert!(!same_origin("null", "127.0.0.1:8080"));
    }
}
