//! `memory run`: Claude with the memory tool, from the command line.
//!
//! Sends PROMPT to Claude with the memory tool over the store, runs every memory command Claude
//! asks for, and repeats until Claude is done or `--max-iterations` requests were sent.
//!
//! Output: standard output holds only Claude's text (so it can be piped), streamed as Claude
//! writes it unless `--no-stream`: each reply's text, its trailing whitespace cut, then a
//! newline, the same bytes streamed or not. Standard error holds one trace line per memory
//! command as it runs (`[memory] create /memories/prefs.md (14 bytes): ok`) and every
//! diagnostic, an API error with its status, type, message and request id.
//!
//! `--clear-tool-uses` and `--compact` turn on the API's context editing (old tool results
//! cleared, the memory tool's kept; server-side compaction), each with its beta header.
//!
//! `--anthropic-version` sets the `anthropic-version` header (default
//! [`memory_runner::API_VERSION`], the official SDKs' `2026-10-21`).
//!
//! Exit status: 0 when the run ended (also at `--max-iterations`, with a note on standard
//! error), 1 when a request to the API failed, 2 when both `ANTHROPIC_API_KEY` and
//! `ANTHROPIC_AUTH_TOKEN` are missing, `--anthropic-version` cannot be a header, or the store
//! cannot be opened (before anything is sent).

use std::io::Write as _;
use std::process::ExitCode;

use memory_core::MemoryTool;
use std::sync::{Arc, Mutex, PoisonError};

use memory_runner::{
    ClearToolUses, Client, ClientBuilder, Compact, ContextManagement, DEFAULT_MAX_ITERATIONS,
    Message, MessagesRequest, Observed, ToolCall, ToolRunner, memory_call_summary,
};

use crate::exit::Exit;
use crate::store_args::{OpenMode, StoreArgs};

/// The model `memory run` asks unless `--model` says otherwise.
pub(crate) const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

pub(crate) const RUN_LONG_ABOUT: &str = "\
Run Claude with the memory tool over a store, until Claude is done.

PROMPT goes to Claude with the memory tool (memory_20250818). Every memory
command Claude sends runs against the store, and the results go back to Claude,
until Claude stops asking or --max-iterations requests were sent.

Standard output holds only Claude's text, printed as Claude writes it
(--no-stream: each reply once it is complete; the output is the same). Standard
error holds one line per memory command as it runs, e.g.

  [memory] view /memories: ok
  [memory] create /memories/preferences.md (31 bytes): ok

Long runs: --clear-tool-uses lets the API clear old tool results once the
prompt grows (the memory tool's own results are kept), --compact lets it
summarise the earlier conversation (server-side compaction).

Needs ANTHROPIC_API_KEY (sent as x-api-key) or ANTHROPIC_AUTH_TOKEN (sent as
Authorization: Bearer; both are sent when both are set, as the official SDKs
do); ANTHROPIC_BASE_URL points it elsewhere (a proxy, a test server).
Requests carry anthropic-version: 2026-10-21, the official SDKs' version;
--anthropic-version DATE sends another (e.g. for a proxy that knows only
2023-06-01). An API
error is printed with its status, type, message and request id. Exit status:
0 when the run ended, 1 when a request failed, 2 when the key is missing or
the store cannot be opened.

Example:

  $ export ANTHROPIC_API_KEY=...
  $ memory run --store ./memory 'I prefer metric units. Please remember that.'
  $ memory run --store ./memory 'How tall is Mont Blanc?'";

/// Arguments of `memory run`.
#[derive(Debug, clap::Args)]
#[command(after_help = crate::mounts::mount_help())]
pub(crate) struct RunArgs {
    #[command(flatten)]
    store: StoreArgs,

    /// The Claude model id.
    #[arg(long, default_value = DEFAULT_MODEL)]
    model: String,

    /// The most requests to send; Claude's tool calls after the last one are not run.
    #[arg(long, default_value_t = DEFAULT_MAX_ITERATIONS as u32, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_iterations: u32,

    /// A system prompt.
    #[arg(long, value_name = "TEXT")]
    system: Option<String>,

    /// The most tokens Claude may write per reply.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    max_tokens: u32,

    /// The `anthropic-version` header of every request; the default is the official SDKs'
    /// (which refuses temperature, top_p and top_k; `memory run` sends none of them).
    #[arg(long, value_name = "DATE", default_value = memory_runner::API_VERSION)]
    anthropic_version: String,

    /// Print each reply once it is complete instead of streaming Claude's text as it is
    /// written (the output is the same).
    #[arg(long)]
    no_stream: bool,

    /// Let the API clear old tool results as the conversation grows, keeping the memory
    /// tool's (context editing, `clear_tool_uses_20250919`).
    #[arg(long)]
    clear_tool_uses: bool,

    /// Let the API summarise the earlier conversation once it grows (server-side
    /// compaction, `compact_20260112`).
    #[arg(long)]
    compact: bool,

    /// Also give Claude the `memory_search` tool: keyword search over the store, so it can
    /// find a note without viewing folder after folder.
    #[arg(long)]
    search: bool,

    #[command(flatten)]
    mounts: crate::mounts::MountArgs,

    /// What to ask Claude.
    prompt: String,
}

/// Runs `memory run`.
pub(crate) async fn run(args: RunArgs) -> ExitCode {
    // The key first: without it nothing happens, not even creating the store.
    let client = match ClientBuilder::from_env()
        .anthropic_version(&args.anthropic_version)
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            eprintln!("memory: {e}");
            return Exit::Usage.into();
        }
    };
    let session_id = args.mounts.session_id(&args.store);
    tracing::info!(session_id, "versioned-store writes are this session's");
    let options = args.store.options(Some(session_id));
    // With --mount, the mounts are the store, and Claude is told the mount table.
    let mut system = args.system;
    let opened = crate::mounts::open_store_or_mounts(
        &args.store,
        &args.mounts,
        &options,
        OpenMode::CreateIfMissing,
    )
    .await;
    let store = match opened {
        Ok((store, None)) => store,
        Ok((store, Some(note))) => {
            system = Some(crate::mounts::with_note(system.as_deref(), &note));
            store
        }
        Err(failure) => {
            eprintln!("memory: {failure}");
            return failure.exit.into();
        }
    };
    tracing::info!(store = %store, model = %args.model, "memory run");
    let mut request =
        MessagesRequest::new(args.model, args.max_tokens).message(Message::user(args.prompt));
    if let Some(system) = system {
        request = request.system(system);
    }
    let mut editing = ContextManagement::new();
    if args.clear_tool_uses {
        editing = editing.clear_tool_uses(ClearToolUses::keeping_memory());
    }
    if args.compact {
        editing = editing.compact(Compact::new());
    }
    let settings = Settings {
        max_iterations: args.max_iterations,
        stream: !args.no_stream,
        editing,
        search: args.search,
    };
    converse(client, request, MemoryTool::new(store), settings).await
}

