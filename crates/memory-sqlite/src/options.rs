//! [`SqliteOptions`]: how [`SqliteStorage`](crate::SqliteStorage) opens its database.

use std::time::Duration;

/// How hard SQLite works to make a committed write survive a power cut (`PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncMode {
    /// `FULL`: every commit is flushed to disk before it returns. A write the tool reported
    /// as done survives a crash of the process and of the machine. The default.
    #[default]
    Full,
    /// `NORMAL`: in WAL mode the database stays consistent after any crash, but the last few
    /// commits may be lost if the machine (not just the process) goes down. Faster.
    Normal,
}

impl SyncMode {
    pub(crate) fn pragma_value(self) -> &'static str {
        match self {
            SyncMode::Full => "FULL",
            SyncMode::Normal => "NORMAL",
        }
    }
}

/// Options for [`SqliteStorage::open_with`](crate::SqliteStorage::open_with).
///
/// ```
/// use std::time::Duration;
/// use memory_sqlite::{SqliteOptions, SyncMode};
///
/// let options = SqliteOptions::default()
///     .busy_timeout(Duration::from_secs(10))
///     .max_connections(2)
///     .sync_mode(SyncMode::Normal);
/// assert_eq!(options.busy_timeout, Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SqliteOptions {
    /// How long an operation waits for another connection or process to release the database
    /// before it fails with a retryable error. Default: 5 seconds.
    pub busy_timeout: Duration,
    /// Most connections this store opens to a database file (readers run side by side in WAL
    /// mode; writers take turns). At least 1. Default: 4. An in-memory store always has one.
    pub max_connections: usize,
    /// `PRAGMA synchronous`. Default: [`SyncMode::Full`].
    pub sync_mode: SyncMode,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
            max_connections: 4,
            sync_mode: SyncMode::Full,
        }
    }
}

impl SqliteOptions {
    /// Sets [`busy_timeout`](Self::busy_timeout).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// Sets [`max_connections`](Self::max_connections) (0 counts as 1).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Sets [`sync_mode`](Self::sync_mode).
    pub fn sync_mode(mut self, mode: SyncMode) -> Self {
        self.sync_mode = mode;
        self
    }
}
