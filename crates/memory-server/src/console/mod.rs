//! The web console at `/console/`: pages rendered here, assets compiled in, every action one
//! call of the same engine the API uses, attributed to the same actor (the signed-in key's
//! `api_actor`).
//!
//! Security model:
//! - **Sign-in**: with API keys, nothing but the sign-in form is shown until a key from the
//!   key file is given; the session id (random, server-side) is the only thing the browser
//!   keeps, in an `HttpOnly`, `SameSite=Strict` cookie. The key's secret is not stored.
//!   Only a sign-in makes a session; anonymous visitors hold nothing (their forms' token is
//!   stateless, an HMAC of its time), and sign-in attempts are limited per client address.
//! - **Cross-site requests**: every state-changing request is a `POST` that must carry the
//!   session's CSRF token, come with an `Origin` (or, lacking it, a `Referer`) of this host,
//!   not be marked cross-site by `Sec-Fetch-Site`, and be form-encoded. The cookie is
//!   `SameSite=Strict` as well. Without API keys (loopback only) the console answers only
//!   to a loopback `Host`, so a rebound DNS name cannot reach it.
//! - **Untrusted content**: memories are text written by a model. Everything is escaped, and
//!   every response carries a Content-Security-Policy without inline script or style.

// A handler's `Err` is the page it answers with instead (made once per request, moved
// straight out): boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

mod diff;
mod html;
mod pages;
mod session;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use memory_store::{Actor, MemoryStores, Reason, StoreError};

use crate::app::App;
use session::Session;
pub(crate) use session::Sessions;

use html::{Who, esc};

/// The Content-Security-Policy of every console response: nothing but this server's own
/// script and style, no inline code, no framing, forms only to this server.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");
const ICON: &str = include_str!("assets/favicon.svg");

/// The console's routes (all under `/console`), with their security headers.
pub(crate) fn routes() -> Router<App> {
    let s = "/console/stores/{store}";
    Router::new()
        .route("/console", get(to_console))
        .route("/console/", get(pages::index))
        .route("/console/assets/console.css", get(css))
        .route("/console/assets/console.js", get(js))
        .route("/console/assets/favicon.svg", get(icon))
        .route("/console/sign-in", post(pages::sign_in))
        .route("/console/sign-out", post(pages::sign_out))
        .route("/console/stores", post(pages::create_store))
        .route(s, get(pages::store))
        .route(&format!("{s}/archive"), post(pages::archive_store))
        .route(&format!("{s}/delete"), post(pages::delete_store))
        .route(&format!("{s}/export"), get(pages::export))
        .route(&format!("{s}/import"), post(pages::import))
        .route(&format!("{s}/memories"), post(pages::create_memory))
        .route(&format!("{s}/memories/{{memory}}"), get(pages::memory))
        .route(&format!("{s}/memories/{{memory}}/save"), post(pages::save))
        .route(
            &format!("{s}/memories/{{memory}}/rename"),
            post(pages::rename),
        )
        .route(
            &format!("{s}/memories/{{memory}}/delete"),
            post(pages::delete_memory),
        )
        .route(&format!("{s}/memories/{{memory}}/diff"), get(pages::diff))
        .route(&format!("{s}/versions"), get(pages::versions))
        .route(&format!("{s}/versions/{{version}}"), get(pages::version))
        .route(
            &format!("{s}/versions/{{version}}/restore"),
            post(pages::restore),
        )
        .route(
            &format!("{s}/versions/{{version}}/redact"),
            post(pages::redact),
        )
        .route(
            "/console/{*rest}",
            get(pages::not_found).post(pages::not_found),
        )
}

/// Whether `path` is the console's (the API's key check leaves these to the console).
pub(crate) fn is_console_path(path: &str) -> bool {
    path == "/console" || path.starts_with("/console/")
}

async fn to_console() -> Response {
    redirect("/console/")
}

async fn css() -> Response {
    asset(CSS, "text/css; charset=utf-8")
}

async fn js() -> Response {
    asset(JS, "text/javascript; charset=utf-8")
}

