//! The console's pages and forms. Each handler makes the engine calls the API's handler
//! for the same action makes, with the signed-in viewer's actor.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use axum::body::Body;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use memory_store::{
    Actor, CreateStore, ListMemories, ListStores, ListVersions, Memory, MemoryListItem,
    MemoryVersion, Operation, Precondition, Store, StoreError, UpdateMemory, View,
};

use super::html::{self, count, esc, q, seg, size};
use super::{Post, Viewer, diff, error_box, read_post, redirect, session, viewer};
use crate::app::App;
use memory_core::archive;

/// Most memories the store page lists (the tree of a larger store is cut, and says so).
const TREE_MAX: usize = 5_000;
/// Versions per history page.
const HISTORY_PAGE: i64 = 50;

type Answer = Result<Response, Response>;

fn finish(answer: Answer) -> Response {
    answer.unwrap_or_else(|r| r)
}

/// The signed-in viewer, or the sign-in page (with `status`) for everyone else.
fn signed_in(app: &App, headers: &HeaderMap, status: StatusCode) -> Result<Viewer, Response> {
    let v = viewer(app, headers)?;
    if v.signed_in() {
        Ok(v)
    } else {
        Err(sign_in_page(&v, status, None))
    }
}

fn query(raw: Option<String>) -> Vec<(String, String)> {
    raw.as_deref()
        .and_then(|q| serde_urlencoded::from_str(q).ok())
        .unwrap_or_default()
}

fn get<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
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

/// The words of a `?done=` code (fixed texts: nothing from the URL is shown).
fn notice(query: &[(String, String)]) -> String {
    let text = match get(query, "done") {
        Some("store-created") => "The store was created.",
        Some("memory-created") => "The memory was created.",
        Some("saved") => "Saved: a new version was written.",
        Some("unchanged") => "Nothing changed: the content is the same, so no version was written.",
        Some("renamed") => "The memory was renamed.",
        Some("memory-deleted") => {
            "The memory was deleted. Its versions stay in the store's history."
        }
        Some("archived") => "The store is archived.",
        Some("store-deleted") => "The store was deleted, with all its memories and versions.",
        Some("restored") => {
            "The version was restored: its content is now the memory's newest version."
        }
        Some("redacted") => "The version was redacted: its content and path are gone.",
        Some("signed-out") => "You are signed out.",
        _ => return String::new(),
    };
    html::message("notice", text, None)
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

fn sign_in_page(v: &Viewer, status: StatusCode, error: Option<&str>) -> Response {
    sign_in_with(v, status, error, "")
}

fn sign_in_with(v: &Viewer, status: StatusCode, error: Option<&str>, notice: &str) -> Response {
    let mut body = notice.to_owned();
    body.push_str("<h1>Sign in</h1>");
    if let Some(error) = error {
        body.push_str(&html::message(
            "error",
            error,
            Some("Use the secret of a key in this server's key file (the value a client sends as x-api-key)."),
        ));
    }
    let _ = write!(
        body,
        "<p>This console shows the memory stores of this server to holders of one of its API keys.</p>\
         <form method=\"post\" action=\"/console/sign-in\" class=\"stack\">{}\
         <label for=\"key\">API key</label>\
         <input id=\"key\" name=\"key\" type=\"password\" autocomplete=\"current-password\" required>\
         <label for=\"workspace\">Workspace id (empty: the default workspace)</label>\
         <input id=\"workspace\" name=\"workspace\" type=\"text\" autocomplete=\"off\" \
         placeholder=\"wrkspc_…\" maxlength=\"64\">\
         <button type=\"submit\">Sign in</button></form>",
        v.csrf()
    );
    v.page(status, "Sign in", &body)
}

// ------------------------------------------------------------------ sign in and out

/// `POST /console/sign-in`: a key of the key file makes a new session (the only way one is
/// made; an id known before sign-in is worth nothing after it). At most
/// [`SIGN_IN_ATTEMPTS`](session::SIGN_IN_ATTEMPTS) attempts per client address a minute,
/// counted before anything else is looked at; past it, 429 with `Retry-After`.
pub(crate) async fn sign_in(State(app): State<App>, request: Request<Body>) -> Response {
    let address = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
    if let Err(wait) = app.sessions.limiter.attempt(address) {
        return too_many_attempts(wait);
    }
    let post = match read_post(&app, request, false).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Some(keys) = &app.config.api_keys else {
        return redirect("/console/");
    };
    let Some(id) = keys.lookup(post.text("key").trim()) else {
        return sign_in_page(
            &post.viewer,
            StatusCode::UNAUTHORIZED,
            Some("That API key is not accepted by this server. Nothing was signed in."),
        );
    };
    if let Some(old) = &post.viewer.session {
        app.sessions.remove(&old.id);
    }
    let workspace = match post.text("workspace").trim() {
        "" => None,
        w if memory_store::is_valid_workspace_id(w) => Some(w.to_owned()),
        _ => {
            return sign_in_page(
                &post.viewer,
                StatusCode::BAD_REQUEST,
                Some(
                    "That is not a workspace id (1 to 64 characters from A-Z, a-z, 0-9, _ and -). Nothing was signed in.",
                ),
            );
        }
    };
    match app.sessions.create(Some(id.to_owned()), workspace) {
        Ok(session) => {
            let mut r = redirect("/console/");
            if let Ok(v) = HeaderValue::from_str(&session::set_cookie(&session.id)) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        Err(e) => {
            tracing::error!(error = %e, "no randomness for a console session");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot start a session: no randomness",
            )
                .into_response()
        }
    }
}

/// The answer to a sign-in attempt over the limit.
fn too_many_attempts(wait: std::time::Duration) -> Response {
    let seconds = wait.as_secs().max(1);
    let body = html::message(
        "error",
        "Too many sign-in attempts from your address.",
        Some(&format!(
            "At most {} sign-in attempts a minute are accepted from one address. Try again in {seconds} seconds.",
            session::SIGN_IN_ATTEMPTS
        )),
    ) + "<p><a href=\"/console/\">Back to the sign-in form</a></p>";
    let mut r = (
        StatusCode::TOO_MANY_REQUESTS,
        html::page("Too many attempts", &html::Who::Nobody, "", &body),
    )
        .into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
        h.insert(header::RETRY_AFTER, v);
    }
    r
}

