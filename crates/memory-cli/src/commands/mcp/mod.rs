//! `memory mcp`: the memory tool as an MCP server over standard input and output.
//!
//! Two tools. `memory` takes the six commands of the memory tool (`memory_20250818`) and
//! answers with the contract's texts: a text content block, or an image content block for an
//! image view, and `isError` set exactly when the contract says "error". `memory_search`
//! takes a keyword query (`query`, optional `path` and `limit`) and answers with the ranked
//! hits as text and as `structuredContent` `{"results": [...]}`. Standard output carries only
//! MCP messages; logs go to standard error.
//!
//! With `--read-only` every command but `view` is refused with an error result, and the store
//! is never created or changed.

mod transport;

use std::borrow::Cow;
use std::process::ExitCode;
use std::sync::Arc;

use memory_core::{MemoryHandler, MemoryTool, ReadOnly, Storage, ToolContent, ToolOutput};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::exit::{EXIT_STATUS_HELP, Exit};
use crate::store_args::{OpenMode, StoreArgs};

/// The memory tool's name.
pub(crate) const TOOL_NAME: &str = "memory";

/// The search tool's name.
pub(crate) const SEARCH_TOOL_NAME: &str = memory_core::search::TOOL_NAME;

pub(crate) const MCP_LONG_ABOUT: &str = "\
Serve the memory tool to an MCP client (Claude Code, Claude Desktop, an IDE) over
standard input and output.

The server offers two tools over the store you choose: `memory`, with the six commands
of Anthropic's memory tool (view, create, str_replace, insert, delete, rename) and the
same result texts and isError flags; and `memory_search` (query, optional path and
limit), ranked keyword search whose result gives the hits as text and as
structuredContent {\"results\": [{\"path\", \"score\", \"lines\", \"snippet\"}]}
(see `memory search --help` for the query syntax). Standard output carries only MCP
messages; logs go to standard error (RUST_LOG=debug for more).

Register it with Claude Code:

  claude mcp add memory -- memory mcp --store ~/.claude-memory

or in Claude Desktop's claude_desktop_config.json:

  {\"mcpServers\": {\"memory\": {\"command\": \"memory\",
                               \"args\": [\"mcp\", \"--store\", \"~/.claude-memory\"]}}}

(no shell expands the ~/ there: memory does, to HOME, or USERPROFILE on Windows).

Without --store (and MEMORY_STORE), the store is the folder `memory` in the user's data
directory: $XDG_DATA_HOME/memory, else ~/.local/share/memory (on macOS
~/Library/Application Support/memory), never the folder the client started the server in;
the path is said on standard error at start.

Lines are read by the server itself: a line that is not JSON gets a -32700 Parse error
answer, malformed params -32602, a message over 4 MiB an error answer with its id, and
one client's tool calls run in the order sent.

With --read-only, only `view` works: every other command gets an error result and the
store is neither created nor changed (a store that does not exist is exit status 3): it
is opened read-only, with no lock file, so a store you may read but not write is served.";

/// Arguments of `memory mcp`.
#[derive(Debug, clap::Args)]
#[command(after_help = format!("{}\n\n{EXIT_STATUS_HELP}", crate::mounts::mount_help()))]
pub(crate) struct McpArgs {
    #[command(flatten)]
    store: StoreArgs,

    /// Refuse every command that would change the store (only `view` works).
    #[arg(long)]
    read_only: bool,

    #[command(flatten)]
    mounts: crate::mounts::MountArgs,
}

/// Runs the server until the client closes standard input.
pub(crate) async fn run(mut args: McpArgs) -> ExitCode {
    // Read-only: nothing in the store changes, not even a lock file, so a store the user may
    // read but not write (shared, mounted read-only) is served.
    let access = if args.read_only {
        OpenMode::ReadOnly
    } else {
        OpenMode::CreateIfMissing
    };
    // A desktop client starts the server in a folder of its choosing: without --store, the
    // memories go to the user's data directory, never to whatever folder that is.
    if args.store.store.is_none() && args.mounts.mounts.is_empty() {
        match crate::store_args::user_data_store() {
            Ok(dir) => {
                eprintln!(
                    "memory: no --store given: using {} (the user's data directory)",
                    dir.display()
                );
                args.store.store = Some(format!("file:{}", dir.display()));
            }
            Err(message) => {
                eprintln!("memory: {message}");
                return Exit::Usage.into();
            }
        }
    }
    // With --mount, the mounts are the store, and the tool description carries the mount note.
    let session_id = args.mounts.session_id(&args.store);
    tracing::info!(session_id, "versioned-store writes are this session's");
    let options = args.store.options(Some(session_id));
    let (store, note) = match crate::mounts::open_store_or_mounts(
        &args.store,
        &args.mounts,
        &options,
        access,
    )
    .await
    {
        Ok(opened) => opened,
        Err(failure) => {
            eprintln!("memory: {failure}");
            return failure.exit.into();
        }
    };
    tracing::info!(store = %store, read_only = args.read_only, "serving the memory tool over MCP");
    let mut server = MemoryServer::new(store, args.read_only);
    server.note = note;
    // rmcp is served over the line transport (answers to bad lines, tool calls in order).
    let (transport, writer) = match transport::start(std::io::stdin(), tokio::io::stdout()) {
        Ok(started) => started,
        Err(e) => {
            eprintln!("memory: cannot read standard input: {e}");
            return ExitCode::FAILURE;
        }
    };
    let status = match server.serve(transport).await {
        Ok(service) => match service.waiting().await {
            Ok(reason) => {
                tracing::debug!(?reason, "MCP session ended");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("memory: the MCP session failed: {e}");
                ExitCode::FAILURE
            }
        },
        // The client closed its end before initializing: it went away, nothing failed.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::debug!("input ended before the MCP session started");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("memory: the MCP session did not start: {e}");
            ExitCode::FAILURE
        }
    };
    // The service ended, and the transport with it: the writer drains what is left.
    match writer.finish().await {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("memory: cannot write standard output: {e}");
            ExitCode::FAILURE
        }
        _ => status,
    }
}

