//! Keeping a file's modification time when `memory copy` and `memory import` write it into
//! another store, so that `memory expire` after a migration or a restore sees each file's age
//! rather than the moment it was copied.

use std::path::PathBuf;
use std::time::SystemTime;

use memory_cli::store_url::{self, Scheme, StoreUrl};
use memory_core::{MemoryPath, Storage};

use super::Failure;

/// Where the files of a folder store (`PATH`, `file:PATH`) are on disk, to set a time there
/// when the store itself cannot ([`Storage::set_modified`] answers `false`: memory-fs keeps
/// no time of its own beyond the file's). `None` for every other store.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stamper {
    folder: Option<PathBuf>,
}

impl Stamper {
    /// For the store `url` names.
    pub(crate) fn for_url(url: &str) -> Self {
        let folder = url
            .parse::<StoreUrl>()
            .ok()
            .filter(|url| url.scheme() == Scheme::Dir)
            .and_then(|url| store_url::local_path(&url));
        Stamper { folder }
    }

    /// Gives `path` in `store` the modification time `modified`: through the store when it
    /// can keep one (SQLite, in memory, wrappers over them), else on the file itself for a
    /// folder store (the layout every folder store has: `PATH/memories/...`). A store that
    /// keeps its own times (S3, versioned stores) is left as it is.
    pub(crate) async fn stamp(
        &self,
        store: &dyn Storage,
        path: &MemoryPath,
        modified: SystemTime,
    ) -> Result<(), Failure> {
        let set = store
            .set_modified(path, modified)
            .await
            .map_err(|e| Failure::storage(&format!("set the modification time of {path}"), e))?;
        let Some(folder) = self.folder.as_ref().filter(|_| !set) else {
            return Ok(());
        };
        let file = folder.join(path.as_str().trim_start_matches('/'));
        let result = tokio::task::spawn_blocking(move || set_file_time(&file, modified)).await;
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, %path, "setting a file's modification time");
                Err(Failure::new(
                    super::Exit::Failed,
                    format!("cannot set the modification time of {path}: {}", e.kind()),
                ))
            }
            Err(e) => Err(Failure::new(super::Exit::Failed, e.to_string())),
        }
    }
}

/// Sets the file's modification time (its access time too); a name that is not a regular
/// file (a link left there) is not followed.
fn set_file_time(file: &std::path::Path, modified: SystemTime) -> std::io::Result<()> {
    if !std::fs::symlink_metadata(file)?.file_type().is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    // Windows needs write access to change a file's times; Unix only ownership.
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .write(cfg!(windows))
        .open(file)?;
    handle.set_times(
        std::fs::FileTimes::new()
            .set_accessed(modified)
            .set_modified(modified),
    )
}