/// `POST /console/sign-out`.
pub(crate) async fn sign_out(State(app): State<App>, request: Request<Body>) -> Response {
    let post = match read_post(&app, request, false).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    if let Some(session) = &post.viewer.session {
        app.sessions.remove(&session.id);
    }
    let mut r = redirect("/console/?done=signed-out");
    if let Ok(v) = HeaderValue::from_str(&session::clear_cookie()) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// Any other console address.
pub(crate) async fn not_found(State(app): State<App>, headers: HeaderMap) -> Response {
    finish(
        async {
            let v = signed_in(&app, &headers, StatusCode::UNAUTHORIZED)?;
            let body = html::crumbs(None, "Not found")
                + &html::message("error", "There is no console page at this address.", None)
                + "<p><a href=\"/console/\">Back to the stores</a></p>";
            Ok(v.page(StatusCode::NOT_FOUND, "Not found", &body))
        }
        .await,
    )
}

// -------------------------------------------------------------------------- stores

/// `GET /console/`: the stores, newest first (archived ones on request), and the create form.
pub(crate) async fn index(
    State(app): State<App>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    finish(
        async {
            let v = viewer(&app, &headers)?;
            let qs = query(raw);
            if !v.signed_in() {
                return Ok(sign_in_with(&v, StatusCode::OK, None, &notice(&qs)));
            }
            let archived = get(&qs, "archived").is_some();
            let params = ListStores {
                include_archived: archived,
                limit: Some(50),
                page: get(&qs, "page").map(str::to_owned),
                ..Default::default()
            };
            let mut body = notice(&qs);
            body.push_str("<h1>Memory stores</h1>");
            let _ = write!(
                body,
                "<form method=\"get\" action=\"/console/\" class=\"inline\">\
                 <input type=\"checkbox\" id=\"archived\" name=\"archived\" value=\"1\"{}>\
                 <label for=\"archived\">Show archived stores</label> \
                 <button type=\"submit\">Show</button></form>",
                if archived { " checked" } else { "" }
            );
            match v.engine(&app).list_stores(params).await {
                Err(e) => body.push_str(&error_box(&e)),
                Ok(page) if page.data.is_empty() => body.push_str("<p>No stores yet.</p>"),
                Ok(page) => {
                    body.push_str(
                        "<div class=\"table-wrap\"><table><thead><tr><th>Name</th><th>Description</th><th>Created</th>\
                         <th>State</th><th>Id</th></tr></thead><tbody>",
                    );
                    for s in &page.data {
                        let state = match s.archived_at {
                            Some(t) => format!("archived {}", html::when(t)),
                            None => "active".to_owned(),
                        };
                        let _ = write!(
                            body,
                            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"time\">{}</td><td>{}</td>\
                             <td class=\"id\"><code>{}</code></td></tr>",
                            esc(&store_url(&s.id)),
                            esc(&s.name),
                            esc(&s.description),
                            html::when(s.created_at),
                            state,
                            esc(&s.id)
                        );
                    }
                    body.push_str("</tbody></table></div>");
                    if let Some(next) = page.next_page {
                        let _ = write!(
                            body,
                            "<p><a href=\"/console/?page={}{}\">Older stores</a></p>",
                            esc(&q(&next)),
                            if archived { "&amp;archived=1" } else { "" }
                        );
                    }
                }
            }
            let _ = write!(
                body,
                "<h2>Create a store</h2>\
                 <form method=\"post\" action=\"/console/stores\" class=\"stack\">{}\
                 <label for=\"name\">Name</label>\
                 <input id=\"name\" name=\"name\" required maxlength=\"255\">\
                 <label for=\"description\">Description</label>\
                 <textarea id=\"description\" name=\"description\" rows=\"3\" maxlength=\"1024\"></textarea>\
                 <button type=\"submit\">Create store</button></form>",
                v.csrf()
            );
            Ok(v.page(StatusCode::OK, "Memory stores", &body))
        }
        .await,
    )
}

/// `POST /console/stores`.
pub(crate) async fn create_store(State(app): State<App>, request: Request<Body>) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let description = post.text("description").replace("\r\n", "\n");
            let params = CreateStore {
                name: post.text("name").to_owned(),
                description: (!description.is_empty()).then_some(description),
                metadata: None,
            };
            match post.viewer.engine(&app).create_store(params).await {
                Ok(store) => Ok(redirect(&format!(
                    "{}?done=store-created",
                    store_url(&store.id)
                ))),
                Err(e) => Err(post.viewer.store_error(&e, None)),
            }
        }
        .await,
    )
}

/// A folder of the store page's tree.
#[derive(Default)]
struct Dir<'a> {
    dirs: BTreeMap<&'a str, Dir<'a>>,
    files: Vec<&'a Memory>,
    count: u64,
    bytes: u64,
}

impl<'a> Dir<'a> {
    fn insert(&mut self, rest: &'a str, memory: &'a Memory) {
        self.count += 1;
        self.bytes += memory.content_size_bytes;
        match rest.split_once('/') {
            Some((dir, more)) => self.dirs.entry(dir).or_default().insert(more, memory),
            None => self.files.push(memory),
        }
    }

    fn render(&self, store: &str, prefix: &str, out: &mut String) {
        out.push_str("<ul class=\"tree\">");
        for (name, dir) in &self.dirs {
            let path = format!("{prefix}{name}/");
            let _ = write!(
                out,
                "<li class=\"dir\"><details open><summary><span class=\"name\">{}/</span> \
                 <span class=\"meta\">{} memor{}, {}</span> \
                 <a class=\"meta\" href=\"{}?prefix={}\" aria-label=\"Only {}\">only this folder</a></summary>",
                esc(name),
                count(dir.count),
                if dir.count == 1 { "y" } else { "ies" },
                size(dir.bytes),
                esc(&store_url(store)),
                esc(&q(&path)),
                esc(&path)
            );
            dir.render(store, &path, out);
            out.push_str("</details></li>");
        }
        for m in &self.files {
            let _ = write!(
                out,
                "<li class=\"file\"><a href=\"{}\">{}</a> <span class=\"meta\">{} · updated {}</span></li>",
                esc(&memory_url(store, &m.id)),
                esc(&m.path),
                size(m.content_size_bytes),
                html::when(m.updated_at)
            );
        }
        out.push_str("</ul>");
    }
}

/// The prefix a person typed, as the API wants it (`/` first and last).
fn normal_prefix(raw: &str) -> String {
    let mut p = raw.trim().to_owned();
    if !p.starts_with('/') {
        p.insert(0, '/');
    }
    if !p.ends_with('/') {
        p.push('/');
    }
    p
}

