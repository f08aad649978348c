//! `memory expire --older-than DURATION [--dry-run]`: delete files not modified for a while,
//! as the memory tool's documentation advises for stale memories.

use std::time::{Duration, SystemTime};

use memory_core::{Entry, Error, MemoryPath};

use super::archive::plural;
use super::duration::parse_duration;
use super::progress::Progress;
use super::{
    Exit, Failure, OpenMode, Outcome, SessionArgs, StoreArgs, human_size, rfc3339, write_stdout,
};

/// Arguments of `memory expire`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = concat!("\
Prints the path of every file deleted (or, with --dry-run, that would be) on standard
output, one per line, and a summary on standard error. Hidden files count too. Files
whose store does not record a modification time are kept (and counted in the summary).

Examples:
  memory expire --older-than 30d --dry-run
  memory expire --older-than 1d12h --store sqlite:memory.db", "\n\n", exit_status_help!()))]
pub(crate) struct ExpireArgs {
    /// Delete files not modified for this long: a number and a unit, s, m, h, d (days) or
    /// w (weeks), e.g. 30d, 12h, 90m, or combined as 1d12h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    older_than: Duration,

    /// Only list the files that would be deleted.
    #[arg(long)]
    dry_run: bool,

    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,

    #[command(flatten)]
    store: StoreArgs,

    #[command(flatten)]
    session: SessionArgs,
}

pub(crate) async fn run(args: ExpireArgs) -> Outcome {
    let now = SystemTime::now();
    let cutoff = now
        .checked_sub(args.older_than)
        .filter(|cutoff| *cutoff >= SystemTime::UNIX_EPOCH)
        .ok_or_else(|| {
            Failure::new(
                Exit::Usage,
                format!(
                    "--older-than {}s reaches back before 1970-01-01T00:00:00Z, further than \
                     file times go; use a shorter duration",
                    args.older_than.as_secs()
                ),
            )
        })?;
    let store = args
        .store
        .open_as(args.session.id(), OpenMode::Existing)
        .await?;
    let files = store
        .list(&MemoryPath::root())
        .await
        .map_err(|e| Failure::storage("list /memories", e))?;
    let undated = files.iter().filter(|f| f.modified.is_none()).count() as u64;
    let stale: Vec<_> = files
        .into_iter()
        .filter(|f| f.modified.is_some_and(|m| m <= cutoff))
        .collect();

    let mut progress = Progress::stderr("expire", stale.len() as u64, args.quiet || args.dry_run);
    let mut listed = String::new();
    let (mut count, mut bytes) = (0u64, 0u64);
    for meta in &stale {
        if !args.dry_run {
            // Look again just before deleting: a file edited since the listing stays.
            let still_stale = match store.stat(&meta.path).await {
                Ok(Some(Entry::File(now))) => now.modified.is_some_and(|m| m <= cutoff),
                Ok(_) => false,
                Err(e) => return Err(Failure::storage(&format!("look up {}", meta.path), e)),
            };
            if !still_stale {
                progress.inc();
                continue;
            }
            match store.delete(&meta.path).await {
                Ok(()) => {}
                Err(Error::NotFound { .. }) => {
                    progress.inc();
                    continue;
                }
                Err(e) => {
                    progress.finish();
                    write_stdout(listed.as_bytes())?;
                    return Err(Failure::storage(&format!("delete {}", meta.path), e));
                }
            }
        }
        listed.push_str(meta.path.as_str());
        listed.push('\n');
        count += 1;
        bytes += meta.size;
        progress.inc();
    }
    progress.finish();
    write_stdout(listed.as_bytes())?;
    if !args.quiet {
        let verb = if args.dry_run {
            "would delete"
        } else {
            "deleted"
        };
        eprintln!(
            "memory: {verb} {count} file{} ({}) not modified since {}{}",
            plural(count),
            human_size(bytes),
            rfc3339(cutoff),
            if args.dry_run {
                " (dry run: nothing was deleted)"
            } else {
                ""
            }
        );
        if undated > 0 {
            eprintln!(
                "memory: kept {undated} file{} whose modification time the store does not record",
                plural(undated)
            );
        }
    }
    Ok(())
}
