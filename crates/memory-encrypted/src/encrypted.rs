//! [`Encrypted`]: the wrapper, its `Storage` impl and its re-encrypting rename.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};

use async_trait::async_trait;
use memory_core::{
    Capabilities, Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version,
    WriteMode, check_rename_preconditions,
};

use crate::check::{self, Checked, KeyCheckError, is_reserved, key_check_path};
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
///   re-encrypts each moved file (see the README for why, and what that means for atomicity),
///   except over an inner store that keeps history: there it is the inner store's atomic
///   rename, which moves each file's history with it, and a moved envelope is opened with the
///   path its history says it was sealed for until its next write seals it for the new one.
/// - History ([`Storage::history`]) is the inner store's, of envelopes: revisions are
///   decrypted in memory to show the plaintext's sizes and digests; nothing in plaintext is
///   stored.
/// - Versions are the inner store's, so compare-and-swap works through the wrapper.
/// - [`stat`](Storage::stat) and [`list`](Storage::list) report plaintext sizes (stored size
///   minus [`OVERHEAD`](crate::OVERHEAD)).
/// - Decryption failures are [`Error::Backend`] with `backend: "encrypted"` and an
///   [`EncryptionError`](crate::EncryptionError) as source; errors of the inner store pass
///   through unchanged.
/// - **Key check**: the store holds a key check record ([`KEY_CHECK_PATH`](crate::KEY_CHECK_PATH),
///   invisible through the wrapper). Before the first operation the wrapper checks it
///   against the keyring (writing it before the first change), and refuses to work on a store encrypted
///   under another key or on a plaintext store ([`KeyCheckError`]). [`Encrypted::open`] runs the
///   check at once and returns the typed error.
///
/// `Display` shows the stack, e.g. `Encrypted(InMemory)`.
#[derive(Debug)]
pub struct Encrypted<S> {
    pub(crate) inner: S,
    pub(crate) keyring: Keyring,
    /// How far the key check got ([`UNCHECKED`], [`UNMARKED`], [`MARKED`]); every operation
    /// that needs more runs it first.
    checked: AtomicU8,
    /// Whether the inner store keeps history, once asked (see `history.rs`).
    pub(crate) history_state: AtomicU8,
}

impl<S> Encrypted<S> {
    /// Wraps `inner`: writes are encrypted under the keyring's active key, reads use whichever
    /// key of the ring the file names.
    ///
    /// The key check runs before the first operation; while it fails, every operation fails
    /// with `Error::Backend { backend: "encrypted", source: KeyCheckError, .. }` and changes
    /// nothing. Prefer [`Encrypted::open`], which checks at once and says why.
    pub fn new(inner: S, keyring: Keyring) -> Self {
        Encrypted {
            inner,
            keyring,
            checked: AtomicU8::new(UNCHECKED),
            history_state: AtomicU8::new(crate::history::HISTORY_UNKNOWN),
        }
    }

    /// The inner store (which holds envelopes, not plaintext, and the key check record).
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

impl<S: Storage> Encrypted<S> {
    /// [`Encrypted::new`], refused at once when the inner store cannot hold envelopes (its
    /// [`capabilities`](Storage::capabilities) lack `binary_files`, as a versioned memory
    /// store's do).
    ///
    /// # Errors
    /// [`KeyCheckError::TextOnlyStore`].
    pub fn try_new(inner: S, keyring: Keyring) -> std::result::Result<Self, KeyCheckError> {
        if !inner.capabilities().binary_files {
            return Err(KeyCheckError::TextOnlyStore {
                store: inner.to_string(),
            });
        }
        Ok(Self::new(inner, keyring))
    }

