//! `memory restore PATH --version V`: an earlier version written back as the current file.

use memory_core::history;

use super::versions::{failure, file_path, parse_version};
use super::{OpenMode, Outcome, SessionArgs, StoreArgs, parse_path, write_stdout};

/// `memory restore --help`.
pub(crate) const RESTORE_LONG_ABOUT: &str = "\
Write version V of a file (a number `memory log PATH` shows) back as its current
content. A deleted file comes back; a file edited since is overwritten, and the content
it had is kept as a version like any write's. The restore is itself a new version
(`restored`), so it can be undone the same way. Prints what it did.

Examples:
  memory log /memories/notes.md
  memory restore /memories/notes.md --version 3";

/// Arguments of `memory restore`.
#[derive(Debug, clap::Args)]
pub(crate) struct RestoreArgs {
    /// The file (its path now, or the one it had last if it was deleted).
    path: String,

    /// The version whose content to write back.
    #[arg(long, value_name = "V", value_parser = parse_version)]
    version: u64,

    #[command(flatten)]
    store: StoreArgs,

    #[command(flatten)]
    session: SessionArgs,
}

pub(crate) async fn run(args: RestoreArgs) -> Outcome {
    let path = file_path(parse_path(&args.path)?, "restore")?;
    let store = args
        .store
        .open_as(args.session.id(), OpenMode::Existing)
        .await?;
    let number = args.version;
    history::restore(store.as_ref(), &path, number)
        .await
        .map_err(|e| failure(&format!("restore version {number} of {path}"), e))?;
    // The restore's own version, to undo it by (the newest of the file).
    let now = store
        .history(&path)
        .await
        .ok()
        .and_then(|revisions| revisions.first().map(|r| r.number));
    let text = match now {
        Some(new) => format!("restored {path} to version {number} (as version {new})\n"),
        None => format!("restored {path} to version {number}\n"),
    };
    write_stdout(text.as_bytes())
}
