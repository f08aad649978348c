//! Streamed replies: the Messages API's server-sent events ([`StreamEvent`]) and the
//! [`MessageAccumulator`] that turns them into the same [`MessageResponse`] a request without
//! streaming returns.
//!
//! The accumulation follows the official SDKs' (`accumulate_event` in anthropic-sdk-python's
//! `lib/streaming/_beta_messages.py`): `message_start` gives the message, each
//! `content_block_start` appends a block, `content_block_delta`s grow it (`text_delta`,
//! `input_json_delta` partials joined and parsed as the tool's input when the block stops,
//! `thinking_delta`, `signature_delta`, `citations_delta`, `compaction_delta`), and
//! `message_delta` sets the stop reason and merges the usage. Unlike a partial snapshot, the
//! accumulated message is given only after `message_stop`: a stream that ends before it, or
//! that sends an `error` event, is a [`StreamError`], never a message missing its end.

use serde_json::{Map, Value};

use super::MessageResponse;

/// One event of a streamed reply (`stream: true`), parsed from its `data:` JSON.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// `message_start`: the message, with no content yet and the usage of the input.
    MessageStart(Box<MessageResponse>),
    /// `content_block_start`: block `index` begins, as this JSON (text empty, input `{}`).
    ContentBlockStart {
        /// The block's index in the message's content.
        index: usize,
        /// The block as it starts (its `type` and first fields).
        content_block: Value,
    },
    /// `content_block_delta`: more of block `index`.
    ContentBlockDelta {
        /// The block's index.
        index: usize,
        /// What is added.
        delta: Delta,
    },
    /// `content_block_stop`: block `index` is complete.
    ContentBlockStop {
        /// The block's index.
        index: usize,
    },
    /// `message_delta`: the stop reason (in `delta`) and the output usage.
    MessageDelta {
        /// `stop_reason`, `stop_sequence`, and any other field the API sends (`container`...).
        delta: Map<String, Value>,
        /// The usage so far (`output_tokens`, and input counts when they changed).
        usage: Map<String, Value>,
        /// Other top-level fields (`context_management`...).
        extra: Map<String, Value>,
    },
    /// `message_stop`: the reply is complete.
    MessageStop,
    /// `ping`: nothing, keeps the connection alive.
    Ping,
    /// `error`: the API failed mid-stream (e.g. `overloaded_error`); no more events follow.
    Error {
        /// The API's error type.
        error_type: String,
        /// The API's message.
        message: String,
    },
    /// An event type newer than this crate, kept.
    Other(Value),
}

/// What a `content_block_delta` adds to its block.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Delta {
    /// `text_delta`: text to append to a text block.
    Text(String),
    /// `input_json_delta`: a piece of a `tool_use` block's input JSON (only the pieces joined
    /// are JSON).
    InputJson(String),
    /// `thinking_delta`: text to append to a thinking block.
    Thinking(String),
    /// `signature_delta`: a thinking block's signature.
    Signature(String),
    /// Any other delta (`citations_delta`, `compaction_delta`, newer ones), kept whole.
    Other(Value),
}

/// Why a stream did not give a whole message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The stream ended (the connection closed or broke) before `message_stop`: the reply is
    /// incomplete and was not used.
    #[error(
        "the reply stream was cut after {events} events, before message_stop: the reply is incomplete{}",
        cause.as_ref().map(|c| format!(" ({c})")).unwrap_or_default()
    )]
    Incomplete {
        /// How many events had arrived.
        events: usize,
        /// What ended it, when the transport said (a connection error's text).
        cause: Option<String>,
    },
    /// The API sent an `error` event mid-stream.
    #[error("the reply stream failed with {error_type}: {message}")]
    Api {
        /// The API's error type (`overloaded_error`...).
        error_type: String,
        /// The API's message.
        message: String,
    },
    /// An event that is not the API's shape or comes out of order (a delta before its block,
    /// content before `message_start`...).
    #[error("the reply stream sent an unexpected event: {reason}")]
    Malformed {
        /// What was wrong.
        reason: String,
    },
    /// A `tool_use` block's input pieces, joined, are not a JSON object.
    #[error("the input of tool_use block {index} is not JSON: {reason}")]
    InvalidToolInput {
        /// The block's index.
        index: usize,
        /// The parser's complaint.
        reason: String,
    },
}