/// Every memory under `prefix` (path order), at most [`TREE_MAX`]; whether there were more.
async fn memories_under(
    app: &App,
    v: &Viewer,
    store: &str,
    prefix: &str,
) -> Result<(Vec<Memory>, bool), StoreError> {
    let mut out = Vec::new();
    let mut page = None;
    loop {
        let got = v
            .engine(app)
            .list_memories(
                store,
                ListMemories {
                    path_prefix: Some(prefix.to_owned()),
                    limit: Some(100),
                    page,
                    ..Default::default()
                },
            )
            .await?;
        out.extend(got.data.into_iter().filter_map(|item| match item {
            MemoryListItem::Memory(m) => Some(m),
            MemoryListItem::Prefix(_) => None,
        }));
        if out.len() >= TREE_MAX {
            out.truncate(TREE_MAX);
            return Ok((out, got.next_page.is_some()));
        }
        match got.next_page {
            Some(next) => page = Some(next),
            None => return Ok((out, false)),
        }
    }
}

fn store_header(store: &Store) -> String {
    let mut out = format!("<h1>{}</h1>", esc(&store.name));
    if !store.description.is_empty() {
        let _ = write!(
            out,
            "<p class=\"description\">{}</p>",
            esc(&store.description)
        );
    }
    let _ = write!(
        out,
        "<p class=\"meta\">Store <code>{}</code>, created {}</p>",
        esc(&store.id),
        html::when(store.created_at)
    );
    if let Some(t) = store.archived_at {
        let _ = write!(
            out,
            "<div class=\"notice\" role=\"status\"><p><strong>This store was archived {}: its \
             memories can be read, deleted and redacted, but not created, edited, renamed, \
             restored or imported.</strong></p></div>",
            html::when(t)
        );
    }
    out
}

/// `GET /console/stores/{store}`: the tree of memories, the limit, and the store's forms.
pub(crate) async fn store(
    State(app): State<App>,
    Path(store_id): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    finish(
        async {
            let v = signed_in(&app, &headers, StatusCode::UNAUTHORIZED)?;
            let qs = query(raw);
            let store = v.engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let total = v.engine(&app)
                .count_memories(&store.id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let max = app.engine.options().max_memories_per_store;
            let url = store_url(&store.id);
            let mut body = notice(&qs);
            body.push_str(&store_header(&store));
            let _ = write!(
                body,
                "<p><label for=\"limit\">Memories: {} of {}</label> \
                 <meter id=\"limit\" min=\"0\" max=\"{max}\" value=\"{total}\" high=\"{}\">{} of {}</meter></p>",
                count(total),
                count(max),
                max - max / 10,
                count(total),
                count(max)
            );
            let _ = write!(
                body,
                "<p class=\"links\"><a href=\"{u}/versions\">Store history</a> · \
                 <a href=\"{u}/export\">Export archive</a></p>",
                u = esc(&url)
            );
            // The tree, filtered by a prefix.
            let prefix = get(&qs, "prefix").map_or_else(|| "/".to_owned(), normal_prefix);
            let _ = write!(
                body,
                "<h2>Memories</h2><form method=\"get\" action=\"{}\" class=\"inline\">\
                 <label for=\"prefix\">Folder prefix</label> \
                 <input id=\"prefix\" name=\"prefix\" value=\"{}\"> \
                 <button type=\"submit\">Filter</button></form>",
                esc(&url),
                esc(&prefix)
            );
            match memories_under(&app, &v, &store.id, &prefix).await {
                Err(e) => body.push_str(&error_box(&e)),
                Ok((memories, more)) => {
                    let mut root = Dir::default();
                    for m in &memories {
                        root.insert(&m.path[prefix.len()..], m);
                    }
                    let _ = write!(
                        body,
                        "<p class=\"meta\">{} memor{} under <code>{}</code>, {}</p>",
                        count(root.count),
                        if root.count == 1 { "y" } else { "ies" },
                        esc(&prefix),
                        size(root.bytes)
                    );
                    if more {
                        let _ = write!(
                            body,
                            "<p class=\"meta\">Only the first {} are shown: filter by a folder to see the rest.</p>",
                            count(TREE_MAX as u64)
                        );
                    }
                    if root.count > 0 {
                        root.render(&store.id, &prefix, &mut body);
                    }
                }
            }
            let csrf = v.csrf();
            // An archived store takes no new or changed memory: only what it allows is offered.
            if store.archived_at.is_none() {
            let _ = write!(
                body,
                "<h2>Create a memory</h2>\
                 <form method=\"post\" action=\"{u}/memories\" class=\"stack\">{csrf}\
                 <label for=\"new-path\">Path</label>\
                 <input id=\"new-path\" name=\"path\" required placeholder=\"/notes/todo.md\">\
                 <label for=\"new-content\">Content</label>\
                 <textarea id=\"new-content\" name=\"content\" rows=\"6\"></textarea>\
                 <button type=\"submit\">Create memory</button></form>\
                 <h2>Import</h2>\
                 <p>An archive written by <code>memory export</code> or by this console's export \
                 (JSON Lines; its files under <code>/memories/</code> become memories). \
                 The whole archive is checked before anything is written.</p>\
                 <form method=\"post\" action=\"{u}/import\" class=\"stack\">{csrf}\
                 <label for=\"archive-file\">Archive file</label>\
                 <input id=\"archive-file\" type=\"file\" accept=\".jsonl,.json,application/x-ndjson,text/plain\" data-fill=\"archive\">\
                 <label for=\"archive\">Archive (JSON Lines)</label>\
                 <textarea id=\"archive\" name=\"archive\" rows=\"6\" required></textarea>\
                 <span><input type=\"checkbox\" id=\"overwrite\" name=\"overwrite\" value=\"1\"> \
                 <label for=\"overwrite\">Replace memories that already exist</label></span>\
                 <button type=\"submit\">Import</button></form>",
                u = esc(&url)
            );
            }
            if store.archived_at.is_none() {
                let _ = write!(
                    body,
                    "<h2>Archive</h2>\
                     <form method=\"post\" action=\"{u}/archive\" class=\"stack\">{csrf}\
                     <p>Archiving is one-way: an archived store cannot be un-archived. Its memories \
                     stay readable and can be deleted and redacted, but none can be created or changed.</p>\
                     <span><input type=\"checkbox\" id=\"confirm-archive\" name=\"confirm\" value=\"1\" required> \
                     <label for=\"confirm-archive\">I understand that archiving cannot be undone</label></span>\
                     <button type=\"submit\">Archive store</button></form>",
                    u = esc(&url)
                );
            }
            let _ = write!(
                body,
                "<h2>Delete</h2>\
                 <form method=\"post\" action=\"{u}/delete\" class=\"stack\">{csrf}\
                 <p>Deleting removes the store with all its memories and versions, at once and for good.</p>\
                 <label for=\"confirm-name\">Type the store's name to confirm</label>\
                 <input id=\"confirm-name\" name=\"confirm_name\" required autocomplete=\"off\">\
                 <button type=\"submit\">Delete store</button></form>",
                u = esc(&url)
            );
            Ok(v.page(StatusCode::OK, &store.name, &body))
        }
        .await,
    )
}

/// `POST …/archive`: asks for the confirmation box.
pub(crate) async fn archive_store(
    State(app): State<App>,
    Path(store_id): Path<String>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let back = store_url(&store_id);
            confirmed(
                &post,
                "Nothing was archived: tick the box to confirm that archiving cannot be undone.",
                &back,
            )?;
            v.engine(&app)
                .archive_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the store"))))?;
            Ok(redirect(&format!("{back}?done=archived")))
        }
        .await,
    )
}

