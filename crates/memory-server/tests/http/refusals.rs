//! Bad requests (400, 404, 413, never 500), deterministic refusals and their reasons,
//! preconditions, and the memory limit.

use super::*;

#[tokio::test]
async fn bad_requests_are_400_404_413_never_500() {
    let srv = start(ServerConfig::default().body_limit(200_000)).await;
    let a = srv.addr;
    let s = post(a, "/v1/memory_stores", &json!({"name": "x"})).await;
    let base = format!("/v1/memory_stores/{}", s.body["id"].as_str().unwrap());
    let cases: Vec<(&str, String, Vec<u8>, u16, &str)> = vec![
        (
            "POST",
            "/v1/memory_stores".into(),
            b"{not json".to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            "/v1/memory_stores".into(),
            b"".to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            "/v1/memory_stores".into(),
            br#"{"name": 5}"#.to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            "/v1/memory_stores".into(),
            br#"{"name": "x", "bogus": 1}"#.to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            "/v1/memory_stores".into(),
            br#"[1, 2]"#.to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            format!("{base}/memories"),
            br#"{"path": "/a"}"#.to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            format!("{base}/memories"),
            br#"{"path": "/a", "content": null}"#.to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            format!("{base}/memories"),
            br#"{"path": "a", "content": ""}"#.to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            format!("{base}/memories"),
            br#"{"path": ["/a"], "content": ""}"#.to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            format!("{base}/memories"),
            format!(
                r#"{{"path": "/big", "content": "{}"}}"#,
                "x".repeat(102_401)
            )
            .into_bytes(),
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            format!("{base}/memories"),
            format!(
                r#"{{"path": "/big", "content": "{}"}}"#,
                "x".repeat(300_000)
            )
            .into_bytes(),
            413,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memories?depth=2"),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memories?depth=x"),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memories?path_prefix=/a"),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memories?limit=0"),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memories?view=huge"),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memories?page=garbage"),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memory_versions?operation=exploded"),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            "/v1/memory_stores?created_at%5Bgte%5D=yesterday".into(),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            "/v1/memory_stores?include_archived=maybe".into(),
            vec![],
            400,
            "invalid_request_error",
        ),
        (
            "POST",
            format!("{base}/memories/mem_nope"),
            br#"{"content": "x"}"#.to_vec(),
            404,
            "not_found_error",
        ),
        (
            "POST",
            format!("{base}/memories/mem_nope"),
            br#"{"content": "x", "precondition": {"type": "etag", "content_sha256": "x"}}"#
                .to_vec(),
            400,
            "invalid_request_error",
        ),
        (
            "GET",
            format!("{base}/memories/mem_nope"),
            vec![],
            404,
            "not_found_error",
        ),
        (
            "DELETE",
            format!("{base}/memories/mem_nope"),
            vec![],
            404,
            "not_found_error",
        ),
        (
            "GET",
            format!("{base}/memory_versions/memver_nope"),
            vec![],
            404,
            "not_found_error",
        ),
        (
            "POST",
            format!("{base}/memory_versions/memver_nope/redact"),
            vec![],
            404,
            "not_found_error",
        ),
        (
            "GET",
            "/v1/memory_stores/memstore_nope".into(),
            vec![],
            404,
            "not_found_error",
        ),
        (
            "GET",
            "/v1/memory_stores/memstore_nope/memories".into(),
            vec![],
            404,
            "not_found_error",
        ),
        ("GET", "/v1/nothing".into(), vec![], 404, "not_found_error"),
        ("PUT", base.clone(), vec![], 405, "invalid_request_error"),
    ];
    for (method, path, body, status, kind) in cases {
        let r = send(a, method, &path, &body, &[]).await;
        assert_eq!(r.status, status, "{method} {path}: {}", r.body);
        assert_eq!(r.error_type(), kind, "{method} {path}");
    }
}

