//! The envelope format: sealing and opening one file's content (layout in the README).

use std::fmt;

use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes256Gcm, KeyInit, Nonce, Tag};
use memory_core::MemoryPath;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::key::{KEY_ID_LEN, KEY_LEN, Key, KeyId, Keyring, fill_random};

/// The first bytes of every envelope. `0x89` cannot start a UTF-8 text, so no text file a
/// model wrote before encryption was turned on can be mistaken for an envelope.
pub const MAGIC: [u8; 4] = [0x89, b'M', b'E', b'M'];

/// The envelope format version this crate writes (and the only one it reads).
pub const FORMAT_VERSION: u8 = 1;

/// Bytes an envelope adds to its plaintext: plaintext size = stored size − `OVERHEAD`.
pub const OVERHEAD: u64 = (BODY_AT + TAG_LEN) as u64;

const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;
const PATH_TAG_LEN: usize = 8;

const VERSION_AT: usize = MAGIC.len(); // 4
const KEY_ID_AT: usize = VERSION_AT + 1; // 5
const PATH_TAG_AT: usize = KEY_ID_AT + KEY_ID_LEN; // 13
const LENGTH_AT: usize = PATH_TAG_AT + PATH_TAG_LEN; // 21
const WRAP_NONCE_AT: usize = LENGTH_AT + 8; // 29
const WRAPPED_KEY_AT: usize = WRAP_NONCE_AT + NONCE_LEN; // 41
const WRAP_TAG_AT: usize = WRAPPED_KEY_AT + KEY_LEN; // 73
const CONTENT_NONCE_AT: usize = WRAP_TAG_AT + TAG_LEN; // 89
const BODY_AT: usize = CONTENT_NONCE_AT + NONCE_LEN; // 101

const PATH_TAG_LABEL: &[u8] = b"memory-encrypted/v1 path\0";

/// Which part of an envelope failed authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopePart {
    /// The header or the wrapped data key (bytes 0..89): the data key did not unwrap.
    Header,
    /// The content (bytes 89..): its nonce, the ciphertext or its tag, or bytes appended
    /// after the tag.
    Body,
}

impl fmt::Display for EnvelopePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EnvelopePart::Header => "header",
            EnvelopePart::Body => "body",
        })
    }
}

/// Why a file could not be encrypted or decrypted.
///
/// The wrapper returns it to the application inside
/// `memory_core::Error::Backend { backend: "encrypted", source, .. }`, so it can be told apart
/// with `downcast_ref::<EncryptionError>()` on the source. The model never sees it: the memory
/// tool renders a `Backend` error as the contract's generic error. In every case no plaintext
/// is returned: a file that fails to authenticate is never partly decrypted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncryptionError {
    /// The stored bytes do not start with the envelope magic: most likely a plaintext file
    /// written before encryption was turned on (or by something writing past the wrapper).
    /// [`RekeyOptions::encrypt_plaintext`](crate::RekeyOptions::encrypt_plaintext) adopts
    /// such files.
    #[error(
        "{path} is not encrypted (no envelope header): a plaintext file from before encryption was turned on?"
    )]
    NotEncrypted {
        /// The file read.
        path: MemoryPath,
    },
    /// The file was encrypted under a key this keyring does not hold: the wrong key file, or a
    /// rotated-out key that is still needed.
    #[error("{path} was encrypted under key {key_id}, which is not in the keyring (wrong key?)")]
    WrongKey {
        /// The file read.
        path: MemoryPath,
        /// The key the envelope names.
        key_id: KeyId,
    },
    /// The file is shorter than its envelope says: it was cut off (a partial copy, a full
    /// disk, a torn write outside the wrapper).
    #[error("{path} is truncated: {actual} bytes stored, at least {expected} expected")]
    Truncated {
        /// The file read.
        path: MemoryPath,
        /// Bytes stored.
        actual: u64,
        /// Bytes the envelope needs (the whole header if the header itself is cut, else the
        /// header's declared length plus the overhead).
        expected: u64,
    },
    /// Authentication failed: some bytes were changed (tampering or corruption).
    #[error("{path} failed authentication in its {part}: the file was tampered with or corrupted")]
    Tampered {
        /// The file read.
        path: MemoryPath,
        /// Where authentication failed.
        part: EnvelopePart,
    },
    /// The envelope is authentic but was sealed for another path: a ciphertext copied or moved
    /// to this path outside the wrapper.
    #[error(
        "{path} holds a ciphertext sealed for another path (copied or moved outside the wrapper)"
    )]
    WrongPath {
        /// The path it was found at.
        path: MemoryPath,
    },
    /// The envelope has a format version this build does not know.
    #[error("{path} uses envelope format version {version}; this build reads version 1")]
    UnsupportedVersion {
        /// The file read.
        path: MemoryPath,
        /// The version byte found.
        version: u8,
    },
    /// The plaintext is beyond what AES-GCM can encrypt in one message (64 GiB).
    #[error("cannot encrypt {path}: {len} bytes is beyond the AES-GCM message limit")]
    TooLarge {
        /// The file written.
        path: MemoryPath,
        /// Its plaintext length.
        len: u64,
    },
    /// The operating system's random number generator failed, so nothing was written.
    #[error("the system random number generator failed: {reason}")]
    Random {
        /// What it said.
        reason: String,
    },
}