/// How `memory run` talks to Claude.
struct Settings {
    max_iterations: u32,
    stream: bool,
    editing: ContextManagement,
    search: bool,
}

async fn converse(
    client: Client,
    request: MessagesRequest,
    tool: MemoryTool<std::sync::Arc<dyn memory_core::Storage>>,
    settings: Settings,
) -> ExitCode {
    let search = settings
        .search
        .then(|| memory_runner::SearchTool::new(tool.storage().clone()));
    let traced = Observed::new(tool, |call: &ToolCall<'_>| {
        eprintln!("[memory] {}", trace_line(call));
    });
    let out = Arc::new(Mutex::new(TextOut::default()));
    let mut runner = ToolRunner::new(client, request)
        .tool(traced)
        .max_iterations(settings.max_iterations as usize)
        .context_management(settings.editing);
    if let Some(search) = search {
        runner = runner.tool(search);
    }
    if settings.stream {
        let out = Arc::clone(&out);
        runner = runner.on_event(move |event| {
            if let Some(text) = event.text_delta() {
                lock(&out).push(text);
            }
        });
    }
    let mut run = runner.run();
    while let Some(reply) = run.next().await {
        match reply {
            Ok(reply) => {
                let mut out = lock(&out);
                if !settings.stream {
                    out.push(&reply.text());
                }
                out.end();
            }
            Err(e) => {
                lock(&out).end();
                eprintln!("memory: {}", crate::failure::error_chain(&e));
                return ExitCode::FAILURE;
            }
        }
    }
    if run.hit_max_iterations() {
        eprintln!(
            "memory: stopped after {} requests (--max-iterations); Claude's last tool calls were not run",
            run.iterations()
        );
    }
    let usage = run.usage();
    tracing::info!(
        requests = run.iterations(),
        input_tokens = usage.input_tokens,
        output_tokens = usage.output_tokens,
        "run finished"
    );
    ExitCode::SUCCESS
}

fn lock(out: &Mutex<TextOut>) -> std::sync::MutexGuard<'_, TextOut> {
    // The printer holds a string and a flag, consistent after any panic.
    out.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Claude's text on standard output: a reply's text with its trailing whitespace cut, then a
/// newline (nothing for a reply without text), whether it comes in one piece or in deltas.
/// Whitespace is held back until more text follows it, so a streamed reply prints exactly
/// what the whole reply prints.
#[derive(Debug, Default)]
struct TextOut {
    held: String,
    wrote: bool,
}

impl TextOut {
    fn push(&mut self, text: &str) {
        let kept = text.trim_end();
        if kept.is_empty() {
            self.held.push_str(text);
            return;
        }
        let mut out = std::io::stdout().lock();
        // A closed standard output (`| head`) is no reason to stop Claude's work.
        let _ = out
            .write_all(self.held.as_bytes())
            .and_then(|()| out.write_all(kept.as_bytes()))
            .and_then(|()| out.flush());
        self.held.clear();
        self.held.push_str(&text[kept.len()..]);
        self.wrote = true;
    }

    /// Ends a reply's text.
    fn end(&mut self) {
        if self.wrote {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\n").and_then(|()| out.flush());
        }
        self.held.clear();
        self.wrote = false;
    }
}

/// `create /memories/x.md (12 bytes): ok`, or `...: error: <first line of the answer>`.
pub(crate) fn trace_line(call: &ToolCall<'_>) -> String {
    let summary = memory_call_summary(call.input);
    if !call.output.is_error {
        return format!("{summary}: ok");
    }
    let first_line = call
        .output
        .text()
        .and_then(|text| text.lines().next())
        .unwrap_or("");
    // The contract's error texts begin with `Error: `; the line says "error" once.
    let first_line = first_line.strip_prefix("Error: ").unwrap_or(first_line);
    format!("{summary}: error: {first_line}")
}
