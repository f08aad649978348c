//! [`ToolOutput`]: what a command returns, ready to become a `tool_result` block.

use serde::Serialize;
use serde_json::{Value, json};

/// The content of a tool result: text, or content blocks (an image view).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ToolContent {
    /// A result string.
    Text(String),
    /// Content blocks, e.g. `[{"type": "image", "source": {...}}]`.
    Blocks(Vec<Value>),
}

/// The result of one memory command: content plus whether it is an error.
///
/// ```
/// use memory_core::ToolOutput;
/// let out = ToolOutput::error("Error: The path /memories/x does not exist");
/// assert_eq!(
///     out.into_tool_result("toolu_01"),
///     serde_json::json!({
///         "type": "tool_result",
///         "tool_use_id": "toolu_01",
///         "content": "Error: The path /memories/x does not exist",
///         "is_error": true
///     })
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The content Claude sees.
    pub content: ToolContent,
    /// Whether the command failed (`is_error: true` in the `tool_result`).
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful text result.
    pub fn success(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolContent::Text(text.into()),
            is_error: false,
        }
    }

    /// An error result.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolContent::Text(text.into()),
            is_error: true,
        }
    }

    /// A successful image result: one base64 image block.
    pub fn image(media_type: &str, base64_data: String) -> Self {
        ToolOutput {
            content: ToolContent::Blocks(vec![json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": base64_data},
            })]),
            is_error: false,
        }
    }

    /// The text, when the content is text.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            ToolContent::Text(text) => Some(text),
            ToolContent::Blocks(_) => None,
        }
    }

    /// `{"content": ..., "is_error": ...}`, the shape `memory exec` prints for a bare input.
    pub fn to_json(&self) -> Value {
        json!({"content": self.content, "is_error": self.is_error})
    }

    /// The `tool_result` block answering the `tool_use` block `tool_use_id`; `is_error` is
    /// present only on errors, as the Messages API expects.
    pub fn into_tool_result(self, tool_use_id: &str) -> Value {
        let mut block = json!({
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": self.content,
        });
        if self.is_error {
            block["is_error"] = Value::Bool(true);
        }
        block
    }
}
