//! [`MemoryHandler`]: the trait an application implements to handle memory commands itself.

use async_trait::async_trait;
use serde_json::Value;

use crate::{MemoryCommand, MemoryPath, ToolOutput, ViewRange};

/// Handles the six memory commands: the Rust analogue of the Python SDK's
/// `BetaAbstractMemoryTool`.
///
/// Implement one method per command; the provided [`execute`](MemoryHandler::execute) parses a
/// `tool_use` input (answering bad input with the contract's error texts) and dispatches.
/// [`MemoryTool`](crate::MemoryTool) implements it over any [`Storage`](crate::Storage); an
/// application that wants other behaviour (say, an audit log around each command) can wrap a
/// `MemoryTool` or write its own handler.
///
/// ```
/// use memory_core::async_trait;
/// use memory_core::{MemoryHandler, MemoryPath, ToolOutput, ViewRange};
///
/// /// A handler that refuses every write.
/// struct ReadOnly;
///
/// #[async_trait]
/// impl MemoryHandler for ReadOnly {
///     async fn view(&self, path: &MemoryPath, _: Option<ViewRange>) -> ToolOutput {
///         ToolOutput::success(format!("{path} is empty"))
///     }
///     async fn create(&self, _: &MemoryPath, _: &str) -> ToolOutput { refuse() }
///     async fn str_replace(&self, _: &MemoryPath, _: &str, _: &str) -> ToolOutput { refuse() }
///     async fn insert(&self, _: &MemoryPath, _: i64, _: &str) -> ToolOutput { refuse() }
///     async fn delete(&self, _: &MemoryPath) -> ToolOutput { refuse() }
///     async fn rename(&self, _: &MemoryPath, _: &MemoryPath) -> ToolOutput { refuse() }
/// }
///
/// fn refuse() -> ToolOutput { ToolOutput::error("Error: this memory is read-only") }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let out = ReadOnly.execute(&serde_json::json!({"command": "delete", "path": "/memories/a"})).await;
/// assert!(out.is_error);
/// # });
/// ```
#[async_trait]
pub trait MemoryHandler: Send + Sync {
    /// `view`: a directory listing, or a file's numbered lines.
    async fn view(&self, path: &MemoryPath, view_range: Option<ViewRange>) -> ToolOutput;
    /// `create`: a new file.
    async fn create(&self, path: &MemoryPath, file_text: &str) -> ToolOutput;
    /// `str_replace`: replace the single occurrence of `old_str`.
    async fn str_replace(&self, path: &MemoryPath, old_str: &str, new_str: &str) -> ToolOutput;
    /// `insert`: insert text after line `insert_line` (0 is the top).
    async fn insert(&self, path: &MemoryPath, insert_line: i64, insert_text: &str) -> ToolOutput;
    /// `delete`: a file, or a directory with everything below it.
    async fn delete(&self, path: &MemoryPath) -> ToolOutput;
    /// `rename`: move a file or directory; never overwrites.
    async fn rename(&self, old_path: &MemoryPath, new_path: &MemoryPath) -> ToolOutput;

    /// Runs a parsed command.
    async fn run(&self, command: &MemoryCommand) -> ToolOutput {
        match command {
            MemoryCommand::View { path, view_range } => self.view(path, *view_range).await,
            MemoryCommand::Create { path, file_text } => self.create(path, file_text).await,
            MemoryCommand::StrReplace {
                path,
                old_str,
                new_str,
            } => self.str_replace(path, old_str, new_str).await,
            MemoryCommand::Insert {
                path,
                insert_line,
                insert_text,
            } => self.insert(path, *insert_line, insert_text).await,
            MemoryCommand::Delete { path } => self.delete(path).await,
            MemoryCommand::Rename { old_path, new_path } => self.rename(old_path, new_path).await,
        }
    }

    /// Parses a `tool_use` block's `input` and runs it; bad input is an error result.
    async fn execute(&self, input: &Value) -> ToolOutput {
        match MemoryCommand::parse(input) {
            Ok(command) => self.run(&command).await,
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}
