//! `memory sync DIR STORE`: a folder of plain files kept in step with one versioned memory
//! store, by the rules of Anthropic's Python SDK (memory-mounts' `sync` module holds them).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use clap::ValueEnum;
use memory_runner::OpenOptions;
use memory_runner::mounts::sync::{DeleteMode, FolderSync, SyncError, SyncOptions, SyncReport};
use sha2::{Digest, Sha256};

use crate::admin::parse_duration;
use crate::exit::Exit;
use crate::failure::error_chain;

/// The shortest `--interval` (the SDK's `MIN_MEMORY_SYNC_INTERVAL`): every pass lists the
/// whole store.
const MIN_INTERVAL: Duration = Duration::from_secs(5);

/// How often `--watch` looks for changes in the folder between passes.
const LOOK_EVERY: Duration = Duration::from_secs(1);

pub(crate) const SYNC_LONG_ABOUT: &str = "\
Keep a folder of plain files in step with one versioned memory store.

DIR holds the store's memories as files: the memory /a/b.md is DIR/a/b.md, and
DIR/.anthropic-memory-store names the store (the same bytes Anthropic's Python SDK
writes, so a folder the SDK downloaded can be synced here and the other way round).
STORE is store+http(s)://HOST#ID (the key in MEMORY_STORE_API_KEY), store+sqlite:PATH#ID
or store+postgres://...#ID.

Each pass compares every path with its state at the last sync (kept outside DIR, in
--state-dir):
  changed only on the store      written to the file
  changed only in DIR            uploaded (an update that fails if the store changed)
  changed on both sides          the store's version wins; the local text is kept as
                                 PATH.conflict-<UTC time>, uploaded by the next pass
  deleted in DIR                 deleted on the store once it stayed missing for
                                 --delete-after, at most a few per pass
  deleted on the store           deleted in DIR, unless edited there (then re-created)

A missing or empty DIR is downloaded. A DIR that holds files but no marker, or another
store's marker, is never uploaded from (pass --adopt to sync a folder without a marker);
a DIR whose files are all gone at once is downloaded again, never propagated as deletes.

Example:

  $ export MEMORY_STORE_API_KEY=...
  $ memory sync ~/notes store+https://memory.example.com#memstore_01abc --watch";

/// `memory sync` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = SYNC_EXIT_HELP)]
pub(crate) struct SyncArgs {
    /// The folder (created when missing).
    dir: PathBuf,
    /// The versioned store: store+http(s)://HOST#ID, store+sqlite:PATH#ID or
    /// store+postgres://...#ID.
    store: String,
    /// Pull only: never create, change or delete a memory.
    #[arg(long)]
    read_only: bool,
    /// Whether a file deleted in DIR deletes its memory; log-only reports what it would
    /// delete.
    #[arg(long, value_enum, default_value_t = Deletions::Enabled)]
    deletions: Deletions,
    /// How long a file must stay missing before its memory is deleted.
    #[arg(long, default_value = "30s", value_parser = parse_duration, value_name = "DURATION")]
    delete_after: Duration,
    /// Sync a folder that holds files but no marker: write the marker and upload its files
    /// (a file the store holds with other text is a conflict, and the store's text wins).
    #[arg(long)]
    adopt: bool,
    /// Keep running: a pass every --interval and after each change in DIR, and a last pass
    /// on Ctrl-C or SIGTERM.
    #[arg(long)]
    watch: bool,
    /// With --watch: the time between passes (at least 5s).
    #[arg(long, default_value = "15s", value_parser = parse_interval, value_name = "DURATION")]
    interval: Duration,
    /// Print each pass as one JSON object on standard output.
    #[arg(long)]
    json: bool,
    /// Where the state between runs is kept (default: the user's state folder, e.g.
    /// ~/.local/state/memory/sync).
    #[arg(long, env = "MEMORY_SYNC_STATE_DIR", value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// The session recorded on each version this sync writes (on a store+sqlite or
    /// store+postgres store; a server records its own).
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
}

const SYNC_EXIT_HELP: &str = "\
Exit status:
  0  every pass finished (files the store refused are reported, not failures)
  1  a pass was blocked (no marker, another store's marker) or a file failed to sync,
     or the folder or the state could not be used, or another sync of the same
     folder and store is running
  2  usage error: bad arguments, or a store URL that is invalid or cannot be opened";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Deletions {
    /// Deleted in DIR, deleted on the store (after --delete-after).
    Enabled,
    /// Report what would be deleted; delete nothing.
    LogOnly,
    /// Never delete on the store.
    Disabled,
}

