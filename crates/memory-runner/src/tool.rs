//! The [`Tool`] trait, and the memory tool as one.

use std::fmt;

use async_trait::async_trait;
use memory_core::{MemoryHandler, MemoryTool, Storage, ToolOutput};
use serde_json::{Value, json};

use crate::client::CONTEXT_MANAGEMENT_BETA;

/// The name Claude calls the memory tool by.
pub const MEMORY_TOOL_NAME: &str = "memory";

/// The memory tool's type in a tool definition.
pub const MEMORY_TOOL_TYPE: &str = "memory_20250818";

/// A tool the application runs when Claude calls it (a client tool).
///
/// [`MemoryTool`] is one; an application adds its own by implementing the trait:
///
/// ```
/// use async_trait::async_trait;
/// use memory_core::ToolOutput;
/// use memory_runner::Tool;
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
/// use memory_runner::{Memory, Tool};
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
    fn betas(&self) -> Vec<String> {
        vec![CONTEXT_MANAGEMENT_BETA.to_owned()]
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
    fn betas(&self) -> Vec<String> {
        vec![CONTEXT_MANAGEMENT_BETA.to_owned()]
    }
}
