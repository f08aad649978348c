//! Keeping a file's modification time when `memory copy` and `memory import` write it into
//! another store, so that `memory expire` after a migration or a restore sees each file's age
//! rather than the moment it was copied.

use std::time::SystemTime;

use memory_core::{MemoryPath, Storage};

use super::Failure;

/// Gives `path` in `store` the modification time `modified`, through
/// [`Storage::set_modified`]: folder, SQLite and PostgreSQL stores (and the wrappers over
/// them) keep it; a store that keeps its own times (S3, versioned stores) is left as it is.
pub(crate) async fn keep_modified(
    store: &dyn Storage,
    path: &MemoryPath,
    modified: SystemTime,
) -> Result<(), Failure> {
    store
        .set_modified(path, modified)
        .await
        .map(|_kept| ())
        .map_err(|e| Failure::storage(&format!("set the modification time of {path}"), e))
}
