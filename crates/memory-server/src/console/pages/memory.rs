//! A memory: its page (content, editor, history, rename, delete), creating one, saving (a
//! stale save shows both texts and their diff), renaming, deleting, and the diff of two of
//! its versions.

use axum::extract::Path;
use axum::http::StatusCode;
use maud::{Markup, html};
use memory_store::{ListVersions, Precondition, StoreError, UpdateMemory};

use super::versions::{HISTORY_PAGE, versions_table};
use super::{
    Answer, Params, breadcrumb, confirm_form, confirmed, content_block, memory_url, store_url,
};
use crate::console::diff;
use crate::console::error::{ConsoleError, OrPage, error_box};
use crate::console::html::{self, q, size};
use crate::console::redirect;
use crate::console::viewer::{Post, SignedIn, Viewer};

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
pub(crate) async fn create_memory(Path(store_id): Path<String>, post: Post) -> Answer {
    let v = &post.viewer;
    let content = from_textarea(post.text("content"), false);
    let back = store_url(&store_id);
    let memory = v
        .engine
        .create_memory_within(
            &store_id,
            post.text("path").trim(),
            &content,
            u64::MAX,
            v.actor(),
        )
        .await
        .or_page(v, Some((&back, "Back to the store")))?;
    Ok(redirect(&format!(
        "{}?done=memory-created",
        memory_url(&store_id, &memory.id)
    )))
}

/// The editor form: `content` loaded with hash `sha` at version `version`.
fn editor(
    v: &Viewer,
    store: &str,
    memory: &str,
    content: &str,
    sha: &str,
    version: &str,
) -> Markup {
    let eol = if content.contains("\r\n") {
        "crlf"
    } else {
        "lf"
    };
    html! {
        form method="post" action={ (memory_url(store, memory)) "/save" } class="stack" {
            (v.csrf())
            input type="hidden" name="content_sha256" value=(sha);
            input type="hidden" name="version" value=(version);
            input type="hidden" name="eol" value=(eol);
            label for="editor" { "Content" }
            // A first line break after the start tag is dropped by the browser: this one
            // keeps a content's own leading line break.
            textarea id="editor" name="content" rows="16" { "\n" (content) }
            button type="submit" { "Save" }
        }
    }
}

/// `GET …/memories/{memory}`: content, editor, rename, delete, and its history.
pub(crate) async fn memory(
    Path((store_id, memory_id)): Path<(String, String)>,
    SignedIn(v): SignedIn,
    qs: Params,
) -> Answer {
    let store = v.engine.retrieve_store(&store_id).await.or_page(&v, None)?;
    let back = store_url(&store.id);
    let memory = v
        .engine
        .retrieve_memory(&store.id, &memory_id)
        .await
        .or_page(&v, Some((&back, "Back to the store")))?;
    let content = memory.content.clone().unwrap_or_default();
    let url = memory_url(&store.id, &memory.id);
    let writable = store.archived_at.is_none();
    let versions = v
        .engine
        .list_versions(
            &store.id,
            ListVersions {
                memory_id: Some(memory.id.clone()),
                limit: Some(HISTORY_PAGE),
                page: qs.get("page").map(str::to_owned),
                ..Default::default()
            },
        )
        .await;
    let body = html! {
        @if let Some(notice) = qs.notice() { (notice) }
        (breadcrumb(&store))
        h1 { (memory.path) }
        dl class="facts" {
            dt { "Size" } dd { (size(memory.content_size_bytes)) }
            dt { "Updated" } dd { (html::when(memory.updated_at)) }
            dt { "SHA-256" } dd { code { (memory.content_sha256) } }
            dt { "Memory" } dd { code { (memory.id) } }
            dt { "Version" } dd { code { (memory.memory_version_id) } }
        }
        h2 { "Content" }
        (content_block("memory-content", &content))
        @if writable {
            h2 { "Edit" }
            (editor(&v, &store.id, &memory.id, &content, &memory.content_sha256, &memory.memory_version_id))
        }
        h2 { "History" }
        @match &versions {
            Err(e) => { (error_box(e)) }
            Ok(page) => {
                form method="get" action={ (url) "/diff" } {
                    (versions_table(&store.id, &page.data, Some(&memory.memory_version_id), true))
                    button type="submit" { "Show diff" }
                }
                @if let Some(next) = &page.next_page {
                    p { a href={ (url) "?page=" (q(next)) } { "Older versions" } }
                }
            }
        }
        @if writable {
            h2 { "Rename" }
            form method="post" action={ (url) "/rename" } class="stack" {
                (v.csrf())
                label for="rename-path" { "New path" }
                input id="rename-path" name="path" value=(memory.path) required;
                button type="submit" { "Rename" }
            }
        }
        h2 { "Delete" }
        (confirm_form(
            &format!("{url}/delete"),
            v.csrf(),
            html! { input type="hidden" name="content_sha256" value=(memory.content_sha256); },
            "confirm-delete",
            "Delete this memory (its versions stay in the store's history)",
            "Delete memory",
        ))
    };
    Ok(v.page(StatusCode::OK, &memory.path, body))
}