impl StreamEvent {
    /// Parses one event's `data:` JSON (the `type` field says which event it is).
    ///
    /// # Errors
    /// [`StreamError::Malformed`] for JSON that is not an event of a known type's shape.
    pub fn from_json(data: Value) -> Result<Self, StreamError> {
        let malformed = |reason: String| StreamError::Malformed { reason };
        let Value::Object(mut object) = data else {
            return Err(malformed("an event that is not a JSON object".to_owned()));
        };
        let kind = object
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let index = |object: &Map<String, Value>| {
            object
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| malformed(format!("a {kind} event without an index")))
        };
        Ok(match kind.as_str() {
            "message_start" => {
                let message = object
                    .remove("message")
                    .ok_or_else(|| malformed("a message_start without its message".to_owned()))?;
                let message: MessageResponse = serde_json::from_value(message)
                    .map_err(|e| malformed(format!("a message_start message: {e}")))?;
                StreamEvent::MessageStart(Box::new(message))
            }
            "content_block_start" => StreamEvent::ContentBlockStart {
                index: index(&object)?,
                content_block: match object.remove("content_block") {
                    Some(block @ Value::Object(_)) => block,
                    _ => return Err(malformed("a content_block_start without its block".into())),
                },
            },
            "content_block_delta" => {
                let index = index(&object)?;
                let Some(Value::Object(delta)) = object.remove("delta") else {
                    return Err(malformed("a content_block_delta without its delta".into()));
                };
                StreamEvent::ContentBlockDelta {
                    index,
                    delta: Delta::from_object(delta),
                }
            }
            "content_block_stop" => StreamEvent::ContentBlockStop {
                index: index(&object)?,
            },
            "message_delta" => {
                let take = |object: &mut Map<String, Value>, key| match object.remove(key) {
                    Some(Value::Object(map)) => map,
                    _ => Map::new(),
                };
                let delta = take(&mut object, "delta");
                let usage = take(&mut object, "usage");
                object.remove("type");
                StreamEvent::MessageDelta {
                    delta,
                    usage,
                    extra: object,
                }
            }
            "message_stop" => StreamEvent::MessageStop,
            "ping" => StreamEvent::Ping,
            "error" => {
                let error = object.get("error");
                let field = |name| {
                    error
                        .and_then(|e| e.get(name))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                StreamEvent::Error {
                    error_type: field("type"),
                    message: field("message"),
                }
            }
            _ => StreamEvent::Other(Value::Object(object)),
        })
    }

    /// The text this event adds to the reply's text (a `text_delta`), if any.
    pub fn text_delta(&self) -> Option<&str> {
        match self {
            StreamEvent::ContentBlockDelta {
                delta: Delta::Text(text),
                ..
            } => Some(text),
            _ => None,
        }
    }
}

impl Delta {
    fn from_object(mut delta: Map<String, Value>) -> Self {
        let kind = delta
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let field = match kind.as_str() {
            "text_delta" => "text",
            "input_json_delta" => "partial_json",
            "thinking_delta" => "thinking",
            "signature_delta" => "signature",
            _ => return Delta::Other(Value::Object(delta)),
        };
        let Some(Value::String(text)) = delta.remove(field) else {
            return Delta::Other(Value::Object(delta));
        };
        match kind.as_str() {
            "text_delta" => Delta::Text(text),
            "input_json_delta" => Delta::InputJson(text),
            "thinking_delta" => Delta::Thinking(text),
            _ => Delta::Signature(text),
        }
    }
}