impl From<EncryptionError> for memory_core::Error {
    fn from(e: EncryptionError) -> Self {
        memory_core::Error::backend(crate::BACKEND, e)
    }
}

/// Plaintext size of a stored file of `stored` bytes. Files too short to be envelopes (which
/// cannot be read anyway) count as 0.
pub(crate) fn plaintext_size(stored: u64) -> u64 {
    stored.saturating_sub(OVERHEAD)
}

fn path_tag(path: &MemoryPath) -> [u8; PATH_TAG_LEN] {
    let mut hasher = Sha256::new();
    hasher.update(PATH_TAG_LABEL);
    hasher.update(path.as_str().as_bytes());
    let digest = hasher.finalize();
    let mut tag = [0u8; PATH_TAG_LEN];
    tag.copy_from_slice(&digest[..PATH_TAG_LEN]);
    tag
}

/// Associated data of the content: the whole header, then the path.
fn content_aad(header: &[u8], path: &MemoryPath) -> Vec<u8> {
    let mut aad = Vec::with_capacity(header.len() + path.as_str().len());
    aad.extend_from_slice(header);
    aad.extend_from_slice(path.as_str().as_bytes());
    aad
}

/// Encrypts `plaintext` for `path` under `key`.
pub(crate) fn seal(
    key: &Key,
    path: &MemoryPath,
    mut plaintext: Vec<u8>,
) -> Result<Vec<u8>, EncryptionError> {
    let len = plaintext.len() as u64;
    // One draw for the data key and both nonces.
    let mut random = Zeroizing::new([0u8; KEY_LEN + 2 * NONCE_LEN]);
    fill_random(&mut *random).map_err(|reason| EncryptionError::Random { reason })?;
    let (data_key, nonces) = random.split_at(KEY_LEN);
    let (wrap_nonce, content_nonce) = nonces.split_at(NONCE_LEN);

    let mut out = Vec::with_capacity(plaintext.len() + OVERHEAD as usize);
    out.extend_from_slice(&MAGIC);
    out.push(FORMAT_VERSION);
    out.extend_from_slice(key.id().as_bytes());
    out.extend_from_slice(&path_tag(path));
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(wrap_nonce);
    debug_assert_eq!(out.len(), WRAPPED_KEY_AT);

    // Wrap the data key under the key-encryption key; the header so far is authenticated.
    let mut wrapped = Zeroizing::new([0u8; KEY_LEN]);
    wrapped.copy_from_slice(data_key);
    let wrap_tag = key
        .cipher()
        .encrypt_in_place_detached(Nonce::from_slice(wrap_nonce), &out, &mut *wrapped)
        .map_err(|_| EncryptionError::TooLarge {
            path: path.clone(),
            len,
        })?;
    out.extend_from_slice(&*wrapped);
    out.extend_from_slice(&wrap_tag);
    out.extend_from_slice(content_nonce);
    debug_assert_eq!(out.len(), BODY_AT);

    // Encrypt the content under the data key, binding the header and the path.
    let aad = content_aad(&out, path);
    let content_cipher = Aes256Gcm::new(aes_gcm::Key::<Aes256Gcm>::from_slice(data_key));
    let tag = content_cipher
        .encrypt_in_place_detached(Nonce::from_slice(content_nonce), &aad, &mut plaintext)
        .map_err(|_| EncryptionError::TooLarge {
            path: path.clone(),
            len,
        })?;
    out.extend_from_slice(&plaintext);
    out.extend_from_slice(&tag);
    Ok(out)
}

