//! Store options: the `key=value` settings of a store URL's query (`sqlite:///m.db?sync=data`)
//! or of a library caller, read by each backend's `from_url` constructor.
//!
//! A backend takes the options it knows ([`StoreOptions::take`] and its typed forms) and then
//! calls [`StoreOptions::finish`] with the names it accepts, so that a misspelt or foreign
//! option is a clear error instead of being ignored:
//!
//! ```
//! use std::time::Duration;
//! use memory_core::options::{OptionsError, StoreOptions, SyncMode};
//!
//! let (url, mut options) = StoreOptions::from_url("sqlite:///data/m.db?sync=data&busy_timeout=250ms")?;
//! assert_eq!(url, "sqlite:///data/m.db");
//! assert_eq!(options.take_sync()?, Some(SyncMode::Data));
//! assert_eq!(options.take_duration("busy_timeout")?, Some(Duration::from_millis(250)));
//! options.finish(&["sync", "busy_timeout"])?;
//!
//! let (_, options) = StoreOptions::from_url("sqlite:///data/m.db?synk=data")?;
//! let err = options.finish(&["sync", "busy_timeout"]).unwrap_err();
//! assert!(matches!(err, OptionsError::UnknownOption { .. }));
//! assert_eq!(
//!     err.to_string(),
//!     "unknown store option `synk`: remove it, or use one of the options this store accepts: sync, busy_timeout"
//! );
//! # Ok::<(), OptionsError>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How hard a backend works to make a finished write survive a crash or power loss.
///
/// Parsed from `full`, `data` or `none` (the `sync` option); backends map it to their own
/// mechanism (fsync of file and folder, SQLite's `synchronous` pragma, ...).
///
/// ```
/// use memory_core::options::SyncMode;
/// assert_eq!("data".parse::<SyncMode>().unwrap(), SyncMode::Data);
/// assert_eq!(SyncMode::default(), SyncMode::Full);
/// assert_eq!(SyncMode::None.to_string(), "none");
/// assert!("fast".parse::<SyncMode>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SyncMode {
    /// A finished write survives a crash: the data and the directory entry naming it are
    /// flushed to stable storage (the default).
    #[default]
    Full,
    /// The data is flushed, the directory metadata may lag (a crash may lose the newest
    /// names, never a file's content in place).
    Data,
    /// Nothing is flushed explicitly: fastest, and a crash may lose recent writes (tests,
    /// caches).
    None,
}

impl SyncMode {
    /// The accepted spellings, for error messages.
    pub const EXPECTED: &'static str = "full, data or none";

    /// The option's spelling of this mode.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncMode::Full => "full",
            SyncMode::Data => "data",
            SyncMode::None => "none",
        }
    }
}

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SyncMode {
    type Err = OptionsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(SyncMode::Full),
            "data" => Ok(SyncMode::Data),
            "none" => Ok(SyncMode::None),
            other => Err(OptionsError::InvalidValue {
                key: "sync".to_owned(),
                value: other.to_owned(),
                expected: SyncMode::EXPECTED,
            }),
        }
    }
}

