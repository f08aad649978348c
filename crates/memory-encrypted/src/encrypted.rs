//! [`Encrypted`]: the wrapper, its `Storage` impl and its re-encrypting rename.

use std::fmt;

use async_trait::async_trait;
use memory_core::{
    Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode,
};

use crate::envelope::{self, plaintext_size};
use crate::{BACKEND, Keyring};

/// How many times a rename re-copies a source file that keeps changing under it before it
/// gives up (leaving both copies), and how many times rekey retries a conflicted write.
pub(crate) const MAX_ATTEMPTS: usize = 8;

/// A [`Storage`] that encrypts every file's content before it reaches the inner store and
/// decrypts it on read (AES-256-GCM envelopes; the format is in the crate README).
///
/// - Paths (file and directory names) are **not** encrypted: the inner store sees them as is.
/// - Each envelope is bound to its path; [`rename`](Storage::rename) therefore decrypts and
///   re-encrypts each moved file (see the README for why, and what that means for atomicity).
/// - Versions are the inner store's, so compare-and-swap works through the wrapper.
/// - [`stat`](Storage::stat) and [`list`](Storage::list) report plaintext sizes (stored size
///   minus [`OVERHEAD`](crate::OVERHEAD)).
/// - Decryption failures are [`Error::Backend`] with `backend: "encrypted"` and an
///   [`EncryptionError`](crate::EncryptionError) as source; errors of the inner store pass
///   through unchanged.
///
/// `Display` shows the stack, e.g. `Encrypted(InMemory)`.
#[derive(Debug)]
pub struct Encrypted<S> {
    inner: S,
    keyring: Keyring,
}

impl<S> Encrypted<S> {
    /// Wraps `inner`: writes are encrypted under the keyring's active key, reads use whichever
    /// key of the ring the file names.
    pub fn new(inner: S, keyring: Keyring) -> Self {
        Encrypted { inner, keyring }
    }

    /// The inner store (which holds envelopes, not plaintext).
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The keyring in use.
    pub fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// Unwraps the inner store.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: fmt::Display> fmt::Display for Encrypted<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Encrypted({})", self.inner)
    }
}

impl<S: Storage> Encrypted<S> {
    pub(crate) fn seal(&self, path: &MemoryPath, plaintext: Vec<u8>) -> Result<Vec<u8>> {
        Ok(envelope::seal(self.keyring.active(), path, plaintext)?)
    }

    pub(crate) fn open(&self, path: &MemoryPath, stored: Vec<u8>) -> Result<Vec<u8>> {
        envelope::open(&self.keyring, path, stored).map_err(|e| {
            tracing::warn!(store = %self, error = %e, "cannot decrypt a stored file");
            Error::from(e)
        })
    }

    /// Copies one file to `to`, re-encrypted for its new path, with create-if-absent.
    /// Returns the source version copied and the destination's new version.
    async fn copy_reencrypted(
        &self,
        from: &MemoryPath,
        to: &MemoryPath,
    ) -> Result<(Version, Version)> {
        let file = self.inner.read(from).await?;
        let plaintext = self.open(from, file.contents)?;
        let sealed = self.seal(to, plaintext)?;
        let written = self.inner.write(to, sealed, WriteMode::Create).await?;
        Ok((file.version, written))
    }

    /// Deletes the source of a copied file, first bringing the copy up to date if the source
    /// was edited since it was copied, so a concurrent edit is not lost.
    async fn finish_move(
        &self,
        from: &MemoryPath,
        to: &MemoryPath,
        mut copied: Version,
        mut target: Version,
    ) -> Result<()> {
        for _ in 0..MAX_ATTEMPTS {
            let current = match self.inner.read(from).await {
                Ok(file) => file,
                Err(Error::NotFound { .. }) => return Ok(()),
                Err(e) => return Err(e),
            };
            if current.version == copied {
                return match self.inner.delete(from).await {
                    Ok(()) | Err(Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(e),
                };
            }
            let plaintext = self.open(from, current.contents)?;
            let sealed = self.seal(to, plaintext)?;
            target = self
                .inner
                .write(to, sealed, WriteMode::Update(target))
                .await?;
            copied = current.version;
        }
        Err(Error::Conflict { path: from.clone() })
    }

    /// Rename by decrypting each file and re-encrypting it for its new path: copy everything
    /// with create-if-absent, then delete the sources. A failure while copying removes the
    /// copies already made, so the store is as before; a crash leaves every file present at
    /// least once.
    async fn rename_reencrypting(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let sources: Vec<MemoryPath> = match self.inner.stat(from).await? {
            Some(Entry::File(_)) => vec![from.clone()],
            Some(Entry::Directory) => self
                .inner
                .list(from)
                .await?
                .into_iter()
                .map(|meta| meta.path)
                .collect(),
            None => Vec::new(),
        };
        if sources.is_empty() {
            return Err(Error::NotFound { path: from.clone() });
        }
        if to.starts_with(from) {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        }
        if self.inner.stat(to).await?.is_some() {
            return Err(Error::AlreadyExists { path: to.clone() });
        }
        let mut moves = Vec::with_capacity(sources.len());
        for source in sources {
            let target = source.rebase(from, to).ok_or_else(|| {
                Error::backend(
                    BACKEND,
                    format!("{source} cannot move below {to}: the path would be too long"),
                )
            })?;
            moves.push((source, target));
        }

        let mut copied = Vec::with_capacity(moves.len());
        for (source, target) in moves {
            match self.copy_reencrypted(&source, &target).await {
                Ok((source_version, target_version)) => {
                    copied.push((source, target, source_version, target_version));
                }
                Err(e) => {
                    // The contract names the rename's destination, not the file being copied.
                    let e = match e {
                        Error::ParentIsFile { parent, .. } => Error::ParentIsFile {
                            path: to.clone(),
                            parent,
                        },
                        other => other,
                    };
                    for (_, done, _, _) in &copied {
                        if let Err(undo) = self.inner.delete(done).await {
                            tracing::warn!(
                                store = %self, path = %done, error = %undo,
                                "rename failed and a copy could not be removed"
                            );
                        }
                    }
                    return Err(e);
                }
            }
        }
        for (source, target, source_version, target_version) in copied {
            self.finish_move(&source, &target, source_version, target_version)
                .await?;
        }
        Ok(())
    }
}

fn plaintext_meta(mut meta: FileMeta) -> FileMeta {
    meta.size = plaintext_size(meta.size);
    meta
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<S: Storage> Storage for Encrypted<S> {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let file = self.inner.read(path).await?;
        Ok(StoredFile {
            contents: self.open(path, file.contents)?,
            version: file.version,
        })
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        Ok(match self.inner.stat(path).await? {
            Some(Entry::File(meta)) => Some(Entry::File(plaintext_meta(meta))),
            other => other,
        })
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        let sealed = self.seal(path, contents)?;
        self.inner.write(path, sealed, mode).await
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.inner.delete(path).await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        Ok(self
            .inner
            .list(dir)
            .await?
            .into_iter()
            .map(plaintext_meta)
            .collect())
    }

    /// Re-encrypts every moved file for its new path (envelopes are bound to their path), so
    /// this is a copy then delete, not the inner store's atomic rename. See the crate README.
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.rename_reencrypting(from, to).await
    }
}
