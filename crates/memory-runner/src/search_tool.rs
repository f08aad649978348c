//! [`SearchTool`]: keyword search over a memory store as a [`Tool`] for a [`ToolRunner`].
//!
//! [`ToolRunner`]: memory_core::messages::ToolRunner

use std::fmt;

use async_trait::async_trait;
use memory_core::messages::Tool;
use memory_core::search::{
    TOOL_DESCRIPTION, TOOL_NAME, parse_tool_input, tool_input_schema, tool_result_text,
};
use memory_core::{Error, Storage, ToolOutput};
use serde_json::{Value, json};

/// The `memory_search` tool: Claude sends a keyword query (`query`, optional `path` folder and
/// `limit`) and gets the best-matching files of the store, each with its path, the lines of
/// the matches (as `view` numbers them) and a snippet. Its description tells Claude to search
/// instead of viewing folder after folder when it does not know where a note is.
///
/// Give it the same store as the memory tool, so that it finds what Claude wrote:
///
/// ```
/// use std::sync::Arc;
/// use memory_core::{InMemoryStorage, MemoryTool, Storage};
/// use memory_core::messages::{Memory, Tool, ToolRunner};
/// use memory_runner::SearchTool;
///
/// let store: Arc<dyn Storage> = Arc::new(InMemoryStorage::new());
/// let tools: Vec<Box<dyn Tool>> = vec![
///     Box::new(Memory::new(MemoryTool::new(store.clone()))),
///     Box::new(SearchTool::new(store)),
/// ];
/// assert_eq!(tools[1].name(), "memory_search");
/// ```
///
/// A query that cannot be parsed, a path outside `/memories` or a limit outside 1 to 100 is an
/// error result saying what to change; a store failure is an error result that names no
/// backend detail (the detail goes to the log). Calls run in order with the turn's other
/// sequential calls, so a search sees the files the memory tool just wrote.
pub struct SearchTool<S> {
    storage: S,
    cache_control: Option<Value>,
}

impl<S: Storage> SearchTool<S> {
    /// Search over `storage`.
    pub fn new(storage: S) -> Self {
        SearchTool {
            storage,
            cache_control: None,
        }
    }

    /// Adds `cache_control` (e.g. `{"type": "ephemeral"}`) to the definition.
    #[must_use]
    pub fn with_cache_control(mut self, cache_control: Value) -> Self {
        self.cache_control = Some(cache_control);
        self
    }

    /// The store searched.
    pub fn storage(&self) -> &S {
        &self.storage
    }
}

impl<S: fmt::Display> fmt::Debug for SearchTool<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearchTool")
            .field("storage", &self.storage.to_string())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<S: Storage> Tool for SearchTool<S> {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn definition(&self) -> Value {
        let mut definition = json!({
            "name": TOOL_NAME,
            "description": TOOL_DESCRIPTION,
            "input_schema": tool_input_schema(),
        });
        if let Some(cache_control) = &self.cache_control {
            definition["cache_control"] = cache_control.clone();
        }
        definition
    }

    async fn call(&self, input: &Value) -> ToolOutput {
        let query = match parse_tool_input(input) {
            Ok(query) => query,
            Err(message) => return ToolOutput::error(format!("Error: {message}")),
        };
        match self.storage.search(&query).await {
            Ok(hits) => ToolOutput::success(tool_result_text(&query, &hits)),
            Err(Error::InvalidQuery(e)) => ToolOutput::error(format!("Error: invalid query: {e}")),
            Err(e) => {
                tracing::error!(storage = %self.storage, error = %e, error_debug = ?e, "search failed");
                let hint = if e.is_retryable() {
                    "try again in a moment"
                } else {
                    "the failure was logged"
                };
                ToolOutput::error(format!(
                    "Error: The memory store could not complete the search; {hint}"
                ))
            }
        }
    }

    fn sequential(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use memory_core::conformance::faults::{FAKE_HOST_PATH, FAULTY_BACKEND, Faulty};
    use memory_core::{InMemoryStorage, MemoryHandler, MemoryTool};

    use super::*;

    /// A store whose every call fails with a host path in the detail.
    fn broken() -> Faulty<InMemoryStorage> {
        let store = Faulty::new(InMemoryStorage::new());
        store.fail_after(0);
        store
    }

    #[tokio::test]
    async fn finds_what_the_memory_tool_wrote() {
        let store: Arc<dyn Storage> = Arc::new(InMemoryStorage::new());
        let memory = MemoryTool::new(store.clone());
        let search = SearchTool::new(store);
        for (path, text) in [
            (
                "/memories/ops/deploy.md",
                "# Deploys\nRoll back with make rollback.\n",
            ),
            ("/memories/notes.md", "Lunch at noon.\n"),
        ] {
            let out = memory
                .execute(&json!({"command": "create", "path": path, "file_text": text}))
                .await;
            assert!(!out.is_error, "{out:?}");
        }
        let out = search.call(&json!({"query": "rollback"})).await;
        assert!(!out.is_error);
        assert_eq!(
            out.text(),
            Some(
                "1 file match \"rollback\", best first (path, line numbers as `view` shows them, then a snippet):\n\n/memories/ops/deploy.md  line 2\n    Roll back with make rollback."
            )
        );
        let out = search
            .call(&json!({"query": "rollback", "path": "/memories/op"}))
            .await;
        assert_eq!(out.text(), Some("No files match \"rollback\"."));
        assert!(!out.is_error);
    }

    #[tokio::test]
    async fn bad_input_and_failures_are_error_results() {
        let search = SearchTool::new(InMemoryStorage::new());
        for input in [
            json!({"query": "\"unclosed"}),
            json!({}),
            json!({"query": "x", "limit": 500}),
            json!({"query": "x", "path": "/etc"}),
        ] {
            let out = search.call(&input).await;
            assert!(out.is_error, "{input}");
            assert!(out.text().unwrap().starts_with("Error: "), "{input}");
        }
        let out = SearchTool::new(broken()).call(&json!({"query": "x"})).await;
        assert!(out.is_error);
        let text = out.text().unwrap();
        assert!(
            text.starts_with("Error: The memory store could not complete the search"),
            "{text}"
        );
        assert!(
            !text.contains(FAKE_HOST_PATH) && !text.contains(FAULTY_BACKEND),
            "{text}"
        );
    }

    #[test]
    fn the_definition_tells_claude_when_to_search() {
        let tool = SearchTool::new(InMemoryStorage::new())
            .with_cache_control(json!({"type": "ephemeral"}));
        let definition = tool.definition();
        assert_eq!(definition["name"], "memory_search");
        assert_eq!(definition["input_schema"]["required"], json!(["query"]));
        assert_eq!(definition["cache_control"], json!({"type": "ephemeral"}));
        let description = definition["description"].as_str().unwrap();
        assert!(description.contains("instead of viewing folder after folder"));
        assert!(tool.sequential());
    }
}