/// Why store options could not be read or were not accepted. Each text says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionsError {
    /// An option the store does not know (left over after the backend took its own).
    #[error("unknown store option `{key}`: {}", accepted_hint(accepted))]
    UnknownOption {
        /// The option given.
        key: String,
        /// The options the store accepts.
        accepted: Vec<String>,
    },
    /// An option whose value cannot be used.
    #[error("store option `{key}` has the invalid value `{value}`: use {expected}")]
    InvalidValue {
        /// The option.
        key: String,
        /// The value given.
        value: String,
        /// What the option accepts, e.g. `full, data or none`.
        expected: &'static str,
    },
    /// An option given twice in one URL.
    #[error("store option `{key}` is given more than once: give it once")]
    DuplicateOption {
        /// The repeated option.
        key: String,
    },
    /// `key` without `=value` in a URL query.
    #[error("store option `{key}` has no value: write it as `{key}=VALUE`")]
    MissingValue {
        /// The option.
        key: String,
    },
    /// A part of the URL query that is not `key=value` text (an empty name, a broken `%`
    /// escape, bytes that are not UTF-8).
    #[error(
        "cannot read `{part}` in the store URL's options: {reason}; write options as `?key=value&key=value`"
    )]
    Malformed {
        /// The offending `key=value` part, as written.
        part: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

fn accepted_hint(accepted: &[String]) -> String {
    if accepted.is_empty() {
        "remove it: this store accepts no options".to_owned()
    } else {
        format!(
            "remove it, or use one of the options this store accepts: {}",
            accepted.join(", ")
        )
    }
}

/// Key/value options for opening a store, in the order given.
///
/// Built from a URL query ([`StoreOptions::from_url`]) or by a library caller
/// ([`StoreOptions::from_pairs`], [`StoreOptions::insert`]); consumed by a backend with
/// [`take`](StoreOptions::take) and its typed forms, then checked with
/// [`finish`](StoreOptions::finish).
///
/// ```
/// use memory_core::options::StoreOptions;
/// let mut options = StoreOptions::from_pairs([("max_retries", "3")]);
/// assert_eq!(options.take_parsed::<u32>("max_retries", "a whole number").unwrap(), Some(3));
/// assert!(options.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreOptions {
    pairs: Vec<(String, String)>,
}

impl StoreOptions {
    /// No options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Splits `url` at its first `?` into the URL without the query and the options of the
    /// query (`a=1&b=2`; `%XX` escapes are decoded, `+` is kept as it is).
    ///
    /// A URL without `?` has no options; an empty part (`a=1&&b=2`, a trailing `&`) is
    /// skipped.
    ///
    /// # Errors
    /// [`OptionsError::MissingValue`] for a part without `=`,
    /// [`OptionsError::DuplicateOption`] for a key given twice, and
    /// [`OptionsError::Malformed`] for an empty key or a broken escape.
    pub fn from_url(url: &str) -> Result<(String, StoreOptions), OptionsError> {
        let Some((base, query)) = url.split_once('?') else {
            return Ok((url.to_owned(), StoreOptions::new()));
        };
        let mut options = StoreOptions::new();
        for part in query.split('&').filter(|part| !part.is_empty()) {
            let Some((raw_key, raw_value)) = part.split_once('=') else {
                return Err(OptionsError::MissingValue {
                    key: decode(part, part)?,
                });
            };
            let key = decode(raw_key, part)?;
            if key.is_empty() {
                return Err(OptionsError::Malformed {
                    part: part.to_owned(),
                    reason: "the option has no name",
                });
            }
            let value = decode(raw_value, part)?;
            if options.get(&key).is_some() {
                return Err(OptionsError::DuplicateOption { key });
            }
            options.pairs.push((key, value));
        }
        Ok((base.to_owned(), options))
    }