/// The MCP server: the memory tool over one store.
pub(crate) struct MemoryServer {
    tool: MemoryTool<Arc<dyn Storage>>,
    read_only: bool,
    /// The mount note, appended to the tool's description (with --mount).
    pub(crate) note: Option<String>,
}

impl std::fmt::Debug for MemoryServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryServer")
            .field("tool", &self.tool)
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl MemoryServer {
    /// A server of the memory tool over `store`; `read_only` wraps the store in core's
    /// [`ReadOnly`], the one read-only policy (the same refusal as a read-only mount's).
    pub(crate) fn new(store: Arc<dyn Storage>, read_only: bool) -> Self {
        let store: Arc<dyn Storage> = if read_only {
            Arc::new(ReadOnly::new(store))
        } else {
            store
        };
        MemoryServer {
            tool: MemoryTool::new(store),
            read_only,
            note: None,
        }
    }

    /// Runs one tool input: the contract's answer (a read-only store refuses every change).
    pub(crate) async fn answer(&self, input: &Value) -> ToolOutput {
        self.tool.execute(input).await
    }

    /// Runs one `memory_search` call: the hits as text for the model and as
    /// `structuredContent` `{"results": [...]}`; a bad query, path or limit, or a store
    /// failure, is an error result (`isError`) whose text says what to change.
    pub(crate) async fn search(&self, input: JsonObject) -> CallToolResult {
        let query = match memory_core::search::parse_tool_input(&Value::Object(input)) {
            Ok(query) => query,
            Err(message) => {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "Error: {message}"
                ))]);
            }
        };
        match super::search::run_query(self.tool.storage().as_ref(), &query).await {
            Ok(hits) => {
                tracing::debug!(hits = hits.len(), "memory_search answered");
                let text = memory_core::search::tool_result_text(&query, &hits);
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content =
                    Some(json!({"results": super::search::hits_json(&hits)}));
                result
            }
            Err(failure) => CallToolResult::error(vec![ContentBlock::text(format!(
                "Error: {}",
                failure.message
            ))]),
        }
    }
}

