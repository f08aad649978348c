//! What the history commands (`log`, `cat --version`, `diff`, `restore`, `redact`) share: the
//! `--version V` argument, and their failures in the program's words and statuses.

use memory_core::{Error, MemoryPath};

use super::{Exit, Failure};

/// `--version V`: a version number as `memory log` prints it, a whole number from 1.
pub(crate) fn parse_version(raw: &str) -> Result<u64, String> {
    match raw.trim().parse::<u64>() {
        Ok(0) => Err("versions are numbered from 1 (see `memory log PATH`)".to_owned()),
        Ok(number) => Ok(number),
        Err(_) => Err(format!(
            "`{raw}` is not a version number: give a whole number from 1, as `memory log PATH` \
             shows them"
        )),
    }
}

/// A store error met by a history command while doing `doing` (e.g. "list the versions of
/// /memories/a.md"): the history errors become their own message with status 2, the rest as
/// [`Failure::storage`] says.
pub(crate) fn failure(doing: &str, err: Error) -> Failure {
    match err {
        Error::HistoryOff => Failure::new(
            Exit::Usage,
            "history is off for this store (it was opened with history=off): it keeps no \
             earlier versions",
        ),
        Error::NoRevision { path, number } => Failure::new(
            Exit::Usage,
            format!("{path} has no version {number} (`memory log {path}` lists its versions)"),
        ),
        Error::RevisionWithoutContent {
            path,
            number,
            redacted: true,
        } => Failure::new(
            Exit::Usage,
            format!("version {number} of {path} was redacted: its content is gone for good"),
        ),
        Error::RevisionWithoutContent {
            path,
            number,
            redacted: false,
        } => Failure::new(
            Exit::Usage,
            format!(
                "version {number} of {path} records its deletion and holds no content; pick \
                 an earlier version (`memory log {path}`)"
            ),
        ),
        Error::RevisionIsCurrent { path, number } => Failure::new(
            Exit::Usage,
            format!(
                "version {number} is the current content of {path}, which redaction never \
                 touches: overwrite or delete the file first, then redact its past versions"
            ),
        ),
        Error::Unsupported { .. } => Failure::new(
            Exit::Usage,
            "this store keeps no history of its files (a versioned store keeps its own \
             versions: see `memory store history`)",
        ),
        other => Failure::storage(doing, other),
    }
}

/// `path`, unless it is `/memories` itself, which has no versions of its own to name.
pub(crate) fn file_path(path: MemoryPath, command: &str) -> Result<MemoryPath, Failure> {
    if path.is_root() {
        return Err(Failure::new(
            Exit::Usage,
            format!("{command} needs a file's path (e.g. /memories/notes.md), not /memories"),
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_whole_numbers_from_one() {
        assert_eq!(parse_version("3"), Ok(3));
        assert!(parse_version("0").unwrap_err().contains("from 1"));
        for bad in ["x", "-1", "1.5", ""] {
            assert!(
                parse_version(bad)
                    .unwrap_err()
                    .contains("not a version number"),
                "{bad}"
            );
        }
    }

    #[test]
    fn history_errors_are_usage_errors_naming_the_version() {
        let path = MemoryPath::parse("/memories/a.md").unwrap();
        let cases = [
            (Error::HistoryOff, "history is off for this store"),
            (
                Error::NoRevision {
                    path: path.clone(),
                    number: 9,
                },
                "/memories/a.md has no version 9",
            ),
            (
                Error::RevisionWithoutContent {
                    path: path.clone(),
                    number: 2,
                    redacted: true,
                },
                "version 2 of /memories/a.md was redacted",
            ),
            (
                Error::RevisionWithoutContent {
                    path: path.clone(),
                    number: 3,
                    redacted: false,
                },
                "records its deletion",
            ),
            (
                Error::RevisionIsCurrent {
                    path: path.clone(),
                    number: 4,
                },
                "version 4 is the current content",
            ),
        ];
        for (err, text) in cases {
            let failure = failure("read", err);
            assert_eq!(failure.exit, Exit::Usage);
            assert!(failure.message.contains(text), "{failure}");
        }
        let failure = failure("read", Error::NotFound { path });
        assert_eq!(failure.exit, Exit::NotFound);
    }
}
