//! The web console over real HTTP on 127.0.0.1: its security headers, sign-in, CSRF
//! refusals, escaping of untrusted memory text, and that its actions are the API's (the
//! results are read back through the API).

use std::net::SocketAddr;

use memory_server::{ApiKeys, ServerConfig};
use memory_store::MemoryStores;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

const SECRET: &str = "sk-console-test-1";
const KEY_ID: &str = "apikey_01ops";

struct Server {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

fn keys() -> ApiKeys {
    ApiKeys::parse(&format!("{KEY_ID} {SECRET}\n")).unwrap()
}

async fn start(config: ServerConfig) -> Server {
    let engine = MemoryStores::open_in_memory().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(memory_server::serve(listener, engine, config, async {
        let _ = rx.await;
    }));
    Server { addr, _stop: tx }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The value of the hidden field `name` in the page.
    fn field(&self, name: &str) -> String {
        let marker = format!("name=\"{name}\" value=\"");
        let at = self
            .body
            .find(&marker)
            .unwrap_or_else(|| panic!("no field {name}"));
        let rest = &self.body[at + marker.len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

async fn send(addr: SocketAddr, head: &str, body: &[u8]) -> Reply {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..split]).to_string();
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
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&out[split + 4..]).to_string(),
    }
}

/// A browser-like client: keeps the console cookie, sends Origin on POSTs.
struct Browser {
    addr: SocketAddr,
    host: String,
    cookie: Option<String>,
}

impl Browser {
    fn new(addr: SocketAddr) -> Self {
        Browser {
            addr,
            host: addr.to_string(),
            cookie: None,
        }
    }

    fn keep_cookie(&mut self, r: &Reply) {
        for (k, v) in &r.headers {
            if k.eq_ignore_ascii_case("set-cookie") {
                let pair = v.split(';').next().unwrap();
                let (_, value) = pair.split_once('=').unwrap();
                self.cookie = (!value.is_empty()).then(|| pair.to_owned());
            }
        }
    }

    async fn get(&mut self, path: &str) -> Reply {
        let mut head = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.host
        );
        if let Some(c) = &self.cookie {
            head.push_str(&format!("Cookie: {c}\r\n"));
        }
        head.push_str("\r\n");
        let r = send(self.addr, &head, b"").await;
        self.keep_cookie(&r);
        r
    }

    /// A form POST with the given extra headers (`Origin` is this server unless given).
    async fn post_with(
        &mut self,
        path: &str,
        fields: &[(&str, &str)],
        extra: &[(&str, &str)],
    ) -> Reply {
        let body = serde_urlencoded::to_string(fields).unwrap();
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if !extra
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            head.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
        }
        let own_origin = format!("http://{}", self.host);
        let skip_origin = extra
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("origin") || *k == "x-no-origin");
        if !skip_origin {
            head.push_str(&format!("Origin: {own_origin}\r\n"));
        }
        for (k, v) in extra {
            if *k != "x-no-origin" {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
        }
        if let Some(c) = &self.cookie {
            head.push_str(&format!("Cookie: {c}\r\n"));
        }
        head.push_str("\r\n");
        let r = send(self.addr, &head, body.as_bytes()).await;
        self.keep_cookie(&r);
        r
    }

    async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Reply {
        self.post_with(path, fields, &[]).await
    }

    /// Signs in with `secret` from the sign-in page's form.
    async fn sign_in(&mut self, secret: &str) -> Reply {
        let page = self.get("/console/").await;
        let csrf = page.field("csrf");
        self.post("/console/sign-in", &[("csrf", &csrf), ("key", secret)])
            .await
    }

    /// The CSRF token of the signed-in session (from the stores page).
    async fn csrf(&mut self) -> String {
        self.get("/console/").await.field("csrf")
    }
}

/// The memory-stores API, with the test key.
async fn api(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> Reply {
    let bytes = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\nx-api-key: {SECRET}\r\n\r\n",
        bytes.len()
    );
    send(addr, &head, bytes.as_bytes()).await
}

