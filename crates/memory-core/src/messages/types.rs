//! The Messages API's request and response shapes, as far as a tool runner needs them.
//!
//! Every struct keeps the fields it does not know in `extra`, and [`ContentBlock::Other`] keeps
//! block types it does not know, so a message the API sent comes back to it byte for byte
//! (modulo key order) when the conversation goes on: newer API features pass through.

use serde::de::{self, Deserializer};
use serde::ser::{Error as _, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The application (prompts and tool results).
    User,
    /// Claude.
    Assistant,
}

/// One message of a conversation.
///
/// `content` is always sent as a list of blocks; a string `content` read from JSON becomes one
/// text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its content blocks.
    #[serde(deserialize_with = "string_or_blocks")]
    pub content: Vec<ContentBlock>,
    /// Fields this crate does not know, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message::new(Role::User, vec![ContentBlock::text(text)])
    }

    /// An assistant message holding one text block (e.g. to prefill Claude's answer).
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::new(Role::Assistant, vec![ContentBlock::text(text)])
    }

    /// A message with these blocks.
    pub fn new(role: Role, content: Vec<ContentBlock>) -> Self {
        Message {
            role,
            content,
            extra: Map::new(),
        }
    }

    /// The text of its text blocks, joined with nothing between them.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

fn text_of(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

fn string_or_blocks<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContentBlock>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Content {
        Text(String),
        Blocks(Vec<ContentBlock>),
    }
    Ok(match Content::deserialize(d)? {
        Content::Text(text) => vec![ContentBlock::text(text)],
        Content::Blocks(blocks) => blocks,
    })
}

/// A content block of a message.
///
/// The types the runner works with are typed; any other (`thinking`, `server_tool_use`,
/// `document`, types newer than this crate...) is [`ContentBlock::Other`] and is sent back
/// exactly as it came. A block of a known type that does not parse as this crate expects is
/// kept as `Other` too, never dropped.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `{"type": "text", "text": ...}`.
    Text(TextBlock),
    /// `{"type": "image", "source": {...}}`.
    Image(ImageBlock),
    /// `{"type": "tool_use", "id": ..., "name": ..., "input": {...}}`: Claude calls a tool.
    ToolUse(ToolUseBlock),
    /// `{"type": "tool_result", "tool_use_id": ..., "content": ...}`: the application answers.
    ToolResult(ToolResultBlock),
    /// Any other block, kept whole (its `type` included).
    Other(Value),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextBlock {
            text: text.into(),
            extra: Map::new(),
        })
    }

    /// The block's `type`.
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::ToolUse(_) => "tool_use",
            ContentBlock::ToolResult(_) => "tool_result",
            ContentBlock::Other(value) => value.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

/// A text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// Other fields (`citations`, `cache_control`...), kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An image block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageBlock {
    /// Where the image is: `{"type": "base64", "media_type": ..., "data": ...}` or
    /// `{"type": "url", "url": ...}`, kept as JSON.
    pub source: Value,
    /// Other fields, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A `tool_use` block: Claude asks the application to run a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    /// The id the `tool_result` must name.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The tool's input, as Claude wrote it.
    pub input: Value,
    /// Other fields, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A `tool_result` block: the answer to a `tool_use` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// The `id` of the `tool_use` block answered.
    pub tool_use_id: String,
    /// A string, or a list of content blocks (text, image...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    /// `Some(true)` when the tool failed; left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Other fields, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolResultBlock {
    /// The block answering `tool_use_id` with a tool's output.
    pub fn from_output(tool_use_id: impl Into<String>, output: crate::ToolOutput) -> Self {
        let content = match output.content {
            crate::ToolContent::Text(text) => Value::String(text),
            crate::ToolContent::Blocks(blocks) => Value::Array(blocks),
        };
        ToolResultBlock {
            tool_use_id: tool_use_id.into(),
            content: Some(content),
            is_error: output.is_error.then_some(true),
            extra: Map::new(),
        }
    }

    /// Whether the result is an error.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (kind, fields) = match self {
            ContentBlock::Other(value) => return value.serialize(s),
            ContentBlock::Text(block) => ("text", serde_json::to_value(block)),
            ContentBlock::Image(block) => ("image", serde_json::to_value(block)),
            ContentBlock::ToolUse(block) => ("tool_use", serde_json::to_value(block)),
            ContentBlock::ToolResult(block) => ("tool_result", serde_json::to_value(block)),
        };
        let Value::Object(fields) = fields.map_err(S::Error::custom)? else {
            return Err(S::Error::custom("a content block must be a JSON object"));
        };
        let mut object = Map::with_capacity(fields.len() + 1);
        object.insert("type".to_owned(), Value::String(kind.to_owned()));
        object.extend(fields.into_iter().filter(|(key, _)| key != "type"));
        Value::Object(object).serialize(s)
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let Value::Object(object) = &value else {
            return Err(de::Error::custom("a content block must be a JSON object"));
        };
        let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
        fn typed<T: serde::de::DeserializeOwned>(object: &Map<String, Value>) -> Option<T> {
            let mut fields = object.clone();
            fields.remove("type");
            serde_json::from_value(Value::Object(fields)).ok()
        }
        let block = match kind {
            "text" => typed(object).map(ContentBlock::Text),
            "image" => typed(object).map(ContentBlock::Image),
            "tool_use" => typed(object).map(ContentBlock::ToolUse),
            "tool_result" => typed(object).map(ContentBlock::ToolResult),
            _ => None,
        };
        Ok(block.unwrap_or(ContentBlock::Other(value)))
    }
}

