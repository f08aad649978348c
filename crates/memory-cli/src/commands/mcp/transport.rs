//! The transport `memory mcp` serves rmcp over: a typed `(Sink, Stream)` pair, rmcp's
//! [`IntoTransport`](rmcp::transport::IntoTransport) form, built on standard input and output.
//!
//! rmcp's own stdio transport ignores a line that is not JSON, answers a malformed `tools/call`
//! or `initialize` as an unknown method, drops an oversized message without an answer, and runs
//! the requests of one client concurrently. The [`Stream`](futures::Stream) half reads the lines itself (through
//! [`memory_cli::lines`], bounded, on a thread of its own), decodes each into an rmcp message,
//! and:
//!
//! - answers a line that is not JSON with `-32700 Parse error` (id `null`, as JSON-RPC says);
//! - answers JSON that is no JSON-RPC message with `-32600 Invalid Request`;
//! - answers a line over [`MAX_LINE_BYTES`] with `-32600 Invalid Request`, with the request's
//!   `id` when it could be picked out of the skipped line;
//! - answers an `initialize`, `tools/call`, `tools/list` or `ping` whose params do not fit
//!   with `-32602 Invalid params` and the reason;
//! - hands every other message to rmcp, in order, holding a `tools/call` back until the one
//!   before it is answered, so that one client's pipelined tool calls run in the order sent (a
//!   pipelined create then view sees the create).
//!
//! rmcp's messages (the [`Sink`] half) and the stream's own answers go to standard output
//! through one writer task, a whole line at a time; the writer tells the stream which requests
//! are answered.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::channel::mpsc as channel;
use futures::stream::BoxStream;
use futures::{Sink, SinkExt, StreamExt};
use memory_cli::lines::{Line, MAX_LINE_BYTES, TooLong, spawn_reader};
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    InitializeRequestParams, JsonRpcMessage, PaginatedRequestParams, RequestId,
    ServerJsonRpcMessage,
};
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// JSON-RPC: the line is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a request, notification or response.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method's params do not fit.
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// Tool calls held back at most before the stream stops reading input until they drain.
const MAX_HELD: usize = 64;

/// Lines waiting for the writer before a sender waits.
const OUTPUT_LINES: usize = 16;

/// One line for standard output.
#[derive(Debug)]
enum Out {
    /// A message of rmcp's (boxed: a message is large, an answer line three pointers).
    Rmcp(Box<ServerJsonRpcMessage>),
    /// An answer of the stream's own, `\n` included.
    Line(Vec<u8>),
}

/// The transport to serve rmcp over.
pub(crate) type Transport = (MessageSink, BoxStream<'static, ClientJsonRpcMessage>);

/// rmcp's output: each message goes to the writer task, in order.
#[derive(Debug)]
pub(crate) struct MessageSink(channel::Sender<Out>);

impl Sink<ServerJsonRpcMessage> for MessageSink {
    type Error = channel::SendError;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Pin::new(&mut self.0).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: ServerJsonRpcMessage) -> Result<(), Self::Error> {
        Pin::new(&mut self.0).start_send(Out::Rmcp(Box::new(item)))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Pin::new(&mut self.0).poll_close(cx)
    }
}

/// The writer task: await [`Writer::finish`] once rmcp's service ended.
#[derive(Debug)]
pub(crate) struct Writer(tokio::task::JoinHandle<std::io::Result<()>>);

impl Writer {
    /// Waits until every line is written (the transport must be gone: rmcp's service ended).
    ///
    /// # Errors
    /// Writing standard output failed.
    pub(crate) async fn finish(self) -> std::io::Result<()> {
        self.0.await.unwrap_or(Ok(()))
    }
}

