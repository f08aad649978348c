//! `open_mount` on versioned stores (`store+sqlite:`): the folder from the store's display
//! name, `NAME=` as an override, archived stores refused as a typed error, and the one
//! session-id rule.
#![cfg(feature = "stores")]

use memory_core::{MemoryHandler, MemoryTool};
use memory_runner::mounts::memory_store::{Actor, CreateStore, ListVersions, MemoryStores};
use memory_runner::mounts::{MountError, MountSpec, Mounts};
use memory_runner::{OpenError, OpenOptions, open_mount, open_with};
use serde_json::json;

async fn engine_with(names: &[&str]) -> (tempfile::TempDir, String, MemoryStores, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let engine = MemoryStores::open(&db).await.unwrap();
    let mut ids = Vec::new();
    for name in names {
        let store = engine
            .create_store(CreateStore {
                name: (*name).into(),
                description: Some(format!("About {name}.")),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(store.id);
    }
    let db = db.display().to_string();
    (dir, db, engine, ids)
}

fn spec(text: &str) -> MountSpec {
    text.parse().unwrap()
}

#[tokio::test]
async fn folders_come_from_display_names_and_name_overrides_them() {
    let (_dir, db, _engine, ids) =
        engine_with(&["Team Handbook", "Team  handbook!", "???", "Notes"]).await;
    let options = OpenOptions::new().with_session_id("sesn_t");
    let mut mounts = Vec::new();
    for id in &ids[..3] {
        mounts.push(
            open_mount(&spec(&format!("store+sqlite:{db}#{id}:ro")), &options)
                .await
                .unwrap(),
        );
    }
    mounts.push(
        open_mount(
            &spec(&format!("My Notes=store+sqlite:{db}#{}", ids[3])),
            &options,
        )
        .await
        .unwrap(),
    );
    let mounts = Mounts::new(mounts).unwrap();
    let folders: Vec<&str> = mounts.slugs().collect();
    // Duplicates numbered; a name with nothing left falls back to the store id.
    let id_slug = ids[2].as_str();
    assert_eq!(
        folders,
        ["team-handbook", "team-handbook-2", id_slug, "my-notes"]
    );
    for (id, folder) in ids.iter().zip(&folders) {
        assert_eq!(
            mounts.store_mount_path(id).unwrap().as_str(),
            format!("/memories/{folder}")
        );
    }
    // The note names each store by its display name, with its description; NAME= changes
    // only the folder.
    let note = mounts.note();
    assert!(
        note.contains(
            "- /memories/team-handbook (read-only): \"Team Handbook\". About Team Handbook.\n"
        ),
        "{note}"
    );
    assert!(
        note.contains("- /memories/my-notes (read-write): \"Notes\". About Notes.\n"),
        "{note}"
    );
}

#[tokio::test]
async fn an_archived_store_is_refused_at_mount_time_naming_it() {
    let (_dir, db, engine, ids) = engine_with(&["Old Handbook"]).await;
    engine.archive_store(&ids[0]).await.unwrap();
    for text in [
        format!("store+sqlite:{db}#{}", ids[0]),
        format!("store+sqlite:{db}#{}:ro", ids[0]),
        format!("old=store+sqlite:{db}#{}", ids[0]),
    ] {
        let err = open_mount(&spec(&text), &OpenOptions::new())
            .await
            .unwrap_err();
        let OpenError::Open { source, .. } = &err else {
            panic!("{err:?}");
        };
        match source.downcast_ref::<MountError>() {
            Some(MountError::Archived { id, name }) => {
                assert_eq!(
                    (id.as_str(), name.as_str()),
                    (ids[0].as_str(), "Old Handbook")
                );
            }
            other => panic!("{other:?}"),
        }
        let message = err.to_string();
        assert!(message.contains("\"Old Handbook\""), "{message}");
        assert!(message.contains("archived"), "{message}");
    }
    // --store on it still opens (reads of an archived store work, as in the API).
    open_with(
        &format!("store+sqlite:{db}#{}", ids[0]),
        &OpenOptions::new(),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn one_session_id_rule_for_every_versioned_store() {
    let (_dir, db, engine, ids) = engine_with(&["Notes"]).await;
    let urls = [
        format!("store+sqlite:{db}#{}", ids[0]),
        // No server listens there: the id is refused before anything is sent.
        format!("store+http://127.0.0.1:9#{}", ids[0]),
    ];
    for url in &urls {
        let bad = OpenOptions::new().with_session_id("bad id!");
        let err = open_with(url, &bad).await.unwrap_err();
        assert!(
            matches!(err, OpenError::Unavailable { .. }),
            "{url}: {err:?}"
        );
        assert!(err.to_string().contains("[0-9A-Za-z_-]"), "{err}");
        let err = open_mount(&spec(url), &bad).await.unwrap_err();
        assert!(
            matches!(err, OpenError::Unavailable { .. }),
            "{url}: {err:?}"
        );
    }
    // A good id is the actor of every write.
    let good = OpenOptions::new().with_session_id("sesn_ok-1");
    let tool = MemoryTool::new(open_with(&urls[0], &good).await.unwrap());
    let out = tool
        .execute(&json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
        .await;
    assert!(!out.is_error, "{out:?}");
    let versions = engine
        .list_versions(&ids[0], ListVersions::default())
        .await
        .unwrap()
        .data;
    assert_eq!(versions[0].created_by, Some(Actor::session("sesn_ok-1")));
}
