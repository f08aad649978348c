//! Context editing: [`ContextManagement`], the request's `context_management` edits with the
//! beta headers they need.
//!
//! The shapes are the official SDKs' (anthropic-sdk-python, `types/beta/`):
//! `BetaClearToolUses20250919EditParam` (`type: "clear_tool_uses_20250919"`, optional
//! `trigger`, `keep`, `clear_at_least`, `clear_tool_inputs`, `exclude_tools`) and
//! `BetaCompact20260112EditParam` (`type: "compact_20260112"`, optional `trigger`,
//! `instructions`, `pause_after_compaction`), inside `BetaContextManagementConfig`'s
//! `{"edits": [...]}`. Clearing tool uses is the `context-management-2025-06-27` beta
//! (`AnthropicBetaParam` in `types/anthropic_beta_param.py`); server-side compaction is the
//! `compact-2026-01-12` beta (Anthropic's compaction documentation and its SDK examples send
//! `betas=["compact-2026-01-12"]` with the `compact_20260112` edit, and that beta alone).
//! The memory tool itself is generally available and needs no beta.

use serde_json::{Map, Value, json};

/// The beta of clearing old tool results (`clear_tool_uses_20250919`), sent in
/// `anthropic-beta`.
pub const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";

/// The beta of server-side compaction (`compact_20260112`), sent in `anthropic-beta`.
pub const COMPACTION_BETA: &str = "compact-2026-01-12";

/// The `clear_tool_uses_20250919` edit: once the prompt passes the trigger, the API replaces
/// old tool results with a placeholder (the application keeps the full history).
///
/// [`ClearToolUses::keeping_memory`] keeps the memory tool's own results
/// (`exclude_tools: ["memory"]`), as the memory tool's documentation suggests: what Claude read
/// from memory stays, other tools' old output goes.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ClearToolUses {
    /// Clear once the prompt has this many input tokens (the API's default when unset).
    pub trigger_input_tokens: Option<u64>,
    /// Keep this many of the most recent tool uses (the API's default when unset).
    pub keep_tool_uses: Option<u64>,
    /// Clear only when at least this many input tokens go.
    pub clear_at_least_input_tokens: Option<u64>,
    /// Also clear the inputs of the cleared tool calls.
    pub clear_tool_inputs: Option<bool>,
    /// Tools whose uses are never cleared.
    pub exclude_tools: Vec<String>,
}

impl ClearToolUses {
    /// The edit with the API's defaults, clearing every tool's results.
    pub fn new() -> Self {
        Self::default()
    }

    /// The edit keeping the memory tool's results (`exclude_tools: ["memory"]`).
    pub fn keeping_memory() -> Self {
        ClearToolUses {
            exclude_tools: vec![super::MEMORY_TOOL_NAME.to_owned()],
            ..Self::default()
        }
    }

    /// Sets [`trigger_input_tokens`](Self::trigger_input_tokens).
    pub fn trigger_input_tokens(mut self, tokens: u64) -> Self {
        self.trigger_input_tokens = Some(tokens);
        self
    }

    /// Sets [`keep_tool_uses`](Self::keep_tool_uses).
    pub fn keep_tool_uses(mut self, uses: u64) -> Self {
        self.keep_tool_uses = Some(uses);
        self
    }

    /// The edit's JSON.
    pub fn to_json(&self) -> Value {
        let mut edit = Map::new();
        edit.insert("type".to_owned(), json!("clear_tool_uses_20250919"));
        if let Some(tokens) = self.trigger_input_tokens {
            edit.insert(
                "trigger".to_owned(),
                json!({"type": "input_tokens", "value": tokens}),
            );
        }
        if let Some(uses) = self.keep_tool_uses {
            edit.insert(
                "keep".to_owned(),
                json!({"type": "tool_uses", "value": uses}),
            );
        }
        if let Some(tokens) = self.clear_at_least_input_tokens {
            edit.insert(
                "clear_at_least".to_owned(),
                json!({"type": "input_tokens", "value": tokens}),
            );
        }
        if let Some(inputs) = self.clear_tool_inputs {
            edit.insert("clear_tool_inputs".to_owned(), json!(inputs));
        }
        if !self.exclude_tools.is_empty() {
            edit.insert("exclude_tools".to_owned(), json!(self.exclude_tools));
        }
        Value::Object(edit)
    }
}

