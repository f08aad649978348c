//! The [`Tool`] trait, and the memory tool as one.

use std::fmt;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::{MemoryHandler, MemoryTool, Storage, ToolOutput};

/// The name Claude calls the memory tool by.
pub const MEMORY_TOOL_NAME: &str = "memory";

/// The memory tool's type in a tool definition.
pub const MEMORY_TOOL_TYPE: &str = "memory_20250818";

/// A tool the application runs when Claude calls it (a client tool).
///
/// [`MemoryTool`] is one; an application adds its own by implementing the trait:
///
/// ```
/// use memory_core::async_trait;
/// use memory_core::ToolOutput;
/// use memory_core::messages::Tool;
/// use serde_json::{Value, json};
///
/// struct Clock;
///
/// #[async_trait]
/// impl Tool for Clock {
///     fn name(&self) -> &str {
///         "clock"
///     }
///     fn definition(&self) -> Value {
///         json!({
///             "name": "clock",
///             "description": "The current Unix time in seconds.",
///             "input_schema": {"type": "object", "properties": {}}
///         })
///     }
///     async fn call(&self, _input: &Value) -> ToolOutput {
///         let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
///         match now {
///             Ok(now) => ToolOutput::success(now.as_secs().to_string()),
///             Err(_) => ToolOutput::error("the clock is before 1970"),
///         }
///     }
/// }
/// ```
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name Claude calls it by; the `name` of its definition.
    fn name(&self) -> &str;

    /// The JSON sent in the request's `tools` list.
    fn definition(&self) -> Value;

    /// Runs one call. A failure is an output with `is_error: true`, never a panic (a panic is
    /// caught by the runner and answered as an error all the same).
    async fn call(&self, input: &Value) -> ToolOutput;

    /// Whether the calls of one turn must run one after another, in the order Claude wrote
    /// them (the memory tool: a `create` then a `view` of the same file must see the file).
    /// Calls of a tool that returns `false` run concurrently. Default `false`.
    fn sequential(&self) -> bool {
        false
    }

    /// Beta features the tool needs (sent in `anthropic-beta`). Default none.
    fn betas(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The memory tool (`memory_20250818`) over any [`MemoryHandler`], with an optional
/// `cache_control` on its definition.
///
/// [`MemoryTool`] is a [`Tool`] by itself; wrap it (or a handler of your own) in this to add
/// `cache_control`, or to run a handler that is not a `MemoryTool`.
///
/// ```
/// use memory_core::{InMemoryStorage, MemoryTool};
/// use memory_core::messages::{Memory, Tool};
/// use serde_json::json;
///
/// let tool = Memory::new(MemoryTool::new(InMemoryStorage::new()))
///     .with_cache_control(json!({"type": "ephemeral"}));
/// assert_eq!(
///     tool.definition(),
///     json!({"type": "memory_20250818", "name": "memory", "cache_control": {"type": "ephemeral"}})
/// );
/// ```
pub struct Memory<H> {
    handler: H,
    cache_control: Option<Value>,
}

impl<H: MemoryHandler> Memory<H> {
    /// The memory tool answered by `handler`.
    pub fn new(handler: H) -> Self {
        Memory {
            handler,
            cache_control: None,
        }
    }

    /// Adds `cache_control` (e.g. `{"type": "ephemeral"}`) to the definition.
    pub fn with_cache_control(mut self, cache_control: Value) -> Self {
        self.cache_control = Some(cache_control);
        self
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.handler
    }

    /// Gives the handler back.
    pub fn into_handler(self) -> H {
        self.handler
    }
}

impl<H> fmt::Debug for Memory<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Memory")
            .field("cache_control", &self.cache_control)
            .finish_non_exhaustive()
    }
}

fn memory_definition(cache_control: Option<&Value>) -> Value {
    let mut definition = json!({"type": MEMORY_TOOL_TYPE, "name": MEMORY_TOOL_NAME});
    if let Some(cache_control) = cache_control {
        definition["cache_control"] = cache_control.clone();
    }
    definition
}