/// The search tool as `tools/list` shows it: read-only, whatever the store.
pub(crate) fn search_tool_definition() -> Tool {
    let schema = match memory_core::search::tool_input_schema() {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    };
    Tool::new(
        SEARCH_TOOL_NAME,
        memory_core::search::TOOL_DESCRIPTION,
        Arc::new(schema),
    )
    .with_title("Memory search")
    .with_annotations(
        ToolAnnotations::with_title("Memory search")
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

/// What the model reads about the tool.
const DESCRIPTION: &str = "\
Your persistent memory: a directory of files under /memories that survives between \
conversations and context resets.

IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE DOING ANYTHING ELSE. Start every task \
with {\"command\": \"view\", \"path\": \"/memories\"} to check for earlier progress, then read \
the files that matter. As you work, record status, progress, decisions and facts worth \
keeping; assume your context may be reset at any moment, so anything not written here can be \
lost.

Keep the directory organized: a few well-named files by topic, kept up to date and coherent. \
Prefer editing a file (str_replace, insert) to creating a near-duplicate; rename or delete \
files that are no longer relevant; do not create new files unless necessary. Never store \
secrets, credentials or sensitive personal data.

Commands (set \"command\" and the fields it needs):
- view: path, optional view_range [start, end] (1-based, end -1 = to the end). A directory \
shows its files up to 2 levels deep with sizes; a file shows numbered lines.
- create: path, file_text. Creates a new file (an existing one is an error).
- str_replace: path, old_str, optional new_str (default \"\"). old_str must occur exactly once.
- insert: path, insert_line, insert_text. Inserts after line insert_line (0 = top).
- delete: path. A file, or a directory with everything in it.
- rename: old_path, new_path. Moves a file or directory; never overwrites.

Every path starts with /memories. A file holds at most 100 KB of text.";

const READ_ONLY_NOTE: &str = "\n\nThis memory is READ-ONLY here: only `view` works; every \
other command is refused.";

/// Instructions sent with the `initialize` answer (clients may add them to the system prompt).
const INSTRUCTIONS: &str = "\
The `memory` tool is your persistent memory directory (/memories).
MEMORY PROTOCOL:
1. Use the `view` command of your `memory` tool to check for earlier progress.
2. ... (work on the task) ...
   - As you make progress, record status / progress / thoughts etc in your memory.
ASSUME INTERRUPTION: Your context window might be reset at any moment, so you risk losing any \
progress that is not recorded in your memory directory.";

/// The JSON schema of the tool's input: one object with a `command` and the fields it needs.
/// (A flat schema rather than `oneOf`, which many clients cannot show or send.)
pub(crate) fn input_schema() -> JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "enum": memory_core::COMMAND_NAMES,
                "description": "The operation: view, create, str_replace, insert, delete or rename."
            },
            "path": {
                "type": "string",
                "description": "The file or directory, starting with /memories (every command but rename).",
                "examples": ["/memories", "/memories/notes.md"]
            },
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 2,
                "maxItems": 2,
                "description": "view only: [start, end] lines to show, 1-based; end -1 means to the end of the file."
            },
            "file_text": {
                "type": "string",
                "description": "create only: the content of the new file."
            },
            "old_str": {
                "type": "string",
                "description": "str_replace only: the exact text to replace; it must occur exactly once."
            },
            "new_str": {
                "type": "string",
                "description": "str_replace only: the replacement text (omitted = delete old_str)."
            },
            "insert_line": {
                "type": "integer",
                "minimum": 0,
                "description": "insert only: the line after which to insert (0 = at the top)."
            },
            "insert_text": {
                "type": "string",
                "description": "insert only: the text to insert."
            },
            "old_path": {
                "type": "string",
                "description": "rename only: the file or directory to move."
            },
            "new_path": {
                "type": "string",
                "description": "rename only: where to move it; must not exist yet."
            }
        },
        "required": ["command"]
    });
    match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// The tool as `tools/list` shows it.
pub(crate) fn tool_definition(read_only: bool) -> Tool {
    let description: Cow<'static, str> = if read_only {
        Cow::Owned(format!("{DESCRIPTION}{READ_ONLY_NOTE}"))
    } else {
        Cow::Borrowed(DESCRIPTION)
    };
    Tool::new(TOOL_NAME, description, Arc::new(input_schema()))
        .with_title("Memory")
        .with_annotations(
            ToolAnnotations::with_title("Memory")
                .read_only(read_only)
                .destructive(!read_only)
                .idempotent(false)
                .open_world(false),
        )
}