/// The events a stream of `reply` would send, one delta per block: what a transport that
/// cannot stream gives a caller who asked for events
/// ([`MessagesTransport::stream_message`](super::MessagesTransport::stream_message)'s
/// default). Accumulated, they give `reply` back.
pub fn events_of(reply: &MessageResponse) -> Vec<StreamEvent> {
    let mut start = reply.clone();
    start.content = Vec::new();
    let mut events = vec![StreamEvent::MessageStart(Box::new(start))];
    for (index, block) in reply.content.iter().enumerate() {
        let Ok(Value::Object(mut whole)) = serde_json::to_value(block) else {
            continue;
        };
        let kind = whole.get("type").and_then(Value::as_str).unwrap_or("");
        let delta = match kind {
            "text" => whole
                .insert("text".to_owned(), Value::String(String::new()))
                .and_then(|v| v.as_str().map(|t| Delta::Text(t.to_owned()))),
            "tool_use" => whole
                .insert("input".to_owned(), Value::Object(Map::new()))
                .map(|input| Delta::InputJson(input.to_string())),
            _ => None,
        };
        events.push(StreamEvent::ContentBlockStart {
            index,
            content_block: Value::Object(whole),
        });
        if let Some(delta) = delta {
            events.push(StreamEvent::ContentBlockDelta { index, delta });
        }
        events.push(StreamEvent::ContentBlockStop { index });
    }
    let mut delta = Map::new();
    delta.insert(
        "stop_reason".to_owned(),
        serde_json::to_value(&reply.stop_reason).unwrap_or(Value::Null),
    );
    delta.insert(
        "stop_sequence".to_owned(),
        serde_json::to_value(&reply.stop_sequence).unwrap_or(Value::Null),
    );
    let usage = match serde_json::to_value(&reply.usage) {
        Ok(Value::Object(usage)) => usage,
        _ => Map::new(),
    };
    events.push(StreamEvent::MessageDelta {
        delta,
        usage,
        extra: Map::new(),
    });
    events.push(StreamEvent::MessageStop);
    events
}

/// Builds the reply of a stream from its events ([`push`](Self::push) each, then
/// [`finish`](Self::finish)).
///
/// ```
/// use memory_core::messages::{MessageAccumulator, StreamEvent};
/// use serde_json::json;
///
/// let events = [
///     json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
///         "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
///     json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "memory", "input": {}}}),
///     json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"vi"}}),
///     json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "ew\", \"path\": \"/memories\"}"}}),
///     json!({"type": "content_block_stop", "index": 0}),
///     json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 9}}),
///     json!({"type": "message_stop"}),
/// ];
/// let mut reply = MessageAccumulator::new();
/// for event in events {
///     reply.push(&StreamEvent::from_json(event).unwrap()).unwrap();
/// }
/// let reply = reply.finish().unwrap();
/// let call = reply.tool_uses().next().unwrap();
/// assert_eq!(call.input, json!({"command": "view", "path": "/memories"}));
/// assert_eq!((reply.usage.input_tokens, reply.usage.output_tokens), (5, 9));
/// ```
#[derive(Debug, Default)]
pub struct MessageAccumulator {
    message: Option<Value>,
    blocks: Vec<Value>,
    /// The input JSON pieces of each block so far (empty for blocks that have none).
    json: Vec<String>,
    events: usize,
    stopped: bool,
}

impl MessageAccumulator {
    /// An accumulator that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many events were pushed.
    pub fn events(&self) -> usize {
        self.events
    }

    /// Whether `message_stop` arrived.
    pub fn is_complete(&self) -> bool {
        self.stopped
    }

    /// Adds one event.
    ///
    /// # Errors
    /// [`StreamError::Api`] for an `error` event, [`StreamError::Malformed`] for an event out
    /// of order, [`StreamError::InvalidToolInput`] when a `tool_use` block stops with input
    /// that is not JSON.
    pub fn push(&mut self, event: &StreamEvent) -> Result<(), StreamError> {
        let malformed = |reason: &str| StreamError::Malformed {
            reason: reason.to_owned(),
        };
        self.events += 1;
        if self.stopped && !matches!(event, StreamEvent::Ping | StreamEvent::Other(_)) {
            return Err(malformed("an event after message_stop"));
        }
        match event {
            StreamEvent::Error {
                error_type,
                message,
            } => {
                return Err(StreamError::Api {
                    error_type: error_type.clone(),
                    message: message.clone(),
                });
            }
            StreamEvent::Ping | StreamEvent::Other(_) => {}
            StreamEvent::MessageStart(message) => {
                if self.message.is_some() {
                    return Err(malformed("a second message_start"));
                }
                let mut message = serde_json::to_value(message)
                    .map_err(|e| malformed(&format!("a message_start message: {e}")))?;
                // Content arrives as blocks; a message_start never holds any in practice.
                if let Some(Value::Array(content)) = message.get_mut("content") {
                    self.blocks = std::mem::take(content);
                    self.json = vec![String::new(); self.blocks.len()];
                }
                self.message = Some(message);
            }
            _ if self.message.is_none() => {
                return Err(malformed("an event before message_start"));
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                if *index != self.blocks.len() {
                    return Err(malformed("a content block out of order"));
                }
                self.blocks.push(content_block.clone());
                self.json.push(String::new());
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                let (Some(block), Some(json)) =
                    (self.blocks.get_mut(*index), self.json.get_mut(*index))
                else {
                    return Err(malformed("a delta of a block that did not start"));
                };
                apply_delta(block, json, delta);
            }
            StreamEvent::ContentBlockStop { index } => {
                self.close_block(*index)?;
            }
            StreamEvent::MessageDelta {
                delta,
                usage,
                extra,
            } => {
                let Some(Value::Object(message)) = self.message.as_mut() else {
                    return Err(malformed("an event before message_start"));
                };
                for (key, value) in delta.iter().chain(extra) {
                    message.insert(key.clone(), value.clone());
                }
                let totals = message
                    .entry("usage")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(totals) = totals {
                    for (key, value) in usage {
                        // Counts the delta leaves out (null) keep their message_start value.
                        if !value.is_null() {
                            totals.insert(key.clone(), value.clone());
                        }
                    }
                }
            }
            StreamEvent::MessageStop => self.stopped = true,
        }
        Ok(())
    }

