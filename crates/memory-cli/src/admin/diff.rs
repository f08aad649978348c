//! `memory diff PATH [--from V] [--to V]`: what changed between two versions of a file, as a
//! unified diff; the exit status is diff(1)'s.

use std::process::ExitCode;

use memory_core::{Entry, MemoryPath, Storage};
use memory_runner::history;

use super::versions::{failure, file_path, parse_version};
use super::{Exit, Failure, OpenMode, StoreArgs, parse_path, write_stdout};

/// `memory diff --help`.
pub(crate) const DIFF_LONG_ABOUT: &str = "\
Show what changed between two versions of a file (numbers as `memory log PATH`
shows them) as a unified diff. Without --from and --to: the version before the
current one against the current file. --to defaults to the current file (the newest
version); --from to the version just before --to. A deletion compares as an empty
file. If either side is not text (not UTF-8, or holding NUL bytes), only whether
they differ is said.

Examples:
  memory diff /memories/notes.md
  memory diff /memories/notes.md --from 1 --to 3

Exit status (as diff's):
  0  the versions are the same
  1  they differ
  2  trouble: bad arguments, no such version (or one whose content was redacted),
     history off for the store, a store that cannot be opened or fails";

/// Arguments of `memory diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct DiffArgs {
    /// The file (its path now, or the one it had last if it was deleted).
    path: String,

    /// The older version (default: the one just before --to).
    #[arg(long, value_name = "V", value_parser = parse_version)]
    from: Option<u64>,

    /// The newer version (default: the current file).
    #[arg(long, value_name = "V", value_parser = parse_version)]
    to: Option<u64>,

    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `memory diff`: 0 the same, 1 different, 2 anything else (the message on standard
/// error).
pub(crate) async fn run(args: DiffArgs) -> ExitCode {
    match compare(args).await {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(failure) => {
            eprintln!("memory: {failure}");
            ExitCode::from(2)
        }
    }
}

/// Prints the diff; whether the versions differ.
async fn compare(args: DiffArgs) -> Result<bool, Failure> {
    let path = file_path(parse_path(&args.path)?, "diff")?;
    let store = args.store.open(OpenMode::ReadOnly).await?;
    let revisions = store
        .history(&path)
        .await
        .map_err(|e| failure(&format!("list the versions of {path}"), e))?;
    if revisions.is_empty() {
        return Err(no_versions(store.as_ref(), &path).await);
    }
    if matches!(store.stat(&path).await, Ok(Some(Entry::Directory))) {
        return Err(Failure::new(
            Exit::Usage,
            format!("{path} is a directory; diff compares versions of one file"),
        ));
    }
    let diff = history::diff_of(store.as_ref(), &path, &revisions, args.from, args.to)
        .await
        .map_err(|e| failure(&format!("read the versions of {path}"), e))?;
    if !diff.differ() {
        return Ok(false);
    }
    let text = diff.unified().unwrap_or_else(|| {
        format!(
            "Binary versions differ: {} and {}\n",
            diff.from.label, diff.to.label
        )
    });
    write_stdout(text.as_bytes())?;
    Ok(true)
}

/// The failure for a file with no versions: missing, or written before history was kept.
async fn no_versions(store: &dyn Storage, path: &MemoryPath) -> Failure {
    match store.stat(path).await {
        Ok(Some(Entry::File(_))) => Failure::new(
            Exit::Usage,
            format!(
                "{path} has no recorded versions (it was written before the store kept \
                 history, or its versions were pruned)"
            ),
        ),
        Ok(Some(Entry::Directory)) => Failure::new(
            Exit::Usage,
            format!("{path} is a directory; diff compares versions of one file"),
        ),
        Ok(None) => Failure::new(Exit::NotFound, format!("{path} has no versions")),
        Err(e) => Failure::storage(&format!("look up {path}"), e),
    }
}
