//! History through the envelope: each revision the inner store keeps is an envelope, opened
//! here with the path it was sealed for; sizes and digests are the plaintext's, worked out in
//! memory, never stored.
//!
//! Over an inner store that keeps history, a rename is the inner store's own (so each file's
//! history moves with it, as the contract says) and the moved envelopes are not re-sealed:
//! they stay sealed for the path they were written at, which the `renamed` revisions record.
//! A read that meets such an envelope ([`EncryptionError::WrongPath`]) opens it with the path
//! the history names; the file's next write seals it for its new path.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use memory_core::history::{Change, Revision, newest_first, sha256_hex};
use memory_core::{Error, MemoryPath, Result, Storage};

use crate::check::{is_reserved, key_check_path};
use crate::encrypted::Encrypted;
use crate::envelope;

/// Whether the inner store keeps history: not asked yet, yes, no.
pub(crate) const HISTORY_UNKNOWN: u8 = 0;
const HISTORY_ON: u8 = 1;
const HISTORY_OFF: u8 = 2;

/// The path the content of revision `number` was sealed for: the revision's own path, or, for
/// a rename (which moves an envelope without re-sealing it), that of the last revision before
/// it that wrote content. `revisions` are one file's, in any order.
fn sealed_for(revisions: &[Revision], number: u64) -> Option<&MemoryPath> {
    let mut older: Vec<&Revision> = revisions.iter().filter(|r| r.number <= number).collect();
    older.sort_by_key(|r| std::cmp::Reverse(r.number));
    older
        .into_iter()
        .find(|r| r.change != Change::Renamed)
        .map(|r| &r.path)
}

impl<S: Storage> Encrypted<S> {
    /// Whether the inner store keeps history (asked once; a failure is not remembered).
    pub(crate) async fn inner_keeps_history(&self) -> Result<bool> {
        match self.history_state.load(Ordering::Acquire) {
            HISTORY_ON => return Ok(true),
            HISTORY_OFF => return Ok(false),
            _ => {}
        }
        let on = match self.inner.history(&key_check_path()).await {
            Ok(_) => true,
            Err(Error::HistoryOff | Error::Unsupported { .. }) => false,
            Err(e) => return Err(e),
        };
        let state = if on { HISTORY_ON } else { HISTORY_OFF };
        self.history_state.store(state, Ordering::Release);
        Ok(on)
    }

    /// Opens the current envelope of `path`; one that a rename moved here unsealed is opened
    /// with the path its history says it was sealed for.
    pub(crate) async fn open_current(&self, path: &MemoryPath, stored: Vec<u8>) -> Result<Vec<u8>> {
        // Decided from the header before anything is decrypted, so a read copies nothing.
        if envelope::names_path(path, &stored) || !self.inner_keeps_history().await? {
            return self.decrypt(path, stored);
        }
        let revisions = self.inner.history(path).await?;
        let newest = revisions.iter().map(|r| r.number).max();
        let sealed = newest.and_then(|n| sealed_for(&revisions, n));
        self.decrypt(sealed.unwrap_or(path), stored)
    }

    /// One file's revisions with the plaintext's sizes and digests (each readable revision
    /// decrypted in memory).
    async fn plaintext_revisions(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        let mut revisions = self.inner.history(path).await?;
        let all = revisions.clone();
        for revision in &mut revisions {
            revision.size = envelope::plaintext_size(revision.size);
            if !revision.has_content() {
                continue;
            }
            let stored = self.inner.read_revision(path, revision.number).await?;
            let sealed = sealed_for(&all, revision.number).unwrap_or(path);
            match self.decrypt(sealed, stored) {
                Ok(plaintext) => {
                    revision.size = plaintext.len() as u64;
                    revision.sha256 = Some(sha256_hex(&plaintext));
                }
                // One version that cannot be opened (plaintext kept from before encryption,
                // a key no longer in the ring) does not hide the others: it is listed
                // without a digest, and reading it says why (`decrypt` logged it).
                Err(_) => revision.sha256 = None,
            }
        }
        Ok(revisions)
    }

    /// [`Storage::history`] through the envelope: for a file, its revisions; for a folder,
    /// those of every file whose history is below it (each file's asked for on its own, as a
    /// revision a rename moved names the path it was made at, not the file's), without the
    /// key check record.
    pub(crate) async fn encrypted_history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.ensure_checked(false).await?;
        if is_reserved(path) {
            return Ok(Vec::new());
        }
        let revisions = self.inner.history(path).await?;
        // A file's history holds a revision made at its path; a folder's holds only paths
        // below it.
        if revisions.iter().any(|r| r.path == *path) {
            return self.plaintext_revisions(path).await;
        }
        // Every file's newest revision is made at the file's path, so the files are among
        // the revisions' paths.
        let files: BTreeSet<MemoryPath> = revisions
            .into_iter()
            .map(|r| r.path)
            .filter(|p| !is_reserved(p))
            .collect();
        let mut below = Vec::new();
        for file in files {
            let of_file = self.plaintext_revisions(&file).await?;
            if of_file.first().is_some_and(|newest| newest.path == file) {
                below.extend(of_file);
            }
        }
        newest_first(&mut below);
        Ok(below)
    }

    /// [`Storage::read_revision`] through the envelope.
    pub(crate) async fn encrypted_revision(
        &self,
        path: &MemoryPath,
        number: u64,
    ) -> Result<Vec<u8>> {
        self.ensure_checked(false).await?;
        if is_reserved(path) {
            return Err(Error::NoRevision {
                path: path.clone(),
                number,
            });
        }
        let stored = self.inner.read_revision(path, number).await?;
        let revisions = self.inner.history(path).await?;
        let sealed = sealed_for(&revisions, number).unwrap_or(path);
        self.decrypt(sealed, stored)
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use memory_core::history::{FileHistory, HistoryOptions};

    use super::*;

    #[test]
    fn a_renamed_revision_was_sealed_where_its_content_was_written() {
        let p = |raw: &str| MemoryPath::parse(raw).unwrap();
        let (a, b, c) = (p("/memories/a"), p("/memories/b"), p("/memories/c"));
        let (options, now) = (HistoryOptions::default(), SystemTime::now());
        let mut file = FileHistory::new();
        file.record(Change::Created, &a, None, Some(b"1"), &options, now);
        file.record(Change::Renamed, &b, Some(&a), Some(b"1"), &options, now);
        file.record(Change::Renamed, &c, Some(&b), Some(b"1"), &options, now);
        file.record(Change::Modified, &c, None, Some(b"2"), &options, now);
        let revisions = file.revisions();
        assert_eq!(sealed_for(revisions, 3), Some(&a));
        assert_eq!(sealed_for(revisions, 2), Some(&a));
        assert_eq!(sealed_for(revisions, 4), Some(&c));
        assert_eq!(sealed_for(revisions, 1), Some(&a));
    }
}
