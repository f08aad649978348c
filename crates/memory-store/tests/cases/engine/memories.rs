//! Memories: create, the occupancy rule, limits, update and its preconditions, delete, and the
//! reasons refusals carry.

use super::*;

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
    assert_eq!(content_of(&e, &s, &m.id).await.as_deref(), Some("héllo"));
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
