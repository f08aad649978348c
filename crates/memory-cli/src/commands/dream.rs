//! `memory dream`: a consolidation pass from one store into another, the source untouched.
//!
//! Runs Claude with the source store mounted read-only at `/memories/source` and the output
//! store read-write at `/memories/output` (memory-runner's [`Dream`]): Claude reads the
//! source and writes a consolidated copy (duplicates merged, contradictions resolved in
//! favour of the newest, a clear tree). The source is opened read-only, so nothing in it
//! changes, not even a lock file; a write Claude aims at it is refused by code.
//!
//! Output: standard output lists what changed in the output store, one line per file
//! (`created /memories/x.md`, `changed ...`, `deleted ...`); standard error holds the trace
//! line of each memory command, Claude's text (streamed unless `--no-stream`) and every
//! diagnostic. Exit status: 0 when the dream ended, 1 when a request failed (the output keeps
//! what was written), 2 when the key is missing, a store cannot be opened (a wrong or missing
//! encryption key included) or both URLs name the same store or one inside the other (however
//! named: a symlink, a bind mount, a hard link), 4 when the output already holds
//! files and `--force` was not given.
//!
//! Encryption: `--from-key-file` decrypts the source and `--into-key-file` encrypts the output
//! (two keys, or one); `MEMORY_ENCRYPTION_KEY_FILE` is the default of both. The key files
//! become store options through store_args' [`with_key_files`], as every command's do.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use memory_runner::dream::{DEFAULT_DREAM_MAX_ITERATIONS, DEFAULT_DREAM_MODEL, Dream, DreamError};
use memory_runner::{ClientBuilder, OpenError, OpenOptions, StreamEvent, ToolCall};

use crate::exit::Exit;
use crate::store_args::with_key_files;

pub(crate) const DREAM_LONG_ABOUT: &str = "\
Consolidate a store into another with Claude, leaving the original untouched.

Claude sees the source store read-only at /memories/source and the output
store at /memories/output, and writes a consolidated copy: duplicates merged,
contradictions resolved in favour of the newest, everything reorganised into a
clear tree, for you to review. The source is opened read-only: nothing in it
changes, not even a lock file, and a write Claude aims at it is refused.

The output must be empty or new, unless --force. A versioned output store
(store+sqlite:, store+http:) records each write as a version by the dream's
session. A store+sqlite: source is read without changing its database file; a
postgres:// or store+postgres:// source is opened read-only too: no lock, no
table created or migrated, no row written, every session read-only (its schema
must be at this build's version; open it once read-write to upgrade it).

Encrypted stores: --from-key-file FILE decrypts the source, --into-key-file FILE
encrypts the output (each 64 hex characters; see `memory keygen`); they may be
different keys. MEMORY_ENCRYPTION_KEY_FILE, when set, is the default of both
(a dream of your encrypted store is then encrypted under the same key); to
write a plaintext output from an encrypted source, unset it and give only
--from-key-file. A store that holds encrypted files but gets no key, or a wrong
key, is refused with exit status 2 before any request is sent.

Standard output lists what changed in the output, one line per file:

  created /memories/preferences.md
  changed /memories/README.md
  deleted /memories/old.md

Standard error holds a line per memory command and Claude's text. Needs
ANTHROPIC_API_KEY (sent as x-api-key) or ANTHROPIC_AUTH_TOKEN (sent as
Authorization: Bearer), and ANTHROPIC_BASE_URL to point elsewhere. Exit status: 0
when the dream ended, 1 when a request failed, 2 when the key is missing, a
store cannot be opened or --from and --into name the same store (or one
inside the other, however named: a symlink, a bind mount, a hard link, another
name of the same PostgreSQL server), 4 when the
output holds files and --force was not given.

Example:

  $ memory dream --from ./memory --into ./memory-dreamed
  $ diff -r ./memory/memories ./memory-dreamed/memories";

/// Arguments of `memory dream`.
#[derive(Debug, clap::Args)]
pub(crate) struct DreamArgs {
    /// The store to consolidate (any store URL), opened read-only.
    #[arg(long, value_name = "URL", value_parser = crate::store_args::store_url_arg)]
    from: String,

    /// The store the consolidated copy goes into (any store URL): empty or new, unless
    /// --force.
    #[arg(long, value_name = "URL", value_parser = crate::store_args::store_url_arg)]
    into: String,

    /// More instructions for Claude (after the dream's own).
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,

    /// The Claude model id.
    #[arg(long, default_value = DEFAULT_DREAM_MODEL)]
    model: String,

    /// Dream into an output that already holds files (they may be changed or deleted).
    #[arg(long)]
    force: bool,

    /// The most requests to send.
    #[arg(long, default_value_t = DEFAULT_DREAM_MAX_ITERATIONS as u32, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_iterations: u32,

    /// The session a versioned output's versions are recorded under (a new `sesn_…` id by
    /// default); 1 to 64 of `[0-9A-Za-z_-]`, the rule of every versioned store.
    #[arg(long, value_name = "ID", value_parser = crate::mounts::parse_session_id)]
    session_id: Option<String>,

    /// Print Claude's text once each reply is complete instead of as it is written.
    #[arg(long)]
    no_stream: bool,

    /// Decrypt the source with the 32-byte key in FILE (64 hex characters; see
    /// `memory keygen`).
    #[arg(long, env = "MEMORY_ENCRYPTION_KEY_FILE", value_name = "FILE")]
    from_key_file: Option<PathBuf>,

    /// Also read source files encrypted under this older key (mid-rotation, see
    /// `memory rekey`); repeat for several.
    #[arg(
        long = "from-old-key-file",
        value_name = "FILE",
        requires = "from_key_file"
    )]
    from_old_key_files: Vec<PathBuf>,

    /// Encrypt the output with the 32-byte key in FILE (may differ from the source's key).
    #[arg(long, env = "MEMORY_ENCRYPTION_KEY_FILE", value_name = "FILE")]
    into_key_file: Option<PathBuf>,

    /// Also read output files encrypted under this older key (with --force over an output
    /// mid-rotation); repeat for several.
    #[arg(
        long = "into-old-key-file",
        value_name = "FILE",
        requires = "into_key_file"
    )]
    into_old_key_files: Vec<PathBuf>,
}

