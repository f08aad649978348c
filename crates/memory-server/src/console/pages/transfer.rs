//! Export and import: a store as a `memory export` archive, and an archive checked whole
//! before its first memory is written.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use maud::html;
use memory_store::archive;
use memory_store::{ListMemories, MemoryListItem, Precondition, UpdateMemory, View};

use super::{Answer, store_url};
use crate::app::App;
use crate::console::error::{ConsoleError, OrPage, error_box};
use crate::console::html::{self, count, memories, size};
use crate::console::viewer::{Post, SignedIn};

/// `GET …/export`: the store as a `memory export` archive.
pub(crate) async fn export(Path(store_id): Path<String>, SignedIn(v): SignedIn) -> Answer {
    let store = v.engine.retrieve_store(&store_id).await.or_page(&v, None)?;
    let back = store_url(&store.id);
    let back_link = Some((back.as_str(), "Back to the store"));
    let mut text = archive::header_line(&memory_store::Timestamp::now().to_string());
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut page = None;
    loop {
        let got = v
            .engine
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
            .or_page(&v, back_link)?;
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

/// `POST …/import`: the whole archive is checked (format, hashes, every path by the store's
/// rules, text only, existing memories unless replacing, room under the limit) before the
/// first memory is written.
pub(crate) async fn import(
    State(app): State<App>,
    Path(store_id): Path<String>,
    post: Post,
) -> Answer {
    let v = &post.viewer;
    let back = store_url(&store_id);
    let back_link = Some((back.as_str(), "Back to the store"));
    let no = |status, headline: &str| Err(ConsoleError::refused(v, status, headline, &back));
    let store = v.engine.retrieve_store(&store_id).await.or_page(v, None)?;
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
        let existing = v
            .engine
            .memory_at_path(&store.id, &path)
            .await
            .or_page(v, back_link)?;
        plan.push((path, content, existing));
    }
    let taken: Vec<&str> = plan
        .iter()
        .filter(|(_, _, e)| e.is_some())
        .map(|(p, _, _)| p.as_str())
        .collect();
    if !post.ticked("overwrite") && !taken.is_empty() {
        let shown: Vec<&str> = taken.iter().take(5).copied().collect();
        return no(
            StatusCode::CONFLICT,
            &format!(
                "{} {} of the archive already exist{} in this store ({}{}). Nothing was imported: tick \"Replace memories that already exist\" to replace them.",
                taken.len(),
                memories(taken.len() as u64),
                if taken.len() == 1 { "s" } else { "" },
                shown.join(", "),
                if taken.len() > 5 { ", ..." } else { "" }
            ),
        );
    }
    let new = (plan.len() - taken.len()) as u64;
    let held = v.engine.count_memories(&store.id).await.or_page(v, None)?;
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
    let mut done = 0u64;
    let mut bytes = 0u64;
    for (path, content, existing) in plan {
        let written = match existing {
            None => v
                .engine
                .create_memory_within(&store.id, &path, &content, u64::MAX, v.actor())
                .await
                .map(|_| ()),
            Some(m) => v
                .engine
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
            let stopped = format!(
                "{done} of {total} memories were imported before {path} was refused; the rest were not."
            );
            let body = html::outcome(
                Some(&back),
                "Import stopped",
                html! {
                    (error_box(&e))
                    (html::message("error", &stopped, None))
                    p { a href=(back) { "Back to the store" } }
                },
            );
            return Err(ConsoleError::Page {
                viewer: v.clone(),
                status: StatusCode::from_u16(e.status())
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                title: "Import stopped",
                body,
            });
        }
        done += 1;
        bytes += content.len() as u64;
    }
    let imported = format!(
        "Imported {} {} ({}).",
        count(done),
        memories(done),
        size(bytes)
    );
    let body = html::outcome(
        Some(&back),
        "Imported",
        html! {
            (html::message("notice", &imported, None))
            p { a href=(back) { "Back to the store" } }
        },
    );
    Ok(v.page(StatusCode::OK, "Imported", body))
}