    /// Options given by a library caller. A key given twice keeps its last value.
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        let mut options = StoreOptions::new();
        for (key, value) in pairs {
            options.insert(key, value);
        }
        options
    }

    /// Sets an option, replacing an earlier value of the same key.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let value = value.into();
        match self.pairs.iter_mut().find(|(k, _)| *k == key) {
            Some(pair) => pair.1 = value,
            None => self.pairs.push((key, value)),
        }
    }

    /// These options with `overrides` laid over them: a key in both takes the value from
    /// `overrides` (a library caller's options over the ones a URL's query gave).
    ///
    /// ```
    /// use memory_core::options::StoreOptions;
    /// let (_, from_url) = StoreOptions::from_url("sqlite:m.db?sync=data&busy_timeout=5s").unwrap();
    /// let merged = from_url.overridden_by(StoreOptions::from_pairs([("sync", "none")]));
    /// assert_eq!(merged.get("sync"), Some("none"));
    /// assert_eq!(merged.get("busy_timeout"), Some("5s"));
    /// ```
    pub fn overridden_by(mut self, overrides: StoreOptions) -> StoreOptions {
        for (key, value) in overrides.pairs {
            self.insert(key, value);
        }
        self
    }

    /// These options and `other` as one set, where a key may come from only one side: a key
    /// in both is [`OptionsError::DuplicateOption`] (a URL's query beside a program's options,
    /// where neither should silently win).
    ///
    /// ```
    /// use memory_core::options::{OptionsError, StoreOptions};
    /// let (_, from_url) = StoreOptions::from_url("postgres://u@h/db?schema=a").unwrap();
    /// let joined = from_url.clone().joined(StoreOptions::from_pairs([("root", "t1")])).unwrap();
    /// assert_eq!((joined.get("schema"), joined.get("root")), (Some("a"), Some("t1")));
    /// let twice = from_url.joined(StoreOptions::from_pairs([("schema", "b")])).unwrap_err();
    /// assert!(matches!(twice, OptionsError::DuplicateOption { .. }));
    /// ```
    ///
    /// # Errors
    /// [`OptionsError::DuplicateOption`] naming the first key both sides give.
    pub fn joined(mut self, other: StoreOptions) -> Result<StoreOptions, OptionsError> {
        for (key, value) in other.pairs {
            if self.get(&key).is_some() {
                return Err(OptionsError::DuplicateOption { key });
            }
            self.pairs.push((key, value));
        }
        Ok(self)
    }

    /// The value of an option, without taking it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether no option is left.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The keys left, in the order given.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.pairs.iter().map(|(k, _)| k.as_str())
    }

    /// Removes an option and returns its value.
    pub fn take(&mut self, key: &str) -> Option<String> {
        let at = self.pairs.iter().position(|(k, _)| k == key)?;
        Some(self.pairs.remove(at).1)
    }

    /// Removes an option and parses its value.
    ///
    /// # Errors
    /// [`OptionsError::InvalidValue`] naming the option, its value and `expected` (what the
    /// option accepts, e.g. `"a whole number"`) when the value does not parse.
    pub fn take_parsed<T: FromStr>(
        &mut self,
        key: &str,
        expected: &'static str,
    ) -> Result<Option<T>, OptionsError> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        match value.parse() {
            Ok(parsed) => Ok(Some(parsed)),
            Err(_) => Err(OptionsError::InvalidValue {
                key: key.to_owned(),
                value,
                expected,
            }),
        }
    }

    /// Removes an option and parses it as `true` or `false` (also `1`/`0`, `yes`/`no`).
    ///
    /// # Errors
    /// [`OptionsError::InvalidValue`] for any other value.
    pub fn take_bool(&mut self, key: &str) -> Result<Option<bool>, OptionsError> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        match value.as_str() {
            "true" | "1" | "yes" => Ok(Some(true)),
            "false" | "0" | "no" => Ok(Some(false)),
            _ => Err(OptionsError::InvalidValue {
                key: key.to_owned(),
                value,
                expected: "true or false",
            }),
        }
    }

    /// Removes an option and parses it as a duration: a whole number with a unit, `ms`, `s`,
    /// `m` or `h` (`250ms`, `5s`, `2m`, `1h`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use memory_core::options::StoreOptions;
    /// let mut options = StoreOptions::from_pairs([("timeout", "2m"), ("poll", "5")]);
    /// assert_eq!(options.take_duration("timeout").unwrap(), Some(Duration::from_secs(120)));
    /// assert_eq!(
    ///     options.take_duration("poll").unwrap_err().to_string(),
    ///     "store option `poll` has the invalid value `5`: use a duration with a unit, such as 250ms, 5s, 2m or 1h"
    /// );
    /// ```
    ///
    /// # Errors
    /// [`OptionsError::InvalidValue`] for a value without a unit, with another unit, or too
    /// large to represent.
    pub fn take_duration(&mut self, key: &str) -> Result<Option<Duration>, OptionsError> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        match parse_duration(&value) {
            Ok(duration) => Ok(Some(duration)),
            Err(_) => Err(OptionsError::InvalidValue {
                key: key.to_owned(),
                value,
                expected: "a duration with a unit, such as 250ms, 5s, 2m or 1h",
            }),
        }
    }

    /// Removes the `sync` option and parses it as a [`SyncMode`].
    ///
    /// # Errors
    /// [`OptionsError::InvalidValue`] for anything but `full`, `data` or `none`.
    pub fn take_sync(&mut self) -> Result<Option<SyncMode>, OptionsError> {
        self.take_parsed("sync", SyncMode::EXPECTED)
    }

    /// Checks that every option was taken.
    ///
    /// # Errors
    /// [`OptionsError::UnknownOption`] naming the first option left and the `accepted` ones.
    pub fn finish(self, accepted: &[&str]) -> Result<(), OptionsError> {
        match self.pairs.into_iter().next() {
            None => Ok(()),
            Some((key, _)) => Err(OptionsError::UnknownOption {
                key,
                accepted: accepted.iter().map(|a| (*a).to_owned()).collect(),
            }),
        }
    }
}

