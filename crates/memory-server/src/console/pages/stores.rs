//! The stores: the list (`GET /console/`, also the sign-in page for visitors), creating,
//! archiving and deleting a store.

use axum::extract::Path;
use axum::http::StatusCode;
use maud::html;
use memory_store::{CreateStore, ListStores};

use super::{Answer, Params, confirmed, sign_in, store_url};
use crate::console::error::{ConsoleError, OrPage, error_box};
use crate::console::html::{self, q};
use crate::console::redirect;
use crate::console::viewer::{Post, Viewer};

/// `GET /console/`: the stores, newest first (archived ones on request), and the create form.
pub(crate) async fn index(v: Viewer, qs: Params) -> Answer {
    if !v.signed_in() {
        return Ok(sign_in::form(&v, StatusCode::OK, None, qs.notice()));
    }
    let archived = qs.get("archived").is_some();
    let params = ListStores {
        include_archived: archived,
        limit: Some(50),
        page: qs.get("page").map(str::to_owned),
        ..Default::default()
    };
    let listed = v.engine.list_stores(params).await;
    let body = html! {
        @if let Some(notice) = qs.notice() { (notice) }
        h1 { "Memory stores" }
        form method="get" action="/console/" class="inline" {
            input type="checkbox" id="archived" name="archived" value="1" checked[archived];
            label for="archived" { "Show archived stores" } " "
            button type="submit" { "Show" }
        }
        @match &listed {
            Err(e) => { (error_box(e)) }
            Ok(page) if page.data.is_empty() => { p { "No stores yet." } }
            Ok(page) => {
                div class="table-wrap" { table {
                    thead { tr {
                        th { "Name" } th { "Description" } th { "Created" } th { "State" } th { "Id" }
                    } }
                    tbody {
                        @for s in &page.data {
                            tr {
                                td { a href=(store_url(&s.id)) { (s.name) } }
                                td { (s.description) }
                                td class="time" { (html::when(s.created_at)) }
                                td {
                                    @match s.archived_at {
                                        Some(t) => { "archived " (html::when(t)) }
                                        None => { "active" }
                                    }
                                }
                                td class="id" { code { (s.id) } }
                            }
                        }
                    }
                } }
                @if let Some(next) = &page.next_page {
                    p {
                        a href={ "/console/?page=" (q(next)) @if archived { "&archived=1" } } {
                            "Older stores"
                        }
                    }
                }
            }
        }
        h2 { "Create a store" }
        form method="post" action="/console/stores" class="stack" {
            (v.csrf())
            label for="name" { "Name" }
            input id="name" name="name" required maxlength="255";
            label for="description" { "Description" }
            textarea id="description" name="description" rows="3" maxlength="1024" {}
            button type="submit" { "Create store" }
        }
    };
    Ok(v.page(StatusCode::OK, "Memory stores", body))
}

/// `POST /console/stores`.
pub(crate) async fn create_store(post: Post) -> Answer {
    let description = post.text("description").replace("\r\n", "\n");
    let params = CreateStore {
        name: post.text("name").to_owned(),
        description: (!description.is_empty()).then_some(description),
        metadata: None,
    };
    let v = &post.viewer;
    let store = v.engine.create_store(params).await.or_page(v, None)?;
    Ok(redirect(&format!(
        "{}?done=store-created",
        store_url(&store.id)
    )))
}

/// `POST …/archive`: asks for the confirmation box.
pub(crate) async fn archive_store(Path(store_id): Path<String>, post: Post) -> Answer {
    let v = &post.viewer;
    let back = store_url(&store_id);
    confirmed(
        &post,
        "Nothing was archived: tick the box to confirm that archiving cannot be undone.",
        &back,
    )?;
    v.engine
        .archive_store(&store_id)
        .await
        .or_page(v, Some((&back, "Back to the store")))?;
    Ok(redirect(&format!("{back}?done=archived")))
}

/// `POST …/delete`: the typed name must be the store's.
pub(crate) async fn delete_store(Path(store_id): Path<String>, post: Post) -> Answer {
    let v = &post.viewer;
    let back = store_url(&store_id);
    let store = v.engine.retrieve_store(&store_id).await.or_page(v, None)?;
    if post.text("confirm_name") != store.name {
        return Err(ConsoleError::refused(
            v,
            StatusCode::BAD_REQUEST,
            "Nothing was deleted: the name you typed is not the store's name.",
            &back,
        ));
    }
    v.engine
        .delete_store(&store.id)
        .await
        .or_page(v, Some((&back, "Back to the store")))?;
    Ok(redirect("/console/?done=store-deleted"))
}
