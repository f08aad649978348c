//! The admin commands: look inside a store and manage it from a shell or a script.
//!
//! Every command opens its store from a URL (`--store`, or `MEMORY_STORE`), optionally wrapped
//! in the encrypted envelope (`--encryption-key-file`), and works through the [`memory_core::Storage`] trait
//! directly, so it behaves the same on every backend. Messages go to standard error as
//! `memory: ...` and never name a host path of the store or a backend's internal message (run
//! with `RUST_LOG=debug` for those); data goes to standard output.
//!
//! Exit statuses ([`Exit`]) are part of the interface: scripts may rely on them.

mod archive;
mod cat;
mod copy;
mod diff;
mod duration;
pub(crate) use duration::{parse_duration, parse_positive_duration};
mod expire;
mod log;
mod ls;
mod modified;
mod mv;
mod progress;
mod put;
mod redact;
#[cfg(feature = "encrypted")]
mod rekey;
mod restore;
mod rm;
mod stats;
mod versions;

use std::process::ExitCode;

use memory_core::MemoryPath;

pub(crate) use crate::exit::{EXIT_STATUS_HELP, Exit};
pub(crate) use crate::failure::{Failure, Outcome};

pub(crate) use crate::store_args::{OpenMode, SessionArgs, StoreArgs, open_store, same_store};

/// `2025-01-31T12:00:00Z`: a file's time as the admin commands print it (whole seconds, UTC;
/// memory-store's `Timestamp` is the one RFC 3339 routine).
pub(crate) fn rfc3339(time: std::time::SystemTime) -> String {
    memory_store::Timestamp::from(time).to_rfc3339_seconds()
}

/// The instant an RFC 3339 time names (what `memory export` writes in an archive's
/// `modified`); `None` for anything else, and for times before 1970, which no store keeps.
pub(crate) fn parse_rfc3339(text: &str) -> Option<std::time::SystemTime> {
    let time = text
        .parse::<memory_store::Timestamp>()
        .ok()?
        .to_system_time();
    (time >= std::time::UNIX_EPOCH).then_some(time)
}

/// Parses a `/memories` path given on the command line (exit 2 when it breaks the rules).
pub(crate) fn parse_path(raw: &str) -> Result<MemoryPath, Failure> {
    MemoryPath::parse(raw).map_err(|e| {
        let text = e.to_string();
        let text = text.strip_prefix("Error: ").unwrap_or(&text);
        Failure::new(Exit::Usage, text.to_owned())
    })
}

/// `0B`, `1023B`, `1K`, `1.5K`, `3M`: the size format of the memory tool's directory view.
pub(crate) fn human_size(bytes: u64) -> String {
    memory_core::format_size(bytes)
}

/// The bytes the memory tool lets one file hold by default; admin writes above it get a warning.
pub(crate) fn tool_file_limit() -> u64 {
    memory_core::Limits::default().max_file_bytes as u64
}

