//! [`MountSpec`]: the `NAME=URL[:ro]` of `--mount`, and session ids.

use std::fmt;
use std::str::FromStr;

use crate::Access;

/// One `--mount NAME=URL[:ro]` option: the mount's name (its slug comes from it), the store
/// URL as written (parsed by the one store-URL parser, memory-runner's `StoreUrl`, not here),
/// and the access: a final `:ro` makes the mount read-only, a final `:rw` (or nothing) leaves
/// it read-write.
///
/// ```
/// use memory_mounts::{Access, MountSpec};
///
/// let spec: MountSpec = "Team Handbook=store+sqlite:./stores.db#memstore_01abc:ro".parse().unwrap();
/// assert_eq!(spec.name, "Team Handbook");
/// assert_eq!(spec.url, "store+sqlite:./stores.db#memstore_01abc");
/// assert_eq!(spec.access, Access::ReadOnly);
///
/// let spec: MountSpec = "notes=./notes".parse().unwrap();
/// assert_eq!((spec.url.as_str(), spec.access), ("./notes", Access::ReadWrite));
/// assert!("=./notes".parse::<MountSpec>().is_err());
/// assert!("notes".parse::<MountSpec>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountSpec {
    /// The mount's name, shown to the model; the slug is derived from it.
    pub name: String,
    /// The store URL.
    pub url: String,
    /// Read-only (`:ro`) or read-write.
    pub access: Access,
}

/// Why a `--mount` value is not `NAME=URL[:ro]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MountSpecError {
    /// No `=`.
    #[error(
        "a mount is NAME=URL[:ro], e.g. notes=./notes or handbook=store+sqlite:stores.db#memstore_...:ro"
    )]
    Shape,
    /// An empty name, one over 255 characters, or one with control characters.
    #[error("a mount name is 1 to 255 characters without control characters")]
    Name,
    /// Nothing after `=` (or only `:ro`).
    #[error("the mount `{0}` has no store URL after `=`")]
    Url(String),
}

impl FromStr for MountSpec {
    type Err = MountSpecError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let (name, rest) = raw.split_once('=').ok_or(MountSpecError::Shape)?;
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 255 || name.chars().any(char::is_control) {
            return Err(MountSpecError::Name);
        }
        let (url, access) = if let Some(url) = rest.strip_suffix(":ro") {
            (url, Access::ReadOnly)
        } else if let Some(url) = rest.strip_suffix(":rw") {
            (url, Access::ReadWrite)
        } else {
            (rest, Access::ReadWrite)
        };
        if url.is_empty() {
            return Err(MountSpecError::Url(name.to_owned()));
        }
        Ok(MountSpec {
            name: name.to_owned(),
            url: url.to_owned(),
            access,
        })
    }
}

impl fmt::Display for MountSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ro = match self.access {
            Access::ReadOnly => ":ro",
            Access::ReadWrite => "",
        };
        write!(f, "{}={}{ro}", self.name, self.url)
    }
}

/// A new session id for the `session_actor` of a run's writes: `sesn_` and 24 random
/// characters of `[0-9A-Za-z]`, the shape of the hosted ids.
///
/// ```
/// let id = memory_mounts::new_session_id();
/// assert!(id.starts_with("sesn_") && id.len() == 29);
/// assert_ne!(id, memory_mounts::new_session_id());
/// ```
pub fn new_session_id() -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut bytes = [0u8; 24];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: still unique enough per process and time for attribution.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (nanos >> ((i % 16) * 8)) as u8 ^ (std::process::id() as u8).wrapping_add(i as u8);
        }
    }
    let tail: String = bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    format!("sesn_{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        let s: MountSpec = "a=store+http://127.0.0.1:8080#memstore_x:rw"
            .parse()
            .unwrap();
        assert_eq!(s.url, "store+http://127.0.0.1:8080#memstore_x");
        assert_eq!(s.access, Access::ReadWrite);
        assert_eq!(s.to_string(), "a=store+http://127.0.0.1:8080#memstore_x");
        let s: MountSpec = "x=y=z:ro".parse().unwrap();
        assert_eq!((s.name.as_str(), s.url.as_str()), ("x", "y=z"));
        assert_eq!(s.to_string(), "x=y=z:ro");
        assert_eq!(
            "a=:ro".parse::<MountSpec>(),
            Err(MountSpecError::Url("a".into()))
        );
        assert_eq!("\u{7}=x".parse::<MountSpec>(), Err(MountSpecError::Name));
        assert_eq!("nothing".parse::<MountSpec>(), Err(MountSpecError::Shape));
    }
}
