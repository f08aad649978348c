//! The key check: a small record that marks a store as encrypted and names its key, so a
//! store is never opened with the wrong key, without a key, or mixed with plaintext.

use std::fmt;

use memory_core::{Error, MemoryPath, Storage, WriteMode};

use crate::envelope;
use crate::{EncryptionError, KeyId, Keyring};

/// Where the key check record lives in the inner store: a hidden file at the top of
/// `/memories`. Through [`Encrypted`](crate::Encrypted) it does not exist (reads, listings and
/// counts leave it out, changes to it are refused), so the model never sees it; in the inner
/// store it is an ordinary file, so every backend (folder, SQLite, S3, in memory) can hold it.
pub const KEY_CHECK_PATH: &str = "/memories/.memory-encryption-key-check";

/// The record's plaintext, sealed in an envelope for [`KEY_CHECK_PATH`] under a key of the
/// ring: opening it proves the ring holds the store's key and that the record is authentic.
pub(crate) const MARKER: &[u8] = b"memory-encrypted key check v1\n";

/// [`KEY_CHECK_PATH`] as a path.
pub(crate) fn key_check_path() -> MemoryPath {
    match MemoryPath::parse(KEY_CHECK_PATH) {
        Ok(path) => path,
        // The constant is a valid path; a test holds it.
        Err(_) => MemoryPath::root(),
    }
}

/// Whether `path` is the key check record or would lie below it.
pub(crate) fn is_reserved(path: &MemoryPath) -> bool {
    path.starts_with(&key_check_path())
}

/// Why an encrypted store refused to open. Each text says what to do.
///
/// [`Encrypted::open`](crate::Encrypted::open) returns it; a store made with
/// [`Encrypted::new`](crate::Encrypted::new) runs the same check before its first operation
/// and answers every operation with `memory_core::Error::Backend { backend: "encrypted",
/// source: KeyCheckError, .. }` while it fails, so nothing is written with the wrong key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyCheckError {
    /// The inner store holds only UTF-8 text ([`memory_core::Capabilities::binary_files`] is
    /// false), but envelopes are binary.
    #[error(
        "cannot encrypt {store}: it holds only UTF-8 text, and encrypted files are binary; \
         use encryption over a store that holds any bytes (a folder, SQLite, S3, in memory)"
    )]
    TextOnlyStore {
        /// The inner store (its `Display`).
        store: String,
    },
    /// The store is encrypted under a key that is not in the keyring.
    #[error(
        "the store is encrypted under key {found}, which is not in the keyring (keys given: {}): \
         use the key file the store was encrypted with, or add it as an old key while rotating",
        ids(keyring)
    )]
    WrongKey {
        /// The store's key.
        found: KeyId,
        /// The keys given.
        keyring: Vec<KeyId>,
    },
    /// The store holds files that are not encrypted and no key check record: it is a
    /// plaintext store.
    #[error(
        "the store is not encrypted: {example} and maybe other files are plaintext. To encrypt \
         it, adopt its files explicitly with a rekey that encrypts plaintext (`memory rekey \
         --encrypt-plaintext`); to use it as it is, open it without an encryption key"
    )]
    PlaintextStore {
        /// A plaintext file found.
        example: MemoryPath,
    },
    /// The key check record exists but cannot be trusted (changed, cut off, not an envelope).
    #[error(
        "the store's key check record ({KEY_CHECK_PATH}) is damaged: {source}; restore it from \
         a backup, or, if you are sure the key is right, delete that file from the store so \
         the next open writes it again"
    )]
    KeyCheckDamaged {
        /// What is wrong with it.
        #[source]
        source: EncryptionError,
    },
    /// The inner store failed while the key was checked.
    #[error("could not check the store's encryption key: {source}")]
    Storage {
        /// The inner store's error.
        #[source]
        source: Error,
    },
}

