//! delete: files, subtrees, `/memories`, and no empty directories left behind.

use super::*;

/// delete: a file is removed and nothing else is.
pub async fn delete_file(storage: &dyn Storage) {
    put(storage, "/memories/del/a.md", "a").await;
    put(storage, "/memories/del/b.md", "b").await;
    ok(
        storage,
        "delete a file",
        storage.delete(&p("/memories/del/a.md")).await,
    );
    assert!(
        stat(storage, "/memories/del/a.md").await.is_none(),
        "{storage}: delete removes the file"
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/del/b.md"]),
        "{storage}: delete of a file removes only that file"
    );
}

/// delete: a directory goes with every file below it; a sibling sharing a name prefix stays.
pub async fn delete_directory_removes_subtree(storage: &dyn Storage) {
    for path in [
        "/memories/tree/a.md",
        "/memories/tree/sub/b.md",
        "/memories/tree/sub/deeper/c.md",
        "/memories/tree/.hidden",
        "/memories/treehouse.md",
        "/memories/tree2/d.md",
    ] {
        put(storage, path, path).await;
    }
    ok(
        storage,
        "delete a directory",
        storage.delete(&p("/memories/tree")).await,
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/tree2/d.md", "/memories/treehouse.md"]),
        "{storage}: delete of a directory removes every file below it (hidden ones too) and \
         nothing that only shares a name prefix"
    );
    for gone in [
        "/memories/tree",
        "/memories/tree/sub",
        "/memories/tree/sub/deeper",
    ] {
        assert!(
            stat(storage, gone).await.is_none(),
            "{storage}: after delete of a directory, {gone} no longer exists"
        );
    }
}

/// delete: `/memories` removes every file, and the root still exists (empty).
pub async fn delete_root_removes_everything(storage: &dyn Storage) {
    put(storage, "/memories/x.md", "x").await;
    put(storage, "/memories/y/z.md", "z").await;
    put(storage, "/memories/.hidden", "h").await;
    ok(
        storage,
        "delete /memories",
        storage.delete(&MemoryPath::root()).await,
    );
    assert!(
        list_paths(storage, "/memories").await.is_empty(),
        "{storage}: delete of /memories removes every file"
    );
    assert!(
        is_dir(&stat(storage, "/memories").await),
        "{storage}: /memories still exists after delete of /memories"
    );
    ok(
        storage,
        "delete an empty /memories",
        storage.delete(&MemoryPath::root()).await,
    );
    put(storage, "/memories/again.md", "again").await;
    assert_eq!(
        get(storage, "/memories/again.md").await,
        b"again",
        "{storage}: the store works after delete of /memories"
    );
}

/// delete: nothing at the path (missing, below a file, a name prefix) is NotFound and changes
/// nothing.
pub async fn delete_missing_is_not_found(storage: &dyn Storage) {
    put(storage, "/memories/dm/file.md", "keep").await;
    for path in [
        "/memories/nope.md",
        "/memories/dm/file.md/below",
        "/memories/dm/file",
        "/memories/d",
    ] {
        let e = err(
            storage,
            &format!("delete {path}"),
            storage.delete(&p(path)).await,
        );
        assert!(
            matches!(&e, Error::NotFound { path: got } if got.as_str() == path),
            "{storage}: delete of {path} (nothing there) is NotFound naming it, got {e:?}"
        );
    }
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/dm/file.md"]),
        "{storage}: a delete that found nothing changes nothing"
    );
}

/// delete: directories left without files disappear, up to the first one that still holds a
/// file; `/memories` stays.
pub async fn delete_leaves_no_empty_directories(storage: &dyn Storage) {
    put(storage, "/memories/e1/e2/e3/only.md", "x").await;
    put(storage, "/memories/e1/keep.md", "k").await;
    ok(
        storage,
        "delete the only file of a deep directory",
        storage.delete(&p("/memories/e1/e2/e3/only.md")).await,
    );
    for gone in ["/memories/e1/e2/e3", "/memories/e1/e2"] {
        assert!(
            stat(storage, gone).await.is_none(),
            "{storage}: after its last file is deleted, the directory {gone} is gone"
        );
    }
    assert!(
        is_dir(&stat(storage, "/memories/e1").await),
        "{storage}: a directory that still holds a file stays"
    );
    let e = err(
        storage,
        "delete an emptied directory",
        storage.delete(&p("/memories/e1/e2")).await,
    );
    assert!(
        matches!(e, Error::NotFound { .. }),
        "{storage}: an emptied directory is gone, so deleting it is NotFound, got {e:?}"
    );
    ok(
        storage,
        "delete the last file",
        storage.delete(&p("/memories/e1/keep.md")).await,
    );
    assert!(
        stat(storage, "/memories/e1").await.is_none(),
        "{storage}: after the last file below it is deleted, /memories/e1 is gone"
    );
    assert!(
        is_dir(&stat(storage, "/memories").await),
        "{storage}: /memories stays when the last file goes"
    );
    // A file may now be created where an emptied directory was.
    ok(
        storage,
        "create a file where an emptied directory was",
        storage
            .write(&p("/memories/e1"), b"file now".to_vec(), WriteMode::Create)
            .await,
    );
}
