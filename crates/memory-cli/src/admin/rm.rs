//! `memory rm PATH`: delete a file, or with `--recursive` a directory.

use memory_core::Entry;

use super::{Exit, Failure, OpenMode, Outcome, SessionArgs, StoreArgs, parse_path};

/// Arguments of `memory rm`.
#[derive(Debug, clap::Args)]
pub(crate) struct RmArgs {
    /// The file (or, with --recursive, the directory) to delete.
    path: String,

    /// Delete a directory and every file below it (`/memories` empties the store).
    #[arg(short, long)]
    recursive: bool,

    #[command(flatten)]
    store: StoreArgs,

    #[command(flatten)]
    session: SessionArgs,
}

pub(crate) async fn run(args: RmArgs) -> Outcome {
    let path = parse_path(&args.path)?;
    let store = args
        .store
        .open_as(args.session.id(), OpenMode::Existing)
        .await?;
    let entry = if path.is_root() {
        Some(Entry::Directory)
    } else {
        store
            .stat(&path)
            .await
            .map_err(|e| Failure::storage(&format!("look up {path}"), e))?
    };
    match entry {
        None => {
            return Err(Failure::new(
                Exit::NotFound,
                format!("{path} does not exist"),
            ));
        }
        Some(Entry::Directory) if !args.recursive => {
            return Err(Failure::new(
                Exit::Usage,
                format!(
                    "{path} is a directory; pass --recursive to delete it and everything below it"
                ),
            ));
        }
        Some(_) => {}
    }
    match store.delete(&path).await {
        // An empty root has nothing to delete: that is done, not missing.
        Err(memory_core::Error::NotFound { .. }) if path.is_root() => Ok(()),
        other => other.map_err(|e| Failure::storage(&format!("delete {path}"), e)),
    }
}
