//! The console's pages and forms, one file per kind of page. Each handler makes the engine
//! calls the API's handler for the same action makes, with the signed-in viewer's actor,
//! and answers with its page or a [`ConsoleError`].

mod memory;
pub(crate) mod sign_in;
mod store;
mod stores;
mod transfer;
mod versions;

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::{Markup, html};
use memory_store::{Actor, Store};

use super::error::ConsoleError;
use super::html::{self, seg};
use super::viewer::{Post, SignedIn};

pub(crate) use memory::{create_memory, delete_memory, diff, memory, rename, save};
pub(crate) use sign_in::{sign_in, sign_out};
pub(crate) use store::store;
pub(crate) use stores::{archive_store, create_store, delete_store, index};
pub(crate) use transfer::{export, import};
pub(crate) use versions::{redact, restore, version, versions};

/// What a console handler answers: its page (or a redirect), or the page of a refusal.
type Answer = Result<Response, ConsoleError>;

/// The query string's fields (none when it cannot be read), as an extractor.
#[derive(Debug, Default)]
pub(crate) struct Params(Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Params(
            parts
                .uri
                .query()
                .and_then(|q| serde_urlencoded::from_str(q).ok())
                .unwrap_or_default(),
        ))
    }
}

impl Params {
    /// The last non-empty value of `name`.
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The words of a `?done=` code (fixed texts: nothing from the URL is shown).
    fn notice(&self) -> Option<Markup> {
        let text = match self.get("done")? {
            "store-created" => "The store was created.",
            "memory-created" => "The memory was created.",
            "saved" => "Saved: a new version was written.",
            "unchanged" => "Nothing changed: the content is the same, so no version was written.",
            "renamed" => "The memory was renamed.",
            "memory-deleted" => "The memory was deleted. Its versions stay in the store's history.",
            "archived" => "The store is archived.",
            "store-deleted" => "The store was deleted, with all its memories and versions.",
            "restored" => {
                "The version was restored: its content is now the memory's newest version."
            }
            "redacted" => "The version was redacted: its content and path are gone.",
            "signed-out" => "You are signed out.",
            _ => return None,
        };
        Some(html::message("notice", text, None))
    }
}

fn store_url(store: &str) -> String {
    format!("/console/stores/{}", seg(store))
}

fn memory_url(store: &str, memory: &str) -> String {
    format!("{}/memories/{}", store_url(store), seg(memory))
}

fn version_url(store: &str, version: &str) -> String {
    format!("{}/versions/{}", store_url(store), seg(version))
}

/// Who wrote a version, in words.
fn actor_words(actor: Option<&Actor>) -> String {
    match actor {
        None => "not recorded".to_owned(),
        Some(Actor::Api { api_key_id }) => format!("API key {api_key_id}"),
        Some(Actor::Session {
            session_id,
            api_key_id: Some(key),
        }) => format!("session {session_id} (API key {key})"),
        Some(Actor::Session { session_id, .. }) => format!("session {session_id}"),
        Some(Actor::User { user_id }) => format!("user {user_id}"),
        Some(Actor::ServiceAccount { service_account_id }) => {
            format!("service account {service_account_id}")
        }
    }
}

/// A one-way action (archive, delete, redact) goes ahead only with its box ticked; otherwise
/// a 400 page says, in `refusal`, that nothing was done and why.
fn confirmed(post: &Post, refusal: &str, back: &str) -> Result<(), ConsoleError> {
    if post.ticked("confirm") {
        Ok(())
    } else {
        Err(ConsoleError::refused(
            &post.viewer,
            StatusCode::BAD_REQUEST,
            refusal,
            back,
        ))
    }
}

/// The form of a one-way action (archive, delete, redact): `intro` (what it does), a box to
/// tick (`id`: the box's id, `label`: its words) and the `button`.
fn confirm_form(
    action: &str,
    csrf: Markup,
    intro: Markup,
    id: &str,
    label: &str,
    button: &str,
) -> Markup {
    html! {
        form method="post" action=(action) class="stack" {
            (csrf)
            (intro)
            span {
                input type="checkbox" id=(id) name="confirm" value="1" required; " "
                label for=(id) { (label) }
            }
            button type="submit" { (button) }
        }
    }
}

/// The trail from the stores to `store`.
fn breadcrumb(store: &Store) -> Markup {
    html! {
        nav class="crumbs" {
            a href="/console/" { "Stores" } " › " a href=(store_url(&store.id)) { (store.name) }
        }
    }
}

/// A memory's or a version's content (`id`: the element's id).
fn content_block(id: &str, content: &str) -> Markup {
    html! {
        pre class="content" id=(id) { (content) }
        @if content.is_empty() {
            p class="meta" { "(empty)" }
        }
    }
}

/// Any other console address.
pub(crate) async fn not_found(SignedIn(v): SignedIn) -> Response {
    let body = html::outcome(
        None,
        "Not found",
        html! {
            (html::message("error", "There is no console page at this address.", None))
            p { a href="/console/" { "Back to the stores" } }
        },
    );
    v.page(StatusCode::NOT_FOUND, "Not found", body)
}
