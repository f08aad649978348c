//! [`ConsoleError`]: every answer a console handler gives instead of the page it was asked
//! for, rendered as a page in words ([`IntoResponse`]), never as JSON.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use memory_store::{Reason, StoreError};

use super::html::{self, Who};
use super::pages;
use super::session;
use super::viewer::Viewer;

/// Why a handler answers with something else than its page.
#[derive(Debug)]
pub(crate) enum ConsoleError {
    /// Refused before there is a viewer to show a page to (a refused form, a `Host` that is
    /// not loopback on a server without keys).
    Bare {
        status: StatusCode,
        title: &'static str,
        headline: &'static str,
        detail: String,
    },
    /// Not signed in (or a refused sign-in): the sign-in form, with `error` in words.
    SignIn {
        viewer: Viewer,
        status: StatusCode,
        error: Option<&'static str>,
    },
    /// An engine refusal, in words, with the API's status and a link back (`None`: the
    /// stores).
    Store {
        viewer: Viewer,
        error: StoreError,
        back: Option<(String, &'static str)>,
    },
    /// A refusal of the console's own (a missing confirmation, an archive that does not
    /// fit): nothing was done, `headline` says why.
    Refused {
        viewer: Viewer,
        status: StatusCode,
        headline: String,
        back: String,
    },
    /// A page of its own with a refusal's status (a stale save, an import stopped midway).
    Page {
        viewer: Viewer,
        status: StatusCode,
        title: &'static str,
        body: Markup,
    },
    /// Past the sign-in attempts of an address: wait this long.
    TooManyAttempts(Duration),
    /// No randomness for a new session id.
    NoRandomness(getrandom::Error),
}

impl ConsoleError {
    pub(crate) fn bare(
        status: StatusCode,
        title: &'static str,
        headline: &'static str,
        detail: &str,
    ) -> Self {
        ConsoleError::Bare {
            status,
            title,
            headline,
            detail: detail.to_owned(),
        }
    }

    /// A refusal of the console's own for `v`, linking back to `back`.
    pub(crate) fn refused(v: &Viewer, status: StatusCode, headline: &str, back: &str) -> Self {
        ConsoleError::Refused {
            viewer: v.clone(),
            status,
            headline: headline.to_owned(),
            back: back.to_owned(),
        }
    }
}

/// An engine call's refusal as the console's page for a viewer.
pub(crate) trait OrPage<T> {
    /// `Err` as the page for `v` with a link `back` (an address and its words; `None`: back
    /// to the stores).
    fn or_page(self, v: &Viewer, back: Option<(&str, &'static str)>) -> Result<T, ConsoleError>;
}

impl<T> OrPage<T> for Result<T, StoreError> {
    fn or_page(self, v: &Viewer, back: Option<(&str, &'static str)>) -> Result<T, ConsoleError> {
        self.map_err(|error| ConsoleError::Store {
            viewer: v.clone(),
            error,
            back: back.map(|(href, label)| (href.to_owned(), label)),
        })
    }
}

impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        match self {
            ConsoleError::Bare {
                status,
                title,
                headline,
                detail,
            } => {
                let body = html::outcome(
                    None,
                    title,
                    html! {
                        (html::message("error", headline, Some(&detail)))
                        p { a href="/console/" { "Open the console" } }
                    },
                );
                html::respond(status, html::page(title, &Who::Nobody, "", body))
            }
            ConsoleError::SignIn {
                viewer,
                status,
                error,
            } => pages::sign_in::form(&viewer, status, error, None),
            ConsoleError::Store {
                viewer,
                error,
                back,
            } => {
                let status = StatusCode::from_u16(error.status())
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let title = if status == StatusCode::NOT_FOUND {
                    "Not found"
                } else {
                    "Refused"
                };
                let href = back.as_ref().map(|(href, _)| href.as_str());
                let body = html::outcome(
                    href,
                    title,
                    html! {
                        (error_box(&error))
                        @match &back {
                            Some((href, label)) => { p { a href=(href) { (label) } } }
                            None => { p { a href="/console/" { "Back to the stores" } } }
                        }
                    },
                );
                viewer.page(status, title, body)
            }
            ConsoleError::Refused {
                viewer,
                status,
                headline,
                back,
            } => {
                let body = html::outcome(
                    Some(&back),
                    "Refused",
                    html! {
                        (html::message("error", &headline, None))
                        p { a href=(back) { "Go back" } }
                    },
                );
                viewer.page(status, "Refused", body)
            }
            ConsoleError::Page {
                viewer,
                status,
                title,
                body,
            } => viewer.page(status, title, body),
            ConsoleError::TooManyAttempts(wait) => {
                let seconds = wait.as_secs().max(1);
                let detail = format!(
                    "At most {} sign-in attempts a minute are accepted from one address. Try again in {seconds} seconds.",
                    session::SIGN_IN_ATTEMPTS
                );
                let body = html! {
                    h1 { "Too many attempts" }
                    (html::message("error", "Too many sign-in attempts from your address.", Some(&detail)))
                    p { a href="/console/" { "Back to the sign-in form" } }
                };
                let mut r = html::respond(
                    StatusCode::TOO_MANY_REQUESTS,
                    html::page("Too many attempts", &Who::Nobody, "", body),
                );
                if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
                    r.headers_mut().insert(header::RETRY_AFTER, v);
                }
                r
            }
            ConsoleError::NoRandomness(e) => {
                tracing::error!(error = %e, "no randomness for a console session");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "cannot start a session: no randomness",
                )
                    .into_response()
            }
        }
    }
}

/// An error box with the words for `e`.
pub(crate) fn error_box(e: &StoreError) -> Markup {
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