/// Starts reading `input` (on a thread of its own) and writing `output`: the transport for
/// rmcp, and the writer to await after it.
///
/// # Errors
/// The reader thread could not be started.
pub(crate) fn start<R, W>(input: R, output: W) -> std::io::Result<(Transport, Writer)>
where
    R: std::io::Read + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let lines = spawn_reader(input, MAX_LINE_BYTES, &["id"])?;
    let (out_tx, out_rx) = channel::channel(OUTPUT_LINES);
    let (answered_tx, answered_rx) = mpsc::unbounded_channel();
    let input = Input {
        lines,
        input_done: false,
        batch: VecDeque::new(),
        ready: VecDeque::new(),
        outstanding: None,
        held: VecDeque::new(),
        answers: out_tx.clone(),
        answered: answered_rx,
    };
    // rmcp polls the stream inside a `select!` and drops the poll when another branch wins:
    // `unfold` keeps the step under way inside the stream, so no line is lost mid-step.
    let stream = futures::stream::unfold(input, |mut input| async move {
        let message = input.next().await?;
        Some((message, input))
    })
    .boxed();
    let writer = Writer(tokio::spawn(write(out_rx, answered_tx, output)));
    Ok(((MessageSink(out_tx), stream), writer))
}

/// A JSON-RPC error answer, as one line.
pub(crate) fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// What to do with one input line.
#[derive(Debug)]
enum Action {
    /// Nothing (a blank line).
    Skip,
    /// Answer it here.
    Answer(Vec<u8>),
    /// Give it to rmcp.
    Forward(ClientJsonRpcMessage),
    /// A `tools/call` with this id: give it to rmcp once the calls before it are answered.
    ToolCall(RequestId, ClientJsonRpcMessage),
    /// `notifications/cancelled` of this request id.
    Cancel(RequestId, ClientJsonRpcMessage),
}

/// A JSON-RPC id as sent back: a string or a number, else `null`.
fn answer_id(id: Option<&Value>) -> Value {
    match id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// Decides what to do with a complete line.
fn classify(line: &[u8]) -> Action {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Action::Skip;
    }
    let message = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => message,
        Err(typed) => {
            return Action::Answer(match serde_json::from_slice::<Value>(line) {
                Err(e) => error_line(&Value::Null, PARSE_ERROR, &format!("Parse error: {e}")),
                Ok(value) => {
                    let id = answer_id(value.get("id"));
                    // A request of a method this server has, whose params are no object.
                    let method = value
                        .get("method")
                        .and_then(Value::as_str)
                        .filter(|_| value.get("jsonrpc") == Some(&json!("2.0")));
                    let params = value.get("params");
                    match method.and_then(|m| invalid_params(m, params).map(|r| (m, r))) {
                        Some((method, reason)) if !id.is_null() => error_line(
                            &id,
                            INVALID_PARAMS,
                            &format!("Invalid params for {method}: {reason}"),
                        ),
                        _ => error_line(&id, INVALID_REQUEST, &format!("Invalid Request: {typed}")),
                    }
                }
            });
        }
    };
    match &message {
        JsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CallToolRequest(_) => Action::ToolCall(request.id.clone(), message),
            ClientRequest::CustomRequest(custom) => {
                match invalid_params(&custom.method, custom.params.as_ref()) {
                    Some(reason) => Action::Answer(error_line(
                        &request.id.clone().into_json_value(),
                        INVALID_PARAMS,
                        &format!("Invalid params for {}: {reason}", custom.method),
                    )),
                    None => Action::Forward(message),
                }
            }
            _ => Action::Forward(message),
        },
        JsonRpcMessage::Notification(notification) => match &notification.notification {
            ClientNotification::CancelledNotification(cancelled) => {
                match &cancelled.params.request_id {
                    Some(id) => Action::Cancel(id.clone(), message),
                    None => Action::Forward(message),
                }
            }
            _ => Action::Forward(message),
        },
        _ => Action::Forward(message),
    }
}

/// Why the params of a method this server has do not fit (rmcp reads such a request as an
/// unknown method); `None` for other methods.
fn invalid_params(method: &str, params: Option<&Value>) -> Option<String> {
    fn reason<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> String {
        match params {
            None => "params are missing".to_owned(),
            Some(params) => match T::deserialize(params) {
                Err(e) => e.to_string(),
                Ok(_) => "params do not fit".to_owned(),
            },
        }
    }
    match method {
        "tools/call" => Some(reason::<CallToolRequestParams>(params)),
        "initialize" => Some(reason::<InitializeRequestParams>(params)),
        "tools/list" => Some(reason::<PaginatedRequestParams>(params)),
        "ping" => Some("params must be an object".to_owned()),
        _ => None,
    }
}

