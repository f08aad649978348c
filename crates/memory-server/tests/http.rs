//! The real server on 127.0.0.1 (an ephemeral port), driven over raw HTTP/1.1.

use std::net::SocketAddr;

use memory_server::{ApiKeys, ServerConfig};
use memory_store::MemoryStores;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(config: ServerConfig) -> Server {
    let engine = MemoryStores::open_in_memory().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(memory_server::serve(listener, engine, config, async {
        let _ = rx.await;
    }));
    Server {
        addr,
        stop: Some(tx),
        task,
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts the error envelope and returns `error.type`.
    fn error_type(&self) -> &str {
        assert_eq!(self.body["type"], "error", "{}", self.body);
        let rid = self.body["request_id"].as_str().unwrap();
        assert!(rid.starts_with("req_"));
        assert_eq!(self.header("request-id"), Some(rid));
        assert!(self.body["error"]["message"].is_string());
        self.body["error"]["type"].as_str().unwrap()
    }
}

async fn raw(addr: SocketAddr, head: &str, body: &[u8]) -> Reply {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&out[..split]).to_string();
    let body = &out[split + 4..];
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into()))
    };
    Reply {
        status,
        headers,
        body,
    }
}

async fn req(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    extra: &[(&str, &str)],
) -> Reply {
    let bytes = body
        .map(|b| serde_json::to_vec(b).unwrap())
        .unwrap_or_default();
    send(addr, method, path, &bytes, extra).await
}

async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    bytes: &[u8],
    extra: &[(&str, &str)],
) -> Reply {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\nanthropic-version: 2023-06-01\r\nanthropic-beta: agent-memory-2026-07-22\r\n",
        bytes.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    raw(addr, &head, bytes).await
}