    /// Parses block `index`'s input pieces, if it had any.
    fn close_block(&mut self, index: usize) -> Result<(), StreamError> {
        let (Some(block), Some(json)) = (self.blocks.get_mut(index), self.json.get_mut(index))
        else {
            return Err(StreamError::Malformed {
                reason: "the stop of a block that did not start".to_owned(),
            });
        };
        if json.is_empty() {
            return Ok(());
        }
        let input: Value =
            serde_json::from_str(json).map_err(|e| StreamError::InvalidToolInput {
                index,
                reason: e.to_string(),
            })?;
        if let Value::Object(block) = block {
            block.insert("input".to_owned(), input);
        }
        json.clear();
        Ok(())
    }

    /// The whole reply.
    ///
    /// # Errors
    /// [`StreamError::Incomplete`] when `message_stop` did not arrive (the stream was cut),
    /// [`StreamError::InvalidToolInput`] for a `tool_use` input that is not JSON, and
    /// [`StreamError::Malformed`] when the events do not make a message.
    pub fn finish(mut self) -> Result<MessageResponse, StreamError> {
        if !self.stopped {
            return Err(StreamError::Incomplete {
                events: self.events,
                cause: None,
            });
        }
        for index in 0..self.blocks.len() {
            self.close_block(index)?;
        }
        let Some(Value::Object(mut message)) = self.message else {
            return Err(StreamError::Malformed {
                reason: "no message_start".to_owned(),
            });
        };
        message.insert("content".to_owned(), Value::Array(self.blocks));
        serde_json::from_value(Value::Object(message)).map_err(|e| StreamError::Malformed {
            reason: format!("the message the events make: {e}"),
        })
    }
}

fn append(block: &mut Value, field: &str, text: &str) {
    if let Value::Object(block) = block {
        match block.get_mut(field) {
            Some(Value::String(existing)) => existing.push_str(text),
            _ => {
                block.insert(field.to_owned(), Value::String(text.to_owned()));
            }
        }
    }
}

