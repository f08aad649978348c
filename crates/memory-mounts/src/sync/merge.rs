//! The merge rules of one path, as a pure function: the official SDK's
//! `SessionMemoryStores._sync_path` (anthropic/lib/tools/_memories.py), with one addition: a
//! local edit that loses to the store is kept beside the file as a conflict copy.

use memory_store::Memory;

/// What a pass does with one path, decided from its baseline, local and remote hashes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Nothing to move; the path's baseline becomes this (`None`: forgotten).
    Settled(Option<String>),
    /// Write the store's content to the file. Until the write succeeds the baseline stays
    /// `keep`. `edited`: the file holds a local edit that loses (kept as a conflict copy).
    Pull {
        remote: Memory,
        keep: Option<String>,
        edited: bool,
    },
    /// Upload the file: an update of `existing` with its hash as precondition, or a create.
    /// When the upload fails the baseline becomes `on_failure`.
    Upload {
        local_sha: String,
        existing: Option<Memory>,
        on_failure: Option<String>,
    },
    /// The store deleted it and the file still holds the baseline: remove the file, if it
    /// still holds `base` when removed.
    RemoveLocal { base: String },
    /// The file was deleted locally and the store still holds the baseline: a server delete,
    /// subject to the corroboration delay, the marker check and the per-pass cap.
    DeleteRemote { remote: Memory, base: String },
}