/// Why Claude stopped writing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// `end_turn`: a natural end.
    EndTurn,
    /// `max_tokens`: the request's `max_tokens` was reached.
    MaxTokens,
    /// `stop_sequence`: one of the request's stop sequences.
    StopSequence,
    /// `tool_use`: Claude wants tool results before going on.
    ToolUse,
    /// `pause_turn`: a long server-tool turn was paused; sending the conversation back
    /// resumes it.
    PauseTurn,
    /// `compaction`: the server compacted the conversation; sending it back goes on.
    Compaction,
    /// `refusal`: Claude declined.
    Refusal,
    /// `model_context_window_exceeded`: the conversation filled the model's context window.
    ModelContextWindowExceeded,
    /// Any other value, kept.
    Other(String),
}

impl StopReason {
    /// The API's string.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::ToolUse => "tool_use",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Compaction => "compaction",
            StopReason::Refusal => "refusal",
            StopReason::ModelContextWindowExceeded => "model_context_window_exceeded",
            StopReason::Other(other) => other,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "end_turn" => StopReason::EndTurn,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            "tool_use" => StopReason::ToolUse,
            "pause_turn" => StopReason::PauseTurn,
            "compaction" => StopReason::Compaction,
            "refusal" => StopReason::Refusal,
            "model_context_window_exceeded" => StopReason::ModelContextWindowExceeded,
            other => StopReason::Other(other.to_owned()),
        })
    }
}

/// Token counts of a response, or summed over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not read from or written to the prompt cache.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Other fields (`server_tool_use`, `service_tier`...), kept as they came; [`Usage::add`]
    /// keeps the first response's.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Usage {
    /// Adds another response's counts to these.
    pub fn add(&mut self, other: &Usage) {
        fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            }
        }
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_creation_input_tokens = sum(
            self.cache_creation_input_tokens,
            other.cache_creation_input_tokens,
        );
        self.cache_read_input_tokens =
            sum(self.cache_read_input_tokens, other.cache_read_input_tokens);
        for (key, value) in &other.extra {
            self.extra
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
    }
}

/// A reply of `POST /v1/messages`: one assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageResponse {
    /// The message id (`msg_...`).
    pub id: String,
    /// The model that answered.
    pub model: String,
    /// Always `assistant`.
    pub role: Role,
    /// What Claude wrote: text, tool calls, and blocks of other types, kept.
    pub content: Vec<ContentBlock>,
    /// Why Claude stopped.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// The stop sequence met, if that is why.
    #[serde(default)]
    pub stop_sequence: Option<String>,
    /// Token counts of this request.
    #[serde(default)]
    pub usage: Usage,
    /// Other fields (`type`, `context_management`, `container`...), kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MessageResponse {
    /// The text of its text blocks.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// Its `tool_use` blocks, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUseBlock> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolUse(tool_use) => Some(tool_use),
            _ => None,
        })
    }

    /// The message to append to the conversation: the role and every content block, as they
    /// came (response-only fields such as `id` and `usage` are not part of a message).
    pub fn to_message(&self) -> Message {
        Message::new(self.role, self.content.clone())
    }
}