/// Whether `stored` names `path` in its path tag. Only a routing hint: the tag is
/// authenticated when [`open`] unwraps the header, so an envelope that claims a path it was
/// not sealed for still fails there.
pub(crate) fn names_path(path: &MemoryPath, stored: &[u8]) -> bool {
    stored
        .get(PATH_TAG_AT..LENGTH_AT)
        .is_some_and(|tag| tag == path_tag(path))
}

/// The key id an envelope names, checking only the magic, the version and the length of the
/// fixed header (no key needed, nothing authenticated yet).
pub(crate) fn key_id(path: &MemoryPath, stored: &[u8]) -> Result<KeyId, EncryptionError> {
    check_prefix(path, stored)?;
    let mut id = [0u8; KEY_ID_LEN];
    id.copy_from_slice(&stored[KEY_ID_AT..KEY_ID_AT + KEY_ID_LEN]);
    Ok(KeyId::from_bytes(id))
}

/// Magic, version and a whole fixed header.
fn check_prefix(path: &MemoryPath, stored: &[u8]) -> Result<(), EncryptionError> {
    if !stored.starts_with(&MAGIC) {
        // A few bytes that are the start of the magic are a cut-off envelope; anything else
        // (including an empty file) was never one.
        return Err(if !stored.is_empty() && MAGIC.starts_with(stored) {
            EncryptionError::Truncated {
                path: path.clone(),
                actual: stored.len() as u64,
                expected: OVERHEAD,
            }
        } else {
            EncryptionError::NotEncrypted { path: path.clone() }
        });
    }
    if let Some(&version) = stored.get(VERSION_AT)
        && version != FORMAT_VERSION
    {
        return Err(EncryptionError::UnsupportedVersion {
            path: path.clone(),
            version,
        });
    }
    if stored.len() < BODY_AT {
        return Err(EncryptionError::Truncated {
            path: path.clone(),
            actual: stored.len() as u64,
            expected: OVERHEAD,
        });
    }
    Ok(())
}