    /// Opens an encrypted store: [`Encrypted::try_new`], then the key check.
    ///
    /// - a store with a record: it must open with a key of the ring;
    /// - an empty store: opens; the record is written under the active key before the first
    ///   change (first use), never by a read, so a read-only stack never writes;
    /// - a store without a record (encrypted before key checks existed): its first file must
    ///   be an envelope under a key of the ring; the record is written before the first change.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
    /// use memory_encrypted::{Encrypted, Key, Keyring, KeyCheckError};
    ///
    /// let inner = Arc::new(InMemoryStorage::new());
    /// let store = Encrypted::open(inner.clone(), Keyring::new(Key::generate().unwrap())).await.unwrap();
    /// let path = MemoryPath::parse("/memories/a.md").unwrap();
    /// store.write(&path, b"x".to_vec(), WriteMode::Create).await.unwrap();
    /// let other = Keyring::new(Key::generate().unwrap());
    /// let e = Encrypted::open(inner, other).await.unwrap_err();
    /// assert!(matches!(e, KeyCheckError::WrongKey { .. }));
    /// # });
    /// ```
    ///
    /// # Errors
    /// [`KeyCheckError`]: a text-only inner store, a key not in the ring, a plaintext store
    /// (adopt it with [`rekey_with`](Self::rekey_with) and
    /// [`encrypt_plaintext`](crate::RekeyOptions::encrypt_plaintext)), a damaged record, or
    /// the inner store failing.
    pub async fn open(inner: S, keyring: Keyring) -> std::result::Result<Self, KeyCheckError> {
        let store = Self::try_new(inner, keyring)?;
        let found = check::check(&store.inner, &store.keyring, false).await?;
        store.checked.store(state_of(found), Ordering::Release);
        Ok(store)
    }

