//! A store's page: its memories as a tree of folders, the memory limit, and the store's
//! forms (create a memory, import, archive, delete).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::{Markup, html};
use memory_store::{ListMemories, Memory, MemoryListItem, Store, StoreError};

use super::{Answer, Params, confirm_form, memory_url, store_url};
use crate::app::App;
use crate::console::error::{OrPage, error_box};
use crate::console::html::{self, count, memories, q, size};
use crate::console::viewer::{SignedIn, Viewer};

/// Most memories the store page lists (the tree of a larger store is cut, and says so).
const TREE_MAX: usize = 5_000;

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

    fn render(&self, store: &str, prefix: &str) -> Markup {
        html! {
            ul class="tree" {
                @for (name, dir) in &self.dirs {
                    @let path = format!("{prefix}{name}/");
                    li class="dir" { details open {
                        summary {
                            span class="name" { (name) "/" } " "
                            span class="meta" {
                                (count(dir.count)) " " (memories(dir.count)) ", " (size(dir.bytes))
                            } " "
                            a class="meta" href={ (store_url(store)) "?prefix=" (q(&path)) }
                                aria-label={ "Only " (path) } { "only this folder" }
                        }
                        (dir.render(store, &path))
                    } }
                }
                @for m in &self.files {
                    li class="file" {
                        a href=(memory_url(store, &m.id)) { (m.path) } " "
                        span class="meta" {
                            (size(m.content_size_bytes)) " · updated " (html::when(m.updated_at))
                        }
                    }
                }
            }
        }
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
    v: &Viewer,
    store: &str,
    prefix: &str,
) -> Result<(Vec<Memory>, bool), StoreError> {
    let mut out = Vec::new();
    let mut page = None;
    loop {
        let got = v
            .engine
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

fn store_header(store: &Store) -> Markup {
    html! {
        h1 { (store.name) }
        @if !store.description.is_empty() {
            p class="description" { (store.description) }
        }
        p class="meta" { "Store " code { (store.id) } ", created " (html::when(store.created_at)) }
        @if let Some(t) = store.archived_at {
            div class="notice" role="status" { p { strong {
                "This store was archived " (html::when(t)) ": its memories can be read, deleted and redacted, but not created, edited, renamed, restored or imported."
            } } }
        }
    }
}

/// The tree of the memories under `prefix`, with their count and size.
fn tree(store: &str, prefix: &str, memories_found: &[Memory], more: bool) -> Markup {
    let mut root = Dir::default();
    for m in memories_found {
        root.insert(&m.path[prefix.len()..], m);
    }
    html! {
        p class="meta" {
            (count(root.count)) " " (memories(root.count)) " under " code { (prefix) } ", " (size(root.bytes))
        }
        @if more {
            p class="meta" {
                "Only the first " (count(TREE_MAX as u64)) " are shown: filter by a folder to see the rest."
            }
        }
        @if root.count > 0 {
            (root.render(store, prefix))
        }
    }
}

/// `GET /console/stores/{store}`: the tree of memories, the limit, and the store's forms.
pub(crate) async fn store(
    State(app): State<App>,
    Path(store_id): Path<String>,
    SignedIn(v): SignedIn,
    qs: Params,
) -> Answer {
    let store = v.engine.retrieve_store(&store_id).await.or_page(&v, None)?;
    let total = v.engine.count_memories(&store.id).await.or_page(&v, None)?;
    let max = app.engine.options().max_memories_per_store;
    let url = store_url(&store.id);
    // The tree, filtered by a prefix.
    let prefix = qs
        .get("prefix")
        .map_or_else(|| "/".to_owned(), normal_prefix);
    let listed = memories_under(&v, &store.id, &prefix).await;
    // An archived store takes no new or changed memory: only what it allows is offered.
    let writable = store.archived_at.is_none();
    let body = html! {
        @if let Some(notice) = qs.notice() { (notice) }
        (store_header(&store))
        p {
            label for="limit" { "Memories: " (count(total)) " of " (count(max)) } " "
            meter id="limit" min="0" max=(max) value=(total) high=(max - max / 10) {
                (count(total)) " of " (count(max))
            }
        }
        p class="links" {
            a href={ (url) "/versions" } { "Store history" } " · "
            a href={ (url) "/export" } { "Export archive" }
        }
        h2 { "Memories" }
        form method="get" action=(url) class="inline" {
            label for="prefix" { "Folder prefix" } " "
            input id="prefix" name="prefix" value=(prefix); " "
            button type="submit" { "Filter" }
        }
        @match &listed {
            Err(e) => { (error_box(e)) }
            Ok((found, more)) => { (tree(&store.id, &prefix, found, *more)) }
        }
        @if writable {
            h2 { "Create a memory" }
            form method="post" action={ (url) "/memories" } class="stack" {
                (v.csrf())
                label for="new-path" { "Path" }
                input id="new-path" name="path" required placeholder="/notes/todo.md";
                label for="new-content" { "Content" }
                textarea id="new-content" name="content" rows="6" {}
                button type="submit" { "Create memory" }
            }
            h2 { "Import" }
            p {
                "An archive written by " code { "memory export" } " or by this console's export (JSON Lines; its files under "
                code { "/memories/" } " become memories). The whole archive is checked before anything is written."
            }
            form method="post" action={ (url) "/import" } class="stack" {
                (v.csrf())
                label for="archive-file" { "Archive file" }
                input id="archive-file" type="file"
                    accept=".jsonl,.json,application/x-ndjson,text/plain" data-fill="archive";
                label for="archive" { "Archive (JSON Lines)" }
                textarea id="archive" name="archive" rows="6" required {}
                span {
                    input type="checkbox" id="overwrite" name="overwrite" value="1"; " "
                    label for="overwrite" { "Replace memories that already exist" }
                }
                button type="submit" { "Import" }
            }
            h2 { "Archive" }
            (confirm_form(
                &format!("{url}/archive"),
                v.csrf(),
                html! { p {
                    "Archiving is one-way: an archived store cannot be un-archived. Its memories stay readable and can be deleted and redacted, but none can be created or changed."
                } },
                "confirm-archive",
                "I understand that archiving cannot be undone",
                "Archive store",
            ))
        }
        h2 { "Delete" }
        form method="post" action={ (url) "/delete" } class="stack" {
            (v.csrf())
            p { "Deleting removes the store with all its memories and versions, at once and for good." }
            label for="confirm-name" { "Type the store's name to confirm" }
            input id="confirm-name" name="confirm_name" required autocomplete="off";
            button type="submit" { "Delete store" }
        }
    };
    Ok(v.page(StatusCode::OK, &store.name, body))
}
