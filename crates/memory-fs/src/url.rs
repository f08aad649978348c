//! [`FsStorage::from_url`]: a store from `PATH`, `file:PATH` or `file:///ABSOLUTE` and its
//! options.

use std::path::PathBuf;

use memory_core::options::{OptionsError, StoreOptions};

use crate::options::{Blocking, FsOptions};
use crate::storage::FsStorage;

/// The options a folder store URL accepts (see the crate README's table).
pub const URL_OPTIONS: &[&str] = &[
    "sync",
    "blocking",
    "stale_temp_age",
    "portable",
    "history",
    "history_days",
    "history_max",
    "history_session",
];

/// Why [`FsStorage::from_url`] could not open a store. The text is for the operator (it may
/// name host paths); the model never sees it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsOpenError {
    /// The URL does not name a folder.
    #[error("`{url}` is not a folder store URL: {reason}")]
    Url {
        /// The URL given (without its options).
        url: String,
        /// What is wrong, and the form to use.
        reason: &'static str,
    },
    /// An option that is unknown or has a value that cannot be used.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// The folder could not be created or opened (see [`FsStorage::with_options`]).
    #[error(transparent)]
    Open(#[from] memory_core::Error),
}

impl FsOptions {
    /// Takes this backend's options out of `options` (`sync`, `blocking`, `stale_temp_age`,
    /// `portable`, and the history options `history`, `history_days`, `history_max`,
    /// `history_session`, see [`HistoryOptions::take_from`]) over the defaults, and refuses
    /// any other.
    ///
    /// [`HistoryOptions::take_from`]: memory_core::history::HistoryOptions::take_from
    ///
    /// ```
    /// use memory_core::options::{StoreOptions, SyncMode};
    /// use memory_fs::{Blocking, FsOptions};
    /// let o = FsOptions::from_options(StoreOptions::from_pairs([
    ///     ("sync", "data"),
    ///     ("blocking", "inline"),
    /// ]))
    /// .unwrap();
    /// assert_eq!(o.sync, SyncMode::Data);
    /// assert_eq!(o.blocking, Blocking::Inline);
    /// assert!(FsOptions::from_options(StoreOptions::from_pairs([("fsync", "no")])).is_err());
    /// ```
    ///
    /// # Errors
    /// [`OptionsError::InvalidValue`] for a value that cannot be used,
    /// [`OptionsError::UnknownOption`] for an option this backend does not know.
    pub fn from_options(mut options: StoreOptions) -> Result<Self, OptionsError> {
        let mut out = FsOptions::default();
        if let Some(sync) = options.take_sync()? {
            out.sync = sync;
        }
        if let Some(blocking) = options.take_parsed::<Blocking>("blocking", Blocking::EXPECTED)? {
            out.blocking = blocking;
        }
        if let Some(age) = options.take_duration("stale_temp_age")? {
            out.stale_temp_age = age;
        }
        if let Some(portable) = options.take_bool("portable")? {
            out.portable = portable;
        }
        out.history = memory_core::history::HistoryOptions::take_from(&mut options)?;
        options.finish(URL_OPTIONS)?;
        Ok(out)
    }
}

/// The folder a folder store URL names: `PATH` (no scheme), `file:PATH`, `file:///ABSOLUTE`
/// (the scheme in any case), the forms the store URLs of `memory` accept.
///
/// A word of two or more letters followed by `:` is read as a scheme, so a folder whose name
/// looks like one (`notes:2024`) is written `./notes:2024` or `file:notes:2024`.
///
/// ```
/// use std::path::PathBuf;
/// use memory_fs::fs_url_path;
/// assert_eq!(fs_url_path("./memory").unwrap(), PathBuf::from("./memory"));
/// assert_eq!(fs_url_path("file:memory").unwrap(), PathBuf::from("memory"));
/// assert_eq!(fs_url_path("FILE:memory").unwrap(), PathBuf::from("memory"));
/// assert_eq!(fs_url_path("file:///var/memory").unwrap(), PathBuf::from("/var/memory"));
/// assert_eq!(fs_url_path("file:/var/memory").unwrap(), PathBuf::from("/var/memory"));
/// assert_eq!(fs_url_path("C:memory").unwrap(), PathBuf::from("C:memory"));
/// assert!(fs_url_path("file:").is_err());
/// assert!(fs_url_path("sqlite:m.db").is_err());
/// assert!(fs_url_path("").is_err());
/// ```
///
/// # Errors
/// [`FsOpenError::Url`] for another scheme or a missing path.
pub fn fs_url_path(url: &str) -> Result<PathBuf, FsOpenError> {
    let bad = |reason| FsOpenError::Url {
        url: url.to_owned(),
        reason,
    };
    if url.is_empty() {
        return Err(bad("it is empty; use a folder path or file:PATH"));
    }
    let Some(scheme) = scheme_of(url) else {
        return Ok(PathBuf::from(url));
    };
    if !scheme.eq_ignore_ascii_case("file") {
        return Err(bad(
            "a folder store is a path or file:PATH (write ./NAME:... for a folder with a colon in its name)",
        ));
    }
    let rest = &url[scheme.len() + 1..];
    // `file:///abs` names `/abs`; otherwise what follows the colon is the path.
    let path = match rest.strip_prefix("//") {
        Some(abs) if abs.starts_with('/') => abs,
        _ => rest,
    };
    if path.is_empty() {
        return Err(bad("no folder: use file:PATH, e.g. file:./memory"));
    }
    Ok(PathBuf::from(path))
}

