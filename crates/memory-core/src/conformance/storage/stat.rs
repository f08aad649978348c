//! stat (and set_modified, which stat reports): files, directories, what is missing.

use super::*;

/// stat: a file gives `Entry::File` with its path and byte size.
pub async fn stat_file_has_size(storage: &dyn Storage) {
    put(storage, "/memories/s/size.txt", "héllo").await;
    match stat(storage, "/memories/s/size.txt").await {
        Some(Entry::File(meta)) => {
            assert_eq!(
                meta.size, 6,
                "{storage}: stat of a file gives its byte length"
            );
            assert_eq!(
                meta.path.as_str(),
                "/memories/s/size.txt",
                "{storage}: stat of a file names the file"
            );
        }
        other => panic!("{storage}: stat of a file gives Entry::File, got {other:?}"),
    }
}

/// set_modified: a store that answers `true` reports the time given (to the millisecond) in
/// `stat` and `list`, with the content unchanged; a missing path or a directory is
/// `NotFound`. A store that answers `false` changed nothing.
pub async fn set_modified_is_reported(storage: &dyn Storage) {
    use std::time::{Duration, UNIX_EPOCH};
    put(storage, "/memories/t/old.md", "kept").await;
    let when = UNIX_EPOCH + Duration::from_millis(1_600_000_000_123);
    let set = ok(
        storage,
        "set_modified of a file",
        storage.set_modified(&p("/memories/t/old.md"), when).await,
    );
    if !set {
        return;
    }
    match stat(storage, "/memories/t/old.md").await {
        Some(Entry::File(meta)) => assert_eq!(
            meta.modified,
            Some(when),
            "{storage}: stat reports the modification time set_modified gave"
        ),
        other => panic!("{storage}: stat of a file gives Entry::File, got {other:?}"),
    }
    let listed = ok(storage, "list", storage.list(&p("/memories/t")).await);
    assert_eq!(
        listed.iter().map(|m| m.modified).collect::<Vec<_>>(),
        vec![Some(when)],
        "{storage}: list reports the modification time set_modified gave"
    );
    assert_eq!(
        get(storage, "/memories/t/old.md").await,
        b"kept",
        "{storage}: set_modified keeps the content"
    );
    for missing in ["/memories/t/none.md", "/memories/t"] {
        assert!(
            matches!(
                storage.set_modified(&p(missing), when).await,
                Err(Error::NotFound { .. })
            ),
            "{storage}: set_modified of {missing} is NotFound"
        );
    }
}

/// stat: `/memories` (even empty) and every directory with a file below it give
/// `Entry::Directory`.
pub async fn stat_directories(storage: &dyn Storage) {
    assert!(
        is_dir(&stat(storage, "/memories").await),
        "{storage}: stat of /memories in an empty store is a directory"
    );
    put(storage, "/memories/d1/d2/d3/f.md", "x").await;
    for dir in [
        "/memories",
        "/memories/d1",
        "/memories/d1/d2",
        "/memories/d1/d2/d3",
    ] {
        let entry = stat(storage, dir).await;
        assert!(
            is_dir(&entry),
            "{storage}: stat of {dir}, which has a file below it, is a directory, got {entry:?}"
        );
    }
}

/// stat: a missing path, a path below a file and a name that only shares a prefix give `None`.
pub async fn stat_missing_is_none(storage: &dyn Storage) {
    put(storage, "/memories/a/file.md", "x").await;
    for path in [
        "/memories/nothing",
        "/memories/a/file.md/below",
        "/memories/a/file",
        "/memories/a/fi",
        "/memories/a/b",
    ] {
        let entry = stat(storage, path).await;
        assert!(
            entry.is_none(),
            "{storage}: stat of {path} (missing, or below a file) is None, got {entry:?}"
        );
    }
}
