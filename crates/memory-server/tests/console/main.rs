//! The web console over real HTTP on 127.0.0.1: its security headers, sign-in, CSRF
//! refusals, escaping of untrusted memory text, and that its actions are the API's (the
//! results are read back through the API). Here the server, the raw HTTP exchange and a
//! browser-like client; the tests are in a module per area.

mod actions;
#[path = "../common/mod.rs"]
mod common;
mod csrf;
mod headers;
mod sign_in;

use std::net::SocketAddr;

use common::start;
use memory_server::{ApiKeys, ServerConfig};
use serde_json::{Value, json};

const SECRET: &str = "sk-console-test-1";
const KEY_ID: &str = "apikey_01ops";

fn keys() -> ApiKeys {
    ApiKeys::parse(&format!("{KEY_ID} {SECRET}\n")).unwrap()
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        common::header(&self.headers, name)
    }

    /// The `Location` header, without its query (`?notice=...`).
    fn location(&self) -> String {
        let location = self.header("location").expect("a Location header");
        location.split('?').next().unwrap().to_owned()
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
    let common::Answer {
        status,
        headers,
        body,
    } = common::exchange(addr, head, body).await;
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
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

/// Form fields or extra headers of a request.
type Fields<'a> = Vec<(&'a str, &'a str)>;

/// The memory-stores API, with the test key.
async fn api(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> Reply {
    let bytes = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\nx-api-key: {SECRET}\r\n\r\n",
        bytes.len()
    );
    send(addr, &head, bytes.as_bytes()).await
}

/// Creates the store `name` through the API; its id.
async fn new_store(addr: SocketAddr, name: &str) -> String {
    api(
        addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({ "name": name })),
    )
    .await
    .json()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Creates the memory `path` holding `content` in the store `sid` through the API; the
/// memory as the API answered.
async fn new_memory(addr: SocketAddr, sid: &str, path: &str, content: &str) -> Value {
    api(
        addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": path, "content": content})),
    )
    .await
    .json()
}

/// The memory `mid` of the store `sid`, as the API reads it.
async fn memory_of(addr: SocketAddr, sid: &str, mid: &str) -> Value {
    api(
        addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        None,
    )
    .await
    .json()
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