#[async_trait]
impl<H: MemoryHandler> Tool for Memory<H> {
    fn name(&self) -> &str {
        MEMORY_TOOL_NAME
    }
    fn definition(&self) -> Value {
        memory_definition(self.cache_control.as_ref())
    }
    async fn call(&self, input: &Value) -> ToolOutput {
        self.handler.execute(input).await
    }
    fn sequential(&self) -> bool {
        true
    }
}

/// `{"type": "memory_20250818", "name": "memory"}`, answered by the tool itself.
#[async_trait]
impl<S: Storage> Tool for MemoryTool<S> {
    fn name(&self) -> &str {
        MEMORY_TOOL_NAME
    }
    fn definition(&self) -> Value {
        memory_definition(None)
    }
    async fn call(&self, input: &Value) -> ToolOutput {
        self.execute(input).await
    }
    fn sequential(&self) -> bool {
        true
    }
}

/// One finished call, as an [`Observed`] tool's observer sees it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// The input Claude sent.
    pub input: &'a Value,
    /// What the tool answered.
    pub output: &'a ToolOutput,
}

/// A tool with an observer called after each of its calls, e.g. to print a trace line.
/// Everything else (name, definition, order, betas) is the inner tool's.
///
/// ```
/// use memory_core::{InMemoryStorage, MemoryTool};
/// use memory_core::messages::{Observed, ToolCall, memory_call_summary};
///
/// let tool = Observed::new(MemoryTool::new(InMemoryStorage::new()), |call: &ToolCall<'_>| {
///     eprintln!("[memory] {}", memory_call_summary(call.input));
/// });
/// ```
pub struct Observed<T, F> {
    tool: T,
    observer: F,
}

impl<T: Tool, F: Fn(&ToolCall<'_>) + Send + Sync> Observed<T, F> {
    /// `tool`, with `observer` called after each call.
    pub fn new(tool: T, observer: F) -> Self {
        Observed { tool, observer }
    }

    /// The inner tool.
    pub fn inner(&self) -> &T {
        &self.tool
    }
}

impl<T: fmt::Debug, F> fmt::Debug for Observed<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observed")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<T: Tool, F: Fn(&ToolCall<'_>) + Send + Sync> Tool for Observed<T, F> {
    fn name(&self) -> &str {
        self.tool.name()
    }
    fn definition(&self) -> Value {
        self.tool.definition()
    }
    async fn call(&self, input: &Value) -> ToolOutput {
        let output = self.tool.call(input).await;
        (self.observer)(&ToolCall {
            name: self.tool.name(),
            input,
            output: &output,
        });
        output
    }
    fn sequential(&self) -> bool {
        self.tool.sequential()
    }
    fn betas(&self) -> Vec<String> {
        self.tool.betas()
    }
}

/// A one-line summary of a memory-tool input for logs and traces, e.g. `create
/// /memories/prefs.md (14 bytes)` or `rename /memories/a.md -> /memories/b.md`. It shows the
/// input as Claude sent it (nothing is validated); file contents are never shown.
///
/// ```
/// use memory_core::messages::memory_call_summary;
/// use serde_json::json;
///
/// assert_eq!(
///     memory_call_summary(&json!({"command": "view", "path": "/memories", "view_range": [1, 5]})),
///     "view /memories [1, 5]"
/// );
/// assert_eq!(memory_call_summary(&json!("nonsense")), "(not a memory command)");
/// ```
pub fn memory_call_summary(input: &Value) -> String {
    let field = |name: &str| match input.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "?".to_owned(),
    };
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return "(not a memory command)".to_owned();
    };
    match command {
        "view" => match input.get("view_range").and_then(Value::as_array) {
            Some(range) if range.len() == 2 => {
                format!("view {} [{}, {}]", field("path"), range[0], range[1])
            }
            _ => format!("view {}", field("path")),
        },
        "create" => {
            let bytes = input.get("file_text").and_then(Value::as_str).map(str::len);
            match bytes {
                Some(bytes) => format!("create {} ({bytes} bytes)", field("path")),
                None => format!("create {}", field("path")),
            }
        }
        "str_replace" => format!("str_replace {}", field("path")),
        "insert" => format!("insert {} at line {}", field("path"), field("insert_line")),
        "delete" => format!("delete {}", field("path")),
        "rename" => format!("rename {} -> {}", field("old_path"), field("new_path")),
        other => format!("{other} (unknown command)"),
    }
}
