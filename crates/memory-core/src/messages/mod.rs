//! Claude with tools, over any transport: the Messages API's types, the [`Tool`] trait (the
//! memory tool is one), and [`ToolRunner`], the loop that runs Claude's tool calls until it is
//! done, at most `max_iterations` requests.
//!
//! Replies can be streamed ([`ToolRunner::on_event`]: each [`StreamEvent`] as it arrives, and
//! the same [`MessageResponse`] in the end), and [`ContextManagement`] turns on the API's
//! context editing (clearing old tool results, server-side compaction) with the betas it needs.
//!
//! The runner sends requests through a [`MessagesTransport`], a one-method trait: memory-runner's
//! HTTP `Client` is one, an application's own Anthropic (or Bedrock, or Vertex) client can be
//! another, and a test's script a third. Nothing here speaks HTTP.
//!
//! ```
//! use memory_core::async_trait;
//! use memory_core::messages::{
//!     Message, MessageResponse, MessagesRequest, MessagesTransport, ToolRunner,
//! };
//! use memory_core::{InMemoryStorage, MemoryTool};
//! use serde_json::json;
//!
//! /// A transport that answers every request with "Noted.".
//! struct Scripted;
//!
//! #[async_trait]
//! impl MessagesTransport for Scripted {
//!     type Error = serde_json::Error;
//!     async fn create_message(&self, _: &MessagesRequest) -> Result<MessageResponse, Self::Error> {
//!         serde_json::from_value(json!({
//!             "id": "msg_1", "model": "claude-test", "role": "assistant",
//!             "content": [{"type": "text", "text": "Noted."}], "stop_reason": "end_turn"
//!         }))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let request = MessagesRequest::new("claude-test", 1024).message(Message::user("I like tea."));
//! let reply = ToolRunner::new(Scripted, request)
//!     .tool(MemoryTool::new(InMemoryStorage::new()))
//!     .run_until_done()
//!     .await
//!     .unwrap();
//! assert_eq!(reply.text(), "Noted.");
//! # });
//! ```

mod context;
mod join;
mod runner;
mod stream;
#[cfg(test)]
mod tests;
mod tool;
mod transport;
mod types;

pub use context::{
    COMPACTION_BETA, CONTEXT_MANAGEMENT_BETA, ClearToolUses, Compact, ContextManagement,
};
pub use runner::{DEFAULT_MAX_ITERATIONS, EndReason, EventHandler, Run, RunStream, ToolRunner};
pub use stream::{Delta, MessageAccumulator, StreamError, StreamEvent, events_of};
pub use tool::{
    MEMORY_TOOL_NAME, MEMORY_TOOL_TYPE, Memory, Observed, Tool, ToolCall, memory_call_summary,
};
pub use transport::MessagesTransport;
pub use types::{
    ContentBlock, ImageBlock, Message, MessageResponse, MessagesRequest, Role, StopReason,
    TextBlock, ToolResultBlock, ToolUseBlock, Usage,
};
