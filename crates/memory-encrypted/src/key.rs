//! Keys, key ids, the [`Keyring`] and key files.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use aes_gcm::{Aes256Gcm, KeyInit};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// Length of a key in bytes (AES-256).
pub const KEY_LEN: usize = 32;

/// Length of a [`KeyId`] in bytes.
pub const KEY_ID_LEN: usize = 8;

/// Domain separation for key ids, so the id can never equal any other hash of the key.
const KEY_ID_LABEL: &[u8] = b"memory-encrypted/v1 key id\0";

/// The longest key file read: 64 hex characters plus generous whitespace. Anything longer is
/// not a key file, and is not read into memory whole.
const MAX_KEY_FILE_BYTES: u64 = 1024;

/// Why a key could not be made, read or written.
///
/// None of these messages ever contain key material, not even part of a malformed key file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key file could not be opened or read.
    #[error("cannot read key file {}: {source}", path.display())]
    Read {
        /// The key file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
    /// The key file can be read or changed by users other than its owner (unix only).
    #[error(
        "key file {} is accessible by other users (mode {mode:04o}); restrict it with `chmod 600 {}`",
        path.display(),
        path.display()
    )]
    Permissions {
        /// The key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A key given as text is not 64 hexadecimal characters.
    #[error("not a key: {reason}")]
    Malformed {
        /// What is wrong with it (never the text itself).
        reason: &'static str,
    },
    /// A key file does not hold 64 hexadecimal characters.
    #[error("key file {} does not hold a key: {reason}", path.display())]
    MalformedFile {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it (never the text itself).
        reason: &'static str,
    },
    /// A new key file was not written because something is already at the path (a key is never
    /// overwritten).
    #[error("{} already exists; refusing to overwrite a key file", path.display())]
    Exists {
        /// The path given.
        path: PathBuf,
    },
    /// A new key file could not be written.
    #[error("cannot write key file {}: {source}", path.display())]
    Write {
        /// The key file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
    /// The system random number generator failed.
    #[error("the system random number generator failed: {reason}")]
    Random {
        /// What it said.
        reason: String,
    },
}

/// A short public name for a key: the first 8 bytes of SHA-256 over a label and the key.
///
/// It is written into every envelope so that a reader picks the right key from its
/// [`Keyring`], and it is safe to print and log (it reveals nothing usable about the key).
/// `Display` is 16 lower-case hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId([u8; KEY_ID_LEN]);

impl KeyId {
    /// The id's bytes, as stored in an envelope.
    pub fn as_bytes(&self) -> &[u8; KEY_ID_LEN] {
        &self.0
    }

    /// Wraps the bytes of an id read from an envelope.
    pub fn from_bytes(bytes: [u8; KEY_ID_LEN]) -> Self {
        KeyId(bytes)
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyId({self})")
    }
}

/// A 256-bit key-encryption key.
///
/// The bytes are zeroized when the key is dropped, and neither `Debug` nor any error ever
/// shows them: `Debug` prints only the [`KeyId`].
///
/// ```
/// use memory_encrypted::Key;
///
/// let key = Key::from_hex(&"0f".repeat(32)).unwrap();
/// assert!(!format!("{key:?}").contains("0f0f"));
/// assert!(Key::from_hex("not a key").is_err());
/// ```
#[derive(Clone)]
pub struct Key {
    bytes: Zeroizing<[u8; KEY_LEN]>,
    id: KeyId,
}

impl Key {
    /// A key from its 32 bytes. Zeroize your own copy once the key is made.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        let bytes = Zeroizing::new(bytes);
        let mut hasher = Sha256::new();
        hasher.update(KEY_ID_LABEL);
        hasher.update(bytes.as_slice());
        let digest = hasher.finalize();
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        Key {
            bytes,
            id: KeyId(id),
        }
    }

    /// A new random key from the operating system's generator.
    pub fn generate() -> Result<Self, KeyError> {
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        fill_random(&mut *bytes).map_err(|reason| KeyError::Random { reason })?;
        Ok(Key::from_bytes(*bytes))
    }

    /// A key from 64 hexadecimal characters (either case); surrounding whitespace is ignored.
    pub fn from_hex(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        if text.len() != 2 * KEY_LEN {
            return Err(KeyError::Malformed {
                reason: "expected exactly 64 hexadecimal characters",
            });
        }
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        hex::decode_to_slice(text, &mut *bytes).map_err(|_| KeyError::Malformed {
            reason: "expected only hexadecimal characters (0-9, a-f)",
        })?;
        Ok(Key::from_bytes(*bytes))
    }

    /// Reads a key file: 64 hexadecimal characters, optionally followed by a newline.
    ///
    /// On unix the file is refused ([`KeyError::Permissions`]) when its group or other users
    /// have any permission on it (mode `& 0o077 != 0`), as ssh does with private keys; make it
    /// `0600`. The check is made on the opened file, not on the path. On other platforms
    /// (Windows) there are no mode bits and nothing is checked: the file's access is the
    /// platform's (its ACL). This is blocking I/O: call it at start-up or inside
    /// `spawn_blocking`.
    pub fn from_hex_file(path: impl AsRef<Path>) -> Result<Self, KeyError> {
        let path = path.as_ref();
        let read_err = |source| KeyError::Read {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(read_err)?;
        let meta = file.metadata().map_err(read_err)?;
        if !meta.is_file() {
            return Err(KeyError::MalformedFile {
                path: path.to_path_buf(),
                reason: "not a regular file",
            });
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o7777;
            if mode & 0o077 != 0 {
                return Err(KeyError::Permissions {
                    path: path.to_path_buf(),
                    mode,
                });
            }
        }
        let mut text = Zeroizing::new(String::new());
        file.take(MAX_KEY_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|source| match source.kind() {
                io::ErrorKind::InvalidData => KeyError::MalformedFile {
                    path: path.to_path_buf(),
                    reason: "not text",
                },
                _ => read_err(source),
            })?;
        if text.len() as u64 > MAX_KEY_FILE_BYTES {
            return Err(KeyError::MalformedFile {
                path: path.to_path_buf(),
                reason: "far too long for a key file",
            });
        }
        Key::from_hex(&text).map_err(|e| match e {
            KeyError::Malformed { reason } => KeyError::MalformedFile {
                path: path.to_path_buf(),
                reason,
            },
            other => other,
        })
    }

    /// Writes this key to a new key file (64 lower-case hex digits and a newline), created with
    /// mode `0600` on unix whatever the umask (on Windows with the platform's default
    /// permissions, those inherited from its folder), and synced to disk. Refuses to overwrite
    /// anything already at `path` ([`KeyError::Exists`]). Blocking I/O.
    pub fn write_new_file(&self, path: impl AsRef<Path>) -> Result<(), KeyError> {
        let path = path.as_ref();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path).map_err(|source| {
            if source.kind() == io::ErrorKind::AlreadyExists {
                KeyError::Exists {
                    path: path.to_path_buf(),
                }
            } else {
                KeyError::Write {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
        let mut text = Zeroizing::new(hex::encode(*self.bytes));
        text.push('\n');
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| file.sync_all());
        if let Err(source) = written {
            drop(file);
            // Do not leave a half-written key file that a later run would reject or, worse,
            // that looks like a key.
            let _ = std::fs::remove_file(path);
            return Err(KeyError::Write {
                path: path.to_path_buf(),
                source,
            });
        }
        Ok(())
    }

    /// This key's public id.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// The AES-256-GCM cipher under this key (its key schedule is zeroized on drop too).
    pub(crate) fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new((&*self.bytes).into())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}, <redacted>)", self.id)
    }
}

