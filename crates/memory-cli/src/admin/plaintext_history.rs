//! `memory rekey --encrypt-plaintext` and history: the plaintext versions a store kept of the
//! files it encrypts are redacted, so that adopting plaintext files leaves none of their words
//! in the store (the encrypted versions of other files are kept, under the key that wrote
//! them).

use std::collections::BTreeSet;

use memory_core::history::Redaction;
use memory_core::{Entry, Error, MemoryPath, Storage};
use memory_encrypted::{KEY_CHECK_PATH, MAGIC};

/// Redacts every past version of the store's files (live or deleted) whose stored bytes are
/// not an envelope, reading the store as its bytes (`inner`, without the wrapper). Returns how
/// many versions lost their content. A store that keeps no history has nothing to redact.
///
/// Resumable like rekey: a run that stopped before this step leaves plaintext versions that the
/// next run finds again (one read per version of every file).
///
/// # Errors
/// The first storage error, naming nothing of the host.
pub(crate) async fn redact_plaintext_versions(inner: &dyn Storage) -> Result<u64, Error> {
    let root = MemoryPath::root();
    let log = match inner.history(&root).await {
        Ok(log) => log,
        Err(Error::HistoryOff | Error::Unsupported { .. }) => return Ok(0),
        Err(e) => return Err(e),
    };
    // The paths that hold history: every live file, and each path of the log that is no file
    // or folder now (a deleted file; a path a rename moved away from has none left).
    let mut paths: BTreeSet<MemoryPath> = inner
        .list(&root)
        .await?
        .into_iter()
        .map(|file| file.path)
        .collect();
    for revision in &log {
        if !paths.contains(&revision.path) && inner.stat(&revision.path).await?.is_none() {
            paths.insert(revision.path.clone());
        }
    }
    let mut redacted = 0;
    for path in paths {
        if path.as_str() == KEY_CHECK_PATH {
            continue;
        }
        let revisions = inner.history(&path).await?;
        let is_file = matches!(inner.stat(&path).await?, Some(Entry::File(_)));
        for (index, revision) in revisions.iter().enumerate() {
            // The current version of a live file was just encrypted; the rest are past ones.
            if (is_file && index == 0) || !revision.has_content() {
                continue;
            }
            let bytes = match inner.read_revision(&path, revision.number).await {
                Ok(bytes) => bytes,
                Err(Error::NoRevision { .. } | Error::RevisionWithoutContent { .. }) => continue,
                Err(e) => return Err(e),
            };
            if !bytes.starts_with(&MAGIC) {
                redacted += inner
                    .redact_revisions(&path, Redaction::Revision(revision.number))
                    .await?;
            }
        }
    }
    Ok(redacted)
}
