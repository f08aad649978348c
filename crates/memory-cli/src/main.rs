//! The `memory` program: Claude's memory tool (`memory_20250818`) over JSON Lines.
//!
//! Run `memory --help` and `memory exec --help`; the line protocol is described in
//! [`memory_cli::exec`] and the store URLs in [`memory_cli::store_url`].

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use memory_cli::exec;
use memory_core::{CreateMode, MemoryTool};

use failure::error_chain;
use store_args::{OpenMode, StoreArgs};

#[macro_use]
mod exit;
mod admin;
mod dream;
mod failure;
mod jsonrpc;
mod mcp;
mod mounts;
mod run;
mod search;
mod serve;
mod store_admin;
mod store_args;
mod sync;

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
manage any store (exit statuses: see `memory ls --help`). `memory sync` keeps a
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
fn exec_long_about() -> String {
    format!(
        "\
Answer memory-tool commands read as JSON Lines on standard input.

Each input line gets exactly one output line, in order, flushed at once:

  {{\"command\": \"view\", \"path\": \"/memories\"}}
      -> {{\"content\": \"...\", \"is_error\": false}}
  {{\"type\": \"tool_use\", \"id\": \"toolu_01\", \"name\": \"memory\", \"input\": {{...}}}}
      -> {{\"type\": \"tool_result\", \"tool_use_id\": \"toolu_01\", \"content\": \"...\"}}
         (\"is_error\": true is added on errors, as the Messages API expects)

A line that is not JSON, or not one of those shapes, gets an error answer and the
program goes on; so does a line longer than {max} bytes ({mib} MiB), which is skipped
without being held in memory. It exits 0 at the end of input, and 2 (with a message on
standard error, before reading anything) when the store cannot be opened.

{forms}
Example:

  $ printf '%s\\n' '{{\"command\":\"view\",\"path\":\"/memories\"}}' | memory exec --store mem:",
        max = memory_cli::lines::MAX_LINE_BYTES,
        mib = memory_cli::lines::MAX_LINE_BYTES >> 20,
        forms = store_args::store_forms_help(),
    )
}

/// Command line of the `memory` program.
#[derive(Debug, Parser)]
#[command(name = "memory", version, about = "Claude's memory tool (memory_20250818), as a program", long_about = long_about())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Answer memory-tool commands read as JSON Lines on standard input.
    #[command(long_about = exec_long_about())]
    Exec(ExecArgs),
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
    Store(store_admin::StoreAdminArgs),
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

#[derive(Debug, clap::Args)]
struct ExecArgs {
    #[command(flatten)]
    store: StoreArgs,

    /// What `create` does when the file exists: refuse (the default) or overwrite it.
    #[arg(long, value_enum, default_value_t = CreateModeArg::Reject)]
    create_mode: CreateModeArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CreateModeArg {
    /// `Error: File {path} already exists`.
    Reject,
    /// Replace the file's content.
    Overwrite,
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
        Command::Exec(args) => runtime.block_on(run_exec(args)),
        Command::Run(args) => runtime.block_on(run::run(args)),
        Command::Dream(args) => runtime.block_on(dream::run(args)),
        Command::Serve(args) => runtime.block_on(serve::run(args)),
        Command::Store(args) => runtime.block_on(store_admin::run(args)),
        Command::Sync(args) => runtime.block_on(sync::run(args)),
        Command::Keygen { file } => keygen(&file),
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

async fn run_exec(args: ExecArgs) -> ExitCode {
    let store = match args.store.open(OpenMode::CreateIfMissing).await {
        Ok(store) => store,
        Err(failure) => {
            eprintln!("memory: {failure}");
            return failure.exit.into();
        }
    };
    tracing::info!(store = %store, "store opened");
    let create_mode = match args.create_mode {
        CreateModeArg::Reject => CreateMode::Reject,
        CreateModeArg::Overwrite => CreateMode::Overwrite,
    };
    let tool = MemoryTool::new(store).with_create_mode(create_mode);
    // Standard input on a thread of its own, answers written on this one: no hand-off to a
    // blocking thread per line.
    let stdout = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    match exec::run(&tool, std::io::stdin(), stdout).await {
        Ok(lines) => {
            tracing::debug!(lines, "end of input");
            ExitCode::SUCCESS
        }
        // Whoever reads our answers went away: nothing left to tell them.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memory: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(feature = "encrypted")]
fn keygen(file: &std::path::Path) -> ExitCode {
    match memory_encrypted::generate_key_file(file) {
        Ok(key) => {
            eprintln!(
                "memory: wrote a new key (id {}) to {}",
                key.id(),
                file.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("memory: cannot write key file: {}", error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "encrypted"))]
fn keygen(_file: &std::path::Path) -> ExitCode {
    eprintln!("memory: keygen needs the `encrypted` feature of memory-cli, which this build lacks");
    exit::Exit::Usage.into()
}
