//! The line layer in front of the MCP library for `memory mcp`.
//!
//! rmcp reads standard input itself, but it ignores a line that is not JSON, answers a
//! malformed `tools/call` or `initialize` as an unknown method, drops an oversized message
//! without an answer, and runs the requests of one client concurrently. This layer reads the
//! lines itself (through [`memory_cli::lines`], bounded, on a thread of its own) and:
//!
//! - answers a line that is not JSON with `-32700 Parse error` (id `null`, as JSON-RPC says);
//! - answers JSON that is no JSON-RPC message with `-32600 Invalid Request`;
//! - answers a line over [`MAX_LINE_BYTES`] with `-32600 Invalid Request`, with the request's
//!   `id` when it could be picked out of the skipped line;
//! - answers an `initialize`, `tools/call`, `tools/list` or `ping` whose params do not fit
//!   with `-32602 Invalid params` and the reason;
//! - feeds every other line to rmcp, in order, holding a `tools/call` back until the one before
//!   it is answered, so that one client's pipelined tool calls run in the order sent (a
//!   pipelined create then view sees the create).
//!
//! rmcp's answers and this layer's own go to standard output through one writer, a whole
//! line at a time.

use std::collections::VecDeque;

use memory_cli::lines::{Line, MAX_LINE_BYTES, TooLong, spawn_reader};
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    InitializeRequestParams, JsonRpcMessage, PaginatedRequestParams,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// JSON-RPC: the line is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a request, notification or response.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method's params do not fit.
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// Tool calls held back at most before the layer stops reading input until they drain.
const MAX_HELD: usize = 64;

/// What passes between the layer and rmcp: large enough for a message in one piece.
const PIPE_BYTES: usize = 1 << 20;

/// The two ends rmcp is served over: it reads the first and writes the second.
pub(crate) type RmcpTransport = (DuplexStream, DuplexStream);

/// A running layer: give [`Layer::transport`] to rmcp, then await [`Layer::finish`].
pub(crate) struct Layer {
    transport: Option<RmcpTransport>,
    feeder: tokio::task::JoinHandle<()>,
    pump: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl std::fmt::Debug for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layer").finish_non_exhaustive()
    }
}

impl Layer {
    /// Starts reading `input` (on a thread of its own) and writing `output`.
    ///
    /// # Errors
    /// The reader thread could not be started.
    pub(crate) fn start<R, W>(input: R, output: W) -> std::io::Result<Layer>
    where
        R: std::io::Read + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let lines = spawn_reader(input, MAX_LINE_BYTES, &["id"])?;
        let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE_BYTES);
        let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
        let (direct_tx, direct_rx) = mpsc::unbounded_channel();
        let (answered_tx, answered_rx) = mpsc::unbounded_channel();
        let feeder = Feeder {
            to_rmcp: Some(to_rmcp),
            direct: direct_tx,
            outstanding: None,
            held: VecDeque::new(),
        };
        Ok(Layer {
            transport: Some((rmcp_reads, rmcp_writes)),
            feeder: tokio::spawn(feeder.run(lines, answered_rx)),
            pump: tokio::spawn(pump(from_rmcp, direct_rx, answered_tx, output)),
        })
    }

    /// The transport to serve rmcp over (once).
    pub(crate) fn transport(&mut self) -> Option<RmcpTransport> {
        self.transport.take()
    }

    /// Waits until the input is done and every answer written.
    ///
    /// # Errors
    /// Writing standard output failed.
    pub(crate) async fn finish(self) -> std::io::Result<()> {
        drop(self.transport);
        let _ = self.feeder.await;
        self.pump.await.unwrap_or(Ok(()))
    }
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
#[derive(Debug, PartialEq)]
enum Action {
    /// Nothing (a blank line).
    Skip,
    /// Answer it here.
    Answer(Vec<u8>),
    /// Give it to rmcp.
    Forward,
    /// A `tools/call` with this id: give it to rmcp once the calls before it are answered.
    ToolCall(Value),
    /// `notifications/cancelled` of this request id.
    Cancel(Value),
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
                    let params = value.get("params").cloned();
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
    match message {
        JsonRpcMessage::Request(request) => {
            let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
            match request.request {
                ClientRequest::CallToolRequest(_) => Action::ToolCall(id),
                ClientRequest::CustomRequest(custom) => {
                    match invalid_params(&custom.method, custom.params) {
                        Some(reason) => Action::Answer(error_line(
                            &id,
                            INVALID_PARAMS,
                            &format!("Invalid params for {}: {reason}", custom.method),
                        )),
                        None => Action::Forward,
                    }
                }
                _ => Action::Forward,
            }
        }
        JsonRpcMessage::Notification(notification) => match notification.notification {
            ClientNotification::CancelledNotification(cancelled) => {
                match cancelled.params.request_id {
                    Some(id) => Action::Cancel(serde_json::to_value(&id).unwrap_or(Value::Null)),
                    None => Action::Forward,
                }
            }
            _ => Action::Forward,
        },
        _ => Action::Forward,
    }
}

