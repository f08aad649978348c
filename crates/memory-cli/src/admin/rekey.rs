//! `memory rekey`: re-encrypt every file of an encrypted store under a new key.

use memory_encrypted::{Encrypted, EncryptionError, Keyring, RekeyOptions};

use memory_cli::store_url::{self, OpenOptions, StoreUrl};

use super::progress::Progress;
use super::{Exit, Failure, Outcome, SessionArgs, StoreArgs};
use crate::failure::error_chain;
use crate::store_args::open_inner_store;

/// Arguments of `memory rekey`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = concat!("\
Rotating a key without downtime:
  1. memory keygen new.key
  2. point the applications at new.key, keeping old.key readable: `memory exec` and the
     admin commands take --encryption-key-file new.key --old-key-file old.key (a Rust
     application: Keyring::add_decryption_key); files are read with whichever key wrote
     them and new writes use new.key
  3. memory rekey --store URL --encryption-key-file new.key --old-key-file old.key
  4. when it reports every file done, old.key can be retired.
Rekey is resumable: files already under the new key are skipped, so after an interruption
run it again. It then deletes the store's search index (a folder's side index, an S3 store's
cache file, a SQLite store's word index, scrubbed from the file): an encrypted store keeps
none, and one built while the store was plaintext holds its words. Edits made while it runs are kept (each file is replaced by compare-and-swap).
A file it cannot re-encrypt (plaintext, unknown key, damaged) is named and left as it is; the
exit status is then 1. Each file rewritten is a new version in the store's history; earlier
versions stay under the key that wrote them (readable with --old-key-file; `memory redact`
removes them, `memory redact /memories --all` every one). When --encrypt-plaintext encrypts
files, every past version of the store is redacted (they held plaintext), so that no copy of
their words is left.", "\n\n", exit_status_help!()))]
pub(crate) struct RekeyArgs {
    /// The store, and the keys: --encryption-key-file is the key every file ends up under;
    /// --old-key-file an older key files may still be encrypted under (repeat for several).
    #[command(flatten)]
    store: StoreArgs,

    /// Also encrypt plaintext files (written before encryption was turned on). Off by default:
    /// anyone able to write the store could plant a plaintext file, so adopt them deliberately.
    #[arg(long)]
    encrypt_plaintext: bool,

    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,

    #[command(flatten)]
    session: SessionArgs,
}

pub(crate) async fn run(args: RekeyArgs) -> Outcome {
    let Some(key_file) = &args.store.encryption_key_file else {
        return Err(Failure::new(
            Exit::Usage,
            "rekey needs --encryption-key-file (or MEMORY_ENCRYPTION_KEY_FILE): the key every \
             file ends up under",
        ));
    };
    let keyring = Keyring::from_key_files(key_file, &args.store.old_key_files)
        .map_err(|e| Failure::new(Exit::Usage, format!("cannot use the key files: {e}")))?;
    let active = keyring.active_id();
    // The store itself, without the envelope: rekey wraps it with the whole keyring.
    let inner = open_inner_store(args.store.url(), args.session.id()).await?;
    let store = Encrypted::new(inner, keyring);
    let options = RekeyOptions::new().encrypt_plaintext(args.encrypt_plaintext);
    let mut progress: Option<Progress> = None;
    let report = store
        .rekey_with(&options, |step| {
            progress
                .get_or_insert_with(|| Progress::stderr("rekey", step.total as u64, args.quiet))
                .inc();
        })
        .await
        .map_err(|e| Failure::storage("list /memories", e))?;
    if let Some(bar) = progress.as_mut() {
        bar.finish();
    }
    let plaintext_versions = report.redacted_versions;
    // The store is encrypted now, and an encrypted store keeps no search index: delete the
    // one it had as plaintext (a folder's side index, an S3 store's cache file, SQLite's FTS5
    // table), which still holds the words of its files. Closed first, so that a SQLite file
    // can be scrubbed.
    drop(store);
    discard_index(args.store.url()).await?;
    for (path, err) in &report.failed {
        eprintln!("memory: cannot rekey {path}: {}", reason(err));
    }
    if !args.quiet && plaintext_versions > 0 {
        eprintln!(
            "memory: redacted {plaintext_versions} past version{} of the store's history (they \
             held plaintext)",
            super::archive::plural(plaintext_versions)
        );
    }
    if !args.quiet {
        eprintln!(
            "memory: {} of {} files re-encrypted under key {active} ({} already under it, {} plaintext files encrypted, {} deleted meanwhile, {} failed)",
            report.rekeyed,
            report.total,
            report.already_current,
            report.encrypted_plaintext,
            report.vanished,
            report.failed.len()
        );
    }
    if report.is_complete() {
        Ok(())
    } else {
        Err(Failure::new(
            Exit::Failed,
            format!(
                "{} files are not under key {active}; fix them and run rekey again",
                report.failed.len()
            ),
        ))
    }
}

/// Deletes the store's persistent search index and the words it held (see
/// [`store_url::discard_search_index`]), with the options the store was opened with.
async fn discard_index(url: &str) -> Outcome {
    let parsed: StoreUrl = url
        .parse()
        .map_err(|e| Failure::new(Exit::Usage, format!("invalid store URL `{url}`: {e}")))?;
    let options = OpenOptions::new().with_environment();
    store_url::discard_search_index(&parsed, &options)
        .await
        .map_err(|e| {
            Failure::new(
                Exit::Failed,
                format!(
                    "{}; the files are encrypted, but run rekey again to delete the index",
                    error_chain(&e)
                ),
            )
        })
}

/// Why one file could not be rekeyed: the envelope's own error (it names no host path), or
/// a generic storage failure whose detail goes to the debug log.
fn reason(err: &memory_core::Error) -> String {
    let envelope =
        std::error::Error::source(err).and_then(|source| source.downcast_ref::<EncryptionError>());
    match envelope {
        Some(EncryptionError::NotEncrypted { .. }) => {
            "it is plaintext (pass --encrypt-plaintext to adopt it)".to_owned()
        }
        Some(e) => e.to_string(),
        None => {
            tracing::debug!(error = %err, error_debug = ?err, "rekey failure");
            "the store failed (run with RUST_LOG=debug for the details)".to_owned()
        }
    }
}
