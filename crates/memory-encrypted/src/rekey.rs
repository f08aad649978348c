//! [`Encrypted::rekey`]: moving a whole store to the active key.

use memory_core::{Error, MemoryPath, Result, Storage, WriteMode};

use crate::check;
use crate::encrypted::MAX_ATTEMPTS;
use crate::envelope;
use crate::{Encrypted, EncryptionError};

/// Options for [`Encrypted::rekey_with`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RekeyOptions {
    /// Also encrypt files that are not envelopes at all (plaintext written before encryption
    /// was turned on), instead of reporting them as failures. Off by default: turn it on once,
    /// deliberately, when adopting an existing plaintext store, since anyone able to write the
    /// inner store could plant plaintext files.
    pub encrypt_plaintext: bool,
}

impl RekeyOptions {
    /// The defaults: plaintext files are reported, not adopted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`RekeyOptions::encrypt_plaintext`].
    pub fn encrypt_plaintext(mut self, yes: bool) -> Self {
        self.encrypt_plaintext = yes;
        self
    }
}

/// What rekey did with one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RekeyOutcome {
    /// Re-encrypted under the active key.
    Rekeyed,
    /// Already under the active key: skipped (this is what makes rekey resumable).
    AlreadyCurrent,
    /// A plaintext file, now encrypted (only with [`RekeyOptions::encrypt_plaintext`]).
    EncryptedPlaintext,
    /// Deleted by someone else while rekey ran: nothing to do.
    Vanished,
    /// Could not be rekeyed; the error is in [`RekeyReport::failed`].
    Failed,
}

/// Progress of a rekey, handed to the callback after each file.
#[derive(Debug, Clone)]
pub struct RekeyProgress<'a> {
    /// Files handled so far, this one included.
    pub done: usize,
    /// Files in the store when rekey started.
    pub total: usize,
    /// The file just handled.
    pub path: &'a MemoryPath,
    /// What happened to it.
    pub outcome: RekeyOutcome,
}

/// The result of a rekey.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct RekeyReport {
    /// Files in the store when rekey started.
    pub total: usize,
    /// Files re-encrypted under the active key.
    pub rekeyed: usize,
    /// Files already under the active key.
    pub already_current: usize,
    /// Plaintext files encrypted.
    pub encrypted_plaintext: usize,
    /// Files deleted concurrently.
    pub vanished: usize,
    /// Files that could not be rekeyed, with why. Running rekey again retries just these
    /// (and anything written under an old key since).
    pub failed: Vec<(MemoryPath, Error)>,
    /// Past versions whose content was redacted because they held plaintext: when plaintext
    /// files were encrypted over an inner store that keeps history, every past version of the
    /// store is redacted (their records stay), so no plaintext is left in its history.
    pub redacted_versions: u64,
}

impl RekeyReport {
    /// Whether every file of the store is now under the active key.
    pub fn is_complete(&self) -> bool {
        self.failed.is_empty()
    }
}