fn assert_secure_headers(r: &Reply, what: &str) {
    let csp = r
        .header("content-security-policy")
        .unwrap_or_else(|| panic!("{what}: no Content-Security-Policy"));
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(csp.contains(part), "{what}: CSP {csp} lacks {part}");
    }
    assert!(!csp.contains("unsafe-inline"), "{what}: {csp}");
    assert_eq!(
        r.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
}

#[tokio::test]
async fn every_console_response_carries_the_csp() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut b = Browser::new(srv.addr);
    let mut seen = vec![
        ("sign-in page", b.get("/console/").await),
        ("redirect", b.get("/console").await),
        ("css", b.get("/console/assets/console.css").await),
        ("js", b.get("/console/assets/console.js").await),
        ("unknown page", b.get("/console/nothing/here").await),
        (
            "store before sign-in",
            b.get("/console/stores/memstore_x").await,
        ),
        (
            "post without token",
            b.post("/console/stores", &[("name", "x")]).await,
        ),
        ("wrong key", b.sign_in("sk-wrong").await),
    ];
    let signed = b.sign_in(SECRET).await;
    assert_eq!(signed.status, 303);
    seen.push(("sign-in", signed));
    let csrf = b.csrf().await;
    let created = b
        .post("/console/stores", &[("csrf", &csrf), ("name", "Notes")])
        .await;
    let store_page = created
        .header("location")
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    seen.push(("create store", created));
    seen.push(("store page", b.get(&store_page).await));
    seen.push((
        "missing store",
        b.get("/console/stores/memstore_nope").await,
    ));
    seen.push(("export", b.get(&format!("{store_page}/export")).await));
    seen.push((
        "refused form",
        b.post("/console/stores", &[("csrf", &csrf), ("name", "")])
            .await,
    ));
    seen.push(("wrong method", b.post("/console/", &[]).await));
    for (what, r) in &seen {
        assert_secure_headers(r, what);
    }
    let css = &seen[2].1;
    assert_eq!(css.status, 200);
    assert!(css.header("content-type").unwrap().starts_with("text/css"));
}

#[tokio::test]
async fn no_console_answers_404() {
    for keys in [None, Some(keys())] {
        let srv = start(ServerConfig::default().api_keys(keys).console(false)).await;
        let mut b = Browser::new(srv.addr);
        assert_eq!(b.get("/console/").await.status, 404);
        assert_eq!(b.get("/console/assets/console.js").await.status, 404);
        assert_eq!(
            b.post("/console/sign-in", &[("key", SECRET)]).await.status,
            404
        );
    }
}

#[tokio::test]
async fn nothing_but_the_sign_in_form_before_signing_in() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let made = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Very Private Store"})),
    )
    .await
    .json();
    let id = made["id"].as_str().unwrap();
    let mut b = Browser::new(srv.addr);
    let page = b.get("/console/").await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("<label for=\"key\">API key</label>"),
        "{}",
        page.body
    );
    assert!(page.body.contains(">Sign in</button>"));
    assert!(!page.body.contains("Very Private Store"));
    assert!(!page.body.contains(id));
    // An anonymous visitor is given (and holds) nothing: no session, no cookie.
    assert_eq!(page.header("set-cookie"), None);
    let deep = b.get(&format!("/console/stores/{id}")).await;
    assert_eq!(deep.status, 401);
    assert!(!deep.body.contains("Very Private Store"));
    assert!(deep.body.contains("API key"));
    // Exporting, creating, archiving: all refused without signing in.
    assert_eq!(
        b.get(&format!("/console/stores/{id}/export")).await.status,
        401
    );
    let csrf = page.field("csrf");
    let archive = b
        .post(
            &format!("/console/stores/{id}/archive"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(archive.status, 401);
    let store = api(srv.addr, "GET", &format!("/v1/memory_stores/{id}"), None).await;
    assert!(store.json()["archived_at"].is_null());
    // Signed in, the store is listed; signed out, it is gone again.
    let signed = b.sign_in(SECRET).await;
    assert_eq!(signed.status, 303);
    let cookie = signed.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let list = b.get("/console/").await;
    assert!(list.body.contains("Very Private Store"));
    assert!(list.body.contains(KEY_ID));
    let csrf = list.field("csrf");
    let out = b.post("/console/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, 303);
    let after = b.get(out.header("location").unwrap()).await;
    assert!(!after.body.contains("Very Private Store"));
    assert!(after.body.contains("You are signed out."));
}

#[tokio::test]
async fn a_wrong_key_is_refused_in_words() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Hidden"})),
    )
    .await;
    let mut b = Browser::new(srv.addr);
    let r = b.sign_in("sk-not-a-key").await;
    assert_eq!(r.status, 401);
    assert!(
        r.body
            .contains("That API key is not accepted by this server."),
        "{}",
        r.body
    );
    assert!(!r.body.contains("Hidden"));
    assert!(!r.body.contains('{'), "no JSON: {}", r.body);
    // The form shown again works: its token is a valid one.
    let again = r.field("csrf");
    let r = b
        .post("/console/sign-in", &[("csrf", &again), ("key", SECRET)])
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let mut b = Browser::new(srv.addr);
    let page = b.get("/console/").await;
    assert!(page.body.contains(">Sign in</button>"));
    assert!(!page.body.contains("Hidden"));
}

