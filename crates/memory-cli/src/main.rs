//! The `memory` program: Claude's memory tool (`memory_20250818`) over JSON Lines.
//!
//! Run `memory --help` and `memory exec --help`; the line protocol is described in
//! [`memory_cli::exec`] and the store URLs in [`memory_cli::store_url`].

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod exit;
mod admin;
mod commands;
mod failure;
mod mounts;
mod store_args;

use commands::{dream, exec, keygen, mcp, run, search, serve, store, sync};

/// `memory --help`: what the program is, and every kind of store URL this build opens (from
/// memory-runner's list of compiled schemes, so it cannot go stale).
fn long_about() -> String {
    format!(
        "{LONG_ABOUT_HEAD}\n{forms}\n{LONG_ABOUT_TAIL}",
        forms = store_args::store_forms_help()
    )
}

const LONG_ABOUT_HEAD: &str = "\
Claude's memory tool (memory_20250818), as a program.

Claude keeps notes in a /memories directory through six commands (view, create,
str_replace, insert, delete, rename). `memory exec` runs those commands, read one
per line as JSON, against a store you choose (any of the store URLs below), and
prints one JSON result per line.

`memory mcp` serves the same tool to MCP clients (Claude Code, Claude Desktop);
ls, cat, put, rm, mv, stats, export, import, copy and expire look inside and
manage any store (exit statuses: see `memory ls --help`); log, diff, restore and
redact show and bring back each file's earlier versions, which every store keeps
(store options history=on|off, history_days=N, history_max=N). `memory sync` keeps a
folder of plain files in step with a versioned store (`memory serve`).
";

const LONG_ABOUT_TAIL: &str = "\
Example:

  $ echo '{\"command\": \"create\", \"path\": \"/memories/notes.md\", \"file_text\": \"Hi\\n\"}' \\
      | memory exec --store ./memory
  {\"content\":\"File created successfully at: /memories/notes.md\",\"is_error\":false}

The file is now ./memory/memories/notes.md, the layout Anthropic's SDKs use.
Logs go to standard error (set RUST_LOG=debug for more); standard output holds
only answers.";

/// `memory exec --help`: the protocol, and the store URLs this build opens.
#[derive(Debug, Parser)]
#[command(name = "memory", version, about = "Claude's memory tool (memory_20250818), as a program", long_about = long_about())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Answer memory-tool commands read as JSON Lines on standard input.
    #[command(long_about = exec::long_about())]
    Exec(exec::ExecArgs),
    /// Serve the memory tool to an MCP client (Claude Code, Claude Desktop) over stdio.
    #[command(long_about = mcp::MCP_LONG_ABOUT)]
    Mcp(mcp::McpArgs),
    #[command(flatten)]
    Admin(admin::AdminCommand),
    /// Find files by keywords: ranked hits with paths, line numbers and snippets.
    Search(search::SearchArgs),
    /// Serve versioned memory stores over HTTP with the hosted memory-stores API.
    #[command(long_about = serve::SERVE_LONG_ABOUT)]
    Serve(serve::ServeArgs),
    /// Administer the memory stores of a `memory serve` database: list, memories, history,
    /// redact, restore, export.
    Store(store::StoreAdminArgs),
    /// Run Claude with the memory tool over a store, until Claude is done.
    #[command(long_about = run::RUN_LONG_ABOUT)]
    Run(run::RunArgs),
    /// Consolidate a store into another with Claude, leaving the original untouched.
    #[command(long_about = dream::DREAM_LONG_ABOUT)]
    Dream(dream::DreamArgs),
    /// Keep a folder of plain files in step with a versioned memory store, by the rules of
    /// Anthropic's Python SDK.
    #[command(long_about = sync::SYNC_LONG_ABOUT)]
    Sync(sync::SyncArgs),
    /// Write a new random encryption key (64 hexadecimal characters) to FILE.
    ///
    /// The file is created with mode 0600 and never overwritten. Use it with
    /// `memory exec --encryption-key-file FILE`.
    Keygen {
        /// Where to write the key; must not exist yet.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("memory: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Mcp(args) => runtime.block_on(mcp::run(args)),
        Command::Admin(command) => runtime.block_on(command.run()),
        Command::Search(args) => runtime.block_on(search::run(args)),
        Command::Exec(args) => runtime.block_on(exec::run(args)),
        Command::Run(args) => runtime.block_on(run::run(args)),
        Command::Dream(args) => runtime.block_on(dream::run(args)),
        Command::Serve(args) => runtime.block_on(serve::run(args)),
        Command::Store(args) => runtime.block_on(store::run(args)),
        Command::Sync(args) => runtime.block_on(sync::run(args)),
        Command::Keygen { file } => keygen::run(&file),
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