/// The answer to a line too long to read.
fn too_long_line(line: &TooLong) -> Vec<u8> {
    error_line(
        &answer_id(line.field("id")),
        INVALID_REQUEST,
        &format!("Invalid Request: {line}"),
    )
}

/// The stream's state: the input lines, answered here or handed to rmcp in order, tool calls
/// held back.
struct Input {
    lines: mpsc::Receiver<std::io::Result<Vec<Line>>>,
    input_done: bool,
    /// The rest of the batch of lines being read.
    batch: VecDeque<Line>,
    /// Messages for rmcp, in order.
    ready: VecDeque<ClientJsonRpcMessage>,
    /// The id of the tool call rmcp is running.
    outstanding: Option<RequestId>,
    /// Tool calls waiting for it, in order.
    held: VecDeque<(RequestId, ClientJsonRpcMessage)>,
    /// The writer, for the answers given here.
    answers: channel::Sender<Out>,
    /// The ids the writer wrote answers of; closed when writing failed.
    answered: mpsc::UnboundedReceiver<RequestId>,
}

impl Input {
    /// The next message for rmcp; `None` ends the session (the input is done and every tool
    /// call answered, or standard output failed).
    async fn next(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            if let Some(line) = self.batch.pop_front() {
                if self.take(line).await.is_err() {
                    return None;
                }
                continue;
            }
            if self.input_done && self.outstanding.is_none() && self.held.is_empty() {
                return None;
            }
            tokio::select! {
                batch = self.lines.recv(), if !self.input_done && self.held.len() < MAX_HELD => {
                    match batch {
                        None => self.input_done = true,
                        Some(Err(e)) => {
                            tracing::warn!(error = %e, "cannot read standard input");
                            self.input_done = true;
                        }
                        Some(Ok(batch)) => self.batch = batch.into(),
                    }
                }
                id = self.answered.recv() => match id {
                    // The writer stopped: standard output is gone.
                    None => return None,
                    Some(id) => {
                        if self.outstanding.as_ref() == Some(&id) {
                            self.outstanding = None;
                            self.release();
                        }
                    }
                },
            }
        }
    }

    /// Answers `line` here or queues it for rmcp.
    ///
    /// # Errors
    /// The writer is gone.
    async fn take(&mut self, line: Line) -> Result<(), channel::SendError> {
        let line = match line {
            Line::TooLong(line) => {
                tracing::debug!(bytes = line.bytes, "MCP message too long");
                return self.answers.send(Out::Line(too_long_line(&line))).await;
            }
            Line::Complete(line) => line,
        };
        match classify(&line) {
            Action::Skip => {}
            Action::Answer(answer) => self.answers.send(Out::Line(answer)).await?,
            Action::Forward(message) => self.ready.push_back(message),
            Action::ToolCall(id, message) => {
                if self.outstanding.is_none() && self.held.is_empty() {
                    self.outstanding = Some(id);
                    self.ready.push_back(message);
                } else {
                    self.held.push_back((id, message));
                }
            }
            Action::Cancel(id, message) => {
                if let Some(at) = self.held.iter().position(|(held, _)| *held == id) {
                    // Never started: drop it (a cancelled request gets no answer).
                    self.held.remove(at);
                } else if self.outstanding.as_ref() == Some(&id) {
                    // rmcp answers a cancelled request with nothing: the next call may start.
                    self.ready.push_back(message);
                    self.outstanding = None;
                    self.release();
                } else {
                    self.ready.push_back(message);
                }
            }
        }
        Ok(())
    }

    /// Starts the next held tool call, if any.
    fn release(&mut self) {
        if let Some((id, message)) = self.held.pop_front() {
            self.outstanding = Some(id);
            self.ready.push_back(message);
        }
    }
}

/// The id of a response or error rmcp sends (not of a request of the server's own).
fn answered_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

