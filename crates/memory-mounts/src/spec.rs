//! [`MountSpec`]: the `NAME=URL[:ro]` of `--mount`, and session ids.

use std::fmt;
use std::str::FromStr;

use crate::Access;

/// One `--mount [NAME=]URL[:ro]` option: the store URL as written (parsed by the one
/// store-URL parser, memory-runner's `StoreUrl`, not here), an optional folder name, and the
/// access: a final `:ro` makes the mount read-only, a final `:rw` (or nothing) leaves it
/// read-write.
///
/// Without `NAME=`, a memory store's folder is the slug of its display name (as the hosted
/// product mounts it); `NAME=` overrides the folder. NAME is the text before the first `=`,
/// whatever it holds (`a/b`, `???`, `Team: Handbook`), unless the URL's scheme comes before
/// that `=`: when the text before it starts with a scheme (`store+sqlite:`, `s3:`, a word of
/// two or more letters then `:`) and the text after it does not, the `=` is in the URL's
/// options and there is no name (so `store+sqlite:db?sync=full#id` is a URL, and
/// `Team:Handbook=store+sqlite:db#id` is named `Team:Handbook`). A name whose slug is empty
/// (`???`) gives the folder of the store's id, as a display name does.
///
/// ```
/// use memory_mounts::{Access, MountSpec};
///
/// let spec: MountSpec = "Team Handbook=store+sqlite:./stores.db#memstore_01abc:ro".parse().unwrap();
/// assert_eq!(spec.name.as_deref(), Some("Team Handbook"));
/// assert_eq!(spec.url, "store+sqlite:./stores.db#memstore_01abc");
/// assert_eq!(spec.access, Access::ReadOnly);
///
/// let spec: MountSpec = "store+http://127.0.0.1:8080#memstore_01abc".parse().unwrap();
/// assert_eq!((spec.name, spec.access), (None, Access::ReadWrite));
///
/// let spec: MountSpec = "notes=./notes".parse().unwrap();
/// assert_eq!((spec.url.as_str(), spec.access), ("./notes", Access::ReadWrite));
///
/// let spec: MountSpec = "team/handbook=store+sqlite:db?sync=full#memstore_01abc".parse().unwrap();
/// assert_eq!(spec.name.as_deref(), Some("team/handbook"));
/// assert_eq!(spec.url, "store+sqlite:db?sync=full#memstore_01abc");
/// let spec: MountSpec = "store+sqlite:db?sync=full#memstore_01abc".parse().unwrap();
/// assert_eq!(spec.name, None);
/// assert!("=./notes".parse::<MountSpec>().is_err());
/// assert!(":ro".parse::<MountSpec>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountSpec {
    /// The folder name given with `NAME=` (the slug is derived from it), if any.
    pub name: Option<String>,
    /// The store URL.
    pub url: String,
    /// Read-only (`:ro`) or read-write.
    pub access: Access,
}

impl MountSpec {
    /// What to call this mount in messages: its name, else its URL.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.url)
    }
}

/// Why a `--mount` value is not `[NAME=]URL[:ro]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MountSpecError {
    /// An empty name, one over 255 characters, or one with control characters (the name as
    /// given).
    #[error("a mount name is 1 to 255 characters without control characters, not {0:?}")]
    Name(String),
    /// No store URL (nothing after `=`, only `:ro`, or only `?` options).
    #[error("the mount `{0}` has no store URL")]
    Url(String),
}

/// Whether `text` starts with a URL scheme: an ASCII letter, at least one more letter, digit,
/// `+`, `-` or `.`, then `:` (the store-URL rule; a drive letter `C:` is not one).
fn starts_with_scheme(text: &str) -> bool {
    let Some((word, _)) = text.split_once(':') else {
        return false;
    };
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && word.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Whether the text before the first `=` is a mount name rather than the start of a URL
/// whose options hold the `=`.
fn is_name(before: &str, after: &str) -> bool {
    !starts_with_scheme(before) || starts_with_scheme(after)
}

impl FromStr for MountSpec {
    type Err = MountSpecError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let (name, rest) = match raw.split_once('=') {
            Some((name, rest)) if is_name(name, rest) => {
                let name = name.trim();
                if name.is_empty()
                    || name.chars().count() > 255
                    || name.chars().any(char::is_control)
                {
                    return Err(MountSpecError::Name(name.to_owned()));
                }
                (Some(name.to_owned()), rest)
            }
            _ => (None, raw),
        };
        let (url, access) = if let Some(url) = rest.strip_suffix(":ro") {
            (url, Access::ReadOnly)
        } else if let Some(url) = rest.strip_suffix(":rw") {
            (url, Access::ReadWrite)
        } else {
            (rest, Access::ReadWrite)
        };
        if url.split_once('?').map_or(url, |(base, _)| base).is_empty() {
            return Err(MountSpecError::Url(
                name.clone().unwrap_or_else(|| raw.to_owned()),
            ));
        }
        Ok(MountSpec {
            name,
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
        match &self.name {
            Some(name) => write!(f, "{name}={}{ro}", self.url),
            None => write!(f, "{}{ro}", self.url),
        }
    }
}

/// One `--mount-instructions NAME=TEXT` option: the instructions for the mount whose folder
/// name is `NAME` (see [`Mounts::with_instructions_for`](crate::Mounts::with_instructions_for)),
/// at most [`MAX_INSTRUCTIONS_CHARS`](crate::MAX_INSTRUCTIONS_CHARS) characters.
///
/// ```
/// use memory_mounts::{MountInstructions, MountInstructionsError};
///
/// let i: MountInstructions = "team-handbook=Check it before answering.".parse().unwrap();
/// assert_eq!((i.folder.as_str(), i.text.as_str()), ("team-handbook", "Check it before answering."));
/// assert_eq!("no-equals".parse::<MountInstructions>(), Err(MountInstructionsError::Form));
/// let long = format!("notes={}", "x".repeat(4097));
/// assert_eq!(
///     long.parse::<MountInstructions>(),
///     Err(MountInstructionsError::TooLong { folder: "notes".into(), chars: 4097 })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountInstructions {
    /// The mount's folder name (`team-handbook` for `/memories/team-handbook`).
    pub folder: String,
    /// The instructions.
    pub text: String,
}

/// Why a `--mount-instructions` value is not `NAME=TEXT`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MountInstructionsError {
    /// No `=`, or nothing before it.
    #[error(
        "mount instructions are NAME=TEXT, NAME the mount's folder name, e.g. team-handbook=Read it first"
    )]
    Form,
    /// The text is longer than [`MAX_INSTRUCTIONS_CHARS`](crate::MAX_INSTRUCTIONS_CHARS).
    #[error(
        "the instructions for `{folder}` are {chars} characters; at most {} are allowed",
        crate::MAX_INSTRUCTIONS_CHARS
    )]
    TooLong {
        /// The folder name given.
        folder: String,
        /// The text's length in characters.
        chars: usize,
    },
}