/// Form fields or extra headers of a request.
type Fields<'a> = Vec<(&'a str, &'a str)>;

#[tokio::test]
async fn cross_site_requests_are_refused() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut b = Browser::new(srv.addr);
    assert_eq!(b.sign_in(SECRET).await.status, 303);
    let csrf = b.csrf().await;
    let own = format!("http://{}/console/", srv.addr);
    let cases: Vec<(&str, Fields<'_>, Fields<'_>, u16)> = vec![
        ("no token", vec![("name", "A")], vec![], 403),
        (
            "wrong token",
            vec![("csrf", "x".repeat(32).leak()), ("name", "A")],
            vec![],
            403,
        ),
        (
            "foreign origin",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Origin", "http://evil.example")],
            403,
        ),
        (
            "null origin",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Origin", "null")],
            403,
        ),
        (
            "same site, another port",
            vec![("csrf", &csrf), ("name", "A")],
            vec![
                ("Origin", "http://127.0.0.1:1"),
                ("Sec-Fetch-Site", "same-site"),
            ],
            403,
        ),
        (
            "no origin, no referer",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("x-no-origin", "")],
            403,
        ),
        (
            "foreign referer",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("x-no-origin", ""), ("Referer", "http://evil.example/page")],
            403,
        ),
        (
            "cross-site fetch",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Sec-Fetch-Site", "cross-site")],
            403,
        ),
        (
            "text/plain form",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Content-Type", "text/plain")],
            415,
        ),
    ];
    for (what, fields, extra, status) in &cases {
        let r = b.post_with("/console/stores", fields, extra).await;
        assert_eq!(r.status, *status, "{what}: {}", r.body);
        assert!(r.body.contains("refused"), "{what}: {}", r.body);
    }
    // A token of another session is no good either.
    let mut other = Browser::new(srv.addr);
    assert_eq!(other.sign_in(SECRET).await.status, 303);
    let r = other
        .post("/console/stores", &[("csrf", &csrf), ("name", "A")])
        .await;
    assert_eq!(r.status, 403);
    let stores = api(srv.addr, "GET", "/v1/memory_stores", None).await.json();
    assert_eq!(stores["data"].as_array().unwrap().len(), 0, "{stores}");
    // The same request from the console's own page (Referer only also counts) goes through.
    let ok = b
        .post_with(
            "/console/stores",
            &[("csrf", &csrf), ("name", "A")],
            &[("x-no-origin", ""), ("Referer", &own)],
        )
        .await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    let stores = api(srv.addr, "GET", "/v1/memory_stores", None).await.json();
    assert_eq!(stores["data"][0]["name"], "A");
    // Signing in needs the sign-in page's token too (no login CSRF).
    let mut fresh = Browser::new(srv.addr);
    fresh.get("/console/").await;
    let r = fresh.post("/console/sign-in", &[("key", SECRET)]).await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn memory_text_is_shown_as_text() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let xss = "<img src=x onerror=alert(1)>";
    let store = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "<script>alert('n')</script>", "description": "\"><b>d</b>"})),
    )
    .await
    .json();
    let sid = store["id"].as_str().unwrap();
    let mem = api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/x\"<i>.md", "content": xss})),
    )
    .await
    .json();
    let mid = mem["id"].as_str().unwrap();
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    for path in [
        "/console/".to_owned(),
        format!("/console/stores/{sid}"),
        format!("/console/stores/{sid}/memories/{mid}"),
        format!("/console/stores/{sid}/versions"),
        format!(
            "/console/stores/{sid}/versions/{}",
            mem["memory_version_id"].as_str().unwrap()
        ),
    ] {
        let page = b.get(&path).await;
        assert_eq!(page.status, 200, "{path}");
        for raw in ["<img", "<script>alert", "<b>d", "<i>"] {
            assert!(
                !page.body.contains(raw),
                "{path} holds {raw}: {}",
                page.body
            );
        }
    }
    let page = b
        .get(&format!("/console/stores/{sid}/memories/{mid}"))
        .await;
    assert!(page.body.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(page.body.contains("/x&quot;&lt;i&gt;.md"));
}

