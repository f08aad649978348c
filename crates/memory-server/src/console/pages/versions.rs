//! History: a store's versions, one version (content, restore, redact), restoring and
//! redacting; and the versions table the memory page shows too.

use axum::extract::Path;
use axum::http::StatusCode;
use maud::{Markup, html};
use memory_store::{ListVersions, MemoryVersion, Operation, StoreError, UpdateMemory, View};

use super::{
    Answer, Params, actor_words, breadcrumb, confirm_form, confirmed, content_block, memory_url,
    store_url, version_url,
};
use crate::console::error::{ConsoleError, OrPage};
use crate::console::html::{self, q, size};
use crate::console::redirect;
use crate::console::viewer::{Post, SignedIn};

/// Versions per history page.
pub(super) const HISTORY_PAGE: i64 = 50;

/// The table of `versions` (newest first), with the diff choices when `diff` is set.
pub(super) fn versions_table(
    store: &str,
    versions: &[MemoryVersion],
    head: Option<&str>,
    diff: bool,
) -> Markup {
    let radio = |ver: &MemoryVersion, name: &str, checked: bool| {
        html! {
            @if ver.content_sha256.is_some() {
                input type="radio" name=(name) value=(ver.id)
                    aria-label={ (if name == "from" { "From" } else { "To" }) " " (ver.id) }
                    checked[checked];
            }
        }
    };
    html! {
        div class="table-wrap" { table class="versions" {
            thead { tr {
                @if diff { th { "From" } th { "To" } }
                th { "Version" } th { "Time" } th { "Operation" } th { "Actor" } th { "Size" } th { "Path" }
            } }
            tbody {
                @if diff && head.is_some() {
                    tr class="head" {
                        td {}
                        td { input type="radio" name="to" value="head" aria-label="To the live head" checked; }
                        td colspan="6" { "The live head (current content)" }
                    }
                }
                @for (i, ver) in versions.iter().enumerate() {
                    tr {
                        @if diff {
                            td { (radio(ver, "from", i == 1)) }
                            td { (radio(ver, "to", false)) }
                        }
                        td class="id" {
                            a href=(version_url(store, &ver.id)) {
                                (ver.id)
                                @if Some(ver.id.as_str()) == head { " " span class="badge" { "current" } }
                                @if ver.redacted_at.is_some() { " " span class="badge" { "redacted" } }
                            }
                        }
                        td class="time" { (html::when(ver.created_at)) }
                        td { (ver.operation.as_str()) }
                        td { (actor_words(ver.created_by.as_ref())) }
                        td { (ver.content_size_bytes.map_or_else(|| "–".to_owned(), size)) }
                        td class="path" { (ver.path.as_deref().unwrap_or("(redacted)")) }
                    }
                }
            }
        } }
    }
}

/// `GET …/versions`: the store's versions, newest first.
pub(crate) async fn versions(
    Path(store_id): Path<String>,
    SignedIn(v): SignedIn,
    qs: Params,
) -> Answer {
    let store = v.engine.retrieve_store(&store_id).await.or_page(&v, None)?;
    let page = v
        .engine
        .list_versions(
            &store.id,
            ListVersions {
                limit: Some(HISTORY_PAGE),
                page: qs.get("page").map(str::to_owned),
                view: View::Basic,
                ..Default::default()
            },
        )
        .await
        .or_page(&v, Some((&store_url(&store.id), "Back to the store")))?;
    let body = html! {
        (breadcrumb(&store))
        h1 { "Store history" }
        p { "Every change to a memory of this store, newest first." }
        @if page.data.is_empty() {
            p { "No versions yet." }
        } @else {
            (versions_table(&store.id, &page.data, None, false))
        }
        @if let Some(next) = &page.next_page {
            p { a href={ (store_url(&store.id)) "/versions?page=" (q(next)) } { "Older versions" } }
        }
    };
    Ok(v.page(StatusCode::OK, "Store history", body))
}