#[tokio::test]
async fn full_round_trip_with_the_hosted_shapes() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    assert_eq!(
        req(a, "GET", "/health", None, &[]).await.body,
        json!({"status": "ok"})
    );

    let s = req(
        a,
        "POST",
        "/v1/memory_stores?beta=true",
        Some(&json!({"name": "Prefs", "metadata": {"team": "x"}})),
        &[],
    )
    .await;
    assert_eq!(s.status, 200, "{}", s.body);
    assert_eq!(s.body["type"], "memory_store");
    assert_eq!(s.body["description"], "");
    assert_eq!(s.body["archived_at"], Value::Null);
    assert!(s.body["created_at"].as_str().unwrap().ends_with('Z'));
    let sid = s.body["id"].as_str().unwrap().to_owned();
    let base = format!("/v1/memory_stores/{sid}");

    let m = req(
        a,
        "POST",
        &format!("{base}/memories?beta=true"),
        Some(&json!({"path": "/a/b.md", "content": "hi"})),
        &[],
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
    let full = req(a, "GET", &format!("{base}/memories/{mid}"), None, &[]).await;
    assert_eq!(full.body["content"], "hi", "retrieve defaults to full");
    let basic = req(
        a,
        "GET",
        &format!("{base}/memories/{mid}?view=basic"),
        None,
        &[],
    )
    .await;
    assert_eq!(basic.body["content"], Value::Null);

    // Conflict on the same path: 409 with the conflicting id.
    let c = req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/a", "content": "x"})),
        &[],
    )
    .await;
    assert_eq!(c.status, 409);
    assert_eq!(c.error_type(), "memory_path_conflict_error");
    assert_eq!(c.body["error"]["conflicting_memory_id"], mid.as_str());
    assert_eq!(c.body["error"]["conflicting_path"], "/a/b.md");

    // Update with a stale precondition: 409; fresh: 200.
    let stale = json!({"content": "new", "precondition": {"type": "content_sha256", "content_sha256": "0".repeat(64)}});
    let r = req(
        a,
        "POST",
        &format!("{base}/memories/{mid}"),
        Some(&stale),
        &[],
    )
    .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.error_type(), "memory_precondition_failed_error");
    let fresh = json!({"content": "new", "path": "/c.md", "precondition": {"type": "content_sha256", "content_sha256": sha}});
    let r = req(
        a,
        "POST",
        &format!("{base}/memories/{mid}?view=full"),
        Some(&fresh),
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["content"], "new");
    assert_eq!(r.body["path"], "/c.md");
    // The same request again (a retry): 200, no new version.
    let r2 = req(
        a,
        "POST",
        &format!("{base}/memories/{mid}"),
        Some(&fresh),
        &[],
    )
    .await;
    assert_eq!(r2.status, 200);
    assert_eq!(r2.body["memory_version_id"], r.body["memory_version_id"]);

    // Listing at depth 1.
    req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/dir/x/y", "content": ""})),
        &[],
    )
    .await;
    let l = req(
        a,
        "GET",
        &format!("{base}/memories?path_prefix=%2F&depth=1&limit=10&beta=true"),
        None,
        &[],
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
    let p1 = req(a, "GET", &format!("{base}/memories?limit=1"), None, &[]).await;
    let token = p1.body["next_page"].as_str().unwrap().to_owned();
    let p2 = req(
        a,
        "GET",
        &format!("{base}/memories?limit=1&page={token}"),
        None,
        &[],
    )
    .await;
    assert_eq!(p2.body["data"][0]["path"], "/dir/x/y");

    // Versions: newest first, filters, retrieve, redact (head refused).
    let v = req(
        a,
        "GET",
        &format!("{base}/memory_versions?memory_id={mid}"),
        None,
        &[],
    )
    .await;
    let vs = v.body["data"].as_array().unwrap();
    assert_eq!(vs.len(), 2);
    assert_eq!(vs[0]["operation"], "modified");
    assert_eq!(vs[0]["created_by"], Value::Null);
    assert_eq!(vs[0]["content"], Value::Null);
    let old = vs[1]["id"].as_str().unwrap().to_owned();
    let head = vs[0]["id"].as_str().unwrap().to_owned();
    let gte = vs[0]["created_at"].as_str().unwrap().replace('+', "%2B");
    let since = req(
        a,
        "GET",
        &format!("{base}/memory_versions?created_at%5Bgte%5D={gte}"),
        None,
        &[],
    )
    .await;
    assert_eq!(since.status, 200, "{}", since.body);
    assert_eq!(
        since.body["data"].as_array().unwrap().len(),
        2,
        "the head and the later create"
    );
    let ret = req(
        a,
        "GET",
        &format!("{base}/memory_versions/{old}"),
        None,
        &[],
    )
    .await;
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
    let u = req(
        a,
        "POST",
        &base,
        Some(&json!({"metadata": {"team": null, "k": "v"}})),
        &[],
    )
    .await;
    assert_eq!(u.body["metadata"], json!({"k": "v"}));
    let ar = req(a, "POST", &format!("{base}/archive"), None, &[]).await;
    assert!(ar.body["archived_at"].is_string());
    let w = req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/z", "content": "z"})),
        &[],
    )
    .await;
    assert_eq!(w.status, 400);
    assert_eq!(w.error_type(), "invalid_request_error");
    let ls = req(a, "GET", "/v1/memory_stores", None, &[]).await;
    assert_eq!(ls.body["data"], json!([]));
    let ls = req(
        a,
        "GET",
        "/v1/memory_stores?include_archived=true",
        None,
        &[],
    )
    .await;
    assert_eq!(ls.body["data"][0]["id"], sid.as_str());
    let del = req(a, "DELETE", &base, None, &[]).await;
    assert_eq!(del.body, json!({"id": sid, "type": "memory_store_deleted"}));
    let gone = req(a, "GET", &base, None, &[]).await;
    assert_eq!(gone.status, 404);
    assert_eq!(gone.error_type(), "not_found_error");
}