impl<S: Storage> Encrypted<S> {
    /// Re-encrypts every file of the store under the keyring's active key; see
    /// [`rekey_with`](Self::rekey_with). Plaintext files are reported as failures.
    pub async fn rekey<F>(&self, progress: F) -> Result<RekeyReport>
    where
        F: FnMut(&RekeyProgress<'_>) + Send,
    {
        self.rekey_with(&RekeyOptions::default(), progress).await
    }

    /// Re-encrypts every file of the store under the keyring's active key, calling `progress`
    /// after each file.
    ///
    /// - **Resumable**: files already under the active key are skipped without decrypting, so
    ///   after an interruption (a crash, a killed process, a failing store) running it again
    ///   finishes the job.
    /// - **Safe with concurrent writers**: each file is replaced with a compare-and-swap write
    ///   at the version that was read; if someone edited it meanwhile, rekey reads it again
    ///   (and skips it if the edit was already under the active key). No edit is lost.
    /// - A file that cannot be rekeyed (wrong key, tampered, plaintext) does not stop the run:
    ///   it is listed in [`RekeyReport::failed`] and left as it was.
    ///
    /// The old keys must still be in the keyring (as decryption keys) while this runs. Only
    /// listing the store (or writing the key check record) fails the whole call.
    ///
    /// Rekey does not run the key check, so it also adopts a plaintext store (with
    /// [`RekeyOptions::encrypt_plaintext`]); over an inner store that keeps history, adopting
    /// one redacts every past version of the store ([`RekeyReport::redacted_versions`]), which
    /// held plaintext. Re-encrypting under a new key keeps the history: past versions stay
    /// under the key they were written with (redact them, e.g. `memory redact /memories --all`,
    /// to retire a key that leaked). The key check record is moved to the active key
    /// when every file is under it; a store without a record gets one once it holds
    /// envelopes.
    pub async fn rekey_with<F>(
        &self,
        options: &RekeyOptions,
        mut progress: F,
    ) -> Result<RekeyReport>
    where
        F: FnMut(&RekeyProgress<'_>) + Send,
    {
        let record = check::key_check_path();
        let mut files = self.inner().list(&MemoryPath::root()).await?;
        let had_record = files.iter().any(|meta| meta.path == record);
        files.retain(|meta| meta.path != record);
        let mut report = RekeyReport {
            total: files.len(),
            ..RekeyReport::default()
        };
        for (i, meta) in files.iter().enumerate() {
            let outcome = match self.rekey_file(&meta.path, options).await {
                Ok(outcome) => outcome,
                Err(e) => {
                    tracing::warn!(store = %self, path = %meta.path, error = %e, "cannot rekey");
                    report.failed.push((meta.path.clone(), e));
                    RekeyOutcome::Failed
                }
            };
            match outcome {
                RekeyOutcome::Rekeyed => report.rekeyed += 1,
                RekeyOutcome::AlreadyCurrent => report.already_current += 1,
                RekeyOutcome::EncryptedPlaintext => report.encrypted_plaintext += 1,
                RekeyOutcome::Vanished => report.vanished += 1,
                RekeyOutcome::Failed => {}
            }
            progress(&RekeyProgress {
                done: i + 1,
                total: report.total,
                path: &meta.path,
                outcome,
            });
        }
        // Encrypting plaintext files leaves their plaintext in the inner store's history: redact
        // every past version, once, so that none is left.
        if report.encrypted_plaintext > 0 && self.inner_keeps_history().await? {
            report.redacted_versions = self
                .inner()
                .redact_revisions(
                    &MemoryPath::root(),
                    memory_core::history::Redaction::AllPast,
                )
                .await?;
        }
        // The key check record follows the files: under the active key once every file is
        // (so the old key can be retired), or, for a store that had none, as soon as it holds
        // envelopes (a plaintext store just adopted is marked as encrypted).
        let holds_envelopes =
            report.rekeyed + report.encrypted_plaintext + report.already_current > 0;
        if report.is_complete() {
            check::write_record(self.inner(), self.keyring(), WriteMode::Overwrite).await?;
        } else if !had_record && holds_envelopes {
            check::write_record(self.inner(), self.keyring(), WriteMode::Create).await?;
        }
        Ok(report)
    }

    async fn rekey_file(&self, path: &MemoryPath, options: &RekeyOptions) -> Result<RekeyOutcome> {
        let active = self.keyring().active_id();
        for _ in 0..MAX_ATTEMPTS {
            let file = match self.inner().read(path).await {
                Ok(file) => file,
                Err(Error::NotFound { .. }) => return Ok(RekeyOutcome::Vanished),
                Err(e) => return Err(e),
            };
            let (plaintext, outcome) = match envelope::key_id(path, &file.contents) {
                Ok(id) if id == active => return Ok(RekeyOutcome::AlreadyCurrent),
                Ok(_) => (
                    self.open_current(path, file.contents).await?,
                    RekeyOutcome::Rekeyed,
                ),
                Err(EncryptionError::NotEncrypted { .. }) if options.encrypt_plaintext => {
                    (file.contents, RekeyOutcome::EncryptedPlaintext)
                }
                Err(e) => return Err(e.into()),
            };
            let sealed = self.seal(path, plaintext)?;
            match self
                .inner()
                .write(path, sealed, WriteMode::Update(file.version))
                .await
            {
                Ok(_) => return Ok(outcome),
                Err(Error::Conflict { .. }) => continue,
                Err(Error::NotFound { .. }) => return Ok(RekeyOutcome::Vanished),
                Err(e) => return Err(e),
            }
        }
        Err(Error::Conflict { path: path.clone() })
    }
}