/// The `compact_20260112` edit: once the prompt passes the trigger, the API summarises the
/// earlier conversation into a `compaction` block at the start of its reply; sending the reply
/// back (as the runner does) carries the summary instead of what it replaced.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Compact {
    /// Compact once the prompt has this many input tokens (the API's default, 150,000, when
    /// unset).
    pub trigger_input_tokens: Option<u64>,
    /// Extra instructions for the summary.
    pub instructions: Option<String>,
    /// Stop with `stop_reason: "compaction"` after compacting (the runner then sends the
    /// conversation back and Claude goes on).
    pub pause_after_compaction: Option<bool>,
}

impl Compact {
    /// The edit with the API's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`trigger_input_tokens`](Self::trigger_input_tokens).
    pub fn trigger_input_tokens(mut self, tokens: u64) -> Self {
        self.trigger_input_tokens = Some(tokens);
        self
    }

    /// Sets [`instructions`](Self::instructions).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets [`pause_after_compaction`](Self::pause_after_compaction).
    pub fn pause_after_compaction(mut self, pause: bool) -> Self {
        self.pause_after_compaction = Some(pause);
        self
    }

    /// The edit's JSON.
    pub fn to_json(&self) -> Value {
        let mut edit = Map::new();
        edit.insert("type".to_owned(), json!("compact_20260112"));
        if let Some(tokens) = self.trigger_input_tokens {
            edit.insert(
                "trigger".to_owned(),
                json!({"type": "input_tokens", "value": tokens}),
            );
        }
        if let Some(instructions) = &self.instructions {
            edit.insert("instructions".to_owned(), json!(instructions));
        }
        if let Some(pause) = self.pause_after_compaction {
            edit.insert("pause_after_compaction".to_owned(), json!(pause));
        }
        Value::Object(edit)
    }
}

/// The request's context editing: clearing old tool results, server-side compaction, or
/// both; [`MessagesRequest::with_context_management`](super::MessagesRequest::with_context_management)
/// (or [`ToolRunner::context_management`](super::ToolRunner::context_management)) sets the
/// body and the betas it needs, and nothing when it is empty.
///
/// ```
/// use memory_core::messages::{ClearToolUses, Compact, ContextManagement, MessagesRequest};
/// use serde_json::json;
///
/// let editing = ContextManagement::new()
///     .clear_tool_uses(ClearToolUses::keeping_memory())
///     .compact(Compact::new());
/// let request = MessagesRequest::new("claude-test", 1024).with_context_management(&editing);
/// assert_eq!(
///     request.context_management,
///     Some(json!({"edits": [
///         {"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]},
///         {"type": "compact_20260112"}
///     ]}))
/// );
/// assert_eq!(request.betas, ["context-management-2025-06-27", "compact-2026-01-12"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextManagement {
    clear_tool_uses: Option<ClearToolUses>,
    compact: Option<Compact>,
}

impl ContextManagement {
    /// No edits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the `clear_tool_uses_20250919` edit.
    pub fn clear_tool_uses(mut self, edit: ClearToolUses) -> Self {
        self.clear_tool_uses = Some(edit);
        self
    }

    /// Adds (or replaces) the `compact_20260112` edit.
    pub fn compact(mut self, edit: Compact) -> Self {
        self.compact = Some(edit);
        self
    }

    /// Whether there is no edit.
    pub fn is_empty(&self) -> bool {
        self.clear_tool_uses.is_none() && self.compact.is_none()
    }

    /// `{"edits": [...]}`, or `None` without edits.
    pub fn to_json(&self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        let edits: Vec<Value> = self
            .clear_tool_uses
            .iter()
            .map(ClearToolUses::to_json)
            .chain(self.compact.iter().map(Compact::to_json))
            .collect();
        Some(json!({ "edits": edits }))
    }

    /// The betas the edits need, in the edits' order.
    pub fn betas(&self) -> Vec<&'static str> {
        let mut betas = Vec::new();
        if self.clear_tool_uses.is_some() {
            betas.push(CONTEXT_MANAGEMENT_BETA);
        }
        if self.compact.is_some() {
            betas.push(COMPACTION_BETA);
        }
        betas
    }
}