    /// Runs the key check unless it already got far enough: a read needs the store checked,
    /// a change (`mark`) also needs the record written.
    pub(crate) async fn ensure_checked(&self, mark: bool) -> Result<()> {
        let state = self.checked.load(Ordering::Acquire);
        if state == MARKED || (state == UNMARKED && !mark) {
            return Ok(());
        }
        if !self.inner.capabilities().binary_files {
            return Err(Error::backend(
                BACKEND,
                KeyCheckError::TextOnlyStore {
                    store: self.inner.to_string(),
                },
            ));
        }
        match check::check(&self.inner, &self.keyring, mark).await {
            Ok(found) => {
                self.checked.store(state_of(found), Ordering::Release);
                Ok(())
            }
            Err(KeyCheckError::Storage { source }) => Err(source),
            Err(e) => {
                tracing::error!(store = %self, error = %e, "the encryption key check failed");
                Err(Error::backend(BACKEND, e))
            }
        }
    }
}

/// The key check has not passed yet.
const UNCHECKED: u8 = 0;
/// The key check passed on a store without a record; a change writes it first.
const UNMARKED: u8 = 1;
/// The key check passed and the store has its record.
const MARKED: u8 = 2;

fn state_of(found: Checked) -> u8 {
    match found {
        Checked::Marked => MARKED,
        Checked::Unmarked => UNMARKED,
    }
}

/// The refusal of a change of the key check record (or of a path below it).
fn reserved(path: &MemoryPath) -> Error {
    Error::Refused {
        path: path.clone(),
        reason: "this name is reserved for the encrypted store's key check".to_owned(),
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

    pub(crate) fn decrypt(&self, path: &MemoryPath, stored: Vec<u8>) -> Result<Vec<u8>> {
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
        let plaintext = self.decrypt(from, file.contents)?;
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
            let plaintext = self.decrypt(from, current.contents)?;
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
        let sources: Vec<MemoryPath> =
            match check_rename_preconditions(&self.inner, from, to).await? {
                Entry::File(_) => vec![from.clone()],
                Entry::Directory => self
                    .inner
                    .list(from)
                    .await?
                    .into_iter()
                    .map(|meta| meta.path)
                    .filter(|path| !is_reserved(path))
                    .collect(),
            };
        if sources.is_empty() {
            return Err(Error::NotFound { path: from.clone() });
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
        self.ensure_checked(false).await?;
        if is_reserved(path) {
            return Err(Error::NotFound { path: path.clone() });
        }
        let file = self.inner.read(path).await?;
        Ok(StoredFile {
            contents: self.open_current(path, file.contents).await?,
            version: file.version,
        })
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        self.ensure_checked(false).await?;
        if is_reserved(path) {
            return Ok(None);
        }
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
        self.ensure_checked(true).await?;
        if is_reserved(path) {
            return Err(reserved(path));
        }
        let sealed = self.seal(path, contents)?;
        self.inner.write(path, sealed, mode).await
    }

    /// Deleting `/memories` deletes every file but the key check record (one delete per
    /// top-level entry), so the store stays marked as encrypted.
    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.ensure_checked(true).await?;
        if is_reserved(path) {
            return Err(Error::NotFound { path: path.clone() });
        }
        if !path.is_root() {
            return self.inner.delete(path).await;
        }
        let record = key_check_path();
        let mut tops = BTreeSet::new();
        for meta in self.inner.list(path).await? {
            if meta.path == record {
                continue;
            }
            if let Some(top) = meta.path.ancestors().into_iter().next() {
                tops.insert(top);
            } else {
                tops.insert(meta.path);
            }
        }
        for top in tops {
            match self.inner.delete(&top).await {
                Ok(()) | Err(Error::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        Ok(self.listing(dir).await?.entries)
    }

    /// Over an inner store that keeps history: the inner store's atomic rename, which moves
    /// each file's history with it; the envelopes stay sealed for the path they were written
    /// at, as the `renamed` revisions record (see `history.rs`). Otherwise every moved file is
    /// re-encrypted for its new path (envelopes are bound to their path): a copy then delete.
    /// See the crate README.
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.ensure_checked(true).await?;
        if is_reserved(from) {
            return Err(Error::NotFound { path: from.clone() });
        }
        if is_reserved(to) {
            return Err(reserved(to));
        }
        if self.inner_keeps_history().await? {
            if key_check_path().starts_with(from) {
                // Moving the folder that holds the key check record would move the record.
                return self.rename_reencrypting(from, to).await;
            }
            return self.inner.rename(from, to).await;
        }
        self.rename_reencrypting(from, to).await
    }

    /// The inner store's count, less the key check record (when the store has one).
    async fn file_count(&self) -> Result<usize> {
        self.ensure_checked(false).await?;
        let count = self.inner.file_count().await?;
        Ok(if self.checked.load(Ordering::Acquire) == MARKED {
            count.saturating_sub(1)
        } else {
            // Checked without a record (nothing changed yet): no record to leave out.
            count
        })
    }

    /// Seals the content, then lets the inner store create it within the limit in its one
    /// exact step (the limit raised by one for the key check record the inner store holds).
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        self.ensure_checked(true).await?;
        if is_reserved(path) {
            return Err(reserved(path));
        }
        let sealed = self.seal(path, contents)?;
        match self
            .inner
            .create_within(path, sealed, max_files.saturating_add(1))
            .await
        {
            Err(Error::StoreFull { .. }) => Err(Error::StoreFull { max_files }),
            other => other,
        }
    }

    /// Never forwarded: the inner store holds ciphertext, and an index of it (memory-sqlite's
    /// FTS5 table, a side index) would hold nothing searchable, or, worse, would have to hold
    /// plaintext on disk. This is the provided scan ([`memory_core::search::scan`]) over this
    /// wrapper's own listing and decrypting reads: the plaintext exists only in memory, for
    /// the length of the search, and nothing is written anywhere.
    async fn search(
        &self,
        query: &memory_core::search::SearchQuery,
    ) -> Result<Vec<memory_core::search::SearchHit>> {
        self.ensure_checked(false).await?;
        memory_core::search::scan(self, query).await
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    /// The inner store's listing without the reserved files, with its count of skipped
    /// entries.
    async fn listing(&self, dir: &MemoryPath) -> Result<memory_core::Listing> {
        self.ensure_checked(false).await?;
        let listing = self.inner.listing(dir).await?;
        Ok(memory_core::Listing {
            entries: (listing.entries.into_iter())
                .filter(|meta| !is_reserved(&meta.path))
                .map(plaintext_meta)
                .collect(),
            skipped: listing.skipped,
        })
    }

    /// Forwarded: a file's time is not sealed (the inner store's listing shows it anyway).
    async fn set_modified(
        &self,
        path: &MemoryPath,
        modified: std::time::SystemTime,
    ) -> Result<bool> {
        self.ensure_checked(true).await?;
        if is_reserved(path) {
            return Err(reserved(path));
        }
        self.inner.set_modified(path, modified).await
    }

    /// The inner store's revisions, with the plaintext's sizes and digests (each readable
    /// revision is decrypted in memory to work them out; nothing is stored).
    async fn history(&self, path: &MemoryPath) -> Result<Vec<memory_core::history::Revision>> {
        self.encrypted_history(path).await
    }

    /// The revision's envelope, opened with the path it was sealed for.
    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.encrypted_revision(path, number).await
    }

    /// Seals the content for `path` and lets the inner store write it back as `restored`.
    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.ensure_checked(true).await?;
        if is_reserved(path) {
            return Err(reserved(path));
        }
        let sealed = self.seal(path, contents)?;
        self.inner.write_restored(path, number, sealed).await
    }

    /// Forwarded: the inner store removes the envelopes (ciphertext, never plaintext).
    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: memory_core::history::Redaction,
    ) -> Result<u64> {
        self.ensure_checked(true).await?;
        if is_reserved(path) {
            return Err(reserved(path));
        }
        self.inner.redact_revisions(path, which).await
    }
}