/// A [`ToolOutput`] as an MCP tool result: text as a text block, image blocks as MCP image
/// content, `isError` as the contract says.
pub(crate) fn to_call_tool_result(output: ToolOutput) -> CallToolResult {
    let content = match output.content {
        ToolContent::Text(text) => vec![ContentBlock::text(text)],
        ToolContent::Blocks(blocks) => blocks.iter().map(block_to_content).collect(),
    };
    if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

/// `{"type": "image", "source": {"type": "base64", "media_type", "data"}}` (the Messages API
/// shape) as MCP image content; any other block as its JSON text.
fn block_to_content(block: &Value) -> ContentBlock {
    let source = block.get("source");
    let field = |name: &str| source.and_then(|s| s.get(name)).and_then(Value::as_str);
    match (
        block.get("type").and_then(Value::as_str),
        field("type"),
        field("media_type"),
        field("data"),
    ) {
        (Some("image"), Some("base64"), Some(media_type), Some(data)) => {
            ContentBlock::image(data, media_type)
        }
        _ => ContentBlock::text(block.to_string()),
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("memory", env!("CARGO_PKG_VERSION"))
                    .with_title("Memory (memory_20250818)"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            crate::mounts::describe(tool_definition(self.read_only), self.note.as_deref()),
            search_tool_definition(),
        ]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match name {
            TOOL_NAME => Some(crate::mounts::describe(
                tool_definition(self.read_only),
                self.note.as_deref(),
            )),
            SEARCH_TOOL_NAME => Some(search_tool_definition()),
            _ => None,
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == SEARCH_TOOL_NAME {
            let input = request.arguments.unwrap_or_default();
            return Ok(self.search(input).await.into());
        }
        if request.name != TOOL_NAME {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`: this server has the `{TOOL_NAME}` and `{SEARCH_TOOL_NAME}` tools",
                    request.name
                ),
                None,
            ));
        }
        // No arguments at all reads as an empty object: "missing field `command`".
        let input = Value::Object(request.arguments.unwrap_or_default());
        let output = self.answer(&input).await;
        tracing::debug!(is_error = output.is_error, "tools/call answered");
        Ok(to_call_tool_result(output).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_core::InMemoryStorage;

    fn server(read_only: bool) -> MemoryServer {
        MemoryServer::new(Arc::new(InMemoryStorage::new()), read_only)
    }

    #[tokio::test]
    async fn read_only_refuses_writes_and_changes_nothing() {
        let writable = server(false);
        let created = writable
            .answer(&json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
            .await;
        assert!(!created.is_error);
        let read_only = MemoryServer::new(writable.tool.storage().clone(), true);
        for input in [
            json!({"command": "create", "path": "/memories/b.md", "file_text": "x"}),
            json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": "y"}),
            json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "y"}),
            json!({"command": "delete", "path": "/memories/a.md"}),
            json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/c.md"}),
        ] {
            let out = read_only.answer(&input).await;
            assert!(out.is_error, "{input}");
            assert!(out.text().unwrap().contains("read-only"), "{input}");
        }
        let view = read_only
            .answer(&json!({"command": "view", "path": "/memories/a.md"}))
            .await;
        assert_eq!(
            view.text(),
            Some("Here's the content of /memories/a.md with line numbers:\n     1\tx")
        );
        // Bad input gets the contract's own error, not the read-only one.
        let bad = read_only.answer(&json!({"command": "undo"})).await;
        assert!(
            bad.text()
                .unwrap()
                .starts_with("Error: Unknown command `undo`")
        );
    }

    #[test]
    fn results_keep_text_images_and_is_error() {
        let ok = serde_json::to_value(to_call_tool_result(ToolOutput::success("done"))).unwrap();
        assert_eq!(ok["content"], json!([{"type": "text", "text": "done"}]));
        assert_eq!(ok["isError"], json!(false));
        let err =
            serde_json::to_value(to_call_tool_result(ToolOutput::error("Error: no"))).unwrap();
        assert_eq!(err["isError"], json!(true));
        let image = serde_json::to_value(to_call_tool_result(ToolOutput::image(
            "image/png",
            "AAAA".into(),
        )))
        .unwrap();
        assert_eq!(
            image["content"],
            json!([{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
        );
    }

    #[test]
    fn schema_names_every_field_of_every_command() {
        let schema = input_schema();
        let properties = schema["properties"].as_object().unwrap();
        for field in [
            "command",
            "path",
            "view_range",
            "file_text",
            "old_str",
            "new_str",
            "insert_line",
            "insert_text",
            "old_path",
            "new_path",
        ] {
            assert!(properties.contains_key(field), "{field}");
        }
        assert_eq!(
            properties["command"]["enum"],
            json!([
                "view",
                "create",
                "str_replace",
                "insert",
                "delete",
                "rename"
            ])
        );
        assert_eq!(schema["required"], json!(["command"]));
        let tool = tool_definition(true);
        assert!(tool.description.unwrap().contains("READ-ONLY"));
    }
}