/// The scheme of `raw`, if it starts with one: an ASCII letter, then at least one more letter,
/// digit, `+`, `-` or `.`, then `:`. A single letter (`C:`) is not a scheme.
fn scheme_of(raw: &str) -> Option<&str> {
    let (scheme, _) = raw.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let ok = first.is_ascii_alphabetic()
        && scheme.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then_some(scheme)
}

impl FsStorage {
    /// Opens (creating if needed) the store a URL names: `PATH`, `file:PATH` or
    /// `file:///ABSOLUTE/PATH` (see [`fs_url_path`]), with options from the URL's query
    /// (`file:./memory?sync=data`) and from `options` (which win over the URL's). The options
    /// are those of the crate README's table; any other is refused, naming it and the
    /// accepted ones, before anything is created.
    ///
    /// Blocks as [`FsStorage::with_options`] does.
    ///
    /// ```
    /// use memory_core::options::{StoreOptions, SyncMode};
    /// use memory_fs::{FsOpenError, FsStorage};
    /// let dir = tempfile::tempdir().unwrap();
    /// let url = format!("file:{}?sync=none", dir.path().display());
    /// let store = FsStorage::from_url(&url, StoreOptions::new()).unwrap();
    /// assert_eq!(store.options().sync, SyncMode::None);
    ///
    /// let err = FsStorage::from_url("./memory?bogus=1", StoreOptions::new()).unwrap_err();
    /// assert!(matches!(err, FsOpenError::Options(_)));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "unknown store option `bogus`: remove it, or use one of the options this store accepts: sync, blocking, stale_temp_age, portable, history, history_days, history_max, history_session"
    /// );
    /// ```
    ///
    /// # Errors
    /// [`FsOpenError::Url`], [`FsOpenError::Options`], or [`FsOpenError::Open`] when the
    /// folder cannot be created or opened.
    pub fn from_url(url: &str, options: StoreOptions) -> Result<Self, FsOpenError> {
        Self::open_url(url, options, false)
    }

    /// Opens the existing store a URL names, as [`from_url`](Self::from_url) reads it, so
    /// that nothing on disk changes ([`FsOptions::read_only`]: no folder created, no lock or
    /// count file, no cleanup of stale temporary files); writes are not refused here (wrap
    /// the store in `memory_core::ReadOnly` for that).
    ///
    /// ```
    /// use memory_core::options::StoreOptions;
    /// use memory_fs::FsStorage;
    /// let dir = tempfile::tempdir().unwrap();
    /// let url = format!("file:{}?sync=none", dir.path().join("store").display());
    /// FsStorage::from_url(&url, StoreOptions::new()).unwrap();
    /// let store = FsStorage::from_url_read_only(&url, StoreOptions::new()).unwrap();
    /// assert!(store.options().read_only);
    /// ```
    ///
    /// # Errors
    /// As [`from_url`](Self::from_url); a missing folder is [`FsOpenError::Open`].
    pub fn from_url_read_only(url: &str, options: StoreOptions) -> Result<Self, FsOpenError> {
        Self::open_url(url, options, true)
    }

    fn open_url(url: &str, options: StoreOptions, read_only: bool) -> Result<Self, FsOpenError> {
        let (base, from_query) = StoreOptions::from_url(url)?;
        let merged = from_query.overridden_by(options);
        let path = fs_url_path(&base)?;
        let options = FsOptions::from_options(merged)?.read_only(read_only);
        Ok(FsStorage::with_options(path, options)?)
    }
}
