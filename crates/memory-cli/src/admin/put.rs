//! `memory put PATH [FILE|-]`: write a file from a local file or standard input.

use std::io::Read;
use std::path::PathBuf;

use memory_core::WriteMode;

use super::{
    Exit, Failure, OpenMode, Outcome, SessionArgs, StoreArgs, human_size, parse_path,
    tool_file_limit,
};

/// Arguments of `memory put`.
#[derive(Debug, clap::Args)]
pub(crate) struct PutArgs {
    /// Where to write (e.g. /memories/notes.md); parent directories come into being.
    path: String,

    /// The local file to read, or `-` (the default) for standard input.
    #[arg(default_value = "-")]
    file: PathBuf,

    /// Refuse (exit 4) instead of replacing a file that is already there.
    #[arg(long)]
    no_overwrite: bool,

    #[command(flatten)]
    store: StoreArgs,

    #[command(flatten)]
    session: SessionArgs,
}

pub(crate) async fn run(args: PutArgs) -> Outcome {
    let path = parse_path(&args.path)?;
    let contents = read_local(args.file).await?;
    let store = args
        .store
        .open_as(args.session.id(), OpenMode::CreateIfMissing)
        .await?;
    let size = contents.len() as u64;
    let mode = if args.no_overwrite {
        WriteMode::Create
    } else {
        WriteMode::Overwrite
    };
    store
        .write(&path, contents, mode)
        .await
        .map_err(|e| Failure::storage(&format!("write {path}"), e))?;
    if size > tool_file_limit() {
        eprintln!(
            "memory: warning: {path} is {size} bytes ({}), over the memory tool's limit of {} bytes: \
             the model can view it but not edit it",
            human_size(size),
            tool_file_limit()
        );
    }
    Ok(())
}

/// The bytes of `file` (`-` is standard input), read off the async runtime.
async fn read_local(file: PathBuf) -> Result<Vec<u8>, Failure> {
    let shown = file.display().to_string();
    let read = tokio::task::spawn_blocking(move || {
        if file.as_os_str() == "-" {
            let mut buf = Vec::new();
            std::io::stdin().lock().read_to_end(&mut buf).map(|_| buf)
        } else {
            std::fs::read(&file)
        }
    })
    .await
    .map_err(|e| Failure::new(Exit::Failed, format!("cannot read {shown}: {e}")))?;
    read.map_err(|e| {
        let what = if shown == "-" {
            "standard input".to_owned()
        } else {
            shown
        };
        Failure::new(Exit::Failed, format!("cannot read {what}: {e}"))
    })
}
