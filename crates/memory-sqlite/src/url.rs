//! [`SqliteStorage::from_url`]: a store from `sqlite:PATH` and its options.

use std::path::PathBuf;

use memory_core::history::HistoryOptions;
use memory_core::options::{OptionsError, StoreOptions};

use crate::options::{IndexMode, SqliteOptions};
use crate::storage::SqliteStorage;

/// The options a `sqlite:` store URL accepts (see the crate README's table): this backend's,
/// then [`HistoryOptions::KEYS`].
pub const URL_OPTIONS: &[&str] = &[
    "sync",
    "busy_timeout",
    "max_connections",
    "inline_reads",
    "index",
    "history",
    "history_days",
    "history_max",
    "history_session",
];

/// Why [`SqliteStorage::from_url`] could not open a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteOpenError {
    /// The URL is not `sqlite:PATH`.
    #[error("`{url}` is not a SQLite store URL: {reason}")]
    Url {
        /// The URL given (without its options).
        url: String,
        /// What is wrong, and the form to use.
        reason: &'static str,
    },
    /// An option that is unknown or has a value that cannot be used.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// The database could not be opened (see [`SqliteStorage::open_with`]).
    #[error(transparent)]
    Open(#[from] memory_core::Error),
}

impl SqliteOptions {
    /// Takes this backend's options out of `options` (`sync`, `busy_timeout`,
    /// `max_connections`, `inline_reads`, `index`, and the history's: `history`,
    /// `history_days`, `history_max`, `history_session`, see [`HistoryOptions::take_from`])
    /// over the defaults, and refuses any other.
    ///
    /// # Errors
    /// [`OptionsError::InvalidValue`] for a value that cannot be used,
    /// [`OptionsError::UnknownOption`] for an option this backend does not know.
    ///
    /// ```
    /// use memory_core::options::{StoreOptions, SyncMode};
    /// use memory_sqlite::{IndexMode, SqliteOptions};
    /// let o = SqliteOptions::from_options(StoreOptions::from_pairs([("sync", "none")])).unwrap();
    /// assert_eq!(o.sync, SyncMode::None);
    /// let o = SqliteOptions::from_options(StoreOptions::from_pairs([("index", "search")])).unwrap();
    /// assert_eq!(o.index, IndexMode::Search);
    /// let o = SqliteOptions::from_options(StoreOptions::from_pairs([("history_max", "3")])).unwrap();
    /// assert_eq!(o.history.max_per_file, Some(3));
    /// assert!(SqliteOptions::from_options(StoreOptions::from_pairs([("fsync", "no")])).is_err());
    /// ```
    pub fn from_options(mut options: StoreOptions) -> Result<Self, OptionsError> {
        let mut out = SqliteOptions::default();
        if let Some(sync) = options.take_sync()? {
            out.sync = sync;
        }
        if let Some(timeout) = options.take_duration("busy_timeout")? {
            out.busy_timeout = timeout;
        }
        if let Some(max) =
            options.take_parsed::<usize>("max_connections", "a whole number of at least 1")?
        {
            if max == 0 {
                return Err(OptionsError::InvalidValue {
                    key: "max_connections".into(),
                    value: "0".into(),
                    expected: "a whole number of at least 1",
                });
            }
            out.max_connections = max;
        }
        if let Some(inline) = options.take_bool("inline_reads")? {
            out.inline_reads = inline;
        }
        if let Some(index) = options.take_parsed("index", IndexMode::EXPECTED)? {
            out.index = index;
        }
        out.history = HistoryOptions::take_from(&mut options)?;
        options.finish(URL_OPTIONS)?;
        Ok(out)
    }
}

