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
//! - **Untrusted content**: memories are text written by a model. Every page is a maud
//!   template, which escapes all text by default, and every response carries a
//!   Content-Security-Policy without inline script or style.
//!
//! Layout: [`viewer`] holds the extractors (who is asking, a checked form), [`error`] the
//! refusals as pages, [`html`] the layout and shared pieces, and [`pages`] one file per
//! kind of page.

// A handler's `Err` (`ConsoleError`) is the page it answers with instead, made once per
// request and moved straight out: boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

mod diff;
mod error;
mod html;
mod pages;
mod session;
mod viewer;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::app::App;
pub(crate) use session::Sessions;

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