fn parse_interval(raw: &str) -> Result<Duration, String> {
    let interval = parse_duration(raw)?;
    if interval < MIN_INTERVAL {
        return Err(format!(
            "the interval must be at least {}s: each pass lists the whole store",
            MIN_INTERVAL.as_secs()
        ));
    }
    Ok(interval)
}

pub(crate) async fn run(args: SyncArgs) -> ExitCode {
    match sync(args).await {
        Ok(exit) => exit,
        Err((exit, message)) => {
            eprintln!("memory: {message}");
            exit.into()
        }
    }
}

async fn sync(args: SyncArgs) -> Result<ExitCode, (Exit, String)> {
    let store_url =
        memory_cli::store_url::expand_home(&args.store).map_err(|e| (Exit::Usage, e))?;
    let mut options = OpenOptions::new().with_environment();
    if let Some(session) = &args.session_id {
        options = options.with_session_id(session);
    }
    let (storage, store) = memory_runner::open_versioned_store(&store_url, &options)
        .await
        .map_err(|e| (Exit::Usage, error_chain(&e)))?;
    if store.archived_at.is_some() && !args.read_only {
        return Err((
            Exit::Usage,
            format!(
                "the store {} is archived, so nothing can be written to it; pass --read-only to pull",
                store.id
            ),
        ));
    }
    // Made now (the store answered), so the state is named by the folder's real path.
    std::fs::create_dir_all(&args.dir).map_err(|e| {
        (
            Exit::Failed,
            format!("cannot make the folder {}: {e}", args.dir.display()),
        )
    })?;
    let state_path = state_path(args.state_dir.as_deref(), &args.dir, &store.id)?;
    let sync_options = SyncOptions {
        read_only: args.read_only,
        deletions: match args.deletions {
            Deletions::Enabled => DeleteMode::Enabled,
            Deletions::LogOnly => DeleteMode::LogOnly,
            Deletions::Disabled => DeleteMode::Disabled,
        },
        delete_after: args.delete_after,
        adopt: args.adopt,
    };
    let mut sync = FolderSync::open(
        storage.api().clone(),
        storage.store_id(),
        &args.dir,
        &state_path,
        sync_options,
    )
    .map_err(|e| (Exit::Failed, error_chain(&e)))?;
    if !args.watch {
        let outcome = sync.pass().await;
        return Ok(exit_status(print_pass(&outcome, args.json)));
    }
    eprintln!(
        "memory: syncing {} with {} every {}s and on changes; Ctrl-C stops after a last pass",
        sync.folder().display(),
        store.id,
        args.interval.as_secs()
    );
    let stop = memory_server::shutdown_signal();
    tokio::pin!(stop);
    loop {
        let outcome = sync.pass().await;
        print_pass(&outcome, args.json);
        let due = Instant::now() + args.interval;
        let mut seen = fingerprint(sync.folder());
        let stopped = loop {
            tokio::select! {
                () = &mut stop => break true,
                () = tokio::time::sleep(LOOK_EVERY) => {}
            }
            let now = fingerprint(sync.folder());
            if now != seen {
                // Changed: wait until it has been still for a moment, then sync.
                seen = now;
                continue_until_still(&mut seen, sync.folder()).await;
                break false;
            }
            if Instant::now() >= due {
                break false;
            }
        };
        if stopped {
            let outcome = sync.final_pass().await;
            return Ok(exit_status(print_pass(&outcome, args.json)));
        }
    }
}

/// Waits until the folder's fingerprint stops changing (an editor's save in several steps).
async fn continue_until_still(seen: &mut u64, folder: &Path) {
    for _ in 0..10 {
        tokio::time::sleep(LOOK_EVERY).await;
        let now = fingerprint(folder);
        if now == *seen {
            return;
        }
        *seen = now;
    }
}

/// A cheap summary of the folder (every entry's path, size and modification time), to notice
/// changes between passes without reading files.
fn fingerprint(folder: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut pending = vec![folder.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            entry.file_name().hash(&mut hasher);
            meta.len().hash(&mut hasher);
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .hash(&mut hasher);
            if meta.is_dir() {
                pending.push(entry.path());
            }
        }
    }
    hasher.finish()
}