/// The database path of `sqlite:PATH`, `sqlite://PATH` or `sqlite:///ABSOLUTE` (the scheme in
/// any case).
///
/// ```
/// use std::path::PathBuf;
/// use memory_sqlite::sqlite_url_path;
/// assert_eq!(sqlite_url_path("sqlite:m.db").unwrap(), PathBuf::from("m.db"));
/// assert_eq!(sqlite_url_path("sqlite://data/m.db").unwrap(), PathBuf::from("data/m.db"));
/// assert_eq!(sqlite_url_path("sqlite:///var/m.db").unwrap(), PathBuf::from("/var/m.db"));
/// assert_eq!(sqlite_url_path("sqlite:/var/m.db").unwrap(), PathBuf::from("/var/m.db"));
/// assert!(sqlite_url_path("sqlite:").is_err());
/// assert!(sqlite_url_path("file:m.db").is_err());
/// ```
///
/// # Errors
/// [`SqliteOpenError::Url`] for another scheme or a missing path.
pub fn sqlite_url_path(url: &str) -> Result<PathBuf, SqliteOpenError> {
    let bad = |reason| SqliteOpenError::Url {
        url: url.to_owned(),
        reason,
    };
    let rest = match url.split_once(':') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("sqlite") => rest,
        _ => return Err(bad("it must start with sqlite:, e.g. sqlite:memory.db")),
    };
    let path = rest.strip_prefix("//").unwrap_or(rest);
    if path.is_empty() {
        return Err(bad(
            "no database file: use sqlite:PATH, e.g. sqlite:memory.db",
        ));
    }
    Ok(PathBuf::from(path))
}

impl SqliteStorage {
    /// Opens the store named by a URL: `sqlite:PATH`, `sqlite://PATH` or
    /// `sqlite:///ABSOLUTE/PATH`, with options from the URL's query
    /// (`sqlite:memory.db?sync=data&busy_timeout=10s`) and from `options` (which win over the
    /// URL's). The options are those of the crate README's table; any other is refused,
    /// naming it and the accepted ones.
    ///
    /// Blocks as [`SqliteStorage::open`] does.
    ///
    /// ```
    /// use memory_core::options::{StoreOptions, SyncMode};
    /// use memory_sqlite::{SqliteOpenError, SqliteStorage};
    /// let dir = tempfile::tempdir().unwrap();
    /// let url = format!("sqlite:{}?sync=none", dir.path().join("m.db").display());
    /// let store = SqliteStorage::from_url(&url, StoreOptions::new()).unwrap();
    /// assert_eq!(store.options().sync, SyncMode::None);
    ///
    /// let err = SqliteStorage::from_url("sqlite:m.db?bogus=1", StoreOptions::new()).unwrap_err();
    /// assert!(matches!(err, SqliteOpenError::Options(_)));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "unknown store option `bogus`: remove it, or use one of the options this store accepts: sync, busy_timeout, max_connections, inline_reads, index, history, history_days, history_max, history_session"
    /// );
    /// ```
    ///
    /// # Errors
    /// [`SqliteOpenError::Url`], [`SqliteOpenError::Options`], or
    /// [`SqliteOpenError::Open`] when the database cannot be opened (nothing is created for a
    /// URL or an option that is refused).
    pub fn from_url(url: &str, options: StoreOptions) -> Result<Self, SqliteOpenError> {
        Self::open_url(url, options, false)
    }

    /// Opens the existing database a URL names, as [`from_url`](Self::from_url) reads it, so
    /// that nothing on disk changes ([`SqliteOptions::read_only`]: `SQLITE_OPEN_READONLY`, no
    /// `-wal`/`-shm` file, no migration); a write is refused by SQLite.
    ///
    /// ```
    /// use memory_core::options::StoreOptions;
    /// use memory_sqlite::SqliteStorage;
    /// let dir = tempfile::tempdir().unwrap();
    /// let url = format!("sqlite:{}", dir.path().join("m.db").display());
    /// drop(SqliteStorage::from_url(&url, StoreOptions::new()).unwrap());
    /// let store = SqliteStorage::from_url_read_only(&url, StoreOptions::new()).unwrap();
    /// assert!(store.options().read_only);
    /// ```
    ///
    /// # Errors
    /// As [`from_url`](Self::from_url); a missing database is [`SqliteOpenError::Open`].
    pub fn from_url_read_only(url: &str, options: StoreOptions) -> Result<Self, SqliteOpenError> {
        Self::open_url(url, options, true)
    }

    fn open_url(
        url: &str,
        options: StoreOptions,
        read_only: bool,
    ) -> Result<Self, SqliteOpenError> {
        let (base, from_query) = StoreOptions::from_url(url)?;
        let merged = from_query.overridden_by(options);
        let path = sqlite_url_path(&base)?;
        let options = SqliteOptions::from_options(merged)?.read_only(read_only);
        Ok(SqliteStorage::open_with(path, options)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_accepts_every_history_option() {
        for key in HistoryOptions::KEYS {
            assert!(URL_OPTIONS.contains(&key), "{key}");
        }
    }
}
