//! `memory mv FROM TO`: move a file or a directory; never overwrites.

use super::{Exit, Failure, OpenMode, Outcome, SessionArgs, StoreArgs, parse_path};

/// Arguments of `memory mv`.
#[derive(Debug, clap::Args)]
pub(crate) struct MvArgs {
    /// The file or directory to move.
    from: String,

    /// Its new path; must not exist (exit 4 if it does). Parents come into being.
    to: String,

    #[command(flatten)]
    store: StoreArgs,

    #[command(flatten)]
    session: SessionArgs,
}

pub(crate) async fn run(args: MvArgs) -> Outcome {
    let from = parse_path(&args.from)?;
    let to = parse_path(&args.to)?;
    if from.is_root() {
        return Err(Failure::new(
            Exit::Usage,
            "cannot move /memories itself; move the files below it",
        ));
    }
    let store = args
        .store
        .open_as(args.session.id(), OpenMode::Existing)
        .await?;
    store
        .rename(&from, &to)
        .await
        .map_err(|e| Failure::storage(&format!("move {from} to {to}"), e))
}
