//! Every rule of the store engine (STORES-API.md and STORES.md), over any persistence.
//!
//! Included as a module by each persistence's test (memory-store's `tests/engine.rs` over
//! SQLite, memory-postgres' `tests/engine.rs` over PostgreSQL); the including file provides
//! `engine()` and `engine_with(options)`, each a new engine over empty storage.

use std::collections::BTreeMap;

use memory_store::{
    Actor, CreateStore, EngineOptions, ListMemories, ListStores, ListVersions, MemoryListItem,
    MemoryStores, Operation, Precondition, StoreError, Timestamp, UpdateMemory, UpdateStore, View,
};

use super::{engine, engine_with};

async fn store(e: &MemoryStores) -> String {
    e.create_store(CreateStore {
        name: "Test".into(),
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

fn kind(e: &StoreError) -> (&'static str, u16) {
    (e.error_type(), e.status())
}

fn paths(items: &[MemoryListItem]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            MemoryListItem::Memory(m) => m.path.clone(),
            MemoryListItem::Prefix(p) => format!("prefix:{}", p.path),
        })
        .collect()
}

fn upd(content: Option<&str>, path: Option<&str>, pre: Option<&str>) -> UpdateMemory {
    UpdateMemory {
        content: content.map(Into::into),
        path: path.map(Into::into),
        precondition: pre.map(Precondition::content_sha256),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_lifecycle_and_metadata_patch() {
    let e = engine().await;
    let s = e
        .create_store(CreateStore {
            name: "Prefs".into(),
            description: None,
            metadata: Some(BTreeMap::from([
                ("a".into(), "1".into()),
                ("b".into(), "2".into()),
            ])),
        })
        .await
        .unwrap();
    assert!(s.id.starts_with("memstore_") && s.id.len() == "memstore_".len() + 24);
    assert_eq!(s.description, "");
    assert_eq!(s.archived_at, None);
    assert_eq!(s.created_at, s.updated_at);
    assert_eq!(e.retrieve_store(&s.id).await.unwrap(), s);

    let patch = UpdateStore {
        description: Some("d".into()),
        metadata: Some(BTreeMap::from([
            ("a".into(), None),
            ("c".into(), Some("3".into())),
            ("b".into(), Some("two".into())),
        ])),
        ..Default::default()
    };
    let u = e.update_store(&s.id, patch).await.unwrap();
    assert_eq!(u.name, "Prefs");
    assert_eq!(u.description, "d");
    assert_eq!(
        u.metadata,
        BTreeMap::from([("b".into(), "two".into()), ("c".into(), "3".into())])
    );
    assert!(u.updated_at > s.updated_at);
    // Nothing changes: updated_at stays.
    let same = e
        .update_store(
            &s.id,
            UpdateStore {
                name: Some("Prefs".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(same.updated_at, u.updated_at);
    // "" clears the description.
    let cleared = e
        .update_store(
            &s.id,
            UpdateStore {
                description: Some(String::new()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(cleared.description, "");
    // The patched result must still have at most 16 pairs.
    let many: BTreeMap<String, Option<String>> = (0..15)
        .map(|i| (format!("k{i}"), Some("v".into())))
        .collect();
    let err = e
        .update_store(
            &s.id,
            UpdateStore {
                metadata: Some(many),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(kind(&err), ("invalid_request_error", 400));

    // Archive: sets archived_at and updated_at, idempotent, blocks updates.
    let a = e.archive_store(&s.id).await.unwrap();
    assert!(a.archived_at.is_some());
    assert_eq!(a.archived_at, Some(a.updated_at));
    assert_eq!(e.archive_store(&s.id).await.unwrap(), a);
    let err = e
        .update_store(
            &s.id,
            UpdateStore {
                name: Some("x".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(kind(&err), ("invalid_request_error", 400));
    assert_eq!(e.retrieve_store(&s.id).await.unwrap(), a);

    // Delete (allowed when archived); afterwards everything is gone.
    let d = e.delete_store(&s.id).await.unwrap();
    assert_eq!(d.id, s.id);
    for err in [
        e.retrieve_store(&s.id).await.unwrap_err(),
        e.delete_store(&s.id).await.unwrap_err(),
        e.archive_store(&s.id).await.unwrap_err(),
    ] {
        assert_eq!(kind(&err), ("not_found_error", 404));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_field_limits() {
    let e = engine().await;
    let bad = [
        CreateStore {
            name: String::new(),
            ..Default::default()
        },
        CreateStore {
            name: "n".repeat(256),
            ..Default::default()
        },
        CreateStore {
            name: "a\u{7}".into(),
            ..Default::default()
        },
        CreateStore {
            name: "n".into(),
            description: Some("d".repeat(1025)),
            ..Default::default()
        },
        CreateStore {
            name: "n".into(),
            metadata: Some((0..17).map(|i| (format!("k{i}"), "v".into())).collect()),
            ..Default::default()
        },
        CreateStore {
            name: "n".into(),
            metadata: Some(BTreeMap::from([("k".repeat(65), "v".into())])),
            ..Default::default()
        },
    ];
    for params in bad {
        let err = e.create_store(params.clone()).await.unwrap_err();
        assert_eq!(kind(&err), ("invalid_request_error", 400), "{params:?}");
    }
    e.create_store(CreateStore {
        name: "n".repeat(255),
        description: Some("d".repeat(1024)),
        ..Default::default()
    })
    .await
    .unwrap();
    for id in ["memstore_nope", "nope", "", "memstore_../x"] {
        assert_eq!(kind(&e.retrieve_store(id).await.unwrap_err()).1, 404);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_stores_order_filters_pagination() {
    let e = engine().await;
    let mut ids = Vec::new();
    for i in 0..7 {
        ids.push(
            e.create_store(CreateStore {
                name: format!("s{i}"),
                ..Default::default()
            })
            .await
            .unwrap(),
        );
    }
    e.archive_store(&ids[3].id).await.unwrap();
    let mut seen = Vec::new();
    let mut page = None;
    loop {
        let p = e
            .list_stores(ListStores {
                limit: Some(2),
                page: page.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(p.data.len() <= 2);
        seen.extend(p.data.iter().map(|s| s.name.clone()));
        match p.next_page {
            Some(next) => page = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["s6", "s5", "s4", "s2", "s1", "s0"]);
    let all = e
        .list_stores(ListStores {
            include_archived: true,
            limit: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(all.data.len(), 7);
    assert_eq!(all.next_page, None);
    let window = e
        .list_stores(ListStores {
            created_at_gte: Some(ids[1].created_at),
            created_at_lte: Some(ids[2].created_at),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        window
            .data
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["s2", "s1"]
    );
    for limit in [0, 101, -1] {
        let err = e
            .list_stores(ListStores {
                limit: Some(limit),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(kind(&err).1, 400);
    }
    let err = e
        .list_stores(ListStores {
            page: Some("page_garbage".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(kind(&err).1, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_memory_hash_size_version_and_never_overwrites() {
    let e = engine().await;
    let s = store(&e).await;
    let actor = Some(Actor::api_key("apikey_1"));
    let m = e
        .create_memory(&s, "/notes/a.md", "héllo", actor.clone())
        .await
        .unwrap();
    assert!(m.id.starts_with("mem_"));
    assert_eq!(m.content.as_deref(), Some("héllo"));
    assert_eq!(m.content_size_bytes, 6);
    // Known SHA-256 vectors: of "abc" and of the empty string (no normalization).
    let abc = e.create_memory(&s, "/abc", "abc", None).await.unwrap();
    assert_eq!(
        abc.content_sha256,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let empty = e.create_memory(&s, "/empty", "", None).await.unwrap();
    assert_eq!(
        empty.content_sha256,
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(empty.content_size_bytes, 0);

    let v = e.retrieve_version(&s, &m.memory_version_id).await.unwrap();
    assert_eq!(v.operation, Operation::Created);
    assert_eq!(v.created_by, actor);
    assert_eq!(v.memory_id, m.id);
    assert_eq!(v.path.as_deref(), Some("/notes/a.md"));
    assert_eq!(v.content.as_deref(), Some("héllo"));
    assert_eq!(v.content_sha256.as_deref(), Some(m.content_sha256.as_str()));
    assert_eq!(v.created_at, m.created_at);

    // Same path: 409 with the conflicting id; nothing changed.
    let err = e
        .create_memory(&s, "/notes/a.md", "other", None)
        .await
        .unwrap_err();
    match &err {
        StoreError::PathConflict {
            conflicting_memory_id,
            conflicting_path,
            ..
        } => {
            assert_eq!(conflicting_memory_id, &m.id);
            assert_eq!(conflicting_path, "/notes/a.md");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(kind(&err), ("memory_path_conflict_error", 409));
    assert_eq!(
        e.retrieve_memory(&s, &m.id)
            .await
            .unwrap()
            .content
            .as_deref(),
        Some("héllo")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn occupancy_rule_ancestors_and_descendants() {
    let e = engine().await;
    let s = store(&e).await;
    let deep = e.create_memory(&s, "/a/b/c.md", "x", None).await.unwrap();
    for p in ["/a", "/a/b", "/a/b/c.md/d", "/a/b/c.md/d/e"] {
        match e.create_memory(&s, p, "y", None).await.unwrap_err() {
            StoreError::PathConflict {
                conflicting_memory_id,
                conflicting_path,
                ..
            } => {
                assert_eq!(conflicting_memory_id, deep.id, "{p}");
                assert_eq!(conflicting_path, "/a/b/c.md");
            }
            other => panic!("{p}: {other:?}"),
        }
    }
    // Siblings and look-alike names are fine (whole segments only).
    for p in ["/a/b/c.mdx", "/a/bb", "/a/b/d", "/ab"] {
        e.create_memory(&s, p, "y", None).await.unwrap();
    }
    // Rename onto an ancestor of another memory: 409; onto its own ancestor: fine.
    let other = e.create_memory(&s, "/z/q", "q", None).await.unwrap();
    let err = e
        .update_memory(&s, &other.id, upd(None, Some("/a/b"), None), None)
        .await
        .unwrap_err();
    assert_eq!(kind(&err), ("memory_path_conflict_error", 409));
    let moved = e
        .update_memory(&s, &other.id, upd(None, Some("/z"), None), None)
        .await
        .unwrap();
    assert_eq!(moved.path, "/z");
    let err = e
        .update_memory(&s, &other.id, upd(None, Some("/a/b/c.md"), None), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::PathConflict { ref conflicting_memory_id, .. } if *conflicting_memory_id == deep.id)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_and_content_limits() {
    let e = engine().await;
    let s = store(&e).await;
    for p in [
        "",
        "a",
        "/",
        "/a/",
        "//a",
        "/a/./b",
        "/a/../b",
        "/a\u{0}",
        "/a\u{200d}",
        "/e\u{301}",
    ] {
        let err = e.create_memory(&s, p, "x", None).await.unwrap_err();
        assert_eq!(kind(&err), ("invalid_request_error", 400), "{p:?}");
    }
    let too_deep = "/d".repeat(21);
    assert_eq!(
        kind(&e.create_memory(&s, &too_deep, "x", None).await.unwrap_err()).1,
        400
    );
    e.create_memory(&s, &"/d".repeat(20), "x", None)
        .await
        .unwrap();
    let long = format!("/{}", "p".repeat(1024));
    assert_eq!(
        kind(&e.create_memory(&s, &long, "x", None).await.unwrap_err()).1,
        400
    );
    e.create_memory(&s, &format!("/{}", "p".repeat(1023)), "x", None)
        .await
        .unwrap();
    // Case-sensitive paths.
    e.create_memory(&s, "/Case", "x", None).await.unwrap();
    e.create_memory(&s, "/case", "x", None).await.unwrap();

    let max = "x".repeat(102_400);
    let m = e.create_memory(&s, "/big", &max, None).await.unwrap();
    assert_eq!(m.content_size_bytes, 102_400);
    let over = "x".repeat(102_401);
    assert_eq!(
        kind(
            &e.create_memory(&s, "/bigger", &over, None)
                .await
                .unwrap_err()
        )
        .1,
        400
    );
    let err = e
        .update_memory(&s, &m.id, upd(Some(&over), None, None), None)
        .await
        .unwrap_err();
    assert_eq!(kind(&err).1, 400);
    // Neither content nor path: 400.
    let err = e
        .update_memory(&s, &m.id, upd(None, None, None), None)
        .await
        .unwrap_err();
    assert_eq!(kind(&err).1, 400);
    // A malformed precondition hash: 400.
    let err = e
        .update_memory(&s, &m.id, upd(Some("y"), None, Some("ABC")), None)
        .await
        .unwrap_err();
    assert_eq!(kind(&err).1, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_count_limit() {
    let e = engine_with(EngineOptions::default().max_memories_per_store(3)).await;
    let s = store(&e).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(
            e.create_memory(&s, &format!("/m{i}"), "x", None)
                .await
                .unwrap()
                .id,
        );
    }
    let err = e.create_memory(&s, "/m3", "x", None).await.unwrap_err();
    assert_eq!(kind(&err), ("invalid_request_error", 400));
    assert!(err.to_string().contains('3'), "{err}");
    // Existing memories stay editable; a deletion frees a slot.
    e.update_memory(&s, &ids[0], upd(Some("y"), Some("/renamed"), None), None)
        .await
        .unwrap();
    e.delete_memory(&s, &ids[1], None, None).await.unwrap();
    e.create_memory(&s, "/m3", "x", None).await.unwrap();
    assert_eq!(EngineOptions::default().max_memories_per_store, 2000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_precondition_retry_and_noop_rules() {
    let e = engine().await;
    let s = store(&e).await;
    let m = e.create_memory(&s, "/p.md", "one", None).await.unwrap();
    let versions = |e: &MemoryStores, s: &str, id: &str| {
        let (e, s, id) = (e.clone(), s.to_owned(), id.to_owned());
        async move {
            e.list_versions(
                &s,
                ListVersions {
                    memory_id: Some(id),
                    view: View::Full,
                    ..Default::default()
                },
            )
            .await
            .unwrap()
            .data
        }
    };

    // Precondition holds: one modified version, by the actor.
    let actor = Some(Actor::session("sesn_1"));
    let m2 = e
        .update_memory(
            &s,
            &m.id,
            upd(Some("two"), None, Some(&m.content_sha256)),
            actor.clone(),
        )
        .await
        .unwrap();
    assert_eq!(m2.id, m.id);
    assert_ne!(m2.memory_version_id, m.memory_version_id);
    assert_ne!(m2.content_sha256, m.content_sha256);
    assert!(m2.updated_at > m.updated_at);
    assert_eq!(m2.created_at, m.created_at);
    let vs = versions(&e, &s, &m.id).await;
    assert_eq!(vs.len(), 2);
    assert_eq!(vs[0].operation, Operation::Modified);
    assert_eq!(vs[0].id, m2.memory_version_id);
    assert_eq!(vs[0].created_by, actor);

    // Stale precondition, different request: 409, nothing written.
    let err = e
        .update_memory(
            &s,
            &m.id,
            upd(Some("three"), None, Some(&m.content_sha256)),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(kind(&err), ("memory_precondition_failed_error", 409));
    assert_eq!(versions(&e, &s, &m.id).await.len(), 2);

    // Stale precondition, but the state already is what was asked (a retry): 200, no version.
    let again = e
        .update_memory(
            &s,
            &m.id,
            upd(Some("two"), None, Some(&m.content_sha256)),
            None,
        )
        .await
        .unwrap();
    assert_eq!(again, m2);
    let again = e
        .update_memory(
            &s,
            &m.id,
            upd(Some("two"), Some("/p.md"), Some(&m.content_sha256)),
            None,
        )
        .await
        .unwrap();
    assert_eq!(again, m2);
    // ... but a path that differs is not a retry.
    let err = e
        .update_memory(
            &s,
            &m.id,
            upd(Some("two"), Some("/q.md"), Some(&m.content_sha256)),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(kind(&err).1, 409);

    // No-op without precondition: 200, unchanged, no version.
    for req in [
        upd(Some("two"), None, None),
        upd(None, Some("/p.md"), None),
        upd(Some("two"), Some("/p.md"), Some(&m2.content_sha256)),
    ] {
        let same = e.update_memory(&s, &m.id, req, None).await.unwrap();
        assert_eq!(same, m2);
    }
    assert_eq!(versions(&e, &s, &m.id).await.len(), 2);

    // Rename with a precondition on the current content (not the destination); keeps the id.
    let r = e
        .update_memory(
            &s,
            &m.id,
            upd(None, Some("/dir/p.md"), Some(&m2.content_sha256)),
            None,
        )
        .await
        .unwrap();
    assert_eq!(r.id, m.id);
    assert_eq!(r.path, "/dir/p.md");
    assert_eq!(r.content_sha256, m2.content_sha256);
    let vs = versions(&e, &s, &m.id).await;
    assert_eq!(vs.len(), 3);
    assert_eq!(vs[0].path.as_deref(), Some("/dir/p.md"));
    assert_eq!(vs[0].content.as_deref(), Some("two"));
    assert!(e.memory_at_path(&s, "/p.md").await.unwrap().is_none());
    assert_eq!(
        e.memory_at_path(&s, "/dir/p.md").await.unwrap().unwrap().id,
        m.id
    );

    // Unknown memory: 404; a memory of another store: 404.
    let other = store(&e).await;
    for (st, id) in [(&s, "mem_unknown"), (&other, m.id.as_str())] {
        let err = e
            .update_memory(st, id, upd(Some("x"), None, None), None)
            .await
            .unwrap_err();
        assert_eq!(kind(&err).1, 404);
        assert_eq!(kind(&e.retrieve_memory(st, id).await.unwrap_err()).1, 404);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_with_expected_sha_and_versions_survive() {
    let e = engine().await;
    let s = store(&e).await;
    let m = e.create_memory(&s, "/gone.md", "bye", None).await.unwrap();
    let err = e
        .delete_memory(&s, &m.id, Some(&"0".repeat(64)), None)
        .await
        .unwrap_err();
    assert_eq!(kind(&err), ("memory_precondition_failed_error", 409));
    assert!(e.retrieve_memory(&s, &m.id).await.is_ok());
    assert_eq!(
        kind(
            &e.delete_memory(&s, &m.id, Some("zz"), None)
                .await
                .unwrap_err()
        )
        .1,
        400
    );
    let actor = Some(Actor::user("user_1"));
    let d = e
        .delete_memory(&s, &m.id, Some(&m.content_sha256), actor.clone())
        .await
        .unwrap();
    assert_eq!(d.id, m.id);
    assert_eq!(
        kind(&e.retrieve_memory(&s, &m.id).await.unwrap_err()).1,
        404
    );
    assert_eq!(
        kind(&e.delete_memory(&s, &m.id, None, None).await.unwrap_err()).1,
        404
    );
    let vs = e
        .list_versions(
            &s,
            ListVersions {
                memory_id: Some(m.id.clone()),
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(
        vs.iter().map(|v| v.operation).collect::<Vec<_>>(),
        [Operation::Deleted, Operation::Created]
    );
    let del = &vs[0];
    assert_eq!(del.created_by, actor);
    assert_eq!(del.path.as_deref(), Some("/gone.md"));
    assert_eq!(
        (&del.content, &del.content_sha256, del.content_size_bytes),
        (&None, &None, None)
    );
    // The preceding version records the deleted content's hash and size.
    assert_eq!(
        vs[1].content_sha256.as_deref(),
        Some(m.content_sha256.as_str())
    );
    assert_eq!(vs[1].content_size_bytes, Some(3));
    // The path is free again: a new memory, a new id.
    let again = e.create_memory(&s, "/gone.md", "back", None).await.unwrap();
    assert_ne!(again.id, m.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_depth_prefix_and_rollups() {
    let e = engine().await;
    let s = store(&e).await;
    for p in [
        "/b.md",
        "/a/x.md",
        "/a/deep/y.md",
        "/a/deep/z/w.md",
        "/a-b.md",
        "/c/1",
        "/notes/todo.md",
        "/notes-archive/todo.md",
        "/a/y.md",
    ] {
        e.create_memory(&s, p, p, None).await.unwrap();
    }
    let list =
        |prefix: Option<&str>, depth: Option<i64>, limit: Option<i64>, page: Option<String>| {
            let e = e.clone();
            let s = s.clone();
            let params = ListMemories {
                path_prefix: prefix.map(Into::into),
                depth,
                limit,
                page,
                view: View::Basic,
            };
            async move { e.list_memories(&s, params).await }
        };
    // Whole tree in byte order of path.
    let all = list(None, None, Some(100), None).await.unwrap();
    assert_eq!(
        paths(&all.data),
        [
            "/a-b.md",
            "/a/deep/y.md",
            "/a/deep/z/w.md",
            "/a/x.md",
            "/a/y.md",
            "/b.md",
            "/c/1",
            "/notes-archive/todo.md",
            "/notes/todo.md"
        ]
    );
    assert_eq!(
        paths(
            &list(Some("/"), Some(0), Some(100), None)
                .await
                .unwrap()
                .data
        ),
        paths(&all.data)
    );
    // Basic view: no content, hash and size present.
    match &all.data[0] {
        MemoryListItem::Memory(m) => {
            assert_eq!(m.content, None);
            assert_eq!(m.content_size_bytes, 7);
        }
        other => panic!("{other:?}"),
    }
    // depth 1 at the root: prefixes interleaved in path order.
    let root = list(Some("/"), Some(1), None, None).await.unwrap();
    assert_eq!(
        paths(&root.data),
        [
            "/a-b.md",
            "prefix:/a/",
            "/b.md",
            "prefix:/c/",
            "prefix:/notes-archive/",
            "prefix:/notes/"
        ]
    );
    // Whole segments: /notes/ does not match /notes-archive/.
    assert_eq!(
        paths(&list(Some("/notes/"), None, None, None).await.unwrap().data),
        ["/notes/todo.md"]
    );
    let a1 = list(Some("/a/"), Some(1), None, None).await.unwrap();
    assert_eq!(paths(&a1.data), ["prefix:/a/deep/", "/a/x.md", "/a/y.md"]);
    let deep = list(Some("/a/deep/"), Some(1), None, None).await.unwrap();
    assert_eq!(paths(&deep.data), ["/a/deep/y.md", "prefix:/a/deep/z/"]);
    assert!(
        list(Some("/nothing/"), Some(1), None, None)
            .await
            .unwrap()
            .data
            .is_empty()
    );
    // Prefixes count toward limit; pages neither repeat nor skip.
    let mut got = Vec::new();
    let mut page = None;
    loop {
        let p = list(Some("/"), Some(1), Some(2), page).await.unwrap();
        assert!(p.data.len() <= 2);
        got.extend(paths(&p.data));
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    assert_eq!(got, paths(&root.data));
    // Bad parameters: 400.
    for (prefix, depth, limit) in [
        (Some("/a"), None, None),
        (Some("a/"), None, None),
        (None, Some(2), None),
        (None, Some(-1), None),
        (None, None, Some(0)),
        (None, None, Some(101)),
    ] {
        let err = list(prefix, depth, limit, None).await.unwrap_err();
        assert_eq!(kind(&err).1, 400, "{prefix:?} {depth:?} {limit:?}");
    }
    // A token of another listing: 400.
    let p = list(Some("/"), Some(0), Some(1), None).await.unwrap();
    let err = list(Some("/a/"), Some(0), Some(1), p.next_page)
        .await
        .unwrap_err();
    assert_eq!(kind(&err).1, 400);
    // Full view caps a page at 20 and carries content.
    for i in 0..25 {
        e.create_memory(&s, &format!("/many/{i:02}"), "c", None)
            .await
            .unwrap();
    }
    let full = e
        .list_memories(
            &s,
            ListMemories {
                path_prefix: Some("/many/".into()),
                limit: Some(100),
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(full.data.len(), 20);
    assert!(full.next_page.is_some());
    assert!(
        matches!(&full.data[0], MemoryListItem::Memory(m) if m.content.as_deref() == Some("c"))
    );
    let default = e
        .list_memories(
            &s,
            ListMemories {
                path_prefix: Some("/many/".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(default.data.len(), 20);
    assert_eq!(
        kind(
            &e.list_memories("memstore_x", ListMemories::default())
                .await
                .unwrap_err()
        )
        .1,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pagination_under_concurrent_inserts_neither_repeats_nor_skips() {
    let e = engine().await;
    let s = store(&e).await;
    let mut originals = Vec::new();
    for i in 0..30 {
        let p = format!("/k/{:03}", i * 10);
        e.create_memory(&s, &p, "x", None).await.unwrap();
        originals.push(p);
    }
    let mut seen = Vec::new();
    let mut page = None;
    let mut round = 0;
    loop {
        let p = e
            .list_memories(
                &s,
                ListMemories {
                    limit: Some(4),
                    page,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        seen.extend(paths(&p.data));
        // Insert between pages, before and after the cursor.
        for j in 0..2 {
            e.create_memory(
                &s,
                &format!("/k/{:03}", round * 37 % 300 + j * 151 + 1),
                "n",
                None,
            )
            .await
            .ok();
        }
        round += 1;
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "a path repeated: {seen:?}");
    assert_eq!(sorted, seen, "not in order");
    for p in &originals {
        assert!(seen.contains(p), "{p} skipped");
    }

    // Versions too: newest first, no repeats while new versions are written.
    let mut before = 0;
    let mut page = None;
    loop {
        let p = e
            .list_versions(
                &s,
                ListVersions {
                    limit: Some(100),
                    page,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        before += p.data.len();
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    let mut vseen = Vec::new();
    let mut page = None;
    loop {
        let p = e
            .list_versions(
                &s,
                ListVersions {
                    limit: Some(7),
                    page,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        vseen.extend(p.data.iter().map(|v| (v.created_at, v.id.clone())));
        e.create_memory(&s, &format!("/v/{}", vseen.len()), "n", None)
            .await
            .unwrap();
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    let mut sorted = vseen.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    sorted.dedup();
    assert_eq!(sorted, vseen);
    assert!(vseen.len() >= before, "{} < {before}", vseen.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_listing_filters_and_views() {
    let e = engine().await;
    let s = store(&e).await;
    let a = e
        .create_memory(&s, "/a", "a1", Some(Actor::session("sesn_A")))
        .await
        .unwrap();
    let b = e
        .create_memory(&s, "/b", "b1", Some(Actor::api_key("apikey_B")))
        .await
        .unwrap();
    e.update_memory(
        &s,
        &a.id,
        upd(Some("a2"), None, None),
        Some(Actor::session("sesn_A")),
    )
    .await
    .unwrap();
    e.delete_memory(
        &s,
        &b.id,
        None,
        Some(Actor::ServiceAccount {
            service_account_id: "svac_C".into(),
        }),
    )
    .await
    .unwrap();
    e.create_memory(&s, "/c", "c1", None).await.unwrap();

    let ops = |params: ListVersions| {
        let (e, s) = (e.clone(), s.clone());
        async move {
            e.list_versions(&s, params)
                .await
                .unwrap()
                .data
                .iter()
                .map(|v| (v.path.clone().unwrap_or_default(), v.operation))
                .collect::<Vec<_>>()
        }
    };
    use Operation::*;
    assert_eq!(
        ops(ListVersions::default()).await,
        [
            ("/c".into(), Created),
            ("/b".into(), Deleted),
            ("/a".into(), Modified),
            ("/b".into(), Created),
            ("/a".into(), Created)
        ]
    );
    assert_eq!(
        ops(ListVersions {
            memory_id: Some(b.id.clone()),
            ..Default::default()
        })
        .await,
        [("/b".into(), Deleted), ("/b".into(), Created)]
    );
    assert_eq!(
        ops(ListVersions {
            operation: Some(Created),
            ..Default::default()
        })
        .await
        .len(),
        3
    );
    assert_eq!(
        ops(ListVersions {
            session_id: Some("sesn_A".into()),
            ..Default::default()
        })
        .await,
        [("/a".into(), Modified), ("/a".into(), Created)]
    );
    assert_eq!(
        ops(ListVersions {
            api_key_id: Some("apikey_B".into()),
            ..Default::default()
        })
        .await,
        [("/b".into(), Created)]
    );
    assert_eq!(
        ops(ListVersions {
            service_account_id: Some("svac_C".into()),
            ..Default::default()
        })
        .await,
        [("/b".into(), Deleted)]
    );
    assert!(
        ops(ListVersions {
            session_id: Some("sesn_A".into()),
            api_key_id: Some("apikey_B".into()),
            ..Default::default()
        })
        .await
        .is_empty()
    );
    let all = e
        .list_versions(&s, ListVersions::default())
        .await
        .unwrap()
        .data;
    let t = all[2].created_at;
    assert_eq!(
        ops(ListVersions {
            created_at_gte: Some(t),
            ..Default::default()
        })
        .await
        .len(),
        3
    );
    assert_eq!(
        ops(ListVersions {
            created_at_lte: Some(t),
            ..Default::default()
        })
        .await
        .len(),
        3
    );
    assert!(
        ops(ListVersions {
            created_at_gte: Some(Timestamp::from_micros(t.as_micros() + 1)),
            created_at_lte: Some(t),
            ..Default::default()
        })
        .await
        .is_empty()
    );
    // Basic view: no content, hash present; full view: content.
    assert!(all.iter().all(|v| v.content.is_none()));
    assert!(all[4].content_sha256.is_some());
    let full = e
        .list_versions(
            &s,
            ListVersions {
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(full[4].content.as_deref(), Some("a1"));
    assert_eq!(
        kind(&e.retrieve_version(&s, "memver_nope").await.unwrap_err()).1,
        404
    );
    let other = store(&e).await;
    assert_eq!(
        kind(&e.retrieve_version(&other, &all[0].id).await.unwrap_err()).1,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redaction_head_rule() {
    let e = engine().await;
    let s = store(&e).await;
    let m = e
        .create_memory(&s, "/secret.md", "password=hunter2", None)
        .await
        .unwrap();
    let first = m.memory_version_id.clone();
    // The head of a live memory: 409 conflict_error.
    let err = e.redact_version(&s, &first, None).await.unwrap_err();
    assert_eq!(kind(&err), ("conflict_error", 409));
    let m2 = e
        .update_memory(&s, &m.id, upd(Some("password=<removed>"), None, None), None)
        .await
        .unwrap();
    let by = Some(Actor::api_key("apikey_admin"));
    let r = e.redact_version(&s, &first, by.clone()).await.unwrap();
    assert!(r.redacted_at.is_some());
    assert_eq!(r.redacted_by, by);
    assert_eq!(
        (&r.path, &r.content, &r.content_sha256, r.content_size_bytes),
        (&None, &None, &None, None)
    );
    assert_eq!(r.operation, Operation::Created);
    assert_eq!(r.created_at, m.created_at);
    // Retrieve a redacted version: fine, fields null; redacting again: unchanged.
    assert_eq!(e.retrieve_version(&s, &first).await.unwrap(), r);
    assert_eq!(
        e.redact_version(&s, &first, Some(Actor::user("user_x")))
            .await
            .unwrap(),
        r
    );
    let full = e
        .list_versions(
            &s,
            ListVersions {
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    assert!(
        !full
            .iter()
            .any(|v| v.content.as_deref() == Some("password=hunter2"))
    );
    // After deletion the last content version is no longer a live head: redactable.
    e.delete_memory(&s, &m.id, None, None).await.unwrap();
    let r2 = e
        .redact_version(&s, &m2.memory_version_id, None)
        .await
        .unwrap();
    assert!(r2.redacted_at.is_some());
    assert_eq!(
        kind(&e.redact_version(&s, "memver_x", None).await.unwrap_err()).1,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archived_store_rules() {
    let e = engine().await;
    let s = store(&e).await;
    let m = e.create_memory(&s, "/keep.md", "v1", None).await.unwrap();
    let m2 = e
        .update_memory(&s, &m.id, upd(Some("v2"), None, None), None)
        .await
        .unwrap();
    let doomed = e.create_memory(&s, "/doomed.md", "x", None).await.unwrap();
    e.archive_store(&s).await.unwrap();
    // Writes refused with 400.
    let err = e.create_memory(&s, "/new.md", "x", None).await.unwrap_err();
    assert_eq!(kind(&err), ("invalid_request_error", 400));
    assert!(err.to_string().contains("archived"));
    let err = e
        .update_memory(&s, &m.id, upd(Some("v3"), None, None), None)
        .await
        .unwrap_err();
    assert_eq!(kind(&err), ("invalid_request_error", 400));
    // Reads, deletes, redactions still work.
    assert_eq!(
        e.retrieve_memory(&s, &m.id)
            .await
            .unwrap()
            .content
            .as_deref(),
        Some("v2")
    );
    assert_eq!(
        e.list_memories(&s, ListMemories::default())
            .await
            .unwrap()
            .data
            .len(),
        2
    );
    e.redact_version(&s, &m.memory_version_id, None)
        .await
        .unwrap();
    e.delete_memory(&s, &doomed.id, None, None).await.unwrap();
    assert_eq!(m2.content.as_deref(), Some("v2"));
    // Listing stores hides it unless asked.
    assert!(
        e.list_stores(ListStores::default())
            .await
            .unwrap()
            .data
            .is_empty()
    );
    // Store deletion removes memories and versions.
    e.delete_store(&s).await.unwrap();
    assert_eq!(
        kind(
            &e.list_versions(&s, ListVersions::default())
                .await
                .unwrap_err()
        )
        .1,
        404
    );
    assert_eq!(
        kind(&e.retrieve_memory(&s, &m.id).await.unwrap_err()).1,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_write_keeps_the_api_key_that_sent_it() {
    let e = engine().await;
    let s = store(&e).await;
    let by = Actor::session_via_key("sesn_agent", "apikey_ops");
    let m = e
        .create_memory(&s, "/a", "a", Some(by.clone()))
        .await
        .unwrap();
    e.create_memory(&s, "/b", "b", Some(Actor::session("sesn_agent")))
        .await
        .unwrap();
    e.create_memory(&s, "/c", "c", Some(Actor::api_key("apikey_ops")))
        .await
        .unwrap();
    e.create_memory(&s, "/d", "d", Some(Actor::api_key("apikey_other")))
        .await
        .unwrap();
    let v = e.retrieve_version(&s, &m.memory_version_id).await.unwrap();
    assert_eq!(v.created_by, Some(by.clone()));
    assert_eq!(
        serde_json::to_value(&v.created_by).unwrap(),
        serde_json::json!({"type": "session_actor", "session_id": "sesn_agent", "api_key_id": "apikey_ops"})
    );
    // Without a key the hosted shape is unchanged.
    assert_eq!(
        serde_json::to_value(Actor::session("sesn_x")).unwrap(),
        serde_json::json!({"type": "session_actor", "session_id": "sesn_x"})
    );
    let paths_of = |params: ListVersions| {
        let (e, s) = (e.clone(), s.clone());
        async move {
            let mut p: Vec<String> = e
                .list_versions(&s, params)
                .await
                .unwrap()
                .data
                .into_iter()
                .map(|v| v.path.unwrap())
                .collect();
            p.sort();
            p
        }
    };
    // The key's writes: its own and the session's it sent; the session's: with or without.
    let by_key = paths_of(ListVersions {
        api_key_id: Some("apikey_ops".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(by_key, ["/a", "/c"]);
    let by_session = paths_of(ListVersions {
        session_id: Some("sesn_agent".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(by_session, ["/a", "/b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_their_reason() {
    use memory_store::Reason;
    let e = engine_with(EngineOptions::default().max_memories_per_store(1)).await;
    let s = store(&e).await;
    let reason = |r: Result<memory_store::Memory, StoreError>| r.unwrap_err().reason();
    assert_eq!(
        reason(e.create_memory(&s, "a", "", None).await),
        Reason::PathInvalid
    );
    assert_eq!(
        reason(e.create_memory(&s, "/e\u{301}", "", None).await),
        Reason::PathNotNfc
    );
    assert_eq!(
        reason(e.create_memory(&s, "/a\u{200b}", "", None).await),
        Reason::PathFormatCharacter
    );
    assert_eq!(
        reason(e.create_memory(&s, "/a\u{7}", "", None).await),
        Reason::PathControlCharacter
    );
    let big = "x".repeat(memory_store::MAX_CONTENT_BYTES + 1);
    assert_eq!(
        reason(e.create_memory(&s, "/big", &big, None).await),
        Reason::ContentTooLarge
    );
    let m = e.create_memory(&s, "/a", "a", None).await.unwrap();
    assert_eq!(
        reason(e.create_memory(&s, "/a", "", None).await),
        Reason::PathConflict
    );
    assert_eq!(
        reason(e.create_memory(&s, "/b", "", None).await),
        Reason::StoreFull
    );
    assert_eq!(
        reason(
            e.update_memory(&s, &m.id, upd(Some("b"), None, Some(&"0".repeat(64))), None)
                .await
        ),
        Reason::PreconditionFailed
    );
    let head = e.redact_version(&s, &m.memory_version_id, None).await;
    assert_eq!(head.unwrap_err().reason(), Reason::HeadVersion);
    e.archive_store(&s).await.unwrap();
    assert_eq!(
        reason(
            e.update_memory(&s, &m.id, upd(Some("c"), None, None), None)
                .await
        ),
        Reason::StoreArchived
    );
    assert_eq!(
        e.retrieve_memory(&s, "mem_nope")
            .await
            .unwrap_err()
            .reason(),
        Reason::NotFound
    );
    // On the wire, snake_case; an unknown one decodes as Unknown.
    assert_eq!(
        serde_json::to_value(Reason::StoreArchived).unwrap(),
        "store_archived"
    );
    assert_eq!(Reason::StoreArchived.as_str(), "store_archived");
    assert_eq!(
        serde_json::from_value::<Reason>(serde_json::json!("from_the_future")).unwrap(),
        Reason::Unknown
    );
}

#[test]
fn preconditions_are_validated_when_parsed() {
    let sha = "a".repeat(64);
    let parse = |v: serde_json::Value| serde_json::from_value::<UpdateMemory>(v);
    let ok = parse(serde_json::json!({"content": "x", "precondition": {"type": "content_sha256", "content_sha256": sha}})).unwrap();
    assert_eq!(ok.precondition.unwrap().content_sha256, sha);
    for (bad, says) in [
        (
            serde_json::json!({"content_sha256": sha}),
            "precondition.type is required",
        ),
        (
            serde_json::json!({"type": "etag", "content_sha256": sha}),
            "must be \"content_sha256\"",
        ),
        (
            serde_json::json!({"type": null, "content_sha256": sha}),
            "must be \"content_sha256\"",
        ),
        (
            serde_json::json!({"type": "content_sha256", "content_sha256": sha, "extra": 1}),
            "unknown field `extra`",
        ),
        (
            serde_json::json!({"type": "content_sha256"}),
            "content_sha256 is required",
        ),
        (
            serde_json::json!({"type": "content_sha256", "content_sha256": 5}),
            "must be a string",
        ),
        (serde_json::json!("content_sha256"), "map"),
    ] {
        let e = parse(serde_json::json!({"content": "x", "precondition": bad})).unwrap_err();
        assert!(e.to_string().contains(says), "{bad}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_belong_to_the_workspace_that_made_them() {
    let e = engine().await;
    let (a, b) = (
        e.in_workspace(Some("wrkspc_a".into())),
        e.in_workspace(Some("wrkspc_b".into())),
    );
    assert_eq!(e.workspace(), None);
    assert_eq!(a.workspace(), Some("wrkspc_a"));
    let in_a = store(&a).await;
    let in_default = store(&e).await;
    assert_eq!(
        a.retrieve_store(&in_a)
            .await
            .unwrap()
            .workspace_id
            .as_deref(),
        Some("wrkspc_a")
    );
    assert_eq!(
        e.retrieve_store(&in_default).await.unwrap().workspace_id,
        None
    );
    let m = a
        .create_memory(&in_a, "/x.md", "secret", None)
        .await
        .unwrap();

    // From any other workspace (the default one included) the store does not exist.
    for other in [&b, &e] {
        let missing = |r: Result<(), StoreError>| {
            let err = r.unwrap_err();
            assert_eq!(kind(&err), ("not_found_error", 404), "{err}");
            assert_eq!(err.to_string(), format!("memory store {in_a} not found"));
        };
        missing(other.retrieve_store(&in_a).await.map(drop));
        missing(
            other
                .update_store(&in_a, UpdateStore::default())
                .await
                .map(drop),
        );
        missing(other.archive_store(&in_a).await.map(drop));
        missing(other.retrieve_memory(&in_a, &m.id).await.map(drop));
        missing(
            other
                .create_memory(&in_a, "/y.md", "", None)
                .await
                .map(drop),
        );
        missing(
            other
                .update_memory(&in_a, &m.id, upd(Some("z"), None, None), None)
                .await
                .map(drop),
        );
        missing(
            other
                .delete_memory(&in_a, &m.id, None, None)
                .await
                .map(drop),
        );
        missing(
            other
                .list_memories(&in_a, ListMemories::default())
                .await
                .map(drop),
        );
        missing(
            other
                .list_versions(&in_a, ListVersions::default())
                .await
                .map(drop),
        );
        missing(
            other
                .retrieve_version(&in_a, &m.memory_version_id)
                .await
                .map(drop),
        );
        missing(
            other
                .redact_version(&in_a, &m.memory_version_id, None)
                .await
                .map(drop),
        );
        missing(other.delete_store(&in_a).await.map(drop));
    }
    // Listing shows each workspace its own stores only.
    let ids = |p: memory_store::Page<memory_store::Store>| {
        p.data.into_iter().map(|s| s.id).collect::<Vec<_>>()
    };
    let all = ListStores {
        include_archived: true,
        ..Default::default()
    };
    assert_eq!(
        ids(a.list_stores(all.clone()).await.unwrap()),
        [in_a.as_str()]
    );
    assert_eq!(
        ids(e.list_stores(all.clone()).await.unwrap()),
        [in_default.as_str()]
    );
    assert!(b.list_stores(all).await.unwrap().data.is_empty());
    // Its own workspace still has everything.
    assert_eq!(
        a.retrieve_memory(&in_a, &m.id)
            .await
            .unwrap()
            .content
            .as_deref(),
        Some("secret")
    );
    a.delete_store(&in_a).await.unwrap();
}
