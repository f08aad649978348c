//! The admin commands: look inside a store and manage it from a shell or a script.
//!
//! Every command opens its store from a URL (`--store`, or `MEMORY_STORE`), optionally wrapped
//! in the encrypted envelope (`--encryption-key-file`), and works through the [`Storage`] trait
//! directly, so it behaves the same on every backend. Messages go to standard error as
//! `memory: ...` and never name a host path of the store or a backend's internal message (run
//! with `RUST_LOG=debug` for those); data goes to standard output.
//!
//! Exit statuses ([`Exit`]) are part of the interface: scripts may rely on them.

/// The exit-status table shown by every admin command's `--help`, as a literal so that
/// `concat!` can append it to longer help texts.
macro_rules! exit_status_help {
    () => {
        "Exit status:
  0  success
  1  the store failed, or a local file could not be read or written
  2  usage error: bad arguments, an invalid /memories path or duration, or a store
     URL that is invalid or cannot be opened
  3  not found: nothing at the path (for cat: not a file), or the store does not exist
  4  already exists: the destination is taken (mv, put --no-overwrite), or import /
     copy would overwrite files (pass --overwrite)
  5  import: the archive is damaged, truncated or altered (checksum mismatch)"
    };
}

mod archive;
mod cat;
mod copy;
mod duration;
mod expire;
mod ls;
mod mv;
mod progress;
mod put;
#[cfg(feature = "encrypted")]
mod rekey;
mod rm;
mod stats;
mod time;

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use memory_cli::store_url::{self, OpenOptions, StoreUrl};
use memory_core::{Error, MemoryPath, Storage};

/// The exit statuses of the admin commands (and of `memory mcp` at start-up).
pub(crate) const EXIT_STATUS_HELP: &str = exit_status_help!();

/// Why an admin command stopped; each has its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 1: the store failed, or a local file could not be read or written.
    Failed = 1,
    /// 2: bad arguments, or a store that cannot be opened.
    Usage = 2,
    /// 3: nothing at the path, or no such store.
    NotFound = 3,
    /// 4: the destination is taken.
    Exists = 4,
    /// 5: a damaged archive.
    BadArchive = 5,
}

/// A failed admin command: the message for standard error and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) exit: Exit,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(exit: Exit, message: impl Into<String>) -> Self {
        Failure {
            exit,
            message: message.into(),
        }
    }

    /// A storage error met while doing `doing` (e.g. "read /memories/a.md").
    ///
    /// The semantic errors become their own message and status; a backend failure's detail
    /// (which may hold host paths) goes to the debug log only.
    pub(crate) fn storage(doing: &str, err: Error) -> Self {
        match err {
            Error::NotFound { path } => {
                Failure::new(Exit::NotFound, format!("{path} does not exist"))
            }
            Error::AlreadyExists { path } => {
                Failure::new(Exit::Exists, format!("{path} already exists"))
            }
            Error::ParentIsFile { path, parent } => Failure::new(
                Exit::Exists,
                format!("cannot create {path}: {parent} is a file"),
            ),
            Error::RenameIntoItself { from, .. } => {
                Failure::new(Exit::Usage, format!("cannot move {from} into itself"))
            }
            // A store's own rule (a read-only mount, ...): its reason names memory paths only.
            Error::Refused { path, reason } => {
                Failure::new(Exit::Failed, format!("cannot change {path}: {reason}"))
            }
            Error::Conflict { path } => Failure::new(
                Exit::Failed,
                format!("{path} was modified by someone else at the same time; try again"),
            ),
            other => {
                tracing::debug!(error = %other, error_debug = ?other, "store failure");
                let hint = if other.is_retryable() {
                    "try again in a moment"
                } else {
                    "run with RUST_LOG=debug for the details"
                };
                Failure::new(Exit::Failed, format!("the store failed to {doing}; {hint}"))
            }
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What an admin command returns.
pub(crate) type Outcome = Result<(), Failure>;

/// Where a command's store is: `--store` and `--encryption-key-file`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct StoreArgs {
    /// The store: a directory path, file:PATH, sqlite:PATH, s3://BUCKET[/PREFIX] or mem:.
    #[arg(
        long,
        env = "MEMORY_STORE",
        default_value = "./memory",
        value_name = "URL"
    )]
    pub(crate) store: String,

    /// Decrypt and encrypt with the 32-byte key in FILE (64 hex characters; see `memory keygen`).
    #[arg(long, env = "MEMORY_ENCRYPTION_KEY_FILE", value_name = "FILE")]
    pub(crate) encryption_key_file: Option<PathBuf>,

    /// Also read files encrypted under this older key (key rotation); repeat for several.
    #[arg(
        long = "old-key-file",
        value_name = "FILE",
        requires = "encryption_key_file"
    )]
    pub(crate) old_key_files: Vec<PathBuf>,
}

