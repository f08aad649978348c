//! API keys and workspaces: authentication, attribution of writes, stores kept apart; and the
//! server's shutdown.

use tokio::net::TcpStream;

use super::*;

#[tokio::test]
async fn api_keys_authenticate_and_attribute_writes() {
    let keys = ApiKeys::parse("apikey_01alice sk-alice\napikey_01bob sk-bob\n").unwrap();
    let srv = start(ServerConfig::default().api_keys(Some(keys))).await;
    let a = srv.addr;
    let none = get(a, "/v1/memory_stores").await;
    assert_eq!(none.status, 401);
    assert_eq!(none.error_type(), "authentication_error");
    let bad = req(
        a,
        "GET",
        "/v1/memory_stores",
        None,
        &[("x-api-key", "sk-mallory")],
    )
    .await;
    assert_eq!(bad.status, 401);
    assert_eq!(get(a, "/health").await.status, 200);
    let alice = [("x-api-key", "sk-alice")];
    let s = req(
        a,
        "POST",
        "/v1/memory_stores",
        Some(&json!({"name": "k"})),
        &alice,
    )
    .await;
    let base = format!("/v1/memory_stores/{}", s.body["id"].as_str().unwrap());
    let m = req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/p", "content": "1"})),
        &alice,
    )
    .await;
    let mid = m.body["id"].as_str().unwrap();
    req(
        a,
        "POST",
        &format!("{base}/memories/{mid}"),
        Some(&json!({"content": "2"})),
        &[("authorization", "Bearer sk-bob")],
    )
    .await;
    let v = req(a, "GET", &format!("{base}/memory_versions"), None, &alice).await;
    assert_eq!(
        v.body["data"][0]["created_by"],
        json!({"type": "api_actor", "api_key_id": "apikey_01bob"})
    );
    assert_eq!(
        v.body["data"][1]["created_by"],
        json!({"type": "api_actor", "api_key_id": "apikey_01alice"})
    );
    let f = req(
        a,
        "GET",
        &format!("{base}/memory_versions?api_key_id=apikey_01bob"),
        None,
        &alice,
    )
    .await;
    assert_eq!(f.body["data"].as_array().unwrap().len(), 1);
    let old = v.body["data"][1]["id"].as_str().unwrap();
    let r = req(
        a,
        "POST",
        &format!("{base}/memory_versions/{old}/redact"),
        None,
        &alice,
    )
    .await;
    assert_eq!(
        r.body["redacted_by"],
        json!({"type": "api_actor", "api_key_id": "apikey_01alice"})
    );
    assert_eq!(r.body["created_by"]["api_key_id"], "apikey_01alice");

    // The x-memory-session-id extension attributes a write to the agent session instead.
    let session = [
        ("x-api-key", "sk-alice"),
        ("x-memory-session-id", "sesn_01agent"),
    ];
    let u = req(
        a,
        "POST",
        &format!("{base}/memories/{mid}"),
        Some(&json!({"content": "3"})),
        &session,
    )
    .await;
    assert_eq!(u.status, 200, "{:?}", u.body);
    let v = req(a, "GET", &format!("{base}/memory_versions"), None, &alice).await;
    // Both the session and the key that sent its write are recorded.
    assert_eq!(
        v.body["data"][0]["created_by"],
        json!({"type": "session_actor", "session_id": "sesn_01agent", "api_key_id": "apikey_01alice"})
    );
    let by_key = req(
        a,
        "GET",
        &format!("{base}/memory_versions?api_key_id=apikey_01alice"),
        None,
        &alice,
    )
    .await;
    assert_eq!(
        by_key.body["data"][0]["created_by"]["session_id"],
        "sesn_01agent"
    );
    let bad = req(
        a,
        "POST",
        &format!("{base}/memories/{mid}"),
        Some(&json!({"content": "4"})),
        &[("x-api-key", "sk-alice"), ("x-memory-session-id", "bad id")],
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.error_type(), "invalid_request_error");
}