#[tokio::test]
async fn console_actions_are_the_apis() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    let csrf = b.csrf().await;
    let r = b
        .post(
            "/console/stores",
            &[("csrf", &csrf), ("name", "Work"), ("description", "d")],
        )
        .await;
    let store_page = r
        .header("location")
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    let sid = store_page.rsplit('/').next().unwrap().to_owned();
    let r = b
        .post(
            &format!("{store_page}/memories"),
            &[
                ("csrf", &csrf),
                ("path", "/notes/a.md"),
                ("content", "one\r\ntwo\r\n"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let memory_page = r
        .header("location")
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    let mid = memory_page.rsplit('/').next().unwrap().to_owned();
    let api_mem = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        None,
    )
    .await
    .json();
    assert_eq!(api_mem["content"], "one\ntwo\n", "textarea CRLF becomes LF");
    // Two pages loaded; the first saves, the second's save is stale.
    let first = b.get(&memory_page).await;
    let second = b.get(&memory_page).await;
    let save = |page: &Reply, text: &str| {
        vec![
            ("csrf".to_owned(), csrf.clone()),
            ("content_sha256".to_owned(), page.field("content_sha256")),
            ("version".to_owned(), page.field("version")),
            ("eol".to_owned(), page.field("eol")),
            ("content".to_owned(), text.to_owned()),
        ]
    };
    let f = save(&first, "one\r\ntwo\r\nthree\r\n");
    let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = b.post(&format!("{memory_page}/save"), &f).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let f = save(&second, "mine\r\n");
    let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let stale = b.post(&format!("{memory_page}/save"), &f).await;
    assert_eq!(stale.status, 409);
    assert!(
        stale.body.contains("changed since it was loaded"),
        "{}",
        stale.body
    );
    assert!(stale.body.contains("three") && stale.body.contains("mine"));
    let api_mem = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        None,
    )
    .await
    .json();
    assert_eq!(api_mem["content"], "one\ntwo\nthree\n");
    // Versions carry the key's actor.
    let versions = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memory_versions?memory_id={mid}"),
        None,
    )
    .await
    .json();
    let data = versions["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    for v in data {
        assert_eq!(
            v["created_by"],
            json!({"type": "api_actor", "api_key_id": KEY_ID})
        );
    }
    let history = b.get(&memory_page).await;
    assert!(history.body.contains(&format!("API key {KEY_ID}")));
    // Redacting the head is refused with the API's reason, in words.
    let head = data[0]["id"].as_str().unwrap();
    let r = b
        .post(
            &format!("{store_page}/versions/{head}/redact"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(r.body.contains("cannot be redacted"), "{}", r.body);
    assert!(
        r.body.contains("is the current version of memory"),
        "{}",
        r.body
    );
    // The diff of the two versions.
    let old = data[1]["id"].as_str().unwrap();
    let d = b
        .get(&format!("{memory_page}/diff?from={old}&to=head"))
        .await;
    assert_eq!(d.status, 200);
    assert!(d.body.contains("<span class=\"add\">+ three"), "{}", d.body);
    // Restoring the old version writes a third; redacting the old one works.
    let r = b
        .post(
            &format!("{store_page}/versions/{old}/restore"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(r.status, 303);
    let api_mem = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        None,
    )
    .await
    .json();
    assert_eq!(api_mem["content"], "one\ntwo\n");
    let r = b
        .post(
            &format!("{store_page}/versions/{old}/redact"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let v = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memory_versions/{old}"),
        None,
    )
    .await
    .json();
    assert!(
        v["content"].is_null() && v["redacted_at"].is_string(),
        "{v}"
    );
    // Export, then import into a second store.
    let export = b.get(&format!("{store_page}/export")).await;
    assert_eq!(export.status, 200);
    let files = memory_store::archive::parse(export.body.as_bytes()).unwrap();
    assert_eq!(files[0].path.as_str(), "/memories/notes/a.md");
    let r = b
        .post("/console/stores", &[("csrf", &csrf), ("name", "Copy")])
        .await;
    let copy_page = r
        .header("location")
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    let r = b
        .post(
            &format!("{copy_page}/import"),
            &[("csrf", &csrf), ("archive", &export.body)],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("Imported 1 memory"));
    let again = b
        .post(
            &format!("{copy_page}/import"),
            &[("csrf", &csrf), ("archive", &export.body)],
        )
        .await;
    assert_eq!(again.status, 409);
    assert!(again.body.contains("already exist"));
    let bad = b
        .post(
            &format!("{copy_page}/import"),
            &[("csrf", &csrf), ("archive", "{\"type\":\"header\"}")],
        )
        .await;
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("The archive is not valid"));
    // Archive (confirmed), then writes are refused in words.
    let no = b
        .post(&format!("{store_page}/archive"), &[("csrf", &csrf)])
        .await;
    assert_eq!(no.status, 400);
    let r = b
        .post(
            &format!("{store_page}/archive"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 303);
    let s = api(srv.addr, "GET", &format!("/v1/memory_stores/{sid}"), None)
        .await
        .json();
    assert!(s["archived_at"].is_string());
    let refused = b
        .post(
            &format!("{store_page}/memories"),
            &[("csrf", &csrf), ("path", "/b.md"), ("content", "x")],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused.body.contains("This store is archived"),
        "{}",
        refused.body
    );
    assert!(!refused.body.contains("invalid_request_error"));
    // Deleting asks for the name.
    let r = b
        .post(
            &format!("{store_page}/delete"),
            &[("csrf", &csrf), ("confirm_name", "work")],
        )
        .await;
    assert_eq!(r.status, 400);
    let r = b
        .post(
            &format!("{store_page}/delete"),
            &[("csrf", &csrf), ("confirm_name", "Work")],
        )
        .await;
    assert_eq!(r.status, 303);
    let gone = api(srv.addr, "GET", &format!("/v1/memory_stores/{sid}"), None).await;
    assert_eq!(gone.status, 404);
}

#[tokio::test]
async fn without_keys_it_works_on_loopback_without_signing_in() {
    let srv = start(ServerConfig::default()).await;
    let mut b = Browser::new(srv.addr);
    let page = b.get("/console/").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("without API keys"), "{}", page.body);
    assert!(!page.body.contains("Sign in"));
    let csrf = page.field("csrf");
    let r = b
        .post("/console/stores", &[("csrf", &csrf), ("name", "Zebra")])
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    // Without a token it is refused all the same.
    let r = b.post("/console/stores", &[("name", "Zebra")]).await;
    assert_eq!(r.status, 403);
    // A name that is not loopback (a rebound DNS name) is refused.
    let mut rebound = Browser::new(srv.addr);
    rebound.host = format!("attacker.example:{}", srv.addr.port());
    let r = rebound.get("/console/").await;
    assert_eq!(r.status, 403);
    assert!(!r.body.contains("Zebra"));
    let mut local = Browser::new(srv.addr);
    local.host = format!("localhost:{}", srv.addr.port());
    assert_eq!(local.get("/console/").await.status, 200);
}

#[tokio::test]
async fn rename_and_delete_a_memory() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let sid = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "S"})),
    )
    .await
    .json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let m = api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/a.md", "content": "x"})),
    )
    .await
    .json();
    api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/b/c.md", "content": "y"})),
    )
    .await;
    let mid = m["id"].as_str().unwrap();
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    let page = format!("/console/stores/{sid}/memories/{mid}");
    let loaded = b.get(&page).await;
    let csrf = loaded.field("csrf");
    // A rename onto a folder of another memory is refused in words.
    let r = b
        .post(
            &format!("{page}/rename"),
            &[("csrf", &csrf), ("path", "/b")],
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(
        r.body.contains("Another memory is in the way: /b/c.md"),
        "{}",
        r.body
    );
    let r = b
        .post(
            &format!("{page}/rename"),
            &[("csrf", &csrf), ("path", "/d/a.md")],
        )
        .await;
    assert_eq!(r.status, 303);
    let got = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        None,
    )
    .await
    .json();
    assert_eq!(got["path"], "/d/a.md");
    // The store page shows both folders, each memory a link named with its path.
    let store = b.get(&format!("/console/stores/{sid}")).await;
    assert!(store.body.contains(">/d/a.md</a>"));
    assert!(store.body.contains(">d/</span>") && store.body.contains(">b/</span>"));
    assert!(store.body.contains("Memories: 2 of 2,000"));
    // Deleting needs the box, and is refused when the memory changed since it was shown.
    let sha = loaded.field("content_sha256");
    let r = b
        .post(
            &format!("{page}/delete"),
            &[("csrf", &csrf), ("content_sha256", &sha)],
        )
        .await;
    assert_eq!(r.status, 400);
    api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        Some(json!({"content": "changed"})),
    )
    .await;
    let r = b
        .post(
            &format!("{page}/delete"),
            &[("csrf", &csrf), ("content_sha256", &sha), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(r.body.contains("changed since it was loaded"), "{}", r.body);
    let fresh = b.get(&page).await.field("content_sha256");
    let r = b
        .post(
            &format!("{page}/delete"),
            &[
                ("csrf", &csrf),
                ("content_sha256", &fresh),
                ("confirm", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, 303);
    let gone = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        None,
    )
    .await;
    assert_eq!(gone.status, 404);
    // A deleted memory's page says so in words.
    let r = b.get(&page).await;
    assert_eq!(r.status, 404);
    assert!(r.body.contains("Not found."));
}

#[tokio::test]
async fn every_form_that_changes_something_carries_the_token() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let sid = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "S"})),
    )
    .await
    .json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let m = api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/a.md", "content": "x"})),
    )
    .await
    .json();
    let (mid, vid) = (
        m["id"].as_str().unwrap(),
        m["memory_version_id"].as_str().unwrap(),
    );
    let mut b = Browser::new(srv.addr);
    let signed_out = b.get("/console/").await;
    b.sign_in(SECRET).await;
    let mut posts = 0;
    for page in [
        signed_out,
        b.get("/console/").await,
        b.get(&format!("/console/stores/{sid}")).await,
        b.get(&format!("/console/stores/{sid}/memories/{mid}"))
            .await,
        b.get(&format!("/console/stores/{sid}/versions/{vid}"))
            .await,
    ] {
        for form in page.body.split("<form").skip(1) {
            let form = &form[..form.find("</form>").unwrap()];
            if form.contains("method=\"post\"") {
                posts += 1;
                assert!(
                    form.contains("name=\"csrf\" value=\"") && !form.contains("value=\"\""),
                    "a POST form without the token: {form}"
                );
            } else {
                assert!(form.contains("method=\"get\""), "{form}");
            }
        }
    }
    // sign-in; sign-out and create store; sign-out, archive, delete, create memory, import;
    // sign-out, save, rename, delete; sign-out, restore, redact (the head).
    assert_eq!(posts, 1 + 2 + 5 + 4 + 3);
}

