//! How a command of the `memory` program fails: [`Failure`] (a message and its exit status,
//! from the one table in [`crate::exit`]), shared by every command.

use std::fmt;

use memory_core::Error;

use crate::exit::Exit;

/// A failed command: the message for standard error and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) exit: Exit,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(exit: Exit, message: impl Into<String>) -> Self {
        Failure {
            exit,
            message: message.into(),
        }
    }

    /// A storage error met while doing `doing` (e.g. "read /memories/a.md").
    ///
    /// The semantic errors become their own message and status; a backend failure's detail
    /// (which may hold host paths) goes to the debug log only.
    pub(crate) fn storage(doing: &str, err: Error) -> Self {
        match err {
            Error::NotFound { path } => {
                Failure::new(Exit::NotFound, format!("{path} does not exist"))
            }
            Error::AlreadyExists { path } => {
                Failure::new(Exit::Exists, format!("{path} already exists"))
            }
            Error::ParentIsFile { path, parent } => Failure::new(
                Exit::Exists,
                format!("cannot create {path}: {parent} is a file"),
            ),
            Error::RenameIntoItself { from, .. } => {
                Failure::new(Exit::Usage, format!("cannot move {from} into itself"))
            }
            // A store's own rule (a read-only mount, ...): its reason names memory paths only.
            Error::Refused { path, reason } => {
                Failure::new(Exit::Failed, format!("cannot change {path}: {reason}"))
            }
            Error::Conflict { path } => Failure::new(
                Exit::Failed,
                format!("{path} was modified by someone else at the same time; try again"),
            ),
            other => {
                tracing::debug!(error = %other, error_debug = ?other, "store failure");
                let hint = if other.is_retryable() {
                    "try again in a moment"
                } else {
                    "run with RUST_LOG=debug for the details"
                };
                Failure::new(Exit::Failed, format!("the store failed to {doing}; {hint}"))
            }
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What a command returns.
pub(crate) type Outcome = Result<(), Failure>;

/// `error: cause: cause ...`, skipping causes already in the text.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use memory_core::MemoryPath;

    use super::*;

    #[test]
    fn storage_errors_have_statuses_and_no_backend_detail() {
        let path = MemoryPath::parse("/memories/a").unwrap();
        let parent = MemoryPath::parse("/memories").unwrap();
        let cases = [
            (Error::NotFound { path: path.clone() }, Exit::NotFound),
            (Error::AlreadyExists { path: path.clone() }, Exit::Exists),
            (
                Error::ParentIsFile {
                    path: path.clone(),
                    parent,
                },
                Exit::Exists,
            ),
            (Error::Conflict { path: path.clone() }, Exit::Failed),
            (
                Error::Refused {
                    path: path.clone(),
                    reason: "it is mounted read-only".into(),
                },
                Exit::Failed,
            ),
        ];
        for (err, exit) in cases {
            assert_eq!(Failure::storage("read", err).exit, exit);
        }
        let failure = Failure::storage(
            "read /memories/a",
            Error::backend("fs", "open /secret/host/path failed"),
        );
        assert_eq!(failure.exit, Exit::Failed);
        assert!(!failure.message.contains("/secret"), "{failure}");
        assert!(failure.message.contains("read /memories/a"), "{failure}");
    }
}
