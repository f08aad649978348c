//! The exit statuses of the `memory` program: one table for every command.

/// The exit-status table shown by the commands' `--help`, as a literal so that `concat!` can
/// append it to longer help texts.
macro_rules! exit_status_help {
    () => {
        "Exit status:
  0  success
  1  the store failed, or a local file could not be read or written
  2  usage error: bad arguments, an invalid /memories path or duration, or a store
     URL that is invalid or cannot be opened (a missing or wrong encryption key too);
     for log, cat --version, diff, restore and redact also a version the file does not
     have or whose content is gone, or a store that keeps no history (history=off)
  3  not found: nothing at the path (for cat: not a file), or the store does not exist
  4  already exists: the destination is taken (mv, put --no-overwrite), or import /
     copy would overwrite files (pass --overwrite)
  5  import: the archive is damaged, truncated or altered (checksum mismatch)"
    };
}

/// The exit-status table, for `after_help`.
pub(crate) const EXIT_STATUS_HELP: &str = exit_status_help!();

/// Why a command stopped; each has its exit status (the table in [`EXIT_STATUS_HELP`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 1: the store failed, or a local file could not be read or written.
    Failed = 1,
    /// 2: bad arguments, or a store that cannot be opened (as clap exits on usage errors).
    Usage = 2,
    /// 3: nothing at the path, or no such store.
    NotFound = 3,
    /// 4: the destination is taken.
    Exists = 4,
    /// 5: a damaged archive.
    BadArchive = 5,
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}