#[tokio::test]
async fn bad_requests_are_400_404_413_never_500() {
    let srv = start(ServerConfig::default().body_limit(200_000)).await;
    let a = srv.addr;
    let s = req(
        a,
        "POST",
        "/v1/memory_stores",
        Some(&json!({"name": "x"})),
        &[],
    )
    .await;
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
async fn api_keys_authenticate_and_attribute_writes() {
    let keys = ApiKeys::parse("apikey_01alice sk-alice\napikey_01bob sk-bob\n").unwrap();
    let srv = start(ServerConfig::default().api_keys(Some(keys))).await;
    let a = srv.addr;
    let none = req(a, "GET", "/v1/memory_stores", None, &[]).await;
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
    assert_eq!(req(a, "GET", "/health", None, &[]).await.status, 200);
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

#[tokio::test]
async fn graceful_shutdown_and_listen_check() {
    let mut srv = start(ServerConfig::default()).await;
    assert_eq!(req(srv.addr, "GET", "/health", None, &[]).await.status, 200);
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

#[tokio::test]
async fn deterministic_refusals_say_do_not_retry_and_carry_their_reason() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    let s = req(
        a,
        "POST",
        "/v1/memory_stores",
        Some(&json!({"name": "r"})),
        &[],
    )
    .await;
    let base = format!("/v1/memory_stores/{}", s.body["id"].as_str().unwrap());
    let m = req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/a", "content": "x"})),
        &[],
    )
    .await;
    let mid = m.body["id"].as_str().unwrap().to_owned();
    let head = m.body["memory_version_id"].as_str().unwrap().to_owned();
    let conflict = req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/a", "content": "y"})),
        &[],
    )
    .await;
    let pre = req(
        a,
        "POST",
        &format!("{base}/memories/{mid}"),
        Some(&json!({"content": "z", "precondition": {"type": "content_sha256", "content_sha256": "0".repeat(64)}})),
        &[],
    )
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
    let nfc = req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/cafe\u{301}", "content": ""})),
        &[],
    )
    .await;
    assert_eq!(nfc.status, 400);
    assert_eq!(nfc.body["error"]["reason"], "path_not_nfc");
    req(a, "POST", &format!("{base}/archive"), None, &[]).await;
    let archived = req(
        a,
        "POST",
        &format!("{base}/memories/{mid}"),
        Some(&json!({"content": "w"})),
        &[],
    )
    .await;
    assert_eq!(archived.status, 400);
    assert_eq!(archived.body["error"]["reason"], "store_archived");
    // A success says nothing about retries.
    let ok = req(a, "GET", &format!("{base}/memories/{mid}"), None, &[]).await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.header("x-should-retry"), None);
}

#[tokio::test]
async fn preconditions_are_validated() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    let s = req(
        a,
        "POST",
        "/v1/memory_stores",
        Some(&json!({"name": "p"})),
        &[],
    )
    .await;
    let base = format!("/v1/memory_stores/{}", s.body["id"].as_str().unwrap());
    let m = req(
        a,
        "POST",
        &format!("{base}/memories"),
        Some(&json!({"path": "/a", "content": "x"})),
        &[],
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
        let r = req(
            a,
            "POST",
            &url,
            Some(&json!({"content": "y", "precondition": pre})),
            &[],
        )
        .await;
        assert_eq!(r.status, 400, "{pre}: {:?}", r.body);
        assert_eq!(r.error_type(), "invalid_request_error");
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{pre}: {message}");
    }
    // Nothing was changed by them; a good one works.
    let r = req(
        a,
        "POST",
        &url,
        Some(&json!({"content": "y", "precondition": {"type": "content_sha256", "content_sha256": sha}})),
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

#[tokio::test]
async fn max_memories_limits_a_create_in_its_transaction() {
    let srv = start(ServerConfig::default()).await;
    let a = srv.addr;
    let s = req(
        a,
        "POST",
        "/v1/memory_stores",
        Some(&json!({"name": "m"})),
        &[],
    )
    .await;
    let base = format!(
        "/v1/memory_stores/{}/memories",
        s.body["id"].as_str().unwrap()
    );
    let create = |path: &'static str, max: &'static str| {
        let url = format!("{base}?max_memories={max}");
        async move {
            req(
                a,
                "POST",
                &url,
                Some(&json!({"path": path, "content": ""})),
                &[],
            )
            .await
        }
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
    let plain = req(
        s.addr,
        "POST",
        "/v1/memory_stores",
        Some(&json!({"name": "Default's"})),
        &[],
    )
    .await;
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
    let absent = req(
        s.addr,
        "GET",
        &format!("/v1/memory_stores/{never}"),
        None,
        &[],
    )
    .await;
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
