//! `memory exec`: memory-tool commands read as JSON Lines on standard input, one answer a line.

use std::process::ExitCode;

use clap::ValueEnum;
use memory_cli::exec;
use memory_core::{CreateMode, MemoryTool};

use crate::store_args::{self, OpenMode, StoreArgs};

pub(crate) fn long_about() -> String {
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
#[derive(Debug, clap::Args)]
pub(crate) struct ExecArgs {
    #[command(flatten)]
    store: StoreArgs,

    /// What `create` does when the file exists: refuse (the default) or overwrite it.
    #[arg(long, value_enum, default_value_t = CreateModeArg::Reject)]
    create_mode: CreateModeArg,

    #[command(flatten)]
    session: store_args::SessionArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CreateModeArg {
    /// `Error: File {path} already exists`.
    Reject,
    /// Replace the file's content.
    Overwrite,
}

pub(crate) async fn run(args: ExecArgs) -> ExitCode {
    let store = match args
        .store
        .open_as(args.session.id(), OpenMode::CreateIfMissing)
        .await
    {
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