/// The step for a path with baseline `base`, local hash `local` (`None`: no file) and the
/// store's memory `remote`. `read_only`: never push. `refused`: the hash the store last
/// refused for this path.
pub(crate) fn decide(
    base: Option<&str>,
    local: Option<&str>,
    remote: Option<&Memory>,
    read_only: bool,
    refused: Option<&str>,
) -> Step {
    let owned = |sha: Option<&str>| sha.map(str::to_owned);
    if let (None, Some(base), Some(remote)) = (local, base, remote)
        && remote.content_sha256 == base
        && !read_only
    {
        return Step::DeleteRemote {
            remote: remote.clone(),
            base: base.to_owned(),
        };
    }
    let Some(remote) = remote else {
        let Some(local) = local else {
            return Step::Settled(None);
        };
        if let Some(base) = base
            && local == base
        {
            return Step::RemoveLocal {
                base: base.to_owned(),
            };
        }
        // New here, or deleted on the store while edited here: the file is the only copy, so
        // it is (re-)created, unless this sync never pushes or the store refused these bytes.
        if read_only || refused == Some(local) {
            return Step::Settled(None);
        }
        return Step::Upload {
            local_sha: local.to_owned(),
            existing: None,
            on_failure: None,
        };
    };
    let remote_sha = remote.content_sha256.as_str();
    let remote_changed = Some(remote_sha) != base;
    let locally_edited = local.is_some_and(|l| Some(l) != base && l != remote_sha);
    if local.is_none() && base.is_some() {
        // Deleted here while the store changed it: the store's version comes back.
        if remote_changed {
            return Step::Pull {
                remote: remote.clone(),
                keep: owned(base),
                edited: false,
            };
        }
        return Step::Settled(owned(base));
    }
    if remote_changed {
        if local == Some(remote_sha) {
            return Step::Settled(Some(remote_sha.to_owned()));
        }
        return Step::Pull {
            remote: remote.clone(),
            keep: owned(base),
            edited: locally_edited,
        };
    }
    // Read-only syncs never push, so their local edits stay in the file, unsynced.
    if locally_edited && !read_only {
        if refused == local {
            return Step::Settled(Some(remote_sha.to_owned()));
        }
        return Step::Upload {
            local_sha: owned(local).unwrap_or_default(),
            existing: Some(remote.clone()),
            on_failure: Some(remote_sha.to_owned()),
        };
    }
    Step::Settled(Some(remote_sha.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_store::Timestamp;

    fn memory(sha: &str) -> Memory {
        Memory {
            id: "mem_1".into(),
            memory_store_id: "memstore_1".into(),
            path: "/a.md".into(),
            content: None,
            content_sha256: sha.into(),
            content_size_bytes: 1,
            memory_version_id: "memver_1".into(),
            created_at: Timestamp::from_micros(0),
            updated_at: Timestamp::from_micros(0),
        }
    }

    fn step(base: Option<&str>, local: Option<&str>, remote: Option<&str>) -> Step {
        decide(base, local, remote.map(memory).as_ref(), false, None)
    }

    #[test]
    fn unchanged_everywhere_settles() {
        assert_eq!(
            step(Some("a"), Some("a"), Some("a")),
            Step::Settled(Some("a".into()))
        );
        assert_eq!(step(None, None, None), Step::Settled(None));
    }

    #[test]
    fn a_change_on_one_side_goes_to_the_other() {
        // Only the store changed: pulled.
        assert!(matches!(
            step(Some("a"), Some("a"), Some("b")),
            Step::Pull { edited: false, .. }
        ));
        // New on the store: pulled.
        assert!(matches!(
            step(None, None, Some("b")),
            Step::Pull {
                edited: false,
                keep: None,
                ..
            }
        ));
        // Only the file changed: an update of the store's memory.
        let Step::Upload {
            existing: Some(existing),
            on_failure,
            ..
        } = step(Some("a"), Some("b"), Some("a"))
        else {
            panic!()
        };
        assert_eq!(existing.content_sha256, "a");
        assert_eq!(on_failure.as_deref(), Some("a"));
        // New here: a create.
        assert!(matches!(
            step(None, Some("b"), None),
            Step::Upload { existing: None, .. }
        ));
    }

    #[test]
    fn both_changed_the_store_wins_and_the_edit_is_kept() {
        assert!(matches!(
            step(Some("a"), Some("b"), Some("c")),
            Step::Pull { edited: true, .. }
        ));
        // The same new bytes on both sides: adopted without a fetch.
        assert_eq!(
            step(Some("a"), Some("b"), Some("b")),
            Step::Settled(Some("b".into()))
        );
        // Unknown to the baseline on both sides, with different bytes: a conflict too.
        assert!(matches!(
            step(None, Some("b"), Some("c")),
            Step::Pull { edited: true, .. }
        ));
    }

    #[test]
    fn deletions() {
        // Deleted here, unchanged on the store: a (corroborated) server delete.
        assert!(matches!(
            step(Some("a"), None, Some("a")),
            Step::DeleteRemote { .. }
        ));
        // Deleted here, changed on the store: the store's version is restored.
        assert!(matches!(
            step(Some("a"), None, Some("b")),
            Step::Pull { edited: false, .. }
        ));
        // Deleted on the store, unchanged here: removed here.
        assert_eq!(
            step(Some("a"), Some("a"), None),
            Step::RemoveLocal { base: "a".into() }
        );
        // Deleted on the store, edited here: re-created from the file.
        assert!(matches!(
            step(Some("a"), Some("b"), None),
            Step::Upload { existing: None, .. }
        ));
        // Gone on both sides: forgotten.
        assert_eq!(step(Some("a"), None, None), Step::Settled(None));
    }

    #[test]
    fn read_only_never_pushes() {
        let ro = |base, local, remote: Option<&str>| {
            decide(base, local, remote.map(memory).as_ref(), true, None)
        };
        assert_eq!(ro(None, Some("b"), None), Step::Settled(None));
        assert_eq!(
            ro(Some("a"), Some("b"), Some("a")),
            Step::Settled(Some("a".into()))
        );
        assert_eq!(
            ro(Some("a"), None, Some("a")),
            Step::Settled(Some("a".into()))
        );
        assert_eq!(ro(Some("a"), Some("b"), None), Step::Settled(None));
        // Pulls still happen.
        assert!(matches!(
            ro(Some("a"), Some("a"), Some("c")),
            Step::Pull { .. }
        ));
    }

    #[test]
    fn refused_bytes_wait_for_a_change() {
        let refused = |base, local, remote: Option<&str>| {
            decide(base, local, remote.map(memory).as_ref(), false, Some("b"))
        };
        assert_eq!(refused(None, Some("b"), None), Step::Settled(None));
        assert_eq!(
            refused(Some("a"), Some("b"), Some("a")),
            Step::Settled(Some("a".into()))
        );
        assert!(matches!(
            refused(Some("a"), Some("c"), Some("a")),
            Step::Upload { .. }
        ));
    }
}