impl FromStr for MountInstructions {
    type Err = MountInstructionsError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let Some((folder, text)) = raw
            .split_once('=')
            .filter(|(folder, _)| !folder.trim().is_empty())
        else {
            return Err(MountInstructionsError::Form);
        };
        let folder = folder.trim().to_owned();
        let chars = text.chars().count();
        if chars > crate::MAX_INSTRUCTIONS_CHARS {
            return Err(MountInstructionsError::TooLong { folder, chars });
        }
        Ok(MountInstructions {
            folder,
            text: text.to_owned(),
        })
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
        assert_eq!((s.name.as_deref(), s.url.as_str()), (Some("x"), "y=z"));
        assert_eq!(s.to_string(), "x=y=z:ro");
        assert_eq!(
            "a=:ro".parse::<MountSpec>(),
            Err(MountSpecError::Url("a".into()))
        );
        assert_eq!(
            "\u{7}=x".parse::<MountSpec>(),
            Err(MountSpecError::Name("\u{7}".into()))
        );
        assert_eq!(
            "n=?sync=full".parse::<MountSpec>(),
            Err(MountSpecError::Url("n".into()))
        );
        let err = " =./notes".parse::<MountSpec>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "a mount name is 1 to 255 characters without control characters, not \"\""
        );
        // No name: the URL whole, even with `=` in its options.
        let s: MountSpec = "store+sqlite:db?sync=full#memstore_x:ro".parse().unwrap();
        assert_eq!(s.name, None);
        assert_eq!(s.url, "store+sqlite:db?sync=full#memstore_x");
        assert_eq!(s.to_string(), "store+sqlite:db?sync=full#memstore_x:ro");
        assert_eq!(s.label(), "store+sqlite:db?sync=full#memstore_x");
        let s: MountSpec = "./notes".parse().unwrap();
        assert_eq!((s.name, s.url.as_str()), (None, "./notes"));
    }

    #[test]
    fn a_name_is_whatever_comes_before_the_first_equals_sign_ahead_of_the_url() {
        for (raw, name, url) in [
            (
                "???=store+sqlite:s.db#memstore_x",
                "???",
                "store+sqlite:s.db#memstore_x",
            ),
            (
                "a/b=store+sqlite:s.db#memstore_x",
                "a/b",
                "store+sqlite:s.db#memstore_x",
            ),
            ("a/b=./notes", "a/b", "./notes"),
            ("why?=mem:", "why?", "mem:"),
            ("#1 notes=./n", "#1 notes", "./n"),
            (
                "Team:Handbook=store+sqlite:s.db?x=y#memstore_x",
                "Team:Handbook",
                "store+sqlite:s.db?x=y#memstore_x",
            ),
            ("C:notes=./n", "C:notes", "./n"),
            ("n=sqlite:m.db?sync=data", "n", "sqlite:m.db?sync=data"),
        ] {
            let s: MountSpec = raw.parse().unwrap();
            assert_eq!(s.name.as_deref(), Some(name), "{raw}");
            assert_eq!(s.url, url, "{raw}");
        }
        // The `=` of the URL's own options: no name.
        for raw in [
            "store+sqlite:s.db?sync=full#memstore_x",
            "sqlite:m.db?sync=data",
            "postgres://u@h/db?schema=s&sslmode=require",
            "STORE+HTTP://h:8080/base?a=b#memstore_x",
        ] {
            let s: MountSpec = raw.parse().unwrap();
            assert_eq!((s.name, s.url.as_str()), (None, raw), "{raw}");
        }
    }
}
