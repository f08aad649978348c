//! How the store's errors become [`memory_core::Error`]s (the tool words them; we never do).

use memory_core::{Error, MemoryPath};
use memory_store::{Reason, StoreError};

/// The backend name in logs and in `Error::Backend`.
pub(crate) const BACKEND: &str = "MemoryStore";

/// A store path (`/a/b`) as the memory path the tool knows (`/memories/a/b`), if it is one.
pub(crate) fn memory_path_of(store_path: &str) -> Option<MemoryPath> {
    MemoryPath::parse(&format!("/memories{store_path}")).ok()
}

/// The memory path's store path: `/memories/a/b` → `/a/b` (`None` for `/memories`).
pub(crate) fn store_path_of(path: &MemoryPath) -> Option<String> {
    (!path.is_root()).then(|| format!("/{}", path.relative()))
}

/// The `path_prefix` listing everything below `path` (`/` for `/memories`).
pub(crate) fn prefix_of(path: &MemoryPath) -> String {
    match store_path_of(path) {
        None => "/".to_owned(),
        Some(p) => format!("{p}/"),
    }
}

/// An error with no better mapping: `NotFound` and precondition failures keep their meaning,
/// a refused request becomes [`Error::Refused`] with a fixed reason (the store's own message
/// goes to the log), the rest is a backend failure.
pub(crate) fn to_core(e: StoreError, path: &MemoryPath) -> Error {
    match e {
        StoreError::NotFound { .. } => Error::NotFound { path: path.clone() },
        StoreError::PreconditionFailed { .. } => Error::Conflict { path: path.clone() },
        StoreError::InvalidRequest { message, reason } => {
            tracing::info!(path = %path, message, reason = reason.as_str(), "the memory store refused a write");
            Error::Refused {
                path: path.clone(),
                reason: refusal_text(reason).to_owned(),
            }
        }
        StoreError::PathConflict {
            conflicting_path, ..
        } => conflict_error(path, &conflicting_path),
        e if e.is_retryable() => Error::retryable(BACKEND, e),
        e => Error::backend(BACKEND, e),
    }
}

/// The model-facing text for a store's refusal: one fixed phrase per [`Reason`] (the store's
/// own message goes to the log, never to the model).
pub(crate) fn refusal_text(reason: Reason) -> &'static str {
    match reason {
        Reason::StoreArchived => {
            "the memory store is archived; its memories can be read but not created or changed"
        }
        Reason::StoreFull => "the memory store is full; delete or consolidate memories first",
        Reason::PathNotNfc => {
            "the memory store accepts only names in Unicode normalization form C (NFC)"
        }
        Reason::PathFormatCharacter => {
            "the memory store does not accept invisible formatting characters in names"
        }
        Reason::PathControlCharacter => {
            "the memory store does not accept control characters in names"
        }
        Reason::ContentTooLarge => "a memory in the store holds at most 102400 bytes",
        Reason::PathInvalid => "the memory store does not accept this name",
        _ => "the memory store does not accept this change",
    }
}

/// The store path's refusal by the store's path rules, checked before sending anything.
pub(crate) fn check_store_path(path: &MemoryPath, store_path: &str) -> Result<(), Error> {
    memory_store::validate_path(store_path).map_err(|e| to_core(e, path))
}

/// A refused write of bytes that are not UTF-8 text.
pub(crate) fn not_text(path: &MemoryPath) -> Error {
    Error::Refused {
        path: path.clone(),
        reason: "the memory store holds UTF-8 text only".to_owned(),
    }
}

/// `memory_path_conflict_error` on a write of `path`: the memory in the way is at `path`
/// itself or below it (the path is taken), or at an ancestor (a file is in the way).
pub(crate) fn conflict_error(path: &MemoryPath, conflicting_store_path: &str) -> Error {
    match memory_path_of(conflicting_store_path) {
        Some(other) if path.starts_with(&other) && other != *path => Error::ParentIsFile {
            path: path.clone(),
            parent: other,
        },
        _ => Error::AlreadyExists { path: path.clone() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> MemoryPath {
        MemoryPath::parse(s).unwrap()
    }

    #[test]
    fn paths_map_both_ways() {
        assert_eq!(
            store_path_of(&p("/memories/a/b.md")).as_deref(),
            Some("/a/b.md")
        );
        assert_eq!(store_path_of(&MemoryPath::root()), None);
        assert_eq!(memory_path_of("/a/b.md"), Some(p("/memories/a/b.md")));
        assert_eq!(memory_path_of("/a\\b"), None);
        assert_eq!(prefix_of(&MemoryPath::root()), "/");
        assert_eq!(prefix_of(&p("/memories/a")), "/a/");
    }

    #[test]
    fn conflicts_name_the_file_in_the_way() {
        let target = p("/memories/a/b/c.md");
        assert!(matches!(
            conflict_error(&target, "/a"),
            Error::ParentIsFile { parent, .. } if parent == p("/memories/a")
        ));
        assert!(matches!(
            conflict_error(&target, "/a/b/c.md"),
            Error::AlreadyExists { .. }
        ));
        assert!(matches!(
            conflict_error(&target, "/a/b/c.md/d"),
            Error::AlreadyExists { .. }
        ));
    }

    #[test]
    fn refusals_never_echo_the_store_message() {
        // The text comes from the reason alone, whatever the message says.
        let e = to_core(
            StoreError::refused(
                Reason::StoreFull,
                "is archived, NFC, bytes; a memory holds at most",
            ),
            &p("/memories/a.md"),
        );
        match e {
            Error::Refused { reason, .. } => {
                assert_eq!(
                    reason,
                    "the memory store is full; delete or consolidate memories first"
                );
            }
            other => panic!("{other:?}"),
        }
        let e = check_store_path(&p("/memories/cafe\u{301}.md"), "/cafe\u{301}.md").unwrap_err();
        assert!(
            matches!(&e, Error::Refused { reason, .. } if reason.contains("NFC")),
            "{e:?}"
        );
    }
}
