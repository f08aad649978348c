//! The real server on 127.0.0.1 (an ephemeral port), driven over raw HTTP/1.1. Here the server
//! and the request helpers; the tests are in a module per area.

#[path = "../common/mod.rs"]
mod common;
mod keys;
mod refusals;
mod round_trip;

use std::net::SocketAddr;

use common::start;
use memory_server::{ApiKeys, ServerConfig};
use serde_json::{Value, json};

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        common::header(&self.headers, name)
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
    let common::Answer {
        status,
        headers,
        body,
    } = common::exchange(addr, head, body).await;
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()))
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

/// `POST path` with the JSON `body` and no extra header.
async fn post(addr: SocketAddr, path: &str, body: &Value) -> Reply {
    req(addr, "POST", path, Some(body), &[]).await
}

/// `GET path` with no extra header.
async fn get(addr: SocketAddr, path: &str) -> Reply {
    req(addr, "GET", path, None, &[]).await
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