/// `anthropic-workspace-id` (sent by the official SDKs when a client names a workspace)
/// keeps stores apart: a store belongs to the workspace of the request that made it (no
/// header: the default workspace), another workspace's store is a 404 exactly like one that
/// does not exist, and a listing shows only the request's workspace's stores.
#[tokio::test]
async fn workspaces_keep_their_stores_apart() {
    let s = start(ServerConfig::default()).await;
    let a = [("anthropic-workspace-id", "wrkspc_01AAAA")];
    let b = [("anthropic-workspace-id", "wrkspc_01BBBB")];
    let body = json!({"name": "A's"});
    let made = req(s.addr, "POST", "/v1/memory_stores", Some(&body), &a).await;
    assert_eq!(made.status, 200, "{}", made.body);
    assert_eq!(made.body["workspace_id"], "wrkspc_01AAAA");
    let id = made.body["id"].as_str().unwrap().to_owned();
    let plain = post(s.addr, "/v1/memory_stores", &json!({"name": "Default's"})).await;
    assert_eq!(plain.status, 200);
    assert!(plain.body.get("workspace_id").is_none(), "{}", plain.body);
    let plain_id = plain.body["id"].as_str().unwrap().to_owned();
    let memory = req(
        s.addr,
        "POST",
        &format!("/v1/memory_stores/{id}/memories"),
        Some(&json!({"path": "/secret.md", "content": "A only"})),
        &a,
    )
    .await;
    assert_eq!(memory.status, 200, "{}", memory.body);
    let mem = memory.body["id"].as_str().unwrap().to_owned();

    let never = "memstore_01NeverMadeNeverMadeNe";
    let absent = get(s.addr, &format!("/v1/memory_stores/{never}")).await;
    for other in [&b[..], &[][..]] {
        let calls: [(&str, String, Option<Value>); 7] = [
            ("GET", format!("/v1/memory_stores/{id}"), None),
            (
                "POST",
                format!("/v1/memory_stores/{id}"),
                Some(json!({"name": "x"})),
            ),
            ("GET", format!("/v1/memory_stores/{id}/memories"), None),
            (
                "GET",
                format!("/v1/memory_stores/{id}/memories/{mem}"),
                None,
            ),
            (
                "POST",
                format!("/v1/memory_stores/{id}/memories/{mem}"),
                Some(json!({"content": "overwritten"})),
            ),
            (
                "GET",
                format!("/v1/memory_stores/{id}/memory_versions"),
                None,
            ),
            ("DELETE", format!("/v1/memory_stores/{id}"), None),
        ];
        for (method, path, body) in calls {
            let r = req(s.addr, method, &path, body.as_ref(), other).await;
            assert_eq!(r.status, 404, "{method} {path}: {}", r.body);
            assert_eq!(r.error_type(), "not_found_error");
            // Worded exactly as for a store that does not exist.
            assert_eq!(
                r.body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .replace(&id, never),
                absent.body["error"]["message"].as_str().unwrap(),
            );
        }
        let listed = req(
            s.addr,
            "GET",
            "/v1/memory_stores?include_archived=true",
            None,
            other,
        )
        .await;
        let ids: Vec<&str> = listed.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert!(!ids.contains(&id.as_str()), "{ids:?}");
        assert_eq!(
            ids.contains(&plain_id.as_str()),
            other.is_empty(),
            "{ids:?}"
        );
    }
    // In its own workspace, everything is there and unchanged.
    let listed = req(s.addr, "GET", "/v1/memory_stores", None, &a).await;
    assert_eq!(listed.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(listed.body["data"][0]["id"], id.as_str());
    let read = req(
        s.addr,
        "GET",
        &format!("/v1/memory_stores/{id}/memories/{mem}"),
        None,
        &a,
    )
    .await;
    assert_eq!(read.body["content"], "A only");
    // A malformed workspace id is refused, not taken as another workspace.
    let bad = req(
        s.addr,
        "GET",
        "/v1/memory_stores",
        None,
        &[("anthropic-workspace-id", "a b")],
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.error_type(), "invalid_request_error");
}

#[tokio::test]
async fn graceful_shutdown_and_listen_check() {
    let mut srv = start(ServerConfig::default()).await;
    assert_eq!(get(srv.addr, "/health").await.status, 200);
    srv.stop.take().unwrap().send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), &mut srv.task)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
    assert!(TcpStream::connect(srv.addr).await.is_err());
    let open = ServerConfig::default();
    assert!(open.check_listen("127.0.0.1:1".parse().unwrap()).is_ok());
    assert!(open.check_listen("[::1]:1".parse().unwrap()).is_ok());
    assert!(open.check_listen("0.0.0.0:1".parse().unwrap()).is_err());
    let keyed = open.api_keys(Some(ApiKeys::parse("apikey_1x s").unwrap()));
    assert!(keyed.check_listen("0.0.0.0:1".parse().unwrap()).is_ok());
}
