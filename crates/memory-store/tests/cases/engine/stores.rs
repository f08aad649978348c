//! Stores: their lifecycle and metadata, field limits, listing, the archived store's rules and
//! workspaces.

use super::*;

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
    assert_eq!(content_of(&e, &s, &m.id).await.as_deref(), Some("v2"));
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
        content_of(&a, &in_a, &m.id).await.as_deref(),
        Some("secret")
    );
    a.delete_store(&in_a).await.unwrap();
}