/// `GET …/versions/{version}`: its content, restore and redact.
pub(crate) async fn version(
    Path((store_id, version_id)): Path<(String, String)>,
    SignedIn(v): SignedIn,
    qs: Params,
) -> Answer {
    let store = v.engine.retrieve_store(&store_id).await.or_page(&v, None)?;
    let back = store_url(&store.id);
    let ver = v
        .engine
        .retrieve_version(&store.id, &version_id)
        .await
        .or_page(&v, Some((&back, "Back to the store")))?;
    let url = version_url(&store.id, &ver.id);
    let murl = memory_url(&store.id, &ver.memory_id);
    let title = format!("Version {}", ver.id);
    let body = html! {
        @if let Some(notice) = qs.notice() { (notice) }
        (breadcrumb(&store))
        h1 { (title) }
        dl class="facts" {
            dt { "Operation" } dd { (ver.operation.as_str()) }
            dt { "Time" } dd { (html::when(ver.created_at)) }
            dt { "Actor" } dd { (actor_words(ver.created_by.as_ref())) }
            dt { "Path" } dd { (ver.path.as_deref().unwrap_or("(redacted)")) }
            dt { "Size" } dd { (ver.content_size_bytes.map_or_else(|| "–".to_owned(), size)) }
            dt { "Memory" } dd { a href=(murl) { (ver.memory_id) } }
        }
        @if let Some(t) = ver.redacted_at {
            p class="meta" {
                "Redacted " (html::when(t)) " by " (actor_words(ver.redacted_by.as_ref()))
                ": its content and path are gone for good."
            }
        }
        @match &ver.content {
            Some(content) => {
                h2 { "Content" }
                (content_block("version-content", content))
                p { a href={ (murl) "/diff?from=" (q(&ver.id)) "&to=head" } { "Diff against the live head" } }
                @if store.archived_at.is_none() {
                    h2 { "Restore" }
                    form method="post" action={ (url) "/restore" } class="stack" {
                        (v.csrf())
                        p { "Writes this version's content back as the memory's newest version." }
                        button type="submit" { "Restore this version" }
                    }
                }
            }
            None if ver.operation == Operation::Deleted => {
                p { "This version records the memory's deletion; it has no content." }
            }
            None => {}
        }
        @if ver.redacted_at.is_none() {
            h2 { "Redact" }
            (confirm_form(
                &format!("{url}/redact"),
                v.csrf(),
                html! { p {
                    "Redaction wipes this version's content and path for good (for a leaked secret). The memory's current version cannot be redacted."
                } },
                "confirm-redact",
                "I understand that redaction cannot be undone",
                "Redact",
            ))
        }
    };
    Ok(v.page(StatusCode::OK, &title, body))
}

/// `POST …/versions/{version}/restore`: the version's content written back as a new version
/// of its memory (a new memory at its path if the memory was deleted since).
pub(crate) async fn restore(
    Path((store_id, version_id)): Path<(String, String)>,
    post: Post,
) -> Answer {
    let v = &post.viewer;
    let back = version_url(&store_id, &version_id);
    let back_link = Some((back.as_str(), "Back to the version"));
    let ver = v
        .engine
        .retrieve_version(&store_id, &version_id)
        .await
        .or_page(v, back_link)?;
    let (Some(content), Some(path)) = (ver.content, ver.path) else {
        return Err(ConsoleError::refused(
            v,
            StatusCode::BAD_REQUEST,
            "This version has no content to restore: it is redacted, or records a deletion.",
            &back,
        ));
    };
    match v.engine.retrieve_memory(&store_id, &ver.memory_id).await {
        Ok(m) => {
            let params = UpdateMemory {
                content: Some(content),
                ..Default::default()
            };
            let after = v
                .engine
                .update_memory(&store_id, &m.id, params, v.actor())
                .await
                .or_page(v, back_link)?;
            let done = if after.memory_version_id == m.memory_version_id {
                "unchanged"
            } else {
                "restored"
            };
            Ok(redirect(&format!(
                "{}?done={done}",
                memory_url(&store_id, &m.id)
            )))
        }
        Err(StoreError::NotFound { .. }) => {
            let m = v
                .engine
                .create_memory_within(&store_id, &path, &content, u64::MAX, v.actor())
                .await
                .or_page(v, back_link)?;
            Ok(redirect(&format!(
                "{}?done=restored",
                memory_url(&store_id, &m.id)
            )))
        }
        Err(e) => Err(e).or_page(v, back_link),
    }
}

/// `POST …/versions/{version}/redact`: asks for the confirmation box; the engine refuses the
/// head of a live memory, and the page says why.
pub(crate) async fn redact(
    Path((store_id, version_id)): Path<(String, String)>,
    post: Post,
) -> Answer {
    let v = &post.viewer;
    let back = version_url(&store_id, &version_id);
    confirmed(
        &post,
        "Nothing was redacted: tick the box to confirm that redaction cannot be undone.",
        &back,
    )?;
    v.engine
        .redact_version(&store_id, &version_id, v.actor())
        .await
        .or_page(v, Some((&back, "Back to the version")))?;
    Ok(redirect(&format!("{back}?done=redacted")))
}
