//! A scripted fake of the Messages API on a loopback port, for tests without a network
//! (feature `testing`). Not a stable API.
//!
//! [`FakeApi::start`] serves `POST /v1/messages` (any path, in fact) on `127.0.0.1` at an
//! ephemeral port, answers each request with the next scripted [`Reply`], and records every
//! request it got. When the script runs out it answers 500 with `x-should-retry: false`.
//!
//! ```
//! use memory_runner::testing::{FakeApi, Reply, end_turn};
//! use memory_runner::{Client, Message, MessagesRequest};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let api = FakeApi::start([Reply::message(end_turn("Hello!"))]).await;
//! let client = Client::builder().api_key("test-key").base_url(api.url()).build().unwrap();
//! let reply = client
//!     .create_message(&MessagesRequest::new("claude-test", 100).message(Message::user("Hi")))
//!     .await
//!     .unwrap();
//! assert_eq!(reply.text(), "Hello!");
//! assert_eq!(api.requests()[0].header("x-api-key"), Some("test-key"));
//! # });
//! ```

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
    hang_up: bool,
}

impl Reply {
    /// `200` with this message as the body.
    pub fn message(message: Value) -> Self {
        Reply::json(200, &message)
    }

    /// `status` with this JSON body.
    pub fn json(status: u16, body: &Value) -> Self {
        Reply::raw(status, body.to_string())
    }

    /// `status` with the API's error shape:
    /// `{"type": "error", "error": {"type": error_type, "message": message}}`.
    pub fn error(status: u16, error_type: &str, message: &str) -> Self {
        Reply::json(
            status,
            &json!({"type": "error", "error": {"type": error_type, "message": message}}),
        )
    }

    /// `status` with this body, as it is (e.g. not JSON at all).
    pub fn raw(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
            delay: Duration::ZERO,
            hang_up: false,
        }
    }

    /// Closes the connection without answering (a connection error for the client).
    pub fn hang_up() -> Self {
        Reply {
            hang_up: true,
            ..Reply::raw(500, "")
        }
    }

    /// Adds a header (e.g. `retry-after`).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Waits this long before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, normally.
    pub method: String,
    /// The path, e.g. `/v1/messages`.
    pub path: String,
    /// Every header, names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body as sent.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of a header (name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Debug, Default)]
struct State {
    script: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
}

/// The fake API server; it stops when dropped.
#[derive(Debug)]
pub struct FakeApi {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    server: JoinHandle<()>,
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeApi {
    /// Starts a server on `127.0.0.1` at an ephemeral port that answers with `script`, in order.
    ///
    /// # Panics
    /// When no loopback port can be bound (a test setup failure).
    pub async fn start(script: impl IntoIterator<Item = Reply>) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind a loopback port for the fake Messages API");
        let addr = listener.local_addr().expect("the fake API's address");
        let state = Arc::new(Mutex::new(State {
            script: script.into_iter().collect(),
            requests: Vec::new(),
        }));
        let shared = state.clone();
        let server = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let state = shared.clone();
                connections.spawn(async move {
                    let service = service_fn(move |request| answer(state.clone(), request));
                    // A connection error (or our own hang-up) just ends the connection.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeApi {
            addr,
            state,
            server,
        }
    }

    /// The base URL to give the client (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds replies at the end of the script.
    pub fn push(&self, reply: Reply) {
        self.lock().script.push_back(reply);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// How many scripted replies are left.
    pub fn remaining(&self) -> usize {
        self.lock().script.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why the fake hung up: an error makes hyper close the connection.
#[derive(Debug)]
struct HangUp;

impl std::fmt::Display for HangUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("scripted hang-up")
    }
}

impl std::error::Error for HangUp {}

async fn answer(
    state: Arc<Mutex<State>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, HangUp> {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        Err(_) => return Err(HangUp),
    };
    let reply = {
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        state.requests.push(RecordedRequest {
            method,
            path,
            headers,
            body,
        });
        state.script.pop_front()
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::error(500, "api_error", "the fake API has no reply left")
            .header("x-should-retry", "false")
    });
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    if reply.hang_up {
        return Err(HangUp);
    }
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name, value);
    }
    response
        .body(Full::new(Bytes::from(reply.body)))
        .map_err(|_| HangUp)
}

/// A whole reply message ending the turn with `text`.
pub fn end_turn(text: &str) -> Value {
    message(vec![json!({"type": "text", "text": text})], "end_turn")
}

/// A whole reply message asking for tool calls: optional text, then one `tool_use` block per
/// `(id, name, input)`.
pub fn tool_use(text: Option<&str>, calls: &[(&str, &str, Value)]) -> Value {
    let mut content: Vec<Value> = text
        .map(|text| json!({"type": "text", "text": text}))
        .into_iter()
        .collect();
    content.extend(calls.iter().map(
        |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
    ));
    message(content, "tool_use")
}

/// A whole reply message with these blocks and this stop reason, and a small usage.
pub fn message(content: Vec<Value>, stop_reason: &str) -> Value {
    json!({
        "id": format!("msg_fake_{}", fastrand::u64(..)),
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    })
}