/// Decrypts an envelope read at `path`, returning the plaintext only if every byte is
/// authentic and was sealed for this path.
pub(crate) fn open(
    keyring: &Keyring,
    path: &MemoryPath,
    mut stored: Vec<u8>,
) -> Result<Vec<u8>, EncryptionError> {
    let key_id = key_id(path, &stored)?;
    let key = keyring
        .get(key_id)
        .ok_or_else(|| EncryptionError::WrongKey {
            path: path.clone(),
            key_id,
        })?;
    let tampered = |part| EncryptionError::Tampered {
        path: path.clone(),
        part,
    };

    // Unwrap the data key; this authenticates the header (key id, path tag, length).
    let mut data_key = Zeroizing::new([0u8; KEY_LEN]);
    data_key.copy_from_slice(&stored[WRAPPED_KEY_AT..WRAP_TAG_AT]);
    key.cipher()
        .decrypt_in_place_detached(
            Nonce::from_slice(&stored[WRAP_NONCE_AT..WRAPPED_KEY_AT]),
            &stored[..WRAPPED_KEY_AT],
            &mut *data_key,
            Tag::from_slice(&stored[WRAP_TAG_AT..CONTENT_NONCE_AT]),
        )
        .map_err(|_| tampered(EnvelopePart::Header))?;

    // The header is authentic from here on.
    let mut length = [0u8; 8];
    length.copy_from_slice(&stored[LENGTH_AT..WRAP_NONCE_AT]);
    let length = u64::from_be_bytes(length);
    let actual = stored.len() as u64;
    let expected = length
        .checked_add(OVERHEAD)
        .ok_or_else(|| tampered(EnvelopePart::Header))?;
    if actual < expected {
        return Err(EncryptionError::Truncated {
            path: path.clone(),
            actual,
            expected,
        });
    }
    if actual > expected {
        return Err(tampered(EnvelopePart::Body));
    }
    if stored[PATH_TAG_AT..LENGTH_AT] != path_tag(path) {
        return Err(EncryptionError::WrongPath { path: path.clone() });
    }

    let aad = content_aad(&stored[..BODY_AT], path);
    let body_end = stored.len() - TAG_LEN;
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&stored[CONTENT_NONCE_AT..BODY_AT]);
    let (rest, tag) = stored.split_at_mut(body_end);
    let tag = *Tag::from_slice(tag);
    Aes256Gcm::new((&*data_key).into())
        .decrypt_in_place_detached(Nonce::from_slice(&nonce), &aad, &mut rest[BODY_AT..], &tag)
        .map_err(|_| tampered(EnvelopePart::Body))?;
    stored.truncate(body_end);
    stored.drain(..BODY_AT);
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> MemoryPath {
        MemoryPath::parse(p).unwrap()
    }

    #[test]
    fn layout_constants_match_the_readme() {
        assert_eq!(
            (KEY_ID_AT, PATH_TAG_AT, LENGTH_AT, WRAP_NONCE_AT),
            (5, 13, 21, 29)
        );
        assert_eq!(
            (WRAPPED_KEY_AT, WRAP_TAG_AT, CONTENT_NONCE_AT, BODY_AT),
            (41, 73, 89, 101)
        );
        assert_eq!(OVERHEAD, 117);
    }

    #[test]
    fn roundtrip_and_fresh_randomness() {
        let key = Key::generate().unwrap();
        let ring = Keyring::new(key.clone());
        let p = path("/memories/a.md");
        let a = seal(&key, &p, b"hello".to_vec()).unwrap();
        let b = seal(&key, &p, b"hello".to_vec()).unwrap();
        assert_ne!(a, b, "same plaintext must not give the same envelope");
        assert_eq!(a.len() as u64, 5 + OVERHEAD);
        assert_eq!(open(&ring, &p, a).unwrap(), b"hello");
        let empty = seal(&key, &p, Vec::new()).unwrap();
        assert_eq!(empty.len() as u64, OVERHEAD);
        assert_eq!(open(&ring, &p, empty).unwrap(), b"");
    }

    #[test]
    fn short_prefixes_are_truncated_or_plaintext() {
        let ring = Keyring::new(Key::generate().unwrap());
        let p = path("/memories/a.md");
        assert!(matches!(
            open(&ring, &p, Vec::new()),
            Err(EncryptionError::NotEncrypted { .. })
        ));
        assert!(matches!(
            open(&ring, &p, MAGIC[..2].to_vec()),
            Err(EncryptionError::Truncated { .. })
        ));
        assert!(matches!(
            open(&ring, &p, vec![0x89, b'M', b'E', b'M', 1]),
            Err(EncryptionError::Truncated { .. })
        ));
        assert!(matches!(
            open(&ring, &p, vec![0x89, b'M', b'E', b'M', 7, 0, 0]),
            Err(EncryptionError::UnsupportedVersion { version: 7, .. })
        ));
    }
}