fn exit_status(success: bool) -> ExitCode {
    if success {
        ExitCode::SUCCESS
    } else {
        Exit::Failed.into()
    }
}

/// Prints one pass (a summary, or one JSON line); whether it succeeded.
fn print_pass(outcome: &Result<SyncReport, SyncError>, json: bool) -> bool {
    let report = match outcome {
        Ok(report) => report,
        Err(e) => {
            eprintln!("memory: sync failed: {}", error_chain(e));
            return false;
        }
    };
    for warning in &report.warnings {
        eprintln!("memory: warning: {warning}");
    }
    for refused in &report.refused {
        eprintln!(
            "memory: warning: {} is not synced: {} (it is tried again once it changes)",
            refused.path, refused.reason
        );
    }
    for failed in &report.failed {
        eprintln!("memory: {} failed: {}", failed.path, failed.reason);
    }
    if let Some(blocked) = &report.blocked {
        eprintln!("memory: {blocked}");
    }
    if json {
        println!(
            "{}",
            serde_json::to_string(report).expect("a report serializes")
        );
    } else {
        print_summary(report);
    }
    report.is_success()
}

fn print_summary(report: &SyncReport) {
    if let Some(reason) = &report.recovered {
        println!("downloaded the store ({reason})");
    }
    for path in &report.pulled {
        println!("pulled  {path}");
    }
    for path in &report.pushed {
        println!("pushed  {path}");
    }
    for path in &report.deleted_local {
        println!("deleted {path} here (deleted on the store)");
    }
    for path in &report.deleted_remote {
        println!("deleted {path} on the store (deleted here)");
    }
    for conflict in &report.conflicts {
        println!(
            "conflict {}: the store's version won; the local text is kept as {}",
            conflict.path, conflict.kept_as
        );
    }
    for path in &report.pending_deletes {
        println!("waiting {path}: deleted here, deleted on the store once it stays missing");
    }
    for path in &report.would_delete {
        println!("would delete {path} on the store (--deletions log-only)");
    }
    if report.is_quiet() && report.blocked.is_none() {
        println!("in sync");
    }
}

/// The state file of the folder `dir` (which exists) and `store_id`: in `state_dir` (or the
/// user's state folder), named by a hash of the folder's real path and the store, so every
/// pair has its own.
fn state_path(
    state_dir: Option<&Path>,
    dir: &Path,
    store_id: &str,
) -> Result<PathBuf, (Exit, String)> {
    let base = match state_dir {
        Some(dir) => dir.to_owned(),
        None => default_state_dir().ok_or_else(|| {
            (
                Exit::Usage,
                "cannot find the user's state folder (HOME is not set): pass --state-dir"
                    .to_owned(),
            )
        })?,
    };
    let absolute = std::fs::canonicalize(dir).map_err(|e| {
        (
            Exit::Failed,
            format!("cannot resolve the folder {}: {e}", dir.display()),
        )
    })?;
    let mut hasher = Sha256::new();
    hasher.update(absolute.as_os_str().as_encoded_bytes());
    hasher.update(b"\n");
    hasher.update(store_id.as_bytes());
    let key = hex::encode(&hasher.finalize()[..16]);
    Ok(base.join(format!("{store_id}-{key}.json")))
}

/// `memory/sync` in the platform's folder for program state.
fn default_state_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")?
    } else if cfg!(target_os = "macos") {
        var("HOME")?.join("Library/Application Support")
    } else {
        var("XDG_STATE_HOME").or_else(|| var("HOME").map(|home| home.join(".local/state")))?
    };
    Some(base.join("memory").join("sync"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_folder_and_store_has_its_own_state() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        for name in ["a", "b", "x"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        let a = state_path(Some(&state), &dir.path().join("a"), "memstore_1").unwrap();
        let b = state_path(Some(&state), &dir.path().join("b"), "memstore_1").unwrap();
        let other = state_path(Some(&state), &dir.path().join("a"), "memstore_2").unwrap();
        assert_ne!(a, b);
        assert_ne!(a, other);
        assert!(a.starts_with(&state));
        // The same folder named another way is the same pair.
        let again = state_path(Some(&state), &dir.path().join("x/../a"), "memstore_1");
        assert_eq!(again.unwrap().file_name(), a.file_name());
    }

    #[test]
    fn the_interval_has_a_floor() {
        assert!(parse_interval("4s").is_err());
        assert_eq!(parse_interval("5s"), Ok(Duration::from_secs(5)));
    }
}