/// Generates a key and writes it to a new key file with mode `0600` (on Windows the platform's
/// default permissions; see [`Key::write_new_file`]): what `memory keygen FILE` does. Returns
/// the key, so the caller can print its [`KeyId`]. Refuses to overwrite an existing file.
/// Blocking I/O.
pub fn generate_key_file(path: impl AsRef<Path>) -> Result<Key, KeyError> {
    let key = Key::generate()?;
    key.write_new_file(path)?;
    Ok(key)
}

/// The keys an [`Encrypted`](crate::Encrypted) store uses: one active key that every write is
/// encrypted under, and older keys that are only used to read files written before a rotation.
///
/// An envelope names its key by [`KeyId`], so a file under any key of the ring can be read.
/// Rotate without downtime: make the new key active, keep the old one as a decryption key, run
/// [`Encrypted::rekey`](crate::Encrypted::rekey), then drop the old key.
///
/// `Debug` shows key ids only.
///
/// ```
/// use memory_encrypted::{Key, Keyring};
///
/// let old = Key::generate().unwrap();
/// let new = Key::generate().unwrap();
/// let ring = Keyring::new(new.clone()).with_decryption_key(old.clone());
/// assert_eq!(ring.active_id(), new.id());
/// assert!(ring.contains(old.id()));
/// ```
#[derive(Clone)]
pub struct Keyring {
    active: Key,
    older: Vec<Key>,
}

impl Keyring {
    /// A keyring with one key, used for writing and reading.
    pub fn new(active: Key) -> Self {
        Keyring {
            active,
            older: Vec::new(),
        }
    }

    /// Adds a key used only to read older files (builder style).
    pub fn with_decryption_key(mut self, key: Key) -> Self {
        self.add_decryption_key(key);
        self
    }

    /// Adds a key used only to read older files. A key already in the ring is not added twice.
    pub fn add_decryption_key(&mut self, key: Key) {
        if !self.contains(key.id()) {
            self.older.push(key);
        }
    }

    /// Reads the active key and any older keys from key files (see [`Key::from_hex_file`]).
    /// Blocking I/O.
    pub fn from_key_files(
        active: impl AsRef<Path>,
        older: impl IntoIterator<Item = impl AsRef<Path>>,
    ) -> Result<Self, KeyError> {
        let mut ring = Keyring::new(Key::from_hex_file(active)?);
        for path in older {
            ring.add_decryption_key(Key::from_hex_file(path)?);
        }
        Ok(ring)
    }

    /// The id of the key new writes are encrypted under.
    pub fn active_id(&self) -> KeyId {
        self.active.id()
    }

    /// Ids of every key in the ring, the active one first.
    pub fn key_ids(&self) -> Vec<KeyId> {
        std::iter::once(&self.active)
            .chain(&self.older)
            .map(Key::id)
            .collect()
    }

    /// Whether the ring can read files written under `id`.
    pub fn contains(&self, id: KeyId) -> bool {
        self.get(id).is_some()
    }

    pub(crate) fn active(&self) -> &Key {
        &self.active
    }

    pub(crate) fn get(&self, id: KeyId) -> Option<&Key> {
        std::iter::once(&self.active)
            .chain(&self.older)
            .find(|k| k.id() == id)
    }
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let older: Vec<KeyId> = self.older.iter().map(Key::id).collect();
        f.debug_struct("Keyring")
            .field("active", &self.active.id())
            .field("decryption_only", &older)
            .finish()
    }
}

/// Fills `buf` from the operating system's generator.
pub(crate) fn fill_random(buf: &mut [u8]) -> Result<(), String> {
    getrandom::fill(buf).map_err(|e| e.to_string())
}
