//! `memory cat PATH [--version V]`: a file's bytes (or an earlier version's) on standard
//! output, exactly as stored.

use memory_core::{Entry, Error};

use super::versions::failure;
use super::{Exit, Failure, OpenMode, Outcome, StoreArgs, parse_path, write_stdout};

/// Arguments of `memory cat`.
#[derive(Debug, clap::Args)]
pub(crate) struct CatArgs {
    /// The file to print (e.g. /memories/notes.md).
    path: String,

    /// Print this version of the file instead (a number `memory log PATH` shows; the file
    /// may have been deleted or renamed since: give the path it has now, or had last).
    #[arg(long, value_name = "V", value_parser = super::versions::parse_version)]
    version: Option<u64>,

    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn run(args: CatArgs) -> Outcome {
    let mut path = parse_path(&args.path)?;
    if args.version.is_some() {
        path = super::versions::file_path(path, "cat --version")?;
    }
    let store = args.store.open(OpenMode::ReadOnly).await?;
    if let Some(number) = args.version {
        let contents = store
            .read_revision(&path, number)
            .await
            .map_err(|e| failure(&format!("read version {number} of {path}"), e))?;
        return write_stdout(&contents);
    }
    match store.read(&path).await {
        Ok(file) => write_stdout(&file.contents),
        Err(Error::NotFound { .. }) => {
            // A directory reads as "not found" too; say which it is.
            let is_dir =
                path.is_root() || matches!(store.stat(&path).await, Ok(Some(Entry::Directory)));
            let message = if is_dir {
                format!("{path} is a directory, not a file (use `memory ls {path}`)")
            } else {
                format!("{path} does not exist")
            };
            Err(Failure::new(Exit::NotFound, message))
        }
        Err(e) => Err(Failure::storage(&format!("read {path}"), e)),
    }
}
