//! Signing in and out: the sign-in form, `POST /console/sign-in` and `POST /console/sign-out`.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::{Markup, html};

use super::Answer;
use crate::app::App;
use crate::console::error::ConsoleError;
use crate::console::html;
use crate::console::redirect;
use crate::console::session;
use crate::console::viewer::{AnyPost, SignInAttempt, Viewer};

/// The sign-in page, with `error` in words and `notice` above it (a `?done=` notice).
pub(crate) fn form(
    v: &Viewer,
    status: StatusCode,
    error: Option<&str>,
    notice: Option<Markup>,
) -> Response {
    let body = html! {
        @if let Some(notice) = notice { (notice) }
        h1 { "Sign in" }
        @if let Some(error) = error {
            (html::message(
                "error",
                error,
                Some("Use the secret of a key in this server's key file (the value a client sends as x-api-key)."),
            ))
        }
        p { "This console shows the memory stores of this server to holders of one of its API keys." }
        form method="post" action="/console/sign-in" class="stack" {
            (v.csrf())
            label for="key" { "API key" }
            input id="key" name="key" type="password" autocomplete="current-password" required;
            label for="workspace" { "Workspace id (empty: the default workspace)" }
            input id="workspace" name="workspace" type="text" autocomplete="off"
                placeholder="wrkspc_…" maxlength="64";
            button type="submit" { "Sign in" }
        }
    };
    v.page(status, "Sign in", body)
}

/// `POST /console/sign-in`: a key of the key file makes a new session (the only way one is
/// made; an id known before sign-in is worth nothing after it). The attempt is counted
/// ([`SignInAttempt`]) before anything else is looked at.
pub(crate) async fn sign_in(
    State(app): State<App>,
    _: SignInAttempt,
    AnyPost(post): AnyPost,
) -> Answer {
    let Some(keys) = &app.config.api_keys else {
        return Ok(redirect("/console/"));
    };
    let refuse = |status, error| ConsoleError::SignIn {
        viewer: post.viewer.clone(),
        status,
        error: Some(error),
    };
    let Some(id) = keys.lookup(post.text("key").trim()) else {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "That API key is not accepted by this server. Nothing was signed in.",
        ));
    };
    if let Some(old) = &post.viewer.session {
        app.sessions.remove(&old.id);
    }
    let workspace = match post.text("workspace").trim() {
        "" => None,
        w if memory_store::is_valid_workspace_id(w) => Some(w.to_owned()),
        _ => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "That is not a workspace id (1 to 64 characters from A-Z, a-z, 0-9, _ and -). Nothing was signed in.",
            ));
        }
    };
    let session = app
        .sessions
        .create(Some(id.to_owned()), workspace)
        .map_err(ConsoleError::NoRandomness)?;
    let mut r = redirect("/console/");
    if let Ok(v) = HeaderValue::from_str(&session::set_cookie(&session.id)) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(r)
}

/// `POST /console/sign-out`.
pub(crate) async fn sign_out(State(app): State<App>, AnyPost(post): AnyPost) -> Response {
    if let Some(session) = &post.viewer.session {
        app.sessions.remove(&session.id);
    }
    let mut r = redirect("/console/?done=signed-out");
    if let Ok(v) = HeaderValue::from_str(&session::clear_cookie()) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}