/// `POST …/delete`: the typed name must be the store's.
pub(crate) async fn delete_store(
    State(app): State<App>,
    Path(store_id): Path<String>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let back = store_url(&store_id);
            let store = v
                .engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            if post.text("confirm_name") != store.name {
                return Err(refused(
                    v,
                    StatusCode::BAD_REQUEST,
                    "Nothing was deleted: the name you typed is not the store's name.",
                    &back,
                ));
            }
            v.engine(&app)
                .delete_store(&store.id)
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the store"))))?;
            Ok(redirect("/console/?done=store-deleted"))
        }
        .await,
    )
}

/// A refusal of the console's own (a missing confirmation...), in words.
/// A one-way action (archive, delete, redact) goes ahead only with its box ticked; otherwise
/// a 400 page says, in `refusal`, that nothing was done and why.
fn confirmed(post: &Post, refusal: &str, back: &str) -> Result<(), Response> {
    if post.ticked("confirm") {
        Ok(())
    } else {
        Err(refused(
            &post.viewer,
            StatusCode::BAD_REQUEST,
            refusal,
            back,
        ))
    }
}

fn refused(v: &Viewer, status: StatusCode, headline: &str, back: &str) -> Response {
    let body = html::crumbs(Some(back), "Refused")
        + &html::message("error", headline, None)
        + &format!("<p><a href=\"{}\">Go back</a></p>", esc(back));
    v.page(status, "Refused", &body)
}

/// Text from a `textarea`: browsers send its line breaks as CRLF; a memory keeps them only
/// when the text loaded into the editor had CRLF (`eol=crlf`).
fn from_textarea(text: &str, keep_crlf: bool) -> String {
    if keep_crlf {
        text.to_owned()
    } else {
        text.replace("\r\n", "\n")
    }
}

/// `POST …/memories`.
pub(crate) async fn create_memory(
    State(app): State<App>,
    Path(store_id): Path<String>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let content = from_textarea(post.text("content"), false);
            let back = store_url(&store_id);
            let memory = v
                .engine(&app)
                .create_memory_within(
                    &store_id,
                    post.text("path").trim(),
                    &content,
                    u64::MAX,
                    v.actor(),
                )
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the store"))))?;
            Ok(redirect(&format!(
                "{}?done=memory-created",
                memory_url(&store_id, &memory.id)
            )))
        }
        .await,
    )
}

// ------------------------------------------------------------------------ a memory

fn breadcrumb(store: &Store) -> String {
    format!(
        "<nav class=\"crumbs\"><a href=\"/console/\">Stores</a> › <a href=\"{}\">{}</a></nav>",
        esc(&store_url(&store.id)),
        esc(&store.name)
    )
}

/// The editor form: `content` loaded with hash `sha` at version `version`.
fn editor(
    v: &Viewer,
    store: &str,
    memory: &str,
    content: &str,
    sha: &str,
    version: &str,
) -> String {
    format!(
        "<form method=\"post\" action=\"{}/save\" class=\"stack\">{}\
         <input type=\"hidden\" name=\"content_sha256\" value=\"{}\">\
         <input type=\"hidden\" name=\"version\" value=\"{}\">\
         <input type=\"hidden\" name=\"eol\" value=\"{}\">\
         <label for=\"editor\">Content</label>\
         <textarea id=\"editor\" name=\"content\" rows=\"16\">\n{}</textarea>\
         <button type=\"submit\">Save</button></form>",
        esc(&memory_url(store, memory)),
        v.csrf(),
        esc(sha),
        esc(version),
        if content.contains("\r\n") {
            "crlf"
        } else {
            "lf"
        },
        esc(content)
    )
}

fn content_block(id: &str, content: &str) -> String {
    if content.is_empty() {
        return format!("<pre class=\"content\" id=\"{id}\"></pre><p class=\"meta\">(empty)</p>");
    }
    format!("<pre class=\"content\" id=\"{id}\">{}</pre>", esc(content))
}