/// Decodes `%XX` escapes of one key or value of the query part `part`.
fn decode(raw: &str, part: &str) -> Result<String, OptionsError> {
    let malformed = |reason| OptionsError::Malformed {
        part: part.to_owned(),
        reason,
    };
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| malformed("a `%` must be followed by two hex digits"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| malformed("the decoded text is not UTF-8"))
}

/// Why a text is not a [`parse_duration`] duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Not one or more `{number}{unit}` pairs.
    Invalid,
    /// A number, or the total, too large for a [`Duration`].
    TooLong,
}

/// The one duration grammar of this project (store options, and every `memory` flag that
/// takes a duration): one or more `{whole number}{unit}` pairs without spaces, units `ms`,
/// `s`, `m` (minutes), `h`, `d` (24 hours) and `w` (7 days): `250ms`, `30s`, `90m`, `1d12h`.
///
/// ```
/// use std::time::Duration;
/// use memory_core::options::{DurationError, parse_duration};
///
/// assert_eq!(parse_duration("1d12h"), Ok(Duration::from_secs(36 * 3600)));
/// assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert_eq!(parse_duration("1.5h"), Err(DurationError::Invalid));
/// assert_eq!(parse_duration("99999999999999w"), Err(DurationError::TooLong));
/// ```
///
/// # Errors
/// [`DurationError`] for anything else (a bare number, a space, a fraction, a sign).
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    if text.is_empty() {
        return Err(DurationError::Invalid);
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .ok_or(DurationError::Invalid)?;
        if digits == 0 {
            return Err(DurationError::Invalid);
        }
        // All digits: the only way to fail is a number too large.
        let number: u64 = rest[..digits].parse().map_err(|_| DurationError::TooLong)?;
        let after = &rest[digits..];
        let unit_len = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        let seconds_per_unit: u64 = match &after[..unit_len] {
            "ms" => 0,
            "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            "w" => 604_800,
            _ => return Err(DurationError::Invalid),
        };
        let part = if seconds_per_unit == 0 {
            Duration::from_millis(number)
        } else {
            Duration::from_secs(
                number
                    .checked_mul(seconds_per_unit)
                    .ok_or(DurationError::TooLong)?,
            )
        };
        total = total.checked_add(part).ok_or(DurationError::TooLong)?;
        rest = &after[unit_len..];
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_without_query_has_no_options() {
        let (url, options) = StoreOptions::from_url("fs:///var/lib/memory").unwrap();
        assert_eq!(url, "fs:///var/lib/memory");
        assert!(options.is_empty());
        let (url, options) = StoreOptions::from_url("fs:///x?").unwrap();
        assert_eq!(url, "fs:///x");
        assert!(options.is_empty());
    }

    #[test]
    fn query_is_split_and_decoded() {
        let (url, mut options) = StoreOptions::from_url(
            "s3://bucket/prefix?endpoint=http%3A%2F%2F127.0.0.1%3A9000&&region=a+b&",
        )
        .unwrap();
        assert_eq!(url, "s3://bucket/prefix");
        assert_eq!(options.keys().collect::<Vec<_>>(), ["endpoint", "region"]);
        assert_eq!(
            options.take("endpoint").as_deref(),
            Some("http://127.0.0.1:9000")
        );
        assert_eq!(options.get("region"), Some("a+b"));
        assert_eq!(options.take("region").as_deref(), Some("a+b"));
        assert_eq!(options.take("region"), None);
        options.finish(&[]).unwrap();
    }

    #[test]
    fn bad_queries_are_typed_errors() {
        assert_eq!(
            StoreOptions::from_url("x:?a=1&a=2").unwrap_err(),
            OptionsError::DuplicateOption { key: "a".into() }
        );
        let e = StoreOptions::from_url("x:?sync").unwrap_err();
        assert_eq!(e, OptionsError::MissingValue { key: "sync".into() });
        assert_eq!(
            e.to_string(),
            "store option `sync` has no value: write it as `sync=VALUE`"
        );
        assert!(matches!(
            StoreOptions::from_url("x:?=1").unwrap_err(),
            OptionsError::Malformed { .. }
        ));
        let e = StoreOptions::from_url("x:?a=%2").unwrap_err();
        assert!(
            matches!(&e, OptionsError::Malformed { part, .. } if part == "a=%2"),
            "{e:?}"
        );
        assert!(matches!(
            StoreOptions::from_url("x:?a=%ff").unwrap_err(),
            OptionsError::Malformed { .. }
        ));
    }

    #[test]
    fn typed_takes() {
        let mut options = StoreOptions::from_pairs([
            ("n", "12"),
            ("bad", "x"),
            ("on", "true"),
            ("off", "0"),
            ("sync", "none"),
            ("t1", "250ms"),
            ("t2", "5s"),
            ("t3", "1h"),
            ("t4", "ms"),
            ("t5", "18446744073709551615m"),
        ]);
        assert_eq!(
            options.take_parsed::<u32>("n", "a number").unwrap(),
            Some(12)
        );
        assert_eq!(options.take_parsed::<u32>("n", "a number").unwrap(), None);
        assert_eq!(
            options
                .take_parsed::<u32>("bad", "a whole number")
                .unwrap_err(),
            OptionsError::InvalidValue {
                key: "bad".into(),
                value: "x".into(),
                expected: "a whole number"
            }
        );
        assert_eq!(options.take_bool("on").unwrap(), Some(true));
        assert_eq!(options.take_bool("off").unwrap(), Some(false));
        assert_eq!(options.take_sync().unwrap(), Some(SyncMode::None));
        assert_eq!(
            options.take_duration("t1").unwrap(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            options.take_duration("t2").unwrap(),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            options.take_duration("t3").unwrap(),
            Some(Duration::from_secs(3600))
        );
        assert!(options.take_duration("t4").is_err());
        assert!(options.take_duration("t5").is_err());
        assert!(options.is_empty());
        options.finish(&["n"]).unwrap();
    }

    #[test]
    fn bad_sync_mode_says_what_to_use() {
        let mut options = StoreOptions::from_pairs([("sync", "fast")]);
        assert_eq!(
            options.take_sync().unwrap_err().to_string(),
            "store option `sync` has the invalid value `fast`: use full, data or none"
        );
    }

    #[test]
    fn leftover_options_are_named() {
        let options = StoreOptions::from_pairs([("a", "1"), ("a", "2")]);
        assert_eq!(options.get("a"), Some("2"));
        let e = options.finish(&[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown store option `a`: remove it: this store accepts no options"
        );
    }
}