fn ids(keyring: &[KeyId]) -> String {
    keyring
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl From<Error> for KeyCheckError {
    fn from(source: Error) -> Self {
        KeyCheckError::Storage { source }
    }
}

/// What [`probe`] found in a store, without any key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncryptionState {
    /// No file at all: it may be used either way (the first use decides).
    Empty,
    /// Files, none of them an envelope as far as probed, and no key check record.
    Plaintext,
    /// An encrypted store: it has a key check record, or its files are envelopes (a store
    /// encrypted before key checks existed).
    Encrypted {
        /// The key the record (or the first file) names, when it could be read.
        key_id: Option<KeyId>,
    },
}

impl EncryptionState {
    /// Whether the store is encrypted (opening it without a key must be refused).
    pub fn is_encrypted(self) -> bool {
        matches!(self, EncryptionState::Encrypted { .. })
    }
}

impl fmt::Display for EncryptionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncryptionState::Empty => f.write_str("empty"),
            EncryptionState::Plaintext => f.write_str("not encrypted"),
            EncryptionState::Encrypted { key_id: Some(id) } => {
                write!(f, "encrypted under key {id}")
            }
            EncryptionState::Encrypted { key_id: None } => f.write_str("encrypted"),
        }
    }
}

/// Tells whether a store (opened without encryption) is encrypted, so that a program opening
/// it as plaintext can refuse instead of mixing plaintext into it:
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
/// use memory_encrypted::{Encrypted, EncryptionState, Key, Keyring, probe};
///
/// let inner = Arc::new(InMemoryStorage::new());
/// assert_eq!(probe(&*inner).await.unwrap(), EncryptionState::Empty);
/// let key = Key::generate().unwrap();
/// let store = Encrypted::open(inner.clone(), Keyring::new(key.clone())).await.unwrap();
/// let path = MemoryPath::parse("/memories/a.md").unwrap();
/// store.write(&path, b"secret".to_vec(), WriteMode::Create).await.unwrap();
/// assert_eq!(
///     probe(&*inner).await.unwrap(),
///     EncryptionState::Encrypted { key_id: Some(key.id()) }
/// );
/// # });
/// ```
///
/// Cost: one read (the key check record); only a store without one is listed, and its first
/// file read.
///
/// # Errors
/// Only the store's own errors.
pub async fn probe<S: Storage + ?Sized>(storage: &S) -> memory_core::Result<EncryptionState> {
    let record = key_check_path();
    match storage.read(&record).await {
        Ok(file) => {
            return Ok(EncryptionState::Encrypted {
                key_id: envelope::key_id(&record, &file.contents).ok(),
            });
        }
        Err(Error::NotFound { .. }) => {}
        Err(e) => return Err(e),
    }
    match first_file(storage).await? {
        None => Ok(EncryptionState::Empty),
        Some((_, Probe::Plaintext)) => Ok(EncryptionState::Plaintext),
        Some((_, Probe::Envelope(key_id))) => Ok(EncryptionState::Encrypted {
            key_id: Some(key_id),
        }),
        Some((_, Probe::Unreadable)) => Ok(EncryptionState::Encrypted { key_id: None }),
    }
}

/// What the first file of a store without a key check record is.
pub(crate) enum Probe {
    Plaintext,
    Envelope(KeyId),
    /// An envelope whose header cannot be read (cut off, unknown version).
    Unreadable,
}