/// The table of `versions` (newest first), with the diff choices when `diff` is set.
fn versions_table(
    store: &str,
    versions: &[MemoryVersion],
    head: Option<&str>,
    diff: bool,
) -> String {
    let mut out = String::from("<div class=\"table-wrap\"><table class=\"versions\"><thead><tr>");
    if diff {
        out.push_str("<th>From</th><th>To</th>");
    }
    out.push_str(
        "<th>Version</th><th>Time</th><th>Operation</th><th>Actor</th><th>Size</th><th>Path</th></tr></thead><tbody>",
    );
    if diff && head.is_some() {
        out.push_str(
            "<tr class=\"head\"><td></td><td><input type=\"radio\" name=\"to\" value=\"head\" \
             aria-label=\"To the live head\" checked></td><td colspan=\"6\">The live head (current content)</td></tr>",
        );
    }
    for (i, ver) in versions.iter().enumerate() {
        let has_content = ver.content_sha256.is_some();
        out.push_str("<tr>");
        if diff {
            let radio = |name: &str, checked: bool| {
                if has_content {
                    format!(
                        "<input type=\"radio\" name=\"{name}\" value=\"{}\" aria-label=\"{} {}\"{}>",
                        esc(&ver.id),
                        if name == "from" { "From" } else { "To" },
                        esc(&ver.id),
                        if checked { " checked" } else { "" }
                    )
                } else {
                    String::new()
                }
            };
            let _ = write!(
                out,
                "<td>{}</td><td>{}</td>",
                radio("from", i == 1),
                radio("to", false)
            );
        }
        let mut label = esc(&ver.id);
        if Some(ver.id.as_str()) == head {
            label.push_str(" <span class=\"badge\">current</span>");
        }
        if ver.redacted_at.is_some() {
            label.push_str(" <span class=\"badge\">redacted</span>");
        }
        let _ = write!(
            out,
            "<td class=\"id\"><a href=\"{}\">{}</a></td><td class=\"time\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"path\">{}</td></tr>",
            esc(&version_url(store, &ver.id)),
            label,
            html::when(ver.created_at),
            ver.operation.as_str(),
            esc(&actor_words(ver.created_by.as_ref())),
            ver.content_size_bytes.map_or_else(|| "–".to_owned(), size),
            ver.path
                .as_deref()
                .map_or_else(|| "(redacted)".to_owned(), esc)
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

/// `GET …/memories/{memory}`: content, editor, rename, delete, and its history.
pub(crate) async fn memory(
    State(app): State<App>,
    Path((store_id, memory_id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    finish(
        async {
            let v = signed_in(&app, &headers, StatusCode::UNAUTHORIZED)?;
            let qs = query(raw);
            let store = v.engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let back = store_url(&store.id);
            let memory = v.engine(&app)
                .retrieve_memory(&store.id, &memory_id)
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the store"))))?;
            let content = memory.content.clone().unwrap_or_default();
            let url = memory_url(&store.id, &memory.id);
            let mut body = notice(&qs);
            body.push_str(&breadcrumb(&store));
            let _ = write!(
                body,
                "<h1>{}</h1><dl class=\"facts\"><dt>Size</dt><dd>{}</dd><dt>Updated</dt><dd>{}</dd>\
                 <dt>SHA-256</dt><dd><code>{}</code></dd><dt>Memory</dt><dd><code>{}</code></dd>\
                 <dt>Version</dt><dd><code>{}</code></dd></dl>",
                esc(&memory.path),
                size(memory.content_size_bytes),
                html::when(memory.updated_at),
                esc(&memory.content_sha256),
                esc(&memory.id),
                esc(&memory.memory_version_id)
            );
            body.push_str("<h2>Content</h2>");
            body.push_str(&content_block("memory-content", &content));
            let writable = store.archived_at.is_none();
            if writable {
                body.push_str("<h2>Edit</h2>");
                body.push_str(&editor(
                    &v,
                    &store.id,
                    &memory.id,
                    &content,
                    &memory.content_sha256,
                    &memory.memory_version_id,
                ));
            }
            let versions = v.engine(&app)
                .list_versions(
                    &store.id,
                    ListVersions {
                        memory_id: Some(memory.id.clone()),
                        limit: Some(HISTORY_PAGE),
                        page: get(&qs, "page").map(str::to_owned),
                        ..Default::default()
                    },
                )
                .await;
            body.push_str("<h2>History</h2>");
            match versions {
                Err(e) => body.push_str(&error_box(&e)),
                Ok(page) => {
                    let _ = write!(
                        body,
                        "<form method=\"get\" action=\"{}/diff\">",
                        esc(&url)
                    );
                    body.push_str(&versions_table(
                        &store.id,
                        &page.data,
                        Some(&memory.memory_version_id),
                        true,
                    ));
                    body.push_str("<button type=\"submit\">Show diff</button></form>");
                    if let Some(next) = page.next_page {
                        let _ = write!(
                            body,
                            "<p><a href=\"{}?page={}\">Older versions</a></p>",
                            esc(&url),
                            esc(&q(&next))
                        );
                    }
                }
            }
            let csrf = v.csrf();
            if writable {
                let _ = write!(
                    body,
                    "<h2>Rename</h2><form method=\"post\" action=\"{}/rename\" class=\"stack\">{csrf}\
                     <label for=\"rename-path\">New path</label>\
                     <input id=\"rename-path\" name=\"path\" value=\"{}\" required>\
                     <button type=\"submit\">Rename</button></form>",
                    esc(&url),
                    esc(&memory.path)
                );
            }
            let _ = write!(
                body,
                "<h2>Delete</h2><form method=\"post\" action=\"{u}/delete\" class=\"stack\">{csrf}\
                 <input type=\"hidden\" name=\"content_sha256\" value=\"{sha}\">\
                 <span><input type=\"checkbox\" id=\"confirm-delete\" name=\"confirm\" value=\"1\" required> \
                 <label for=\"confirm-delete\">Delete this memory (its versions stay in the store's history)</label></span>\
                 <button type=\"submit\">Delete memory</button></form>",
                u = esc(&url),
                sha = esc(&memory.content_sha256)
            );
            Ok(v.page(StatusCode::OK, &memory.path, &body))
        }
        .await,
    )
}

/// `POST …/memories/{memory}/save`: new content with the `content_sha256` precondition of
/// what was loaded; a save over a newer version shows both.
pub(crate) async fn save(
    State(app): State<App>,
    Path((store_id, memory_id)): Path<(String, String)>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let content = from_textarea(post.text("content"), post.text("eol") == "crlf");
            let back = memory_url(&store_id, &memory_id);
            let params = UpdateMemory {
                content: Some(content.clone()),
                path: None,
                precondition: Some(Precondition::content_sha256(post.text("content_sha256"))),
            };
            match v
                .engine(&app)
                .update_memory(&store_id, &memory_id, params, v.actor())
                .await
            {
                Ok(m) if m.memory_version_id == post.text("version") => {
                    Ok(redirect(&format!("{back}?done=unchanged")))
                }
                Ok(_) => Ok(redirect(&format!("{back}?done=saved"))),
                Err(StoreError::PreconditionFailed { .. }) => {
                    Err(stale(&app, v, &store_id, &memory_id, &content).await)
                }
                Err(e) => Err(v.store_error(&e, Some((&back, "Back to the memory")))),
            }
        }
        .await,
    )
}

/// The page of a refused stale save: the current version, the text that was not saved, the
/// diff between them, and an editor to save again over the current version.
async fn stale(app: &App, v: &Viewer, store: &str, memory: &str, yours: &str) -> Response {
    let current = match v.engine(app).retrieve_memory(store, memory).await {
        Ok(m) => m,
        Err(e) => return v.store_error(&e, None),
    };
    let now = current.content.clone().unwrap_or_default();
    let mut body = html::message(
        "error",
        "Not saved: this memory changed since it was loaded. Someone saved a newer version after you opened the editor.",
        Some(
            "Both versions are below. Copy what you need into the editor (it holds your text) and save again to replace the newer version, or leave it.",
        ),
    );
    let _ = write!(
        body,
        "<p><a href=\"{}\">Back to the memory</a></p><h1>{}</h1>",
        esc(&memory_url(store, memory)),
        esc(&current.path)
    );
    body.push_str("<div class=\"both\"><section><h2>The newer version (saved)</h2>");
    body.push_str(&content_block("current-content", &now));
    body.push_str("</section><section><h2>Your text (not saved)</h2>");
    body.push_str(&content_block("your-content", yours));
    body.push_str("</section></div><h2>Differences (newer version → your text)</h2>");
    body.push_str(&diff_block(&now, yours));
    body.push_str("<h2>Edit</h2>");
    body.push_str(&editor(
        v,
        store,
        memory,
        yours,
        &current.content_sha256,
        &current.memory_version_id,
    ));
    v.page(StatusCode::CONFLICT, "Not saved", &body)
}

fn diff_block(old: &str, new: &str) -> String {
    let lines = diff::lines(old, new);
    if lines.iter().all(|l| matches!(l, diff::Line::Same(_))) {
        return "<p class=\"meta\">No differences: the two texts are the same.</p>".to_owned();
    }
    let mut out = String::from("<pre class=\"diff\">");
    for line in lines {
        let (class, mark, text) = match line {
            diff::Line::Same(t) => ("same", ' ', t),
            diff::Line::Removed(t) => ("del", '-', t),
            diff::Line::Added(t) => ("add", '+', t),
        };
        let _ = write!(out, "<span class=\"{class}\">{mark} {}\n</span>", esc(text));
    }
    out.push_str("</pre>");
    out
}

/// `POST …/memories/{memory}/rename`.
pub(crate) async fn rename(
    State(app): State<App>,
    Path((store_id, memory_id)): Path<(String, String)>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let back = memory_url(&store_id, &memory_id);
            let params = UpdateMemory {
                path: Some(post.text("path").trim().to_owned()),
                ..Default::default()
            };
            v.engine(&app)
                .update_memory(&store_id, &memory_id, params, v.actor())
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the memory"))))?;
            Ok(redirect(&format!("{back}?done=renamed")))
        }
        .await,
    )
}

/// `POST …/memories/{memory}/delete`: with the hash of what was shown, so a memory changed
/// since is not deleted unseen.
pub(crate) async fn delete_memory(
    State(app): State<App>,
    Path((store_id, memory_id)): Path<(String, String)>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let back = memory_url(&store_id, &memory_id);
            confirmed(
                &post,
                "Nothing was deleted: tick the box to confirm.",
                &back,
            )?;
            let expected = post.field("content_sha256").filter(|s| !s.is_empty());
            v.engine(&app)
                .delete_memory(&store_id, &memory_id, expected, v.actor())
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the memory"))))?;
            Ok(redirect(&format!(
                "{}?done=memory-deleted",
                store_url(&store_id)
            )))
        }
        .await,
    )
}