/// `POST …/memories/{memory}/save`: new content with the `content_sha256` precondition of
/// what was loaded; a save over a newer version shows both.
pub(crate) async fn save(
    Path((store_id, memory_id)): Path<(String, String)>,
    post: Post,
) -> Answer {
    let v = &post.viewer;
    let content = from_textarea(post.text("content"), post.text("eol") == "crlf");
    let back = memory_url(&store_id, &memory_id);
    let params = UpdateMemory {
        content: Some(content.clone()),
        path: None,
        precondition: Some(Precondition::content_sha256(post.text("content_sha256"))),
    };
    match v
        .engine
        .update_memory(&store_id, &memory_id, params, v.actor())
        .await
    {
        Ok(m) if m.memory_version_id == post.text("version") => {
            Ok(redirect(&format!("{back}?done=unchanged")))
        }
        Ok(_) => Ok(redirect(&format!("{back}?done=saved"))),
        Err(StoreError::PreconditionFailed { .. }) => {
            Err(stale(v, &store_id, &memory_id, &content).await)
        }
        Err(e) => Err(e).or_page(v, Some((&back, "Back to the memory"))),
    }
}

/// The page of a refused stale save: the current version, the text that was not saved, the
/// diff between them, and an editor to save again over the current version.
async fn stale(v: &Viewer, store: &str, memory: &str, yours: &str) -> ConsoleError {
    let current = match v
        .engine
        .retrieve_memory(store, memory)
        .await
        .or_page(v, None)
    {
        Ok(m) => m,
        Err(e) => return e,
    };
    let now = current.content.clone().unwrap_or_default();
    let body = html! {
        (html::message(
            "error",
            "Not saved: this memory changed since it was loaded. Someone saved a newer version after you opened the editor.",
            Some("Both versions are below. Copy what you need into the editor (it holds your text) and save again to replace the newer version, or leave it."),
        ))
        p { a href=(memory_url(store, memory)) { "Back to the memory" } }
        h1 { (current.path) }
        div class="both" {
            section { h2 { "The newer version (saved)" } (content_block("current-content", &now)) }
            section { h2 { "Your text (not saved)" } (content_block("your-content", yours)) }
        }
        h2 { "Differences (newer version → your text)" }
        (diff_block(&now, yours))
        h2 { "Edit" }
        (editor(v, store, memory, yours, &current.content_sha256, &current.memory_version_id))
    };
    ConsoleError::Page {
        viewer: v.clone(),
        status: StatusCode::CONFLICT,
        title: "Not saved",
        body,
    }
}