#[tokio::test]
async fn deterministic_refusals_say_do_not_retry_and_carry_their_reason() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    let s = post(a, "/v1/memory_stores", &json!({"name": "r"})).await;
    let base = format!("/v1/memory_stores/{}", s.body["id"].as_str().unwrap());
    let m = post(
        a,
        &format!("{base}/memories"),
        &json!({"path": "/a", "content": "x"}),
    )
    .await;
    let mid = m.body["id"].as_str().unwrap().to_owned();
    let head = m.body["memory_version_id"].as_str().unwrap().to_owned();
    let conflict = post(
        a,
        &format!("{base}/memories"),
        &json!({"path": "/a", "content": "y"}),
    )
    .await;
    let pre = post(a, &format!("{base}/memories/{mid}"), &json!({"content": "z", "precondition": {"type": "content_sha256", "content_sha256": "0".repeat(64)}}))
    .await;
    let delete_pre = req(
        a,
        "DELETE",
        &format!(
            "{base}/memories/{mid}?expected_content_sha256={}",
            "0".repeat(64)
        ),
        None,
        &[],
    )
    .await;
    let redact_head = req(
        a,
        "POST",
        &format!("{base}/memory_versions/{head}/redact"),
        None,
        &[],
    )
    .await;
    for (reply, kind, reason) in [
        (&conflict, "memory_path_conflict_error", "path_conflict"),
        (
            &pre,
            "memory_precondition_failed_error",
            "precondition_failed",
        ),
        (
            &delete_pre,
            "memory_precondition_failed_error",
            "precondition_failed",
        ),
        (&redact_head, "conflict_error", "head_version"),
    ] {
        assert_eq!(reply.status, 409, "{:?}", reply.body);
        assert_eq!(reply.error_type(), kind);
        assert_eq!(reply.header("x-should-retry"), Some("false"), "{kind}");
        assert_eq!(reply.body["error"]["reason"], reason);
    }
    assert_eq!(
        conflict.body["error"]["conflicting_memory_id"],
        mid.as_str()
    );
    // 400s carry their reason too.
    let nfc = post(
        a,
        &format!("{base}/memories"),
        &json!({"path": "/cafe\u{301}", "content": ""}),
    )
    .await;
    assert_eq!(nfc.status, 400);
    assert_eq!(nfc.body["error"]["reason"], "path_not_nfc");
    req(a, "POST", &format!("{base}/archive"), None, &[]).await;
    let archived = post(
        a,
        &format!("{base}/memories/{mid}"),
        &json!({"content": "w"}),
    )
    .await;
    assert_eq!(archived.status, 400);
    assert_eq!(archived.body["error"]["reason"], "store_archived");
    // A success says nothing about retries.
    let ok = get(a, &format!("{base}/memories/{mid}")).await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.header("x-should-retry"), None);
}

#[tokio::test]
async fn preconditions_are_validated() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    let s = post(a, "/v1/memory_stores", &json!({"name": "p"})).await;
    let base = format!("/v1/memory_stores/{}", s.body["id"].as_str().unwrap());
    let m = post(
        a,
        &format!("{base}/memories"),
        &json!({"path": "/a", "content": "x"}),
    )
    .await;
    let url = format!("{base}/memories/{}", m.body["id"].as_str().unwrap());
    let sha = m.body["content_sha256"].as_str().unwrap().to_owned();
    for (pre, says) in [
        (
            json!({"type": "etag", "content_sha256": sha}),
            "precondition.type must be \"content_sha256\"",
        ),
        (
            json!({"content_sha256": sha}),
            "precondition.type is required",
        ),
        (
            json!({"type": "content_sha256", "content_sha256": sha, "strict": true}),
            "unknown field `strict`",
        ),
        (
            json!({"type": "content_sha256"}),
            "precondition.content_sha256 is required",
        ),
    ] {
        let r = post(a, &url, &json!({"content": "y", "precondition": pre})).await;
        assert_eq!(r.status, 400, "{pre}: {:?}", r.body);
        assert_eq!(r.error_type(), "invalid_request_error");
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{pre}: {message}");
    }
    // Nothing was changed by them; a good one works.
    let r = post(
        a,
        &url,
        &json!({"content": "y", "precondition": {"type": "content_sha256", "content_sha256": sha}}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

#[tokio::test]
async fn max_memories_limits_a_create_in_its_transaction() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    let s = post(a, "/v1/memory_stores", &json!({"name": "m"})).await;
    let base = format!(
        "/v1/memory_stores/{}/memories",
        s.body["id"].as_str().unwrap()
    );
    let create = |path: &'static str, max: &'static str| {
        let url = format!("{base}?max_memories={max}");
        async move { post(a, &url, &json!({"path": path, "content": ""})).await }
    };
    assert_eq!(create("/a", "2").await.status, 200);
    assert_eq!(create("/b", "2").await.status, 200);
    let full = create("/c", "2").await;
    assert_eq!(full.status, 400, "{:?}", full.body);
    assert_eq!(full.body["error"]["reason"], "store_full");
    assert_eq!(full.header("x-should-retry"), Some("false"));
    // A taken path is a conflict first, full or not.
    assert_eq!(create("/a", "2").await.status, 409);
    assert_eq!(create("/c", "3").await.status, 200);
    let bad = create("/d", "-1").await;
    assert_eq!(bad.status, 400);
    assert!(
        bad.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_memories")
    );
}