/// One side of a diff: `head` (the memory's content) or a version of that memory.
async fn side(
    app: &App,
    v: &Viewer,
    store: &str,
    memory: &str,
    which: &str,
) -> Result<(String, Option<String>), StoreError> {
    if which == "head" {
        let m = v.engine(app).retrieve_memory(store, memory).await?;
        return Ok((
            format!("the live head (version {})", m.memory_version_id),
            m.content,
        ));
    }
    let ver = v.engine(app).retrieve_version(store, which).await?;
    if ver.memory_id != memory {
        return Err(StoreError::NotFound {
            message: format!("memory version {which} is not a version of memory {memory}"),
        });
    }
    let label = format!(
        "version {} ({}, {})",
        ver.id,
        ver.operation.as_str(),
        ver.created_at
    );
    Ok((label, ver.content))
}

/// `GET …/memories/{memory}/diff?from=V&to=V|head`.
pub(crate) async fn diff(
    State(app): State<App>,
    Path((store_id, memory_id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    finish(
        async {
            let v = signed_in(&app, &headers, StatusCode::UNAUTHORIZED)?;
            let qs = query(raw);
            let store = v.engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let back = memory_url(&store.id, &memory_id);
            let (Some(from), Some(to)) = (get(&qs, "from"), get(&qs, "to")) else {
                return Err(refused(
                    &v,
                    StatusCode::BAD_REQUEST,
                    "Choose two versions to compare: one in the From column and one in the To column.",
                    &back,
                ));
            };
            let back_link = Some((back.as_str(), "Back to the memory"));
            let (from_label, old) = side(&app, &v, &store.id, &memory_id, from)
                .await
                .map_err(|e| v.store_error(&e, back_link))?;
            let (to_label, new) = side(&app, &v, &store.id, &memory_id, to)
                .await
                .map_err(|e| v.store_error(&e, back_link))?;
            let mut body = breadcrumb(&store);
            let _ = write!(
                body,
                "<p><a href=\"{}\">Back to the memory</a></p><h1>Diff</h1>\
                 <p>From {} to {}.</p>",
                esc(&back),
                esc(&from_label),
                esc(&to_label)
            );
            match (old, new) {
                (Some(old), Some(new)) => body.push_str(&diff_block(&old, &new)),
                _ => body.push_str(&html::message(
                    "error",
                    "One of the two has no content to compare: it is redacted, or records a deletion.",
                    None,
                )),
            }
            Ok(v.page(StatusCode::OK, "Diff", &body))
        }
        .await,
    )
}

// ------------------------------------------------------------------------ versions

/// `GET …/versions`: the store's versions, newest first.
pub(crate) async fn versions(
    State(app): State<App>,
    Path(store_id): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    finish(
        async {
            let v = signed_in(&app, &headers, StatusCode::UNAUTHORIZED)?;
            let qs = query(raw);
            let store = v.engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let page = v.engine(&app)
                .list_versions(
                    &store.id,
                    ListVersions {
                        limit: Some(HISTORY_PAGE),
                        page: get(&qs, "page").map(str::to_owned),
                        view: View::Basic,
                        ..Default::default()
                    },
                )
                .await
                .map_err(|e| v.store_error(&e, Some((&store_url(&store.id), "Back to the store"))))?;
            let mut body = breadcrumb(&store);
            body.push_str("<h1>Store history</h1><p>Every change to a memory of this store, newest first.</p>");
            if page.data.is_empty() {
                body.push_str("<p>No versions yet.</p>");
            } else {
                body.push_str(&versions_table(&store.id, &page.data, None, false));
            }
            if let Some(next) = page.next_page {
                let _ = write!(
                    body,
                    "<p><a href=\"{}/versions?page={}\">Older versions</a></p>",
                    esc(&store_url(&store.id)),
                    esc(&q(&next))
                );
            }
            Ok(v.page(StatusCode::OK, "Store history", &body))
        }
        .await,
    )
}

/// `GET …/versions/{version}`: its content, restore and redact.
pub(crate) async fn version(
    State(app): State<App>,
    Path((store_id, version_id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    finish(
        async {
            let v = signed_in(&app, &headers, StatusCode::UNAUTHORIZED)?;
            let qs = query(raw);
            let store = v.engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let back = store_url(&store.id);
            let ver = v.engine(&app)
                .retrieve_version(&store.id, &version_id)
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the store"))))?;
            let url = version_url(&store.id, &ver.id);
            let murl = memory_url(&store.id, &ver.memory_id);
            let mut body = notice(&qs);
            body.push_str(&breadcrumb(&store));
            let _ = write!(
                body,
                "<h1>Version {}</h1><dl class=\"facts\"><dt>Operation</dt><dd>{}</dd>\
                 <dt>Time</dt><dd>{}</dd><dt>Actor</dt><dd>{}</dd><dt>Path</dt><dd>{}</dd>\
                 <dt>Size</dt><dd>{}</dd><dt>Memory</dt><dd><a href=\"{}\">{}</a></dd></dl>",
                esc(&ver.id),
                ver.operation.as_str(),
                html::when(ver.created_at),
                esc(&actor_words(ver.created_by.as_ref())),
                ver.path.as_deref().map_or_else(|| "(redacted)".to_owned(), esc),
                ver.content_size_bytes.map_or_else(|| "–".to_owned(), size),
                esc(&murl),
                esc(&ver.memory_id)
            );
            if let Some(t) = ver.redacted_at {
                let _ = write!(
                    body,
                    "<p class=\"meta\">Redacted {} by {}: its content and path are gone for good.</p>",
                    html::when(t),
                    esc(&actor_words(ver.redacted_by.as_ref()))
                );
            }
            let csrf = v.csrf();
            match &ver.content {
                Some(content) => {
                    body.push_str("<h2>Content</h2>");
                    body.push_str(&content_block("version-content", content));
                    let _ = write!(
                        body,
                        "<p><a href=\"{}/diff?from={}&amp;to=head\">Diff against the live head</a></p>",
                        esc(&murl),
                        esc(&q(&ver.id)),
                    );
                    if store.archived_at.is_none() {
                        let _ = write!(
                            body,
                            "<h2>Restore</h2><form method=\"post\" action=\"{}/restore\" class=\"stack\">{csrf}\
                             <p>Writes this version's content back as the memory's newest version.</p>\
                             <button type=\"submit\">Restore this version</button></form>",
                            esc(&url)
                        );
                    }
                }
                None if ver.operation == Operation::Deleted => {
                    body.push_str("<p>This version records the memory's deletion; it has no content.</p>");
                }
                None => {}
            }
            if ver.redacted_at.is_none() {
                let _ = write!(
                    body,
                    "<h2>Redact</h2><form method=\"post\" action=\"{u}/redact\" class=\"stack\">{csrf}\
                     <p>Redaction wipes this version's content and path for good (for a leaked secret). \
                     The memory's current version cannot be redacted.</p>\
                     <span><input type=\"checkbox\" id=\"confirm-redact\" name=\"confirm\" value=\"1\" required> \
                     <label for=\"confirm-redact\">I understand that redaction cannot be undone</label></span>\
                     <button type=\"submit\">Redact</button></form>",
                    u = esc(&url)
                );
            }
            Ok(v.page(StatusCode::OK, &format!("Version {}", ver.id), &body))
        }
        .await,
    )
}

/// `POST …/versions/{version}/restore`: the version's content written back as a new version
/// of its memory (a new memory at its path if the memory was deleted since).
pub(crate) async fn restore(
    State(app): State<App>,
    Path((store_id, version_id)): Path<(String, String)>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let back = version_url(&store_id, &version_id);
            let back_link = Some((back.as_str(), "Back to the version"));
            let ver = v.engine(&app)
                .retrieve_version(&store_id, &version_id)
                .await
                .map_err(|e| v.store_error(&e, back_link))?;
            let (Some(content), Some(path)) = (ver.content, ver.path) else {
                return Err(refused(
                    v,
                    StatusCode::BAD_REQUEST,
                    "This version has no content to restore: it is redacted, or records a deletion.",
                    &back,
                ));
            };
            match v.engine(&app).retrieve_memory(&store_id, &ver.memory_id).await {
                Ok(m) => {
                    let params = UpdateMemory {
                        content: Some(content),
                        ..Default::default()
                    };
                    let after = v.engine(&app)
                        .update_memory(&store_id, &m.id, params, v.actor())
                        .await
                        .map_err(|e| v.store_error(&e, back_link))?;
                    let done = if after.memory_version_id == m.memory_version_id {
                        "unchanged"
                    } else {
                        "restored"
                    };
                    Ok(redirect(&format!("{}?done={done}", memory_url(&store_id, &m.id))))
                }
                Err(StoreError::NotFound { .. }) => {
                    let m = v.engine(&app)
                        .create_memory_within(&store_id, &path, &content, u64::MAX, v.actor())
                        .await
                        .map_err(|e| v.store_error(&e, back_link))?;
                    Ok(redirect(&format!("{}?done=restored", memory_url(&store_id, &m.id))))
                }
                Err(e) => Err(v.store_error(&e, back_link)),
            }
        }
        .await,
    )
}

/// `POST …/versions/{version}/redact`: asks for the confirmation box; the engine refuses the
/// head of a live memory, and the page says why.
pub(crate) async fn redact(
    State(app): State<App>,
    Path((store_id, version_id)): Path<(String, String)>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let back = version_url(&store_id, &version_id);
            confirmed(
                &post,
                "Nothing was redacted: tick the box to confirm that redaction cannot be undone.",
                &back,
            )?;
            v.engine(&app)
                .redact_version(&store_id, &version_id, v.actor())
                .await
                .map_err(|e| v.store_error(&e, Some((&back, "Back to the version"))))?;
            Ok(redirect(&format!("{back}?done=redacted")))
        }
        .await,
    )
}

