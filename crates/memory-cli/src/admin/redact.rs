//! `memory redact PATH (--version V | --all)`: the stored content of past versions removed for
//! good, their record kept.

use memory_core::Entry;
use memory_core::history::Redaction;

use super::archive::plural;
use super::versions::{failure, file_path, parse_version};
use super::{Exit, Failure, OpenMode, Outcome, StoreArgs, parse_path, write_stdout};

/// `memory redact --help`.
pub(crate) const REDACT_LONG_ABOUT: &str = "\
Remove the stored content of past versions of a file, as the hosted memory stores'
redaction does: the way to make a secret that was once written truly gone. The store
keeps each version's record (when, what operation, which session, its size) but no
copy of its bytes and no digest, in its files, free pages or logs; `memory log` shows
them as redacted, and `memory cat --version` / `restore` of them fail. The current file
is never touched (redacting its version is refused: overwrite or delete the file
first). --all on a folder (or /memories) redacts the past versions of every file below
it, deleted files included: after a secret spread, or to retire an encryption key that
leaked. There is no undo. Prints how many versions lost their content.

Examples:
  memory redact /memories/notes.md --version 2
  memory redact /memories/notes.md --all
  memory redact /memories --all";

/// Arguments of `memory redact`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["version", "all"]))]
pub(crate) struct RedactArgs {
    /// The file (its path now, or the one it had last if it was deleted); with --all also a
    /// folder.
    path: String,

    /// Redact this one past version.
    #[arg(long, value_name = "V", value_parser = parse_version)]
    version: Option<u64>,

    /// Redact every version but the current file (for a folder, or /memories: of every file
    /// below it, deleted ones included).
    #[arg(long)]
    all: bool,

    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn run(args: RedactArgs) -> Outcome {
    let path = parse_path(&args.path)?;
    if args.version.is_some() {
        file_path(path.clone(), "redact --version")?;
    }
    let store = args.store.open(OpenMode::Existing).await?;
    let which = match args.version {
        Some(number) => Redaction::Revision(number),
        None => Redaction::AllPast,
    };
    let mut below = false;
    if which == Redaction::AllPast {
        // A path with nothing to redact is named, not silently "done".
        let revisions = store
            .history(&path)
            .await
            .map_err(|e| failure(&format!("list the versions of {path}"), e))?;
        match store.stat(&path).await {
            Ok(Some(Entry::Directory)) => below = true,
            Ok(None) if path.is_root() => below = true,
            Ok(None) if revisions.is_empty() => {
                return Err(Failure::new(
                    Exit::NotFound,
                    format!("{path} has no versions"),
                ));
            }
            Ok(_) => {}
            Err(e) => return Err(Failure::storage(&format!("look up {path}"), e)),
        }
    }
    let count = store
        .redact_revisions(&path, which)
        .await
        .map_err(|e| failure(&format!("redact the versions of {path}"), e))?;
    let what = if below {
        format!("the files below {path}")
    } else {
        path.to_string()
    };
    let text = match which {
        Redaction::Revision(number) if count == 0 => format!(
            "version {number} of {path} held no content already (a deletion, or redacted)\n"
        ),
        Redaction::Revision(number) => {
            format!("redacted version {number} of {path}: its content is gone\n")
        }
        Redaction::AllPast => format!(
            "redacted {count} version{} of {what}{}\n",
            plural(count),
            match count {
                0 => "",
                1 => ": its content is gone",
                _ => ": their content is gone",
            }
        ),
    };
    write_stdout(text.as_bytes())
}