/// A console user signs in to a workspace: the header names it, and the console shows and
/// opens only that workspace's stores (another workspace's store is not found).
#[tokio::test]
async fn the_console_acts_in_the_workspace_it_signed_in_to() {
    let s = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let made = api(
        s.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Default store"})),
    )
    .await;
    let default_id = made.json()["id"].as_str().unwrap().to_owned();

    let mut b = Browser::new(s.addr);
    let page = b.get("/console/").await;
    let csrf = page.field("csrf");
    let r = b
        .post(
            "/console/sign-in",
            &[
                ("csrf", &csrf),
                ("key", SECRET),
                ("workspace", "wrkspc_01Team"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let index = b.get("/console/").await;
    assert!(
        index
            .body
            .contains("in workspace: <code>wrkspc_01Team</code>"),
        "{}",
        index.body
    );
    assert!(!index.body.contains("Default store"), "{}", index.body);
    let csrf = index.field("csrf");
    let r = b
        .post(
            "/console/stores",
            &[("csrf", &csrf), ("name", "Team store")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let other = b.get(&format!("/console/stores/{default_id}")).await;
    assert_eq!(other.status, 404, "{}", other.body);
    // Through the API, the store is the workspace's: absent without the header.
    let listed = api(s.addr, "GET", "/v1/memory_stores", None).await.json();
    let names: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Default store"]);

    // Signed in without a workspace: the default one.
    let mut d = Browser::new(s.addr);
    d.sign_in(SECRET).await;
    let index = d.get("/console/").await;
    assert!(
        index.body.contains("in workspace: the default workspace"),
        "{}",
        index.body
    );
    assert!(index.body.contains("Default store") && !index.body.contains("Team store"));
    // A malformed workspace id signs nobody in.
    let mut m = Browser::new(s.addr);
    let csrf = m.get("/console/").await.field("csrf");
    let r = m
        .post(
            "/console/sign-in",
            &[("csrf", &csrf), ("key", SECRET), ("workspace", "no spaces")],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

/// Anonymous visitors hold nothing on the server: 10,200 unauthenticated GETs of the sign-in
/// page (past the 10,000 sessions the server keeps) make no session, so a console user's
/// session survives them, and the sign-in form they were given still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn anonymous_floods_sign_nobody_out() {
    let s = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut user = Browser::new(s.addr);
    let anonymous_form = Browser::new(s.addr).get("/console/").await.field("csrf");
    assert_eq!(user.sign_in(SECRET).await.status, 303);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let addr = s.addr;
        tasks.push(tokio::spawn(async move {
            for _ in 0..(10_200 / 16 + 1) {
                let r = Browser::new(addr).get("/console/").await;
                assert_eq!(r.status, 200);
                assert_eq!(r.header("set-cookie"), None);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let list = user.get("/console/").await;
    assert!(
        list.body.contains(KEY_ID),
        "signed out by the flood: {}",
        list.body
    );
    let csrf = list.field("csrf");
    let made = user
        .post(
            "/console/stores",
            &[("csrf", &csrf), ("name", "After the flood")],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    // The stateless token of a form served before the flood still signs in.
    let mut late = Browser::new(s.addr);
    let r = late
        .post(
            "/console/sign-in",
            &[("csrf", &anonymous_form), ("key", SECRET)],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    // A forged token does not.
    let r = Browser::new(s.addr)
        .post("/console/sign-in", &[("csrf", "1.00"), ("key", SECRET)])
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
}

/// Sign-in attempts are limited per client address: past 10 a minute, 429 with
/// `Retry-After`, even with the right key; a signed-in session is not affected.
#[tokio::test]
async fn sign_in_attempts_beyond_the_limit_get_429() {
    let s = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut user = Browser::new(s.addr);
    assert_eq!(user.sign_in(SECRET).await.status, 303);
    let csrf = Browser::new(s.addr).get("/console/").await.field("csrf");
    for i in 1..10 {
        let r = Browser::new(s.addr)
            .post("/console/sign-in", &[("csrf", &csrf), ("key", "wrong")])
            .await;
        assert_eq!(r.status, 401, "attempt {i}: {}", r.body);
    }
    for key in ["wrong", SECRET] {
        let r = Browser::new(s.addr)
            .post("/console/sign-in", &[("csrf", &csrf), ("key", key)])
            .await;
        assert_eq!(r.status, 429, "{}", r.body);
        assert!(
            r.header("retry-after")
                .is_some_and(|v| v.parse::<u64>().is_ok_and(|n| (1..=60).contains(&n)))
        );
        assert!(r.body.contains("Too many sign-in attempts"), "{}", r.body);
        assert_eq!(r.header("set-cookie"), None);
    }
    assert!(user.get("/console/").await.body.contains(KEY_ID));
}

/// An archived store's pages offer only what an archived store allows (no create, import,
/// save, rename, restore or archive); times are "… ago" with the exact time on hover; every
/// result page has its heading and a breadcrumb.
#[tokio::test]
async fn archived_pages_times_and_result_pages() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let made = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Old"})),
    )
    .await;
    let sid = made.json()["id"].as_str().unwrap().to_owned();
    let m = api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/a.md", "content": "one"})),
    )
    .await;
    let mid = m.json()["id"].as_str().unwrap().to_owned();
    let ver = m.json()["memory_version_id"].as_str().unwrap().to_owned();
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    let store_page = format!("/console/stores/{sid}");
    let memory_page = format!("{store_page}/memories/{mid}");
    let version_page = format!("{store_page}/versions/{ver}");

    let live = b.get(&store_page).await.body;
    for form in ["/memories\"", "/import\"", "/archive\""] {
        assert!(
            live.contains(&format!("action=\"{store_page}{form}")),
            "{form}"
        );
    }
    assert!(live.contains(">just now</time>"), "{live}");
    assert!(
        live.contains(" UTC\">just now</time>"),
        "the exact time on hover: {live}"
    );
    assert!(!live.contains(".000"), "no raw RFC 3339 times: {live}");
    let mem = b.get(&memory_page).await.body;
    assert!(mem.contains(">Save</button>") && mem.contains(">Rename</button>"));
    assert!(
        b.get(&version_page)
            .await
            .body
            .contains("Restore this version")
    );

    api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/archive"),
        None,
    )
    .await;
    let archived = b.get(&store_page).await.body;
    for form in ["/memories\"", "/import\"", "/archive\""] {
        assert!(
            !archived.contains(&format!("action=\"{store_page}{form}")),
            "{form} offered on an archived store: {archived}"
        );
    }
    assert!(archived.contains(&format!("action=\"{store_page}/delete\"")));
    assert!(
        archived.contains("This store was archived <time"),
        "{archived}"
    );
    let mem = b.get(&memory_page).await.body;
    assert!(
        !mem.contains(">Save</button>") && !mem.contains(">Rename</button>"),
        "{mem}"
    );
    assert!(!mem.contains("<textarea"), "{mem}");
    assert!(mem.contains(">Delete memory</button>"));
    let v = b.get(&version_page).await.body;
    assert!(!v.contains("Restore this version"), "{v}");

    // Result pages: heading and breadcrumb.
    let missing = b.get(&format!("{store_page}/memories/mem_nope")).await;
    assert_eq!(missing.status, 404);
    assert!(
        missing.body.contains("<h1>Not found</h1>"),
        "{}",
        missing.body
    );
    assert!(
        missing.body.contains(&format!(
            "<a href=\"{store_page}\">Store <code>{sid}</code></a>"
        )),
        "{}",
        missing.body
    );
    let nowhere = b.get("/console/no/such/page").await;
    assert!(
        nowhere.body.contains("aria-label=\"Breadcrumb\""),
        "{}",
        nowhere.body
    );
    assert!(nowhere.body.contains("<h1>Not found</h1>"));
    let csrf = b.csrf().await;
    let refused = b
        .post(
            &format!("{store_page}/import"),
            &[("csrf", &csrf), ("archive", "not an archive")],
        )
        .await;
    assert!(
        refused.body.contains("<h1>Refused</h1>"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("aria-label=\"Breadcrumb\""));
}
