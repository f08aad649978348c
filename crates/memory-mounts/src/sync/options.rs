//! How a [`FolderSync`](super::FolderSync) behaves.

use std::time::Duration;

/// How long a file must stay missing before its server delete goes out (the SDK's
/// `DELETE_CORROBORATION_SECONDS`).
pub const DEFAULT_DELETE_AFTER: Duration = Duration::from_secs(30);

/// Whether a file deleted in the folder may delete its memory (the SDK's `sync_deletions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeleteMode {
    /// Deleted in the folder, deleted on the store (after the delay and the checks).
    #[default]
    Enabled,
    /// The same checks, then only reported ([`SyncReport::would_delete`](super::SyncReport::would_delete)): a dry run.
    LogOnly,
    /// Never delete on the store.
    Disabled,
}

/// How a [`FolderSync`](super::FolderSync) behaves.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// Pull only: never create, update or delete a memory.
    pub read_only: bool,
    /// Whether local deletions reach the store.
    pub deletions: DeleteMode,
    /// How long a file must stay missing before its memory is deleted.
    pub delete_after: Duration,
    /// Sync a folder that holds files but no marker: write the marker and treat its files as
    /// the folder's (a foreign marker is never adopted).
    pub adopt: bool,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            read_only: false,
            deletions: DeleteMode::Enabled,
            delete_after: DEFAULT_DELETE_AFTER,
            adopt: false,
        }
    }
}
