//! A full round trip of the memory-stores API, in the hosted API's shapes.

use super::*;

#[tokio::test]
async fn full_round_trip_with_the_hosted_shapes() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    assert_eq!(get(a, "/health").await.body, json!({"status": "ok"}));

    let s = post(
        a,
        "/v1/memory_stores?beta=true",
        &json!({"name": "Prefs", "metadata": {"team": "x"}}),
    )
    .await;
    assert_eq!(s.status, 200, "{}", s.body);
    assert_eq!(s.body["type"], "memory_store");
    assert_eq!(s.body["description"], "");
    assert_eq!(s.body["archived_at"], Value::Null);
    assert!(s.body["created_at"].as_str().unwrap().ends_with('Z'));
    let sid = s.body["id"].as_str().unwrap().to_owned();
    let base = format!("/v1/memory_stores/{sid}");

    let m = post(
        a,
        &format!("{base}/memories?beta=true"),
        &json!({"path": "/a/b.md", "content": "hi"}),
    )
    .await;
    assert_eq!(m.status, 200, "{}", m.body);
    assert_eq!(m.body["type"], "memory");
    assert_eq!(
        m.body["content"],
        Value::Null,
        "create defaults to the basic view"
    );
    assert_eq!(m.body["content_size_bytes"], 2);
    let mid = m.body["id"].as_str().unwrap().to_owned();
    let sha = m.body["content_sha256"].as_str().unwrap().to_owned();
    let full = get(a, &format!("{base}/memories/{mid}")).await;
    assert_eq!(full.body["content"], "hi", "retrieve defaults to full");
    let basic = get(a, &format!("{base}/memories/{mid}?view=basic")).await;
    assert_eq!(basic.body["content"], Value::Null);

    // Conflict on the same path: 409 with the conflicting id.
    let c = post(
        a,
        &format!("{base}/memories"),
        &json!({"path": "/a", "content": "x"}),
    )
    .await;
    assert_eq!(c.status, 409);
    assert_eq!(c.error_type(), "memory_path_conflict_error");
    assert_eq!(c.body["error"]["conflicting_memory_id"], mid.as_str());
    assert_eq!(c.body["error"]["conflicting_path"], "/a/b.md");

    // Update with a stale precondition: 409; fresh: 200.
    let stale = json!({"content": "new", "precondition": {"type": "content_sha256", "content_sha256": "0".repeat(64)}});
    let r = post(a, &format!("{base}/memories/{mid}"), &stale).await;
    assert_eq!(r.status, 409);
    assert_eq!(r.error_type(), "memory_precondition_failed_error");
    let fresh = json!({"content": "new", "path": "/c.md", "precondition": {"type": "content_sha256", "content_sha256": sha}});
    let r = post(a, &format!("{base}/memories/{mid}?view=full"), &fresh).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["content"], "new");
    assert_eq!(r.body["path"], "/c.md");
    // The same request again (a retry): 200, no new version.
    let r2 = post(a, &format!("{base}/memories/{mid}"), &fresh).await;
    assert_eq!(r2.status, 200);
    assert_eq!(r2.body["memory_version_id"], r.body["memory_version_id"]);

    // Listing at depth 1.
    post(
        a,
        &format!("{base}/memories"),
        &json!({"path": "/dir/x/y", "content": ""}),
    )
    .await;
    let l = get(
        a,
        &format!("{base}/memories?path_prefix=%2F&depth=1&limit=10&beta=true"),
    )
    .await;
    assert_eq!(l.status, 200, "{}", l.body);
    let items: Vec<(String, String)> = l.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["type"].as_str().unwrap().into(),
                i["path"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        items,
        [
            ("memory".into(), "/c.md".into()),
            ("memory_prefix".into(), "/dir/".into())
        ]
    );
    assert_eq!(l.body["next_page"], Value::Null);
    let p1 = get(a, &format!("{base}/memories?limit=1")).await;
    let token = p1.body["next_page"].as_str().unwrap().to_owned();
    let p2 = get(a, &format!("{base}/memories?limit=1&page={token}")).await;
    assert_eq!(p2.body["data"][0]["path"], "/dir/x/y");

    // Versions: newest first, filters, retrieve, redact (head refused).
    let v = get(a, &format!("{base}/memory_versions?memory_id={mid}")).await;
    let vs = v.body["data"].as_array().unwrap();
    assert_eq!(vs.len(), 2);
    assert_eq!(vs[0]["operation"], "modified");
    assert_eq!(vs[0]["created_by"], Value::Null);
    assert_eq!(vs[0]["content"], Value::Null);
    let old = vs[1]["id"].as_str().unwrap().to_owned();
    let head = vs[0]["id"].as_str().unwrap().to_owned();
    let gte = vs[0]["created_at"].as_str().unwrap().replace('+', "%2B");
    let since = get(
        a,
        &format!("{base}/memory_versions?created_at%5Bgte%5D={gte}"),
    )
    .await;
    assert_eq!(since.status, 200, "{}", since.body);
    assert_eq!(
        since.body["data"].as_array().unwrap().len(),
        2,
        "the head and the later create"
    );
    let ret = get(a, &format!("{base}/memory_versions/{old}")).await;
    assert_eq!(ret.body["content"], "hi");
    let h = req(
        a,
        "POST",
        &format!("{base}/memory_versions/{head}/redact"),
        None,
        &[],
    )
    .await;
    assert_eq!(h.status, 409);
    assert_eq!(h.error_type(), "conflict_error");
    let red = req(
        a,
        "POST",
        &format!("{base}/memory_versions/{old}/redact"),
        None,
        &[],
    )
    .await;
    assert_eq!(red.status, 200, "{}", red.body);
    assert_eq!(red.body["content"], Value::Null);
    assert_eq!(red.body["path"], Value::Null);
    assert!(red.body["redacted_at"].is_string());

    // Delete with a wrong expected hash: 409, then for real.
    let d = req(
        a,
        "DELETE",
        &format!(
            "{base}/memories/{mid}?expected_content_sha256={}",
            "1".repeat(64)
        ),
        None,
        &[],
    )
    .await;
    assert_eq!(d.status, 409);
    assert_eq!(d.error_type(), "memory_precondition_failed_error");
    let d = req(a, "DELETE", &format!("{base}/memories/{mid}"), None, &[]).await;
    assert_eq!(d.body, json!({"id": mid, "type": "memory_deleted"}));

    // Update and archive the store; archived: memory writes are 400.
    let u = post(a, &base, &json!({"metadata": {"team": null, "k": "v"}})).await;
    assert_eq!(u.body["metadata"], json!({"k": "v"}));
    let ar = req(a, "POST", &format!("{base}/archive"), None, &[]).await;
    assert!(ar.body["archived_at"].is_string());
    let w = post(
        a,
        &format!("{base}/memories"),
        &json!({"path": "/z", "content": "z"}),
    )
    .await;
    assert_eq!(w.status, 400);
    assert_eq!(w.error_type(), "invalid_request_error");
    let ls = get(a, "/v1/memory_stores").await;
    assert_eq!(ls.body["data"], json!([]));
    let ls = get(a, "/v1/memory_stores?include_archived=true").await;
    assert_eq!(ls.body["data"][0]["id"], sid.as_str());
    let del = req(a, "DELETE", &base, None, &[]).await;
    assert_eq!(del.body, json!({"id": sid, "type": "memory_store_deleted"}));
    let gone = get(a, &base).await;
    assert_eq!(gone.status, 404);
    assert_eq!(gone.error_type(), "not_found_error");
}
