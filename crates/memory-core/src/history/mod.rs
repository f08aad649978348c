//! Each file's earlier versions: what a store keeps of the content a change replaced.
//!
//! Every change a store makes to a file (a create, each edit, a rename, a delete, a restore) is
//! one [`Revision`]: its number (per path, from 1, in the order of the changes), what the
//! change was ([`Change`]), when, its size and SHA-256, and the session that made it. The
//! newest revision of a file that exists is its current content; the content of the revisions
//! before it is kept where the tool never reaches it (the six commands, their listings, search
//! and the file count never see history), written in the same atomic step as the change.
//!
//! A store reports its history through four [`Storage`](crate::Storage) methods:
//! [`history`](crate::Storage::history), [`read_revision`](crate::Storage::read_revision),
//! [`write_restored`](crate::Storage::write_restored) (with [`restore`] on top) and
//! [`redact_revisions`](crate::Storage::redact_revisions). How long it keeps it is
//! [`HistoryOptions`] (the store options `history`, `history_days`, `history_max`).
//!
//! The rules every store shares are written once here: numbering ([`FileHistory::record`]),
//! what a rename does to the history of the path it moves to ([`FileHistory::append_moved`]),
//! what pruning drops ([`FileHistory::prune`]) and the order of a folder's log
//! ([`newest_first`]).

mod file;
mod options;

use std::fmt;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::MemoryPath;

pub use file::FileHistory;
pub use options::HistoryOptions;

/// What one change did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// The file was created.
    Created,
    /// The file's content was replaced (an edit, an overwrite, a re-encryption).
    Modified,
    /// The file moved here from [`Revision::old_path`]; its content is unchanged.
    Renamed,
    /// The file was deleted; the revision holds no content.
    Deleted,
    /// An earlier revision's content was written back as the current file.
    Restored,
}

impl Change {
    /// Every change, in the order of this enum.
    pub const ALL: [Change; 5] = [
        Change::Created,
        Change::Modified,
        Change::Renamed,
        Change::Deleted,
        Change::Restored,
    ];

    /// The change's name, as `memory log` prints it and stores record it: `created`,
    /// `modified`, `renamed`, `deleted` or `restored`.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Modified => "modified",
            Change::Renamed => "renamed",
            Change::Deleted => "deleted",
            Change::Restored => "restored",
        }
    }

    /// The change named `name` (as [`as_str`](Self::as_str) writes it), if any.
    pub fn parse(name: &str) -> Option<Change> {
        Change::ALL
            .into_iter()
            .find(|change| change.as_str() == name)
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One version of a file: the state a change left it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The revision's number among its path's revisions: 1 for the first, one more for each
    /// change after it. A rename renumbers the moved revisions after those the new path
    /// already had ([`FileHistory::append_moved`]).
    pub number: u64,
    /// What the change was.
    pub change: Change,
    /// The path the file had after this change (revisions moved by a later rename keep the
    /// path they were made at).
    pub path: MemoryPath,
    /// For [`Change::Renamed`], the path the file moved from.
    pub old_path: Option<MemoryPath>,
    /// When the change was made.
    pub time: SystemTime,
    /// The content's size in bytes (0 for a deletion).
    pub size: u64,
    /// The content's SHA-256 as 64 lowercase hex digits; `None` for a deletion and for a
    /// redacted revision (a digest of a short secret would confirm a guess of it).
    pub sha256: Option<String>,
    /// The session that made the change, when one was given
    /// ([`HistoryOptions::session`]).
    pub session: Option<String>,
    /// Whether the content was removed by [`redact_revisions`](crate::Storage::redact_revisions)
    /// (the record stays, with its size; its digest goes).
    pub redacted: bool,
}

impl Revision {
    /// Whether the revision holds content that can be read back: not a deletion, not redacted.
    pub fn has_content(&self) -> bool {
        self.change != Change::Deleted && !self.redacted
    }
}

/// Which past revisions [`redact_revisions`](crate::Storage::redact_revisions) removes the
/// content of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redaction {
    /// The one revision with this number (never the current content).
    Revision(u64),
    /// Every revision of the path but the current content.
    AllPast,
}

/// The SHA-256 of `contents` as 64 lowercase hex digits, as [`Revision::sha256`] holds it.
pub fn sha256_hex(contents: &[u8]) -> String {
    hex::encode(Sha256::digest(contents))
}

/// Sorts a folder's revisions the way [`history`](crate::Storage::history) returns them:
/// newest first (by time, then by number), ties broken by path, so that every store gives
/// the same order.
pub fn newest_first(revisions: &mut [Revision]) {
    revisions.sort_by(|a, b| {
        b.time
            .cmp(&a.time)
            .then_with(|| b.number.cmp(&a.number))
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// Restores revision `number` of `path`: reads its content
/// ([`read_revision`](crate::Storage::read_revision)) and writes it back as the current file
/// ([`write_restored`](crate::Storage::write_restored)), which records a `restored` revision.
/// Returns the new content's version.
///
/// ```
/// # tokio_test();
/// # fn tokio_test() {
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// use memory_core::history::{self, Change};
/// use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
///
/// let store = InMemoryStorage::new();
/// let path = MemoryPath::parse("/memories/notes.md").unwrap();
/// store.write(&path, b"the original".to_vec(), WriteMode::Create).await.unwrap();
/// store.write(&path, b"a placeholder".to_vec(), WriteMode::Overwrite).await.unwrap();
/// history::restore(&store, &path, 1).await.unwrap();
/// assert_eq!(store.read(&path).await.unwrap().contents, b"the original");
/// assert_eq!(store.history(&path).await.unwrap()[0].change, Change::Restored);
/// # });
/// # }
/// ```
///
/// # Errors
/// Those of [`read_revision`](crate::Storage::read_revision) (no such revision, a deletion, a
/// redacted one, history off) and of [`write_restored`](crate::Storage::write_restored).
pub async fn restore<S: crate::Storage + ?Sized>(
    storage: &S,
    path: &MemoryPath,
    number: u64,
) -> crate::Result<crate::Version> {
    let contents = storage.read_revision(path, number).await?;
    storage.write_restored(path, number, contents).await
}

/// [`Redaction::AllPast`] below a folder (or the root), file by file: every file whose
/// history is below `folder` has its past revisions redacted with its own
/// [`redact_revisions`](crate::Storage::redact_revisions) call. Returns how many revisions
/// lost their content. For a store's `redact_revisions` when it is given a path that is not a
/// file and has no bulk way of its own.
///
/// The files are found from `folder`'s log ([`history`](crate::Storage::history)): every
/// file's newest revision is made at the file's path, so each file below the folder is among
/// the revisions' paths (a path a file only moved away from has no history of its own, or
/// another file's, also below the folder).
///
/// # Errors
/// Those of [`history`](crate::Storage::history) and
/// [`redact_revisions`](crate::Storage::redact_revisions).
pub async fn redact_below<S: crate::Storage + ?Sized>(
    storage: &S,
    folder: &MemoryPath,
) -> crate::Result<u64> {
    let files: std::collections::BTreeSet<MemoryPath> = storage
        .history(folder)
        .await?
        .into_iter()
        .map(|revision| revision.path)
        .filter(|path| path.starts_with(folder) && path != folder)
        .collect();
    let mut redacted = 0;
    for file in files {
        match storage.redact_revisions(&file, Redaction::AllPast).await {
            Ok(n) => redacted += n,
            Err(crate::Error::NoRevision { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(redacted)
}
