//! A scripted fake of the Messages API on a loopback port, for tests without a network
//! (feature `testing`). Not a stable API.
//!
//! [`FakeApi::start`] serves `POST /v1/messages` (any path, in fact) on `127.0.0.1` at an
//! ephemeral port, answers each request with the next scripted [`Reply`], and records every
//! request it got. When the script runs out it answers 500 with `x-should-retry: false`.
//!
//! A request with `"stream": true` gets a scripted [`Reply::message`] as server-sent events
//! ([`stream_events`]: text in pieces of a few characters, each `tool_use` input over many
//! `input_json_delta`s), so one script serves a run with and without streaming.
//! [`Reply::events`] sends given events, [`Reply::cut`] sends them and then breaks the
//! connection (a stream cut mid-way).
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
use std::future::Future as _;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper::body::{Bytes, Frame, Incoming};
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
    /// A whole message: JSON, or its events to a streamed request.
    message: Option<Value>,
    /// Server-sent events, sent whatever the request asked.
    events: Option<Vec<Value>>,
    /// Break the connection after the events.
    cut: bool,
}

impl Reply {
    /// `200` with this message as the body; to a streamed request, the message's events
    /// ([`stream_events`]).
    pub fn message(message: Value) -> Self {
        Reply {
            message: Some(message.clone()),
            ..Reply::json(200, &message)
        }
    }

    /// `200` with these events (`data:` JSON each, `event:` its `type`) as
    /// `text/event-stream`, the connection then closed normally.
    pub fn events(events: Vec<Value>) -> Self {
        Reply {
            events: Some(events),
            ..Reply::raw(200, "")
        }
        .header("content-type", "text/event-stream")
    }

    /// [`Reply::events`], then the connection broken without ending the body: a stream cut
    /// mid-way.
    pub fn cut(events: Vec<Value>) -> Self {
        Reply {
            cut: true,
            ..Reply::events(events)
        }
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
            message: None,
            events: None,
            cut: false,
        }
    }

    /// Closes the connection without answering (a connection error for the client).
    pub fn hang_up() -> Self {
        Reply {
            hang_up: true,
            ..Reply::raw(500, "")
        }
    }

    /// Adds a header (e.g. `retry-after`); a `content-type` replaces the one set.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if name.eq_ignore_ascii_case("content-type") {
            self.headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
        }
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

/// The fake's answer body: chunks, then the end or (for a cut stream) an error, which makes
/// hyper break the connection mid-body.
struct FakeBody {
    chunks: VecDeque<Bytes>,
    cut: bool,
    /// The pause before the cut, so that the events before it reach the client first.
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl hyper::body::Body for FakeBody {
    type Data = Bytes;
    type Error = HangUp;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HangUp>>> {
        if let Some(chunk) = self.chunks.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        if !self.cut {
            return Poll::Ready(None);
        }
        let pause = self
            .pause
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(50))));
        match pause.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                self.cut = false;
                Poll::Ready(Some(Err(HangUp)))
            }
        }
    }
}

/// Server-sent events, one chunk per event (so a client meets them as a network would give
/// them, over many reads).
fn sse(events: &[Value]) -> VecDeque<Bytes> {
    events
        .iter()
        .map(|event| {
            let kind = event
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("message");
            Bytes::from(format!("event: {kind}\ndata: {event}\n\n"))
        })
        .collect()
}

async fn answer(
    state: Arc<Mutex<State>>,
    request: Request<Incoming>,
) -> Result<Response<FakeBody>, HangUp> {
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
    let streamed = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("stream").and_then(Value::as_bool))
        .unwrap_or(false);
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
    let mut reply = reply;
    if streamed && let Some(message) = &reply.message {
        let mut events = Reply::events(stream_events(message, 4));
        events.headers.extend(
            reply
                .headers
                .into_iter()
                .filter(|(name, _)| !name.eq_ignore_ascii_case("content-type")),
        );
        reply = events;
    }
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name, value);
    }
    let body = match &reply.events {
        Some(events) => FakeBody {
            chunks: sse(events),
            cut: reply.cut,
            pause: None,
        },
        None => FakeBody {
            chunks: VecDeque::from([Bytes::from(reply.body)]),
            cut: false,
            pause: None,
        },
    };
    response.body(body).map_err(|_| HangUp)
}

/// The events a streamed answer of `message` sends: `message_start`, each block started, its
/// text (or thinking) in pieces of `piece` characters and a `tool_use` input as its JSON text
/// in pieces of `piece` characters (`input_json_delta`), each block stopped, `message_delta`
/// with the stop reason and output usage, `message_stop`. Accumulated, they are `message`.
pub fn stream_events(message: &Value, piece: usize) -> Vec<Value> {
    let piece = piece.max(1);
    let pieces = |text: &str| -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chars
            .chunks(piece)
            .map(|chunk| chunk.iter().collect())
            .collect()
    };
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["stop_sequence"] = Value::Null;
    let usage = message.get("usage").cloned().unwrap_or_else(|| json!({}));
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    start["usage"] = start_usage;
    let mut events = vec![json!({"type": "message_start", "message": start})];
    let blocks = message
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (index, block) in blocks.iter().enumerate() {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let mut first = block.clone();
        let mut deltas = Vec::new();
        match kind {
            "text" => {
                first["text"] = json!("");
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                for part in pieces(text) {
                    deltas.push(json!({"type": "text_delta", "text": part}));
                }
            }
            "thinking" => {
                first["thinking"] = json!("");
                first["signature"] = json!("");
                let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                for part in pieces(text) {
                    deltas.push(json!({"type": "thinking_delta", "thinking": part}));
                }
                if let Some(signature) = block.get("signature") {
                    deltas.push(json!({"type": "signature_delta", "signature": signature}));
                }
            }
            "tool_use" => {
                first["input"] = json!({});
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                for part in pieces(&input.to_string()) {
                    deltas.push(json!({"type": "input_json_delta", "partial_json": part}));
                }
            }
            _ => {}
        }
        events.push(json!({"type": "content_block_start", "index": index, "content_block": first}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({
        "type": "message_delta",
        "delta": {
            "stop_reason": message.get("stop_reason").cloned().unwrap_or(Value::Null),
            "stop_sequence": message.get("stop_sequence").cloned().unwrap_or(Value::Null)
        },
        "usage": {"output_tokens": usage.get("output_tokens").cloned().unwrap_or(json!(0))}
    }));
    events.push(json!({"type": "message_stop"}));
    events
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