fn apply_delta(block: &mut Value, json: &mut String, delta: &Delta) {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    match delta {
        Delta::Text(text) if kind == "text" => append(block, "text", text),
        Delta::InputJson(piece) => json.push_str(piece),
        Delta::Thinking(text) if kind == "thinking" => append(block, "thinking", text),
        Delta::Signature(signature) if kind == "thinking" => {
            if let Value::Object(block) = block {
                block.insert("signature".to_owned(), Value::String(signature.clone()));
            }
        }
        Delta::Other(delta) => {
            let delta_kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
            let Value::Object(block) = block else {
                return;
            };
            match delta_kind {
                "citations_delta" => {
                    if let Some(citation) = delta.get("citation") {
                        match block.get_mut("citations") {
                            Some(Value::Array(list)) => list.push(citation.clone()),
                            _ => {
                                block.insert(
                                    "citations".to_owned(),
                                    Value::Array(vec![citation.clone()]),
                                );
                            }
                        }
                    }
                }
                "compaction_delta" => {
                    if let Some(content) = delta.get("content") {
                        block.insert("content".to_owned(), content.clone());
                    }
                }
                // Newer deltas: the SDKs ignore what they do not know.
                _ => {}
            }
        }
        // A delta that does not fit its block's type is ignored, as the SDKs do.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start() -> Value {
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-test", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 1, "cache_read_input_tokens": 4}}})
    }

    fn accumulate(events: &[Value]) -> Result<MessageResponse, StreamError> {
        let mut acc = MessageAccumulator::new();
        for event in events {
            acc.push(&StreamEvent::from_json(event.clone())?)?;
        }
        acc.finish()
    }

    fn whole_stream() -> Vec<Value> {
        let mut events = vec![
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "look."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking "}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "memory."}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "memory", "input": {}}}),
        ];
        let input = r#"{"command": "create", "path": "/memories/notes.md", "file_text": "tea, \"green\"\n"}"#;
        // The input in pieces of three bytes (never splitting a character: it is ASCII).
        for piece in input.as_bytes().chunks(3) {
            let piece = std::str::from_utf8(piece).unwrap();
            events.push(json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        events.extend([
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                "usage": {"output_tokens": 42, "input_tokens": null}, "context_management": {"applied_edits": []}}),
            json!({"type": "message_stop"}),
        ]);
        events
    }

    #[test]
    fn a_stream_makes_the_message_a_request_without_streaming_returns() {
        let reply = accumulate(&whole_stream()).unwrap();
        let expected: MessageResponse = serde_json::from_value(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [
                {"type": "thinking", "thinking": "Let me look.", "signature": "sig"},
                {"type": "text", "text": "Checking memory."},
                {"type": "tool_use", "id": "t1", "name": "memory",
                 "input": {"command": "create", "path": "/memories/notes.md", "file_text": "tea, \"green\"\n"}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 42, "cache_read_input_tokens": 4},
            "context_management": {"applied_edits": []}
        }))
        .unwrap();
        assert_eq!(reply, expected);
    }

    #[test]
    fn a_cut_stream_is_an_error_never_a_partial_message() {
        let events = whole_stream();
        for cut in 0..events.len() {
            let err = accumulate(&events[..cut]).unwrap_err();
            assert_eq!(
                err,
                StreamError::Incomplete {
                    events: cut,
                    cause: None
                },
                "cut after {cut} events"
            );
        }
    }

    #[test]
    fn an_error_event_is_an_error() {
        let mut events = whole_stream();
        events.truncate(5);
        events.push(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        let err = accumulate(&events).unwrap_err();
        assert_eq!(
            err,
            StreamError::Api {
                error_type: "overloaded_error".into(),
                message: "Overloaded".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "the reply stream failed with overloaded_error: Overloaded"
        );
    }

    #[test]
    fn broken_input_and_events_out_of_order_are_errors() {
        let mut events = whole_stream();
        let stop = events.len() - 3;
        events.insert(stop, json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "}"}}));
        assert!(matches!(
            accumulate(&events),
            Err(StreamError::InvalidToolInput { index: 2, .. })
        ));
        let early = [
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ];
        assert!(matches!(
            accumulate(&early),
            Err(StreamError::Malformed { .. })
        ));
        let orphan = [
            start(),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}}),
        ];
        assert!(matches!(
            accumulate(&orphan),
            Err(StreamError::Malformed { .. })
        ));
        assert!(matches!(
            StreamEvent::from_json(json!([1])),
            Err(StreamError::Malformed { .. })
        ));
    }

    #[test]
    fn the_events_of_a_reply_accumulate_to_it() {
        let reply = accumulate(&whole_stream()).unwrap();
        let mut acc = MessageAccumulator::new();
        for event in events_of(&reply) {
            acc.push(&event).unwrap();
        }
        let again = acc.finish().unwrap();
        assert_eq!(again.content, reply.content);
        assert_eq!(again.stop_reason, reply.stop_reason);
        assert_eq!(again.usage, reply.usage);
        let text: String = events_of(&reply)
            .iter()
            .filter_map(StreamEvent::text_delta)
            .collect();
        assert_eq!(text, reply.text());
    }
}
