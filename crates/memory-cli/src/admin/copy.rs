//! `memory copy FROM_URL TO_URL`: every file of one store into another, verified.

use std::path::PathBuf;

use memory_core::{Error, MemoryPath};

use super::archive::{Written, check_targets, partial_failure, plural, write_mode};
use super::modified::keep_modified;
use super::progress::Progress;
use super::{Exit, Failure, OpenMode, Outcome, human_size, open_store, same_store};

/// Arguments of `memory copy`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = concat!("\
Examples:
  memory copy ./memory sqlite:memory.db
  memory copy ./memory ./encrypted --to-encryption-key-file key.hex

Every file is read back from TO and compared after it is written. Hidden files are
included. Each file keeps its modification time (so `memory expire` on TO sees its
age), in folder, SQLite and PostgreSQL stores; S3 and versioned stores keep their own.
MEMORY_STORE and MEMORY_ENCRYPTION_KEY_FILE are not used by copy.", "\n\n", exit_status_help!()))]
pub(crate) struct CopyArgs {
    /// The store to copy from (a directory path, file:PATH, sqlite:PATH, s3://..., mem:).
    #[arg(value_parser = crate::store_args::store_url_arg)]
    from: String,

    /// The store to copy into; created if needed.
    #[arg(value_parser = crate::store_args::store_url_arg)]
    to: String,

    /// FROM is encrypted with the key in FILE.
    #[arg(long, value_name = "FILE")]
    from_encryption_key_file: Option<PathBuf>,

    /// Encrypt the copies in TO with the key in FILE.
    #[arg(long, value_name = "FILE")]
    to_encryption_key_file: Option<PathBuf>,

    /// Replace files that already exist in TO (without it, any existing file makes the copy
    /// stop, exit 4, before anything is written).
    #[arg(long)]
    overwrite: bool,

    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,

    /// Record the copies in TO as the session ID's (shown by `memory log`): 1 to 64
    /// characters from [0-9A-Za-z_-]. MEMORY_SESSION_ID is not used by copy.
    #[arg(long, value_name = "ID", value_parser = crate::mounts::parse_session_id)]
    session_id: Option<String>,
}

pub(crate) async fn run(args: CopyArgs) -> Outcome {
    if same_store(&args.from, &args.to) {
        return Err(Failure::new(
            Exit::Usage,
            "FROM and TO are the same store; nothing to copy",
        ));
    }
    let from = open_store(
        &args.from,
        args.from_encryption_key_file.as_deref(),
        &[],
        None,
        OpenMode::ReadOnly,
    )
    .await?;
    let files = from
        .list(&MemoryPath::root())
        .await
        .map_err(|e| Failure::storage("list /memories", e))?;
    let to = open_store(
        &args.to,
        args.to_encryption_key_file.as_deref(),
        &[],
        args.session_id.as_deref(),
        OpenMode::CreateIfMissing,
    )
    .await?;
    let paths: Vec<MemoryPath> = files.iter().map(|f| f.path.clone()).collect();
    check_targets(to.as_ref(), &paths, args.overwrite, "copy").await?;

    let mut progress = Progress::stderr("copy", files.len() as u64, args.quiet);
    let mode = write_mode(args.overwrite);
    let mut written = Written::default();
    for meta in &files {
        let path = &meta.path;
        let contents = match from.read(path).await {
            Ok(file) => file.contents,
            // Deleted from FROM since the listing.
            Err(Error::NotFound { .. }) => {
                progress.inc();
                continue;
            }
            Err(e) => {
                return Err(partial_failure(
                    &format!("read {path} from FROM"),
                    e,
                    written,
                ));
            }
        };
        let size = contents.len() as u64;
        to.write(path, contents.clone(), mode.clone())
            .await
            .map_err(|e| partial_failure(&format!("write {path} to TO"), e, written))?;
        let copy = to
            .read(path)
            .await
            .map_err(|e| partial_failure(&format!("read back {path} from TO"), e, written))?;
        if copy.contents != contents {
            return Err(Failure::new(
                Exit::Failed,
                format!(
                    "{path} reads back different from what was written to TO; the copy is not trustworthy"
                ),
            ));
        }
        if let Some(modified) = meta.modified {
            keep_modified(to.as_ref(), path, modified).await?;
        }
        written.files += 1;
        written.bytes += size;
        progress.inc();
    }
    progress.finish();
    if !args.quiet {
        eprintln!(
            "memory: copied {} file{} ({})",
            written.files,
            plural(written.files),
            human_size(written.bytes)
        );
    }
    Ok(())
}