// ---------------------------------------------------------------- import and export

/// `GET …/export`: the store as a `memory export` archive.
pub(crate) async fn export(
    State(app): State<App>,
    Path(store_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    finish(
        async {
            let v = signed_in(&app, &headers, StatusCode::UNAUTHORIZED)?;
            let store = v
                .engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let back = store_url(&store.id);
            let fail = |e: StoreError| v.store_error(&e, Some((&back, "Back to the store")));
            let mut text = archive::header_line(&memory_store::Timestamp::now().to_string());
            let (mut files, mut bytes) = (0u64, 0u64);
            let mut page = None;
            loop {
                let got = v
                    .engine(&app)
                    .list_memories(
                        &store.id,
                        ListMemories {
                            limit: Some(memory_store::MAX_FULL_PAGE_SIZE as i64),
                            page,
                            view: View::Full,
                            ..Default::default()
                        },
                    )
                    .await
                    .map_err(fail)?;
                for item in got.data {
                    if let MemoryListItem::Memory(m) = item {
                        let content = m.content.unwrap_or_default();
                        text.push_str(&archive::file_line(
                            &format!("{}{}", archive::ROOT, m.path),
                            content.as_bytes(),
                            Some(&m.updated_at.to_string()),
                        ));
                        files += 1;
                        bytes += content.len() as u64;
                    }
                }
                match got.next_page {
                    Some(next) => page = Some(next),
                    None => break,
                }
            }
            text.push_str(&archive::end_line(files, bytes));
            let mut r = (StatusCode::OK, text).into_response();
            let h = r.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-ndjson; charset=utf-8"),
            );
            if let Ok(d) = HeaderValue::from_str(&format!(
                "attachment; filename=\"{}.memory-archive.jsonl\"",
                store.id
            )) {
                h.insert(header::CONTENT_DISPOSITION, d);
            }
            Ok(r)
        }
        .await,
    )
}