/// The line diff of `old` and `new`.
fn diff_block(old: &str, new: &str) -> Markup {
    let lines = diff::lines(old, new);
    if lines.iter().all(|l| matches!(l, diff::Line::Same(_))) {
        return html! { p class="meta" { "No differences: the two texts are the same." } };
    }
    html! {
        pre class="diff" {
            @for line in &lines {
                @let (class, mark, text) = match line {
                    diff::Line::Same(t) => ("same", ' ', t),
                    diff::Line::Removed(t) => ("del", '-', t),
                    diff::Line::Added(t) => ("add", '+', t),
                };
                span class=(class) { (mark) " " (text) "\n" }
            }
        }
    }
}

/// `POST …/memories/{memory}/rename`.
pub(crate) async fn rename(
    Path((store_id, memory_id)): Path<(String, String)>,
    post: Post,
) -> Answer {
    let v = &post.viewer;
    let back = memory_url(&store_id, &memory_id);
    let params = UpdateMemory {
        path: Some(post.text("path").trim().to_owned()),
        ..Default::default()
    };
    v.engine
        .update_memory(&store_id, &memory_id, params, v.actor())
        .await
        .or_page(v, Some((&back, "Back to the memory")))?;
    Ok(redirect(&format!("{back}?done=renamed")))
}

/// `POST …/memories/{memory}/delete`: with the hash of what was shown, so a memory changed
/// since is not deleted unseen.
pub(crate) async fn delete_memory(
    Path((store_id, memory_id)): Path<(String, String)>,
    post: Post,
) -> Answer {
    let v = &post.viewer;
    let back = memory_url(&store_id, &memory_id);
    confirmed(
        &post,
        "Nothing was deleted: tick the box to confirm.",
        &back,
    )?;
    let expected = post.field("content_sha256").filter(|s| !s.is_empty());
    v.engine
        .delete_memory(&store_id, &memory_id, expected, v.actor())
        .await
        .or_page(v, Some((&back, "Back to the memory")))?;
    Ok(redirect(&format!(
        "{}?done=memory-deleted",
        store_url(&store_id)
    )))
}

/// One side of a diff: `head` (the memory's content) or a version of that memory.
async fn side(
    v: &Viewer,
    store: &str,
    memory: &str,
    which: &str,
) -> Result<(String, Option<String>), StoreError> {
    if which == "head" {
        let m = v.engine.retrieve_memory(store, memory).await?;
        return Ok((
            format!("the live head (version {})", m.memory_version_id),
            m.content,
        ));
    }
    let ver = v.engine.retrieve_version(store, which).await?;
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
    Path((store_id, memory_id)): Path<(String, String)>,
    SignedIn(v): SignedIn,
    qs: Params,
) -> Answer {
    let store = v.engine.retrieve_store(&store_id).await.or_page(&v, None)?;
    let back = memory_url(&store.id, &memory_id);
    let (Some(from), Some(to)) = (qs.get("from"), qs.get("to")) else {
        return Err(ConsoleError::refused(
            &v,
            StatusCode::BAD_REQUEST,
            "Choose two versions to compare: one in the From column and one in the To column.",
            &back,
        ));
    };
    let back_link = Some((back.as_str(), "Back to the memory"));
    let (from_label, old) = side(&v, &store.id, &memory_id, from)
        .await
        .or_page(&v, back_link)?;
    let (to_label, new) = side(&v, &store.id, &memory_id, to)
        .await
        .or_page(&v, back_link)?;
    let body = html! {
        (breadcrumb(&store))
        p { a href=(back) { "Back to the memory" } }
        h1 { "Diff" }
        p { "From " (from_label) " to " (to_label) "." }
        @match (&old, &new) {
            (Some(old), Some(new)) => { (diff_block(old, new)) }
            _ => {
                (html::message(
                    "error",
                    "One of the two has no content to compare: it is redacted, or records a deletion.",
                    None,
                ))
            }
        }
    };
    Ok(v.page(StatusCode::OK, "Diff", body))
}