// The admin subcommands of `memory` (a plain comment: clap would show a doc comment as the
// program's about text when this enum is flattened into the main command).
#[derive(Debug, clap::Subcommand)]
pub(crate) enum AdminCommand {
    /// List a directory as a tree with sizes (hidden files included).
    #[command(after_help = EXIT_STATUS_HELP)]
    Ls(ls::LsArgs),
    /// Print a file's bytes to standard output.
    #[command(after_help = EXIT_STATUS_HELP)]
    Cat(cat::CatArgs),
    /// Write a file from FILE or standard input (replacing it unless --no-overwrite).
    #[command(after_help = EXIT_STATUS_HELP)]
    Put(put::PutArgs),
    /// Delete a file (or, with --recursive, a directory and everything below it).
    #[command(after_help = EXIT_STATUS_HELP)]
    Rm(rm::RmArgs),
    /// Move a file or directory; never overwrites.
    #[command(after_help = EXIT_STATUS_HELP)]
    Mv(mv::MvArgs),
    /// Count files and bytes, and show the largest files.
    #[command(after_help = EXIT_STATUS_HELP)]
    Stats(stats::StatsArgs),
    /// Write the whole store as a portable archive (JSON Lines, a SHA-256 per file).
    #[command(long_about = archive::EXPORT_LONG_ABOUT, after_help = EXIT_STATUS_HELP)]
    Export(archive::ExportArgs),
    /// Load an archive written by `memory export`, after verifying every checksum.
    ///
    /// Each file keeps the modification time the archive records for it (so `memory
    /// expire` after a restore sees its age), in folder, SQLite and PostgreSQL stores; S3 and versioned
    /// stores keep their own.
    #[command(after_help = EXIT_STATUS_HELP)]
    Import(archive::ImportArgs),
    /// Copy every file of one store into another (e.g. a folder into SQLite).
    #[command(after_help = EXIT_STATUS_HELP)]
    Copy(copy::CopyArgs),
    /// Delete files not modified for a while (--dry-run to only list them).
    #[command(after_help = EXIT_STATUS_HELP)]
    Expire(expire::ExpireArgs),
    /// Re-encrypt every file of an encrypted store under a new key (key rotation), resumably.
    #[cfg(feature = "encrypted")]
    Rekey(rekey::RekeyArgs),
    /// List the earlier versions of a file, or of every file below a folder, newest first.
    #[command(long_about = log::LOG_LONG_ABOUT, after_help = EXIT_STATUS_HELP)]
    Log(log::LogArgs),
    /// Show what changed between two versions of a file, as a unified diff.
    #[command(long_about = diff::DIFF_LONG_ABOUT)]
    Diff(diff::DiffArgs),
    /// Write an earlier version of a file back as its current content (a deleted file too).
    #[command(long_about = restore::RESTORE_LONG_ABOUT, after_help = EXIT_STATUS_HELP)]
    Restore(restore::RestoreArgs),
    /// Remove the stored content of past versions of a file for good, keeping their record.
    #[command(long_about = redact::REDACT_LONG_ABOUT, after_help = EXIT_STATUS_HELP)]
    Redact(redact::RedactArgs),
}

impl AdminCommand {
    /// Runs the command; prints its failure, if any, and gives the exit status.
    pub(crate) async fn run(self) -> ExitCode {
        let outcome = match self {
            AdminCommand::Ls(args) => ls::run(args).await,
            AdminCommand::Cat(args) => cat::run(args).await,
            AdminCommand::Put(args) => put::run(args).await,
            AdminCommand::Rm(args) => rm::run(args).await,
            AdminCommand::Mv(args) => mv::run(args).await,
            AdminCommand::Stats(args) => stats::run(args).await,
            AdminCommand::Export(args) => archive::export(args).await,
            AdminCommand::Import(args) => archive::import(args).await,
            AdminCommand::Copy(args) => copy::run(args).await,
            AdminCommand::Expire(args) => expire::run(args).await,
            #[cfg(feature = "encrypted")]
            AdminCommand::Rekey(args) => rekey::run(args).await,
            AdminCommand::Log(args) => log::run(args).await,
            // diff's statuses are diff(1)'s: 0 the same, 1 different, 2 trouble.
            AdminCommand::Diff(args) => return diff::run(args).await,
            AdminCommand::Restore(args) => restore::run(args).await,
            AdminCommand::Redact(args) => redact::run(args).await,
        };
        match outcome {
            Ok(()) => ExitCode::SUCCESS,
            Err(failure) => {
                eprintln!("memory: {failure}");
                failure.exit.into()
            }
        }
    }
}

/// Writes `bytes` to standard output; a reader that went away (`| head`) is not a failure.
pub(crate) fn write_stdout(bytes: &[u8]) -> Outcome {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::new(
            Exit::Failed,
            format!("cannot write to standard output: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_view_format() {
        for (bytes, text) in [
            (0, "0B"),
            (1, "1B"),
            (1023, "1023B"),
            (1024, "1K"),
            (1025, "1.0K"),
            (1536, "1.5K"),
            (1_048_575, "1024.0K"),
            (3 << 20, "3M"),
        ] {
            assert_eq!(human_size(bytes), text, "{bytes}");
        }
    }

    #[test]
    fn bad_paths_are_usage_errors_without_the_tool_prefix() {
        let failure = parse_path("/etc/passwd").unwrap_err();
        assert_eq!(failure.exit, Exit::Usage);
        assert_eq!(
            failure.message,
            "Path must start with /memories, got: /etc/passwd"
        );
    }
}