/// Why the params of a method this server has do not fit (rmcp reads such a request as an
/// unknown method); `None` for other methods.
fn invalid_params(method: &str, params: Option<Value>) -> Option<String> {
    fn reason<T: serde::de::DeserializeOwned>(params: Option<Value>) -> String {
        match params {
            None => "params are missing".to_owned(),
            Some(params) => match serde_json::from_value::<T>(params) {
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

/// Feeds rmcp the input lines in order, answering the bad ones and holding tool calls back.
struct Feeder {
    /// rmcp's input; `None` once rmcp went away.
    to_rmcp: Option<DuplexStream>,
    direct: mpsc::UnboundedSender<Vec<u8>>,
    /// The id of the tool call rmcp is running.
    outstanding: Option<Value>,
    /// Tool calls waiting for it, in order.
    held: VecDeque<(Value, Vec<u8>)>,
}

impl Feeder {
    async fn run(
        mut self,
        mut lines: mpsc::Receiver<std::io::Result<Vec<Line>>>,
        mut answered: mpsc::UnboundedReceiver<Value>,
    ) {
        let mut input_done = false;
        loop {
            if input_done && self.outstanding.is_none() && self.held.is_empty() {
                break;
            }
            if self.to_rmcp.is_none() {
                break;
            }
            tokio::select! {
                batch = lines.recv(), if !input_done && self.held.len() < MAX_HELD => match batch {
                    None => input_done = true,
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "cannot read standard input");
                        input_done = true;
                    }
                    Some(Ok(batch)) => {
                        for line in batch {
                            self.take(line).await;
                        }
                    }
                },
                id = answered.recv() => match id {
                    // rmcp stopped writing: the session is over.
                    None => break,
                    Some(id) => {
                        if self.outstanding.as_ref() == Some(&id) {
                            self.outstanding = None;
                            self.release().await;
                        }
                    }
                },
            }
        }
        // Closing rmcp's input ends the session once it has answered what it has.
    }

    async fn take(&mut self, line: Line) {
        let line = match line {
            Line::TooLong(line) => {
                tracing::debug!(bytes = line.bytes, "MCP message too long");
                let _ = self.direct.send(too_long_line(&line));
                return;
            }
            Line::Complete(line) => line,
        };
        match classify(&line) {
            Action::Skip => {}
            Action::Answer(answer) => {
                let _ = self.direct.send(answer);
            }
            Action::Forward => self.forward(line).await,
            Action::ToolCall(id) => {
                if self.outstanding.is_none() && self.held.is_empty() {
                    self.outstanding = Some(id);
                    self.forward(line).await;
                } else {
                    self.held.push_back((id, line));
                }
            }
            Action::Cancel(id) => {
                if let Some(at) = self.held.iter().position(|(held, _)| *held == id) {
                    // Never started: drop it (a cancelled request gets no answer).
                    self.held.remove(at);
                } else if self.outstanding.as_ref() == Some(&id) {
                    self.forward(line).await;
                    self.outstanding = None;
                    self.release().await;
                } else {
                    self.forward(line).await;
                }
            }
        }
    }

    /// Starts the next held tool call, if any.
    async fn release(&mut self) {
        if let Some((id, line)) = self.held.pop_front() {
            self.outstanding = Some(id);
            self.forward(line).await;
        }
    }

    async fn forward(&mut self, mut line: Vec<u8>) {
        let Some(to_rmcp) = &mut self.to_rmcp else {
            return;
        };
        line.push(b'\n');
        if to_rmcp.write_all(&line).await.is_err() {
            self.to_rmcp = None;
        }
    }
}

/// The start of an answer rmcp wrote: its id, and whether it is a request of the server's own.
#[derive(serde::Deserialize)]
struct AnswerHead {
    id: Option<Value>,
    method: Option<serde::de::IgnoredAny>,
}

/// Writes rmcp's lines and the layer's own answers to `output`, a whole line at a time, and
/// tells the feeder which requests rmcp answered. Ends when rmcp closes its output.
async fn pump<W>(
    from_rmcp: DuplexStream,
    mut direct: mpsc::UnboundedReceiver<Vec<u8>>,
    answered: mpsc::UnboundedSender<Value>,
    mut output: W,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut direct_open = true;
    loop {
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => {
                if read? == 0 {
                    break;
                }
                output.write_all(&line).await?;
                output.flush().await?;
                if let Ok(AnswerHead { id: Some(id), method: None }) =
                    serde_json::from_slice::<AnswerHead>(&line)
                {
                    let _ = answered.send(id);
                }
                line.clear();
            }
            answer = direct.recv(), if direct_open => match answer {
                Some(answer) => {
                    output.write_all(&answer).await?;
                    output.flush().await?;
                }
                None => direct_open = false,
            },
        }
    }
    // Answers of the layer's own still queued (their lines came before the end of input).
    while let Ok(answer) = direct.try_recv() {
        output.write_all(&answer).await?;
    }
    output.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_of(line: &str) -> Value {
        match classify(line.as_bytes()) {
            Action::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn lines_are_sorted_into_answers_forwards_and_tool_calls() {
        assert_eq!(classify(b""), Action::Skip);
        assert_eq!(classify(b"  \r"), Action::Skip);
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
        assert_eq!(
            classify(
                br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory"}}"#
            ),
            Action::ToolCall(json!(3))
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#),
            Action::Forward
        );
        assert_eq!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#
            ),
            Action::Cancel(json!(3))
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Action::Forward
        );
    }
}
