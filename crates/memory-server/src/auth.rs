//! [`ApiKeys`]: the key file of `memory serve --api-keys FILE`.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use sha2::{Digest, Sha256};

/// The API keys a server accepts, each mapped to its `apikey_…` id (recorded as the
/// `api_actor` of every write made with it). Only SHA-256 digests of the secrets are kept.
///
/// The file format: one key per line, `<apikey_id> <secret>` separated by whitespace; blank
/// lines and lines starting with `#` are ignored.
///
/// ```
/// use memory_server::ApiKeys;
///
/// let keys = ApiKeys::parse("# ops\napikey_01ops sk-local-1\n").unwrap();
/// assert_eq!(keys.lookup("sk-local-1"), Some("apikey_01ops"));
/// assert_eq!(keys.lookup("sk-other"), None);
/// assert!(ApiKeys::parse("no-id-here").is_err());
/// ```
#[derive(Clone, Default)]
pub struct ApiKeys {
    by_digest: HashMap<[u8; 32], String>,
}

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKeys")
            .field("ids", &self.by_digest.values().collect::<Vec<_>>())
            .finish()
    }
}

/// A key file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiKeysError {
    /// The file could not be read.
    #[error("cannot read the API key file: {0}")]
    Read(#[from] std::io::Error),
    /// A line is not `<apikey_id> <secret>`.
    #[error("line {line} of the API key file is not `apikey_<id> <secret>`")]
    Line {
        /// 1-based line number (the secret is never shown).
        line: usize,
    },
    /// No key at all.
    #[error("the API key file holds no key")]
    Empty,
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

impl ApiKeys {
    /// Parses the key file format.
    pub fn parse(text: &str) -> Result<Self, ApiKeysError> {
        let mut by_digest = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(id), Some(secret), None)
                    if id.len() > "apikey_".len()
                        && id.starts_with("apikey_")
                        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
                {
                    by_digest.insert(digest(secret), id.to_owned());
                }
                _ => return Err(ApiKeysError::Line { line: i + 1 }),
            }
        }
        if by_digest.is_empty() {
            return Err(ApiKeysError::Empty);
        }
        Ok(ApiKeys { by_digest })
    }

    /// Reads and parses a key file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ApiKeysError> {
        Self::parse(&std::fs::read_to_string(path)?)
    }

    /// The id of `secret`, if it is a known key.
    pub fn lookup(&self, secret: &str) -> Option<&str> {
        self.by_digest.get(&digest(secret)).map(String::as_str)
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.by_digest.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }
}