/// Writes every line to `output`, a whole line at a time, and tells the stream which requests
/// are answered. Ends when every sender is gone (rmcp's service ended), or at the first write
/// error.
async fn write<W>(
    mut lines: channel::Receiver<Out>,
    answered: mpsc::UnboundedSender<RequestId>,
    mut output: W,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    while let Some(out) = lines.next().await {
        let (line, id) = match out {
            Out::Line(line) => (line, None),
            Out::Rmcp(message) => {
                let mut line = serde_json::to_vec(&message)?;
                line.push(b'\n');
                (line, answered_id(&message).cloned())
            }
        };
        output.write_all(&line).await?;
        output.flush().await?;
        if let Some(id) = id {
            let _ = answered.send(id);
        }
    }
    output.flush().await
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use rmcp::ErrorData;

    use super::*;

    /// Standard output for a test: what was written, shared with the test.
    #[derive(Clone, Default)]
    struct Written(Arc<Mutex<Vec<u8>>>);

    impl AsyncWrite for Written {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            bytes: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Poll::Ready(Ok(bytes.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn call(id: i64) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"memory"}}}}"#
        ) + "\n"
    }

    fn id_of(message: Option<ClientJsonRpcMessage>) -> RequestId {
        match message {
            Some(JsonRpcMessage::Request(request)) => request.id,
            other => panic!("not a request: {other:?}"),
        }
    }

    fn answer(id: i64) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::error(
            ErrorData::internal_error("x", None),
            Some(RequestId::Number(id)),
        )
    }

    #[tokio::test]
    async fn tool_calls_wait_for_the_answer_before_them_and_bad_lines_are_answered() {
        let input = [
            call(1),
            call(2),
            call(3),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#
                .to_owned()
                + "\n",
            "not json\n".to_owned(),
        ]
        .concat();
        let written = Written::default();
        let ((mut sink, mut stream), writer) =
            start(std::io::Cursor::new(input), written.clone()).unwrap();
        assert_eq!(id_of(stream.next().await), RequestId::Number(1));
        // Call 2 was cancelled while held; call 3 waits for the answer to call 1.
        let waiting = tokio::time::timeout(Duration::from_millis(200), stream.next()).await;
        assert!(waiting.is_err(), "{waiting:?}");
        sink.send(answer(1)).await.unwrap();
        assert_eq!(id_of(stream.next().await), RequestId::Number(3));
        sink.send(answer(3)).await.unwrap();
        // The input is done and every call answered: the session ends.
        assert!(stream.next().await.is_none());
        drop((sink, stream));
        writer.finish().await.unwrap();
        let written = written.0.lock().unwrap().clone();
        let lines: Vec<Value> = written
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect();
        let ids: Vec<&Value> = lines.iter().map(|line| &line["id"]).collect();
        assert_eq!(ids, [&Value::Null, &json!(1), &json!(3)], "{lines:?}");
        assert_eq!(lines[0]["error"]["code"], json!(PARSE_ERROR));
    }

    fn answer_of(line: &str) -> Value {
        match classify(line.as_bytes()) {
            Action::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn lines_are_sorted_into_answers_forwards_and_tool_calls() {
        assert!(matches!(classify(b""), Action::Skip));
        assert!(matches!(classify(b"  \r"), Action::Skip));
        let parse = answer_of("not json");
        assert_eq!(parse["error"]["code"], json!(PARSE_ERROR));
        assert_eq!(parse["id"], Value::Null);
        let invalid = answer_of(r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#);
        assert_eq!(invalid["error"]["code"], json!(INVALID_REQUEST));
        assert_eq!(invalid["id"], json!("a"));
        let params =
            answer_of(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#);
        assert_eq!(params["error"]["code"], json!(INVALID_PARAMS));
        assert_eq!(params["id"], json!(7));
        let missing = answer_of(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call"}"#);
        assert_eq!(missing["error"]["code"], json!(INVALID_PARAMS));
        let init = answer_of(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}"#,
        );
        assert_eq!(init["error"]["code"], json!(INVALID_PARAMS));
        assert!(matches!(
            classify(
                br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory"}}"#
            ),
            Action::ToolCall(RequestId::Number(3), _)
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#),
            Action::Forward(_)
        ));
        assert!(matches!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#
            ),
            Action::Cancel(RequestId::Number(3), _)
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Action::Forward(_)
        ));
    }
}