/// `POST …/import`: the whole archive is checked (format, hashes, every path by the store's
/// rules, text only, existing memories unless replacing, room under the limit) before the
/// first memory is written.
pub(crate) async fn import(
    State(app): State<App>,
    Path(store_id): Path<String>,
    request: Request<Body>,
) -> Response {
    finish(
        async {
            let post = read_post(&app, request, true).await?;
            let v = &post.viewer;
            let back = store_url(&store_id);
            let no = |status, headline: &str| Err(refused(v, status, headline, &back));
            let store = v.engine(&app)
                .retrieve_store(&store_id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let files = match archive::parse(post.text("archive").replace("\r\n", "\n").as_bytes()) {
                Ok(files) => files,
                Err(e) => {
                    return no(
                        StatusCode::BAD_REQUEST,
                        &format!("The archive is not valid: {e}. Nothing was imported."),
                    );
                }
            };
            let mut plan = Vec::with_capacity(files.len());
            for f in files {
                let path = f.path.as_str()[archive::ROOT.len()..].to_owned();
                if let Err(e) = memory_store::validate_path(&path) {
                    return no(
                        StatusCode::BAD_REQUEST,
                        &format!(
                            "The archive cannot be imported: line {}: {} cannot be a memory of this store ({e}). Nothing was imported.",
                            f.line, f.path
                        ),
                    );
                }
                let Ok(content) = String::from_utf8(f.contents) else {
                    return no(
                        StatusCode::BAD_REQUEST,
                        &format!(
                            "The archive cannot be imported: line {}: {} is not UTF-8 text, and memories hold text. Nothing was imported.",
                            f.line, f.path
                        ),
                    );
                };
                let existing = v.engine(&app)
                    .memory_at_path(&store.id, &path)
                    .await
                    .map_err(|e| v.store_error(&e, Some((&back, "Back to the store"))))?;
                plan.push((path, content, existing));
            }
            let taken: Vec<&str> = plan
                .iter()
                .filter(|(_, _, e)| e.is_some())
                .map(|(p, _, _)| p.as_str())
                .collect();
            let overwrite = post.ticked("overwrite");
            if !overwrite && !taken.is_empty() {
                let shown: Vec<&str> = taken.iter().take(5).copied().collect();
                return no(
                    StatusCode::CONFLICT,
                    &format!(
                        "{} memor{} of the archive already exist{} in this store ({}{}). Nothing was imported: tick \"Replace memories that already exist\" to replace them.",
                        taken.len(),
                        if taken.len() == 1 { "y" } else { "ies" },
                        if taken.len() == 1 { "s" } else { "" },
                        shown.join(", "),
                        if taken.len() > 5 { ", ..." } else { "" }
                    ),
                );
            }
            let new = (plan.len() - taken.len()) as u64;
            let held = v.engine(&app)
                .count_memories(&store.id)
                .await
                .map_err(|e| v.store_error(&e, None))?;
            let max = app.engine.options().max_memories_per_store;
            if held.saturating_add(new) > max {
                return no(
                    StatusCode::BAD_REQUEST,
                    &format!(
                        "The archive does not fit: the store holds {} memories, the archive adds {}, and a store holds at most {}. Nothing was imported.",
                        count(held),
                        count(new),
                        count(max)
                    ),
                );
            }
            let total = plan.len();
            let mut done = 0usize;
            let mut bytes = 0u64;
            for (path, content, existing) in plan {
                let written = match existing {
                    None => v.engine(&app)
                        .create_memory_within(&store.id, &path, &content, u64::MAX, v.actor())
                        .await
                        .map(|_| ()),
                    Some(m) => v.engine(&app)
                        .update_memory(
                            &store.id,
                            &m.id,
                            UpdateMemory {
                                content: Some(content.clone()),
                                path: None,
                                precondition: Some(Precondition::content_sha256(m.content_sha256)),
                            },
                            v.actor(),
                        )
                        .await
                        .map(|_| ()),
                };
                if let Err(e) = written {
                    let mut body = html::crumbs(Some(&back), "Import stopped");
                    body.push_str(&error_box(&e));
                    body.push_str(&html::message(
                        "error",
                        &format!("{done} of {total} memories were imported before {path} was refused; the rest were not."),
                        None,
                    ));
                    let _ = write!(body, "<p><a href=\"{}\">Back to the store</a></p>", esc(&back));
                    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                    return Err(v.page(status, "Import stopped", &body));
                }
                done += 1;
                bytes += content.len() as u64;
            }
            let body = html::crumbs(Some(&back), "Imported")
                + &html::message(
                "notice",
                &format!(
                    "Imported {} memor{} ({}).",
                    count(done as u64),
                    if done == 1 { "y" } else { "ies" },
                    size(bytes)
                ),
                None,
            ) + &format!("<p><a href=\"{}\">Back to the store</a></p>", esc(&back));
            Ok(v.page(StatusCode::OK, "Imported", &body))
        }
        .await,
    )
}
