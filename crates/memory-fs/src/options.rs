//! [`FsOptions`] and [`Blocking`]: how a folder store is opened and where its work runs.

use std::fmt;
use std::time::Duration;

pub use memory_core::history::HistoryOptions;
pub use memory_core::options::SyncMode;

/// Settings of an [`FsStorage`](crate::FsStorage); the defaults suit every normal use.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FsOptions {
    /// How much of a write is synced to disk before it returns (the `sync` option):
    /// [`SyncMode::Full`] (the default) syncs the written file and its folder, so a power loss
    /// cannot lose or tear an acknowledged write; [`SyncMode::Data`] syncs the file only (a
    /// crash may lose the newest names, never tear a file); [`SyncMode::None`] syncs nothing,
    /// for throw-away stores (tests, caches): a killed process loses nothing, a power loss may
    /// leave recent files empty or old. Every mode writes through a fresh temporary file and a
    /// rename, so no mode ever shows a torn file to a reader, and (with history off) in none
    /// does a replaced file's content stay on disk under any name once the write returns.
    pub sync: SyncMode,
    /// Temporary files at least this old are left-overs of a crashed writer and are removed
    /// when the store is opened; younger ones may belong to a writer in another process that
    /// is still running. Default 10 minutes.
    pub stale_temp_age: Duration,
    /// Where the blocking file-system work of each call runs. Default [`Blocking::Auto`].
    pub blocking: Blocking,
    /// Open without changing anything on disk (default `false`): no folder, lock file or
    /// count file is created, no stale temporary file removed, and every change is refused
    /// ([`memory_core::Error::Refused`], "/memories is read-only"). `base/memories` must
    /// exist. For reading a store that must stay byte for byte as it is (a dream's source).
    pub read_only: bool,
    /// Take the portable path of every operation (the `portable` option, default `false`):
    /// what macOS and Windows run, here too. On Linux a store otherwise resolves paths with
    /// one `openat2` call, creates files with `RENAME_NOREPLACE` and reads folders into one
    /// buffer where the kernel allows; the portable paths give the same answers with more
    /// system calls (cap-std, one name at a time, never following a link). For tests of those
    /// paths, and for systems whose kernel misreports the fast calls.
    pub portable: bool,
    /// Whether and how long each file's earlier versions are kept (the options `history`,
    /// `history_days`, `history_max`, `history_session`; default on, 30 days), in
    /// `base/.memory-history` (see the crate README).
    pub history: HistoryOptions,
}

impl Default for FsOptions {
    fn default() -> Self {
        FsOptions {
            sync: SyncMode::Full,
            stale_temp_age: Duration::from_secs(600),
            blocking: Blocking::Auto,
            read_only: false,
            portable: false,
            history: HistoryOptions::default(),
        }
    }
}

/// Where an [`FsStorage`](crate::FsStorage) call does its blocking file-system work.
///
/// Handing each call to tokio's blocking pool costs a thread hop, several times the work of
/// reading a small file. Running it inline on the caller's thread is free, but while a call
/// waits for the disk (an fsync can take milliseconds) the thread runs nothing else: on a
/// multi-thread runtime serving many tasks that stalls every task queued on that worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Blocking {
    /// Decide per call (the default): inline outside a tokio runtime and on a current-thread
    /// runtime (one command at a time, as in `memory exec`); on a multi-thread runtime, reads
    /// (`read`, `stat`, `file_count`: page-cache work of microseconds for the files a memory
    /// holds) and changes that sync nothing run inline, while listings and changes that sync
    /// to disk go to the blocking pool.
    #[default]
    Auto,
    /// Always on the caller's thread.
    Inline,
    /// Always on tokio's blocking pool (`spawn_blocking`), outside a runtime inline.
    Spawn,
}

impl Blocking {
    /// The accepted spellings of the `blocking` option.
    pub const EXPECTED: &'static str = "auto, inline or spawn";

    /// The option's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Blocking::Auto => "auto",
            Blocking::Inline => "inline",
            Blocking::Spawn => "spawn",
        }
    }
}

impl fmt::Display for Blocking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Blocking {
    type Err = memory_core::options::OptionsError;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Blocking::Auto),
            "inline" => Ok(Blocking::Inline),
            "spawn" => Ok(Blocking::Spawn),
            other => Err(memory_core::options::OptionsError::InvalidValue {
                key: "blocking".to_owned(),
                value: other.to_owned(),
                expected: Blocking::EXPECTED,
            }),
        }
    }
}

/// What a call does, for [`Blocking::Auto`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// Reads one file or one entry.
    Read,
    /// Walks a folder.
    List,
    /// Changes the store (and syncs, unless syncing is off).
    Change,
}

impl FsOptions {
    /// Sets [`sync`](Self::sync).
    pub fn sync(mut self, sync: SyncMode) -> Self {
        self.sync = sync;
        self
    }

    /// Shorthand for [`sync`](Self::sync): `true` is [`SyncMode::Full`], `false`
    /// [`SyncMode::None`].
    pub fn fsync(self, fsync: bool) -> Self {
        self.sync(if fsync {
            SyncMode::Full
        } else {
            SyncMode::None
        })
    }

    /// Sets [`stale_temp_age`](Self::stale_temp_age).
    pub fn stale_temp_age(mut self, age: Duration) -> Self {
        self.stale_temp_age = age;
        self
    }

    /// Sets [`blocking`](Self::blocking).
    pub fn blocking(mut self, blocking: Blocking) -> Self {
        self.blocking = blocking;
        self
    }

    /// Sets [`read_only`](Self::read_only).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Sets [`portable`](Self::portable).
    pub fn portable(mut self, portable: bool) -> Self {
        self.portable = portable;
        self
    }

    /// Sets [`history`](Self::history) ([`HistoryOptions::off`] keeps none).
    pub fn history(mut self, history: HistoryOptions) -> Self {
        self.history = history;
        self
    }
}