/// Whether opening a store may create it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// The command only reads: a directory or database file that is not there is "not found"
    /// (exit 3) rather than created empty.
    Existing,
    /// The command writes: the store is created if needed.
    CreateIfMissing,
}

/// Opens the store `url` names (with the one store-URL parser of this crate).
pub(crate) async fn open_store(
    url: &str,
    key_file: Option<&std::path::Path>,
    old_key_files: &[PathBuf],
    access: Access,
) -> Result<Arc<dyn Storage>, Failure> {
    let parsed: StoreUrl = url
        .parse()
        .map_err(|e| Failure::new(Exit::Usage, format!("invalid store URL `{url}`: {e}")))?;
    if access == Access::Existing {
        let local = match &parsed {
            StoreUrl::Dir(path) | StoreUrl::Sqlite(path) => Some(path),
            _ => None,
        };
        if let Some(path) = local
            && !path.exists()
        {
            return Err(Failure::new(
                Exit::NotFound,
                format!("the store `{url}` does not exist"),
            ));
        }
    }
    let mut options = OpenOptions::new();
    if let Some(file) = key_file {
        options = options.with_encryption_key_file(file);
    }
    for old in old_key_files {
        options = options.with_old_key_file(old);
    }
    let store = store_url::open(&parsed, &options)
        .await
        .map_err(|e| Failure::new(Exit::Usage, error_chain(&e)))?;
    tracing::debug!(store = %store, "store opened");
    Ok(store)
}

/// Whether two store URLs name the same persistent store (`mem:` stores never are).
pub(crate) fn same_store(a: &str, b: &str) -> bool {
    matches!(
        (a.parse::<StoreUrl>(), b.parse::<StoreUrl>()),
        (Ok(a), Ok(b)) if a == b && a != StoreUrl::Memory
    )
}

impl StoreArgs {
    /// Opens this command's store.
    pub(crate) async fn open(&self, access: Access) -> Result<Arc<dyn Storage>, Failure> {
        open_store(
            &self.store,
            self.encryption_key_file.as_deref(),
            &self.old_key_files,
            access,
        )
        .await
    }
}

/// `error: cause: cause ...`, skipping causes already in the text.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
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
        };
        match outcome {
            Ok(()) => ExitCode::SUCCESS,
            Err(failure) => {
                eprintln!("memory: {failure}");
                ExitCode::from(failure.exit as u8)
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
    fn storage_errors_have_statuses_and_no_backend_detail() {
        let path = MemoryPath::parse("/memories/a").unwrap();
        let parent = MemoryPath::parse("/memories").unwrap();
        let cases = [
            (Error::NotFound { path: path.clone() }, Exit::NotFound),
            (Error::AlreadyExists { path: path.clone() }, Exit::Exists),
            (
                Error::ParentIsFile {
                    path: path.clone(),
                    parent,
                },
                Exit::Exists,
            ),
            (Error::Conflict { path: path.clone() }, Exit::Failed),
            (
                Error::Refused {
                    path: path.clone(),
                    reason: "it is mounted read-only".into(),
                },
                Exit::Failed,
            ),
        ];
        for (err, exit) in cases {
            assert_eq!(Failure::storage("read", err).exit, exit);
        }
        let failure = Failure::storage(
            "read /memories/a",
            Error::backend("fs", "open /secret/host/path failed"),
        );
        assert_eq!(failure.exit, Exit::Failed);
        assert!(!failure.message.contains("/secret"), "{failure}");
        assert!(failure.message.contains("read /memories/a"), "{failure}");
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
