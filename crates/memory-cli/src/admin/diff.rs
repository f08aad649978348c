//! `memory diff PATH [--from V] [--to V]`: what changed between two versions of a file, as a
//! unified diff; the exit status is diff(1)'s.

use std::process::ExitCode;
use std::time::Duration;

use memory_core::history::{Change, Revision};
use memory_core::{Entry, Error, MemoryPath, Storage};

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

/// One side of the comparison: its label for the diff's header, and its bytes.
struct Side {
    label: String,
    contents: Vec<u8>,
}

/// Prints the diff; whether the versions differ.
async fn compare(args: DiffArgs) -> Result<bool, Failure> {
    let path = file_path(parse_path(&args.path)?, "diff")?;
    let store = args.store.open(OpenMode::ReadOnly).await?;
    let revisions = store
        .history(&path)
        .await
        .map_err(|e| failure(&format!("list the versions of {path}"), e))?;
    let Some(newest) = revisions.first() else {
        return Err(no_versions(store.as_ref(), &path).await);
    };
    if matches!(store.stat(&path).await, Ok(Some(Entry::Directory))) {
        return Err(Failure::new(
            Exit::Usage,
            format!("{path} is a directory; diff compares versions of one file"),
        ));
    }
    let to_number = args.to.unwrap_or(newest.number);
    let to = if args.to.is_none() && newest.change != Change::Deleted {
        let file = store
            .read(&path)
            .await
            .map_err(|e| failure(&format!("read {path}"), e))?;
        Side {
            label: format!("{path} (version {to_number}, current)"),
            contents: file.contents,
        }
    } else {
        side(store.as_ref(), &path, &revisions, to_number).await?
    };
    let from = match args.from.or(to_number.checked_sub(1).filter(|&n| n > 0)) {
        Some(number) => side(store.as_ref(), &path, &revisions, number).await?,
        None => Side {
            label: format!("{path} (nothing before version 1)"),
            contents: Vec::new(),
        },
    };
    if from.contents == to.contents {
        return Ok(false);
    }
    let text = match (text_of(&from.contents), text_of(&to.contents)) {
        (Some(old), Some(new)) => unified(old, new, &from.label, &to.label),
        _ => format!("Binary versions differ: {} and {}\n", from.label, to.label),
    };
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

/// Version `number` of `path`: its content, or nothing for a deletion.
async fn side(
    store: &dyn Storage,
    path: &MemoryPath,
    revisions: &[Revision],
    number: u64,
) -> Result<Side, Failure> {
    let Some(revision) = revisions.iter().find(|r| r.number == number) else {
        return Err(failure(
            "read",
            Error::NoRevision {
                path: path.clone(),
                number,
            },
        ));
    };
    if revision.change == Change::Deleted {
        return Ok(Side {
            label: format!("{path} (version {number}, deleted)"),
            contents: Vec::new(),
        });
    }
    let contents = store
        .read_revision(path, number)
        .await
        .map_err(|e| failure(&format!("read version {number} of {path}"), e))?;
    Ok(Side {
        label: format!("{path} (version {number})"),
        contents,
    })
}

/// `bytes` as text, unless they are not UTF-8 or hold a NUL byte (as diff(1) tells binary).
fn text_of(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

/// Longest the diff may search for the smallest edit; past it a larger (still correct) one
/// is shown.
const DEADLINE: Duration = Duration::from_secs(2);

/// The unified diff of `old` and `new` (three lines of context), headed by their labels.
fn unified(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    similar::TextDiff::configure()
        .timeout(DEADLINE)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_a_unified_diff_with_the_labels() {
        let diff = unified("a\nb\nc\n", "a\nB\nc\n", "x (version 1)", "x (version 2)");
        assert_eq!(
            diff,
            "--- x (version 1)\n+++ x (version 2)\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
    }

    #[test]
    fn nul_bytes_and_invalid_utf8_are_binary() {
        assert_eq!(text_of(b"plain\n"), Some("plain\n"));
        assert_eq!(text_of(b"a\0b"), None);
        assert_eq!(text_of(&[0xff, 0xfe]), None);
    }
}