/// A `POST /v1/messages` request.
///
/// The fields a runner needs are typed; any other parameter (`top_k`, `metadata`, `thinking`,
/// `stop_sequences`, `tool_choice`, parameters newer than this crate...) goes in `extra` with
/// [`MessagesRequest::param`] and is sent unchanged.
///
/// ```
/// use memory_core::messages::{Message, MessagesRequest};
/// use serde_json::json;
///
/// let request = MessagesRequest::new("claude-sonnet-4-5", 1024)
///     .system("You are terse.")
///     .temperature(0.2)
///     .message(Message::user("Hi"))
///     .param("top_k", json!(5));
/// let body = serde_json::to_value(&request).unwrap();
/// assert_eq!(body["top_k"], 5);
/// assert_eq!(body["messages"][0]["content"][0]["text"], "Hi");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    /// The model id.
    pub model: String,
    /// The most tokens Claude may write in one reply.
    pub max_tokens: u32,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The system prompt: a string or a list of text blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<Value>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Tool definitions. A [`ToolRunner`](super::ToolRunner) adds its tools' definitions
    /// after these (which may be server tools the runner does not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// Context management (e.g. `{"edits": [{"type": "clear_tool_uses_20250919"}]}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_management: Option<Value>,
    /// Beta features to turn on, sent in the `anthropic-beta` header (not in the body).
    #[serde(skip)]
    pub betas: Vec<String>,
    /// Every other parameter, sent as it is.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MessagesRequest {
    /// A request for `model` with room for `max_tokens` output tokens and no messages yet.
    pub fn new(model: impl Into<String>, max_tokens: u32) -> Self {
        MessagesRequest {
            model: model.into(),
            max_tokens,
            messages: Vec::new(),
            system: None,
            temperature: None,
            tools: Vec::new(),
            context_management: None,
            betas: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Appends a message.
    pub fn message(mut self, message: Message) -> Self {
        self.messages.push(message);
        self
    }

    /// Sets the system prompt to a string (or, given JSON, to a list of blocks).
    pub fn system(mut self, system: impl Into<Value>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Adds a tool definition the runner does not run itself (e.g. a server tool).
    pub fn tool_definition(mut self, definition: Value) -> Self {
        self.tools.push(definition);
        self
    }

    /// Sets `context_management`.
    pub fn context_management(mut self, context_management: Value) -> Self {
        self.context_management = Some(context_management);
        self
    }

    /// Sets `context_management` to `editing`'s edits and turns on the betas they need
    /// (none for no edits, which leaves `context_management` as it was).
    pub fn with_context_management(mut self, editing: &super::ContextManagement) -> Self {
        if let Some(body) = editing.to_json() {
            self.context_management = Some(body);
            for beta in editing.betas() {
                self = self.beta(beta);
            }
        }
        self
    }

    /// Turns on a beta feature (the `anthropic-beta` header).
    pub fn beta(mut self, beta: impl Into<String>) -> Self {
        let beta = beta.into();
        if !self.betas.contains(&beta) {
            self.betas.push(beta);
        }
        self
    }

    /// Sets any other parameter, sent unchanged.
    pub fn param(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_blocks_and_fields_round_trip() {
        let content = json!([
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "hi", "citations": [{"x": 1}]},
            {"type": "tool_use", "id": "t1", "name": "memory", "input": {"command": "view"}, "caller": {"k": "v"}},
            {"type": "text"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
        ]);
        let blocks: Vec<ContentBlock> = serde_json::from_value(content.clone()).unwrap();
        assert!(matches!(blocks[0], ContentBlock::Other(_)));
        assert!(matches!(blocks[1], ContentBlock::Text(_)));
        assert!(matches!(blocks[2], ContentBlock::ToolUse(_)));
        // A known type that does not parse is kept whole, not dropped.
        assert!(matches!(blocks[3], ContentBlock::Other(_)));
        assert!(matches!(blocks[4], ContentBlock::Image(_)));
        assert_eq!(serde_json::to_value(&blocks).unwrap(), content);
    }

    #[test]
    fn string_content_is_one_text_block() {
        let message: Message =
            serde_json::from_value(json!({"role": "user", "content": "hello"})).unwrap();
        assert_eq!(message, Message::user("hello"));
        assert_eq!(message.text(), "hello");
    }

    #[test]
    fn stop_reasons() {
        for raw in [
            "end_turn",
            "tool_use",
            "max_tokens",
            "pause_turn",
            "compaction",
            "refusal",
            "model_context_window_exceeded",
            "something_new",
        ] {
            let reason: StopReason = serde_json::from_value(json!(raw)).unwrap();
            assert_eq!(serde_json::to_value(&reason).unwrap(), json!(raw));
        }
        let reason: StopReason = serde_json::from_value(json!("tool_use")).unwrap();
        assert_eq!(reason, StopReason::ToolUse);
    }

    #[test]
    fn usage_sums() {
        let mut total = Usage::default();
        let a: Usage = serde_json::from_value(
            json!({"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 5, "service_tier": "standard"}),
        )
        .unwrap();
        let b: Usage =
            serde_json::from_value(json!({"input_tokens": 1, "output_tokens": 3})).unwrap();
        total.add(&a);
        total.add(&b);
        assert_eq!(total.input_tokens, 11);
        assert_eq!(total.output_tokens, 5);
        assert_eq!(total.cache_read_input_tokens, Some(5));
        assert_eq!(total.cache_creation_input_tokens, None);
        assert_eq!(total.extra["service_tier"], "standard");
    }

    #[test]
    fn tool_result_from_output() {
        let ok = ToolResultBlock::from_output("t1", crate::ToolOutput::success("done"));
        assert_eq!(
            serde_json::to_value(ContentBlock::ToolResult(ok)).unwrap(),
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "done"})
        );
        let err = ToolResultBlock::from_output("t2", crate::ToolOutput::error("bad"));
        assert_eq!(
            serde_json::to_value(ContentBlock::ToolResult(err)).unwrap(),
            json!({"type": "tool_result", "tool_use_id": "t2", "content": "bad", "is_error": true})
        );
    }
}
