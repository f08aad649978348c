//! Versions: listing with filters and views, redaction, and the actor (and API key) a write
//! records.

use super::*;

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
