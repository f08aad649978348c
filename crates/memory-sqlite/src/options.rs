//! [`SqliteOptions`]: how [`SqliteStorage`](crate::SqliteStorage) opens its database.

use std::time::Duration;

use memory_core::history::HistoryOptions;
pub use memory_core::options::SyncMode;

/// Options for [`SqliteStorage::open_with`](crate::SqliteStorage::open_with).
///
/// ```
/// use std::time::Duration;
/// use memory_sqlite::{SqliteOptions, SyncMode};
///
/// let options = SqliteOptions::default()
///     .busy_timeout(Duration::from_secs(10))
///     .max_connections(2)
///     .sync(SyncMode::Data);
/// assert_eq!(options.busy_timeout, Duration::from_secs(10));
/// assert_eq!(options.sync, SyncMode::Data);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SqliteOptions {
    /// How long an operation waits for another connection or process to release the database
    /// before it fails with a retryable error. Default: 5 seconds.
    pub busy_timeout: Duration,
    /// Most connections this store opens to a database file for reading (readers run side by
    /// side in WAL mode), besides the one connection its writer thread keeps. At least 1.
    /// Default: 4. An in-memory store has one connection in all.
    pub max_connections: usize,
    /// How hard a commit works to survive a crash (`PRAGMA synchronous`, the database being in
    /// WAL mode):
    ///
    /// - [`SyncMode::Full`] (default) → `FULL`: the write-ahead log is flushed to disk
    ///   (`fsync`) at every commit before the write is reported done, so a finished write
    ///   survives a crash of the process and of the machine (power loss).
    /// - [`SyncMode::Data`] → `NORMAL`: commits are not flushed; the log is flushed only when
    ///   it is copied back into the database (a checkpoint). A finished write survives a crash
    ///   of the process; after a power loss or an operating-system crash the last commits may
    ///   be gone, and the database is still consistent (every file old or new, never torn).
    /// - [`SyncMode::None`] → `OFF`: nothing is flushed, not even at checkpoints. A crash of
    ///   the process loses nothing; a power loss may lose recent writes and, rarely, corrupt
    ///   the file. For caches and tests.
    pub sync: SyncMode,
    /// Whether a read (`view`, a listing, a stat, the file count) runs on the calling task when
    /// a connection is free, instead of on tokio's blocking pool. A read in WAL mode never
    /// waits for a writer, so it takes microseconds and saves the hand-off to another thread;
    /// it can wait (up to the busy timeout) only while another process recovers the database
    /// after a crash. Default: `true`. Writes always go to the store's writer thread.
    pub inline_reads: bool,
    /// Open the database read-only, changing nothing on disk (default `false`): the file must
    /// exist and hold a memory store of this release's schema (nothing is created, migrated
    /// or switched to WAL), and every change is refused (`memory_core::Error::Refused`,
    /// "/memories is read-only"). While no process has the database open (no `-wal` file
    /// beside it) it is read as immutable, so SQLite creates no `-wal` or `-shm` file either;
    /// a database another process has open is read through its write-ahead log as usual.
    pub read_only: bool,
    /// When a written file's words go into the search index (default
    /// [`IndexMode::Batched`]). Every mode finds the same files: a search first indexes every
    /// row still marked, so a search right after a write finds it. The modes differ only in
    /// who pays for the index, and when.
    pub index: IndexMode,
    /// Whether the store keeps each file's earlier versions, how long and how many, and the
    /// session it records them under (the store options `history`, `history_days`,
    /// `history_max`, `history_session`). Default: on, 30 days, every version. A read-only
    /// store reads the history and records nothing.
    pub history: HistoryOptions,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
            max_connections: 4,
            sync: SyncMode::Full,
            inline_reads: true,
            read_only: false,
            index: IndexMode::Batched,
            history: HistoryOptions::default(),
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

    /// Sets [`sync`](Self::sync).
    pub fn sync(mut self, mode: SyncMode) -> Self {
        self.sync = mode;
        self
    }

    /// Sets [`inline_reads`](Self::inline_reads).
    pub fn inline_reads(mut self, inline: bool) -> Self {
        self.inline_reads = inline;
        self
    }

    /// Sets [`read_only`](Self::read_only).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Sets [`index`](Self::index).
    pub fn index(mut self, mode: IndexMode) -> Self {
        self.index = mode;
        self
    }

    /// Sets [`history`](Self::history) ([`HistoryOptions::off`] keeps none).
    ///
    /// ```
    /// use memory_core::history::HistoryOptions;
    /// use memory_sqlite::SqliteOptions;
    /// let options = SqliteOptions::default().history(HistoryOptions::default().with_max_per_file(3));
    /// assert_eq!(options.history.max_per_file, Some(3));
    /// ```
    pub fn history(mut self, history: HistoryOptions) -> Self {
        self.history = history;
        self
    }
}

/// When [`SqliteStorage`](crate::SqliteStorage) puts a written file's words in its search
/// index ([`SqliteOptions::index`], the store URL's `index=write|batched|search`).
///
/// Each write leaves its row marked for indexing (the schema's triggers mark every changed
/// row, as they do for writes by other programs), and indexing a marked row clears its mark.
/// A search indexes every marked row before it runs, so all three modes find the same files.
///
/// ```
/// use memory_sqlite::IndexMode;
/// assert_eq!("batched".parse::<IndexMode>().unwrap(), IndexMode::Batched);
/// assert!("later".parse::<IndexMode>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IndexMode {
    /// The write indexes its file in its own transaction: the index is never behind, and
    /// every write pays for it (an FTS5 segment written, and merged later, per write).
    Write,
    /// The default. The store's writer thread indexes the marked rows many at a time, in a
    /// transaction of their own, off the writes' path: after [`INDEX_BATCH`] writes, once no
    /// write has come for [`INDEX_IDLE`], and when the store closes. A file written many
    /// times in between is indexed once. The index lags at most that many writes, or that
    /// long, behind; a search, which indexes what is left first, never sees the lag.
    #[default]
    Batched,
    /// Only a search indexes, first every row marked since the last. Writes cost what they
    /// would without search; the first search after many writes pays for all of them. For
    /// bulk imports, and for stores written far more often than searched.
    Search,
}

/// Most writes [`IndexMode::Batched`] leaves unindexed before the writer thread indexes them.
pub const INDEX_BATCH: usize = 64;

/// How long the writer thread of an [`IndexMode::Batched`] store waits without a write before
/// it indexes the rows written so far.
pub const INDEX_IDLE: Duration = Duration::from_millis(100);

impl IndexMode {
    /// What the `index` option accepts, for error messages.
    pub const EXPECTED: &'static str = "write, batched or search";
}

impl std::str::FromStr for IndexMode {
    type Err = memory_core::options::OptionsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "write" => Ok(IndexMode::Write),
            "batched" => Ok(IndexMode::Batched),
            "search" => Ok(IndexMode::Search),
            other => Err(memory_core::options::OptionsError::InvalidValue {
                key: "index".to_owned(),
                value: other.to_owned(),
                expected: IndexMode::EXPECTED,
            }),
        }
    }
}

/// `PRAGMA synchronous` for a [`SyncMode`] (see [`SqliteOptions::sync`]).
pub(crate) fn synchronous_pragma(mode: SyncMode) -> &'static str {
    match mode {
        SyncMode::Full => "FULL",
        SyncMode::Data => "NORMAL",
        SyncMode::None => "OFF",
    }
}