/// The first file of the store (in path order) and what it is, or `None` for an empty store.
/// Files that vanish between the listing and the read are skipped.
pub(crate) async fn first_file<S: Storage + ?Sized>(
    storage: &S,
) -> memory_core::Result<Option<(MemoryPath, Probe)>> {
    let record = key_check_path();
    for meta in storage.list(&MemoryPath::root()).await? {
        if meta.path == record {
            continue;
        }
        let file = match storage.read(&meta.path).await {
            Ok(file) => file,
            Err(Error::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        let probe = match envelope::key_id(&meta.path, &file.contents) {
            Ok(id) => Probe::Envelope(id),
            Err(EncryptionError::NotEncrypted { .. }) => Probe::Plaintext,
            Err(_) => Probe::Unreadable,
        };
        return Ok(Some((meta.path, probe)));
    }
    Ok(None)
}

/// What [`check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checked {
    /// The store has a record, and it opens with the ring.
    Marked,
    /// The store has no record yet, and nothing in it contradicts the ring (it is empty, or
    /// its first file is an envelope under a key of the ring): the record is written before
    /// the first change.
    Unmarked,
}

/// Checks the key check record of `inner` against `keyring`. With `mark`, a store without a
/// record that passes gets one under the active key (done before the first change, never by a
/// read, so a read-only stack never writes).
pub(crate) async fn check<S: Storage + ?Sized>(
    inner: &S,
    keyring: &Keyring,
    mark: bool,
) -> Result<Checked, KeyCheckError> {
    let record = key_check_path();
    // Two rounds: a record created by someone else between our look and our create is read
    // and checked in the second.
    for _ in 0..2 {
        match inner.read(&record).await {
            Ok(file) => return verify(keyring, &record, file.contents).map(|()| Checked::Marked),
            Err(Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        match first_file(inner).await? {
            None => {}
            Some((example, Probe::Plaintext)) => {
                return Err(KeyCheckError::PlaintextStore { example });
            }
            Some((_, Probe::Envelope(found))) if !keyring.contains(found) => {
                return Err(KeyCheckError::WrongKey {
                    found,
                    keyring: keyring.key_ids(),
                });
            }
            // An envelope under a key of the ring (or one whose header is damaged, which the
            // file's own read reports): the store is encrypted and this ring can read it.
            Some(_) => {}
        }
        if !mark {
            return Ok(Checked::Unmarked);
        }
        let sealed = envelope::seal(keyring.active(), &record, MARKER.to_vec())
            .map_err(|e| KeyCheckError::Storage { source: e.into() })?;
        match inner.write(&record, sealed, WriteMode::Create).await {
            Ok(_) => {
                tracing::info!(store = %inner, key = %keyring.active_id(), "wrote the encryption key check");
                return Ok(Checked::Marked);
            }
            Err(Error::AlreadyExists { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(KeyCheckError::Storage {
        source: Error::Conflict { path: record },
    })
}

/// Opens the record: it must be an envelope for its path under a key of the ring, holding the
/// marker.
fn verify(keyring: &Keyring, record: &MemoryPath, stored: Vec<u8>) -> Result<(), KeyCheckError> {
    match envelope::open(keyring, record, stored) {
        Ok(plaintext) if plaintext == MARKER => Ok(()),
        Ok(_) => Err(KeyCheckError::KeyCheckDamaged {
            source: EncryptionError::Tampered {
                path: record.clone(),
                part: crate::EnvelopePart::Body,
            },
        }),
        Err(EncryptionError::WrongKey { key_id, .. }) => Err(KeyCheckError::WrongKey {
            found: key_id,
            keyring: keyring.key_ids(),
        }),
        Err(source) => Err(KeyCheckError::KeyCheckDamaged { source }),
    }
}

/// Seals the record under the ring's active key and writes it (after a complete rekey, so the
/// old key can be retired; or to mark a store just adopted).
pub(crate) async fn write_record<S: Storage + ?Sized>(
    inner: &S,
    keyring: &Keyring,
    mode: WriteMode,
) -> memory_core::Result<()> {
    let record = key_check_path();
    let sealed = envelope::seal(keyring.active(), &record, MARKER.to_vec())?;
    match inner.write(&record, sealed, mode).await {
        Ok(_) | Err(Error::AlreadyExists { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_path_is_valid_and_hidden() {
        let path = MemoryPath::parse(KEY_CHECK_PATH).unwrap();
        assert_eq!(key_check_path(), path);
        assert!(path.name().unwrap().starts_with('.'));
        assert_eq!(path.parent(), Some(MemoryPath::root()));
        assert!(is_reserved(&path));
        assert!(is_reserved(
            &MemoryPath::parse(&format!("{KEY_CHECK_PATH}/x")).unwrap()
        ));
        assert!(!is_reserved(
            &MemoryPath::parse(&format!("{KEY_CHECK_PATH}x")).unwrap()
        ));
    }
}