async fn icon() -> Response {
    asset(ICON, "image/svg+xml")
}

fn asset(text: &'static str, kind: &'static str) -> Response {
    let mut r = (StatusCode::OK, text).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

/// Adds the headers every console response carries (assets, pages, errors, redirects, a
/// wrong method): called by the server's outermost middleware for every console path.
pub(crate) fn secure(response: &mut Response) {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// A `303 See Other` to `location` (a path of this console).
pub(crate) fn redirect(location: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// Who is asking: their session if they signed in (anonymous visitors have none: nothing is
/// kept for them), and the CSRF token of their forms.
#[derive(Debug, Clone)]
pub(crate) struct Viewer {
    pub(crate) session: Option<Session>,
    /// The session's token, or an anonymous (stateless) one.
    csrf: String,
    open: bool,
}

/// The answer to a request refused before its handler ran.
pub(crate) type Refusal = Response;

impl Viewer {
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

    /// The engine, acting in this viewer's workspace (the API's for the same
    /// `anthropic-workspace-id`).
    pub(crate) fn engine(&self, app: &App) -> MemoryStores {
        let workspace = self.session.as_ref().and_then(|s| s.workspace.clone());
        app.engine.in_workspace(workspace)
    }

    /// A whole page for this viewer.
    pub(crate) fn page(&self, status: StatusCode, title: &str, body: &str) -> Response {
        let text = html::page(title, &self.who(), &self.csrf, body);
        self.respond(status, text)
    }

    /// `text` as an HTML response.
    pub(crate) fn respond(&self, status: StatusCode, text: String) -> Response {
        let mut r = (status, text).into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        r
    }

    /// The CSRF field of this viewer's forms.
    pub(crate) fn csrf(&self) -> String {
        html::csrf_field(&self.csrf)
    }

    /// The words for a refused engine call, as a page with the API's status.
    pub(crate) fn store_error(&self, e: &StoreError, back: Option<(&str, &str)>) -> Response {
        let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let title = if status == StatusCode::NOT_FOUND {
            "Not found"
        } else {
            "Refused"
        };
        let mut body = html::crumbs(back.map(|(href, _)| href), title);
        body.push_str(&error_box(e));
        if let Some((href, label)) = back {
            body.push_str(&format!(
                "<p><a href=\"{}\">{}</a></p>",
                esc(href),
                esc(label)
            ));
        } else {
            body.push_str("<p><a href=\"/console/\">Back to the stores</a></p>");
        }
        self.page(status, title, &body)
    }
}

/// An error box with the words for `e`.
pub(crate) fn error_box(e: &StoreError) -> String {
    let (headline, detail) = error_words(e);
    html::message("error", &headline, detail.as_deref())
}

/// A sentence for each engine refusal (never its JSON), and the engine's own message as
/// the detail where it helps (it names ids, paths and limits, never host paths).
pub(crate) fn error_words(e: &StoreError) -> (String, Option<String>) {
    let detail = Some(e.to_string());
    match (e.reason(), e) {
        (_, StoreError::Backend { .. }) => {
            tracing::error!(error = %e, "memory store backend failure (console)");
            (
                "The memory store could not do this right now (its database failed). Try again in a moment."
                    .to_owned(),
                None,
            )
        }
        (Reason::StoreArchived, _) => (
            "This store is archived, so it cannot be changed: its memories can still be read, deleted and redacted, and the store can be deleted, but no memory can be created or edited."
                .to_owned(),
            detail,
        ),
        (Reason::StoreFull, _) => (
            "This store is full: it holds its maximum number of memories. Delete some memories, or use another store."
                .to_owned(),
            detail,
        ),
        (Reason::ContentTooLarge, _) => (
            "The content is too large: a memory holds at most 102,400 bytes of text.".to_owned(),
            detail,
        ),
        (
            Reason::PathInvalid
            | Reason::PathControlCharacter
            | Reason::PathFormatCharacter
            | Reason::PathNotNfc,
            _,
        ) => ("That path is not allowed.".to_owned(), detail),
        (Reason::PreconditionFailed, _) => (
            "The memory changed since it was loaded, so nothing was changed. Reload it and try again."
                .to_owned(),
            detail,
        ),
        (
            _,
            StoreError::PathConflict {
                conflicting_path, ..
            },
        ) => (
            format!(
                "Another memory is in the way: {conflicting_path} (a path cannot be taken twice, or hold a memory and a folder at once)."
            ),
            detail,
        ),
        (Reason::HeadVersion, _) => (
            "This version cannot be redacted: it is the memory's current content. Save a new version (or delete the memory) first, then redact this one."
                .to_owned(),
            detail,
        ),
        (Reason::NotFound, _) => ("Not found.".to_owned(), detail),
        _ => ("The request was refused.".to_owned(), detail),
    }
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

/// A page without a session of its own (a refused request before any session exists).
fn bare(status: StatusCode, title: &str, headline: &str, detail: &str) -> Response {
    let body = html::crumbs(None, title)
        + &html::message("error", headline, Some(detail))
        + "<p><a href=\"/console/\">Open the console</a></p>";
    let mut r = (status, html::page(title, &Who::Nobody, "", &body)).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

/// The viewer of `headers`: its signed-in session, or an anonymous viewer (nothing is made
/// or kept for one). `Err` is the answer instead: on a server without keys, a `Host` that is
/// not a loopback name; or no secret for anonymous tokens.
pub(crate) fn viewer(app: &App, headers: &HeaderMap) -> Result<Viewer, Refusal> {
    let open = app.config.api_keys.is_none();
    if open && !host_of(headers).is_some_and(is_loopback_host) {
        return Err(bare(
            StatusCode::FORBIDDEN,
            "Refused",
            "This console answers only at a loopback address.",
            "The server runs without API keys, so its console can be used only as localhost, 127.0.0.1 or [::1].",
        ));
    }
    // On a server without keys nobody signs in, so no session is ever looked up.
    if !open && let Some(session) = session::cookie_of(headers).and_then(|id| app.sessions.get(&id))
    {
        return Ok(Viewer {
            csrf: session.csrf.clone(),
            session: Some(session),
            open,
        });
    }
    match app.sessions.anonymous_token() {
        Some(csrf) => Ok(Viewer {
            session: None,
            csrf,
            open,
        }),
        None => Err(bare(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Error",
            "The console cannot show its forms right now.",
            "The server could not get random numbers for its form tokens when it started. Restart it.",
        )),
    }
}

/// A checked, state-changing request: its viewer and its form fields.
pub(crate) struct Post {
    pub(crate) viewer: Viewer,
    fields: Vec<(String, String)>,
}

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

/// Reads and checks a `POST`: same origin (Origin, else Referer; not `Sec-Fetch-Site:
/// cross-site`), form-encoded, an existing session, and that session's CSRF token.
/// `needs_sign_in`: whether the session must be signed in (every form but sign-in's).
pub(crate) async fn read_post(
    app: &App,
    request: Request<Body>,
    needs_sign_in: bool,
) -> Result<Post, Refusal> {
    let headers = request.headers().clone();
    let refuse =
        |status, headline: &str, detail: &str| Err(bare(status, "Refused", headline, detail));
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
        return refuse(
            StatusCode::FORBIDDEN,
            "This console answers only at a loopback address.",
            "The server runs without API keys, so its console can be used only as localhost, 127.0.0.1 or [::1].",
        );
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
    if session.is_none() && needs_sign_in && !open {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "You are not signed in (or your session has ended).",
            "Sign in with an API key, then try again.",
        );
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
    let post = Post {
        viewer: Viewer {
            // The page a refused anonymous form answers with (a wrong key) has forms too.
            csrf: match &session {
                Some(s) => s.csrf.clone(),
                None => app.sessions.anonymous_token().unwrap_or_default(),
            },
            session: session.clone(),
            open,
        },
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
        return refuse(
            StatusCode::UNAUTHORIZED,
            "You are not signed in (or your session has ended).",
            "Sign in with an API key, then try again.",
        );
    }
    Ok(post)
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