/// Runs `memory dream`.
pub(crate) async fn run(args: DreamArgs) -> ExitCode {
    let client = match ClientBuilder::from_env().build() {
        Ok(client) => client,
        Err(e) => {
            eprintln!("memory: {e}");
            return Exit::Usage.into();
        }
    };
    let session_id = args
        .session_id
        .unwrap_or_else(memory_runner::mounts::new_session_id);
    eprintln!("memory: dreaming as session {session_id}");
    let mut dream = Dream::new(&args.from, &args.into)
        .model(&args.model)
        .max_iterations(args.max_iterations as usize)
        .force(args.force)
        // The program reads the backends' variables (AWS_*, MEMORY_STORE_API_KEY); each
        // store has its own key files.
        .source_options(with_key_files(
            OpenOptions::new().with_environment(),
            args.from_key_file.as_deref(),
            &args.from_old_key_files,
        ))
        .output_options(with_key_files(
            OpenOptions::new()
                .with_environment()
                .with_session_id(&session_id),
            args.into_key_file.as_deref(),
            &args.into_old_key_files,
        ))
        .observe(|call: &ToolCall<'_>| eprintln!("[memory] {}", super::run::trace_line(call)));
    if let Some(instructions) = args.instructions {
        dream = dream.instructions(instructions);
    }
    if !args.no_stream {
        // Claude's text as it is written; each reply that had text ends its line.
        let wrote = AtomicBool::new(false);
        dream = dream.on_event(move |event| {
            let mut err = std::io::stderr().lock();
            if let Some(text) = event.text_delta() {
                wrote.store(true, Ordering::Relaxed);
                let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
            } else if matches!(event, StreamEvent::MessageStop)
                && wrote.swap(false, Ordering::Relaxed)
            {
                let _ = err.write_all(b"\n").and_then(|()| err.flush());
            }
        });
    }
    let report = match dream.run(client).await {
        Ok(report) => report,
        Err(e) => {
            eprintln!("memory: {}", crate::failure::error_chain(&e));
            match &e {
                DreamError::Source(OpenError::Encrypted { .. }) => {
                    eprintln!("memory: give the source's key with --from-key-file");
                }
                DreamError::Output(OpenError::Encrypted { .. }) => {
                    eprintln!("memory: give the output's key with --into-key-file");
                }
                _ => {}
            }
            return match e {
                DreamError::Source(_)
                | DreamError::Output(_)
                | DreamError::Mounts(_)
                | DreamError::SameStore { .. } => Exit::Usage,
                DreamError::OutputNotEmpty { .. } => Exit::Exists,
                _ => Exit::Failed,
            }
            .into();
        }
    };
    if args.no_stream
        && let Some(reply) = &report.reply
    {
        let text = reply.text();
        if !text.trim().is_empty() {
            eprintln!("{}", text.trim_end());
        }
    }
    let mut out = std::io::stdout().lock();
    for (what, paths) in [
        ("created", &report.created),
        ("changed", &report.changed),
        ("deleted", &report.deleted),
    ] {
        for path in paths {
            let _ = writeln!(out, "{what} {path}");
        }
    }
    let _ = out.flush();
    eprintln!(
        "memory: the dream created {}, changed {} and deleted {} files in {} ({} requests)",
        report.created.len(),
        report.changed.len(),
        report.deleted.len(),
        args.into
            .split_once('?')
            .map_or(&*args.into, |(base, _)| base),
        report.requests
    );
    if report.end_reason == Some(memory_runner::EndReason::MaxIterations) {
        eprintln!(
            "memory: stopped after {} requests (--max-iterations); the output may be unfinished",
            report.requests
        );
    }
    ExitCode::SUCCESS
}
