//! rename: files and directories move whole, never overwrite, never into themselves.

use super::*;

/// rename: a file moves byte for byte, to new parents; the source is gone and its emptied
/// directories with it.
pub async fn rename_file(storage: &dyn Storage) {
    // Text, so that text-only stores run it too; binary_content_round_trip renames bytes.
    let body: Vec<u8> = ('\u{20}'..='\u{7e}')
        .rev()
        .chain("é日🧠\r\n".chars())
        .collect::<String>()
        .into_bytes();
    put(storage, "/memories/r/src/only.md", body.clone()).await;
    put(storage, "/memories/r/keep.md", "k").await;
    ok(
        storage,
        "rename a file",
        storage
            .rename(
                &p("/memories/r/src/only.md"),
                &p("/memories/r/n1/n2/moved.md"),
            )
            .await,
    );
    assert_eq!(
        get(storage, "/memories/r/n1/n2/moved.md").await,
        body,
        "{storage}: rename keeps the content byte for byte"
    );
    assert!(
        stat(storage, "/memories/r/src/only.md").await.is_none(),
        "{storage}: after rename nothing is at the source"
    );
    assert!(
        stat(storage, "/memories/r/src").await.is_none(),
        "{storage}: rename removes the source directory it emptied"
    );
    assert!(
        is_dir(&stat(storage, "/memories/r/n1/n2").await),
        "{storage}: rename creates the destination's parents"
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/r/keep.md", "/memories/r/n1/n2/moved.md"]),
        "{storage}: rename moves one file and touches nothing else"
    );
}

/// rename: a directory moves with every file below it (hidden ones too), nothing is left at
/// the source, and a sibling sharing the name prefix stays.
pub async fn rename_directory_moves_every_file(storage: &dyn Storage) {
    let files = [
        ("/memories/proj/a.md", "a"),
        ("/memories/proj/.hidden", "h"),
        ("/memories/proj/sub/b.md", "b"),
        ("/memories/proj/sub/deep/c.md", ""),
    ];
    for (path, body) in files {
        put(storage, path, body).await;
    }
    put(storage, "/memories/project.md", "sibling").await;
    put(storage, "/memories/proj2/x.md", "sibling dir").await;
    ok(
        storage,
        "rename a directory",
        storage
            .rename(&p("/memories/proj"), &p("/memories/archive/2024/proj"))
            .await,
    );
    for (path, body) in files {
        let moved = path.replacen("/memories/proj", "/memories/archive/2024/proj", 1);
        assert_eq!(
            get(storage, &moved).await,
            body.as_bytes(),
            "{storage}: rename of a directory moves {path} to {moved} with its content"
        );
    }
    assert!(
        stat(storage, "/memories/proj").await.is_none(),
        "{storage}: after renaming a directory nothing is at the source"
    );
    assert!(
        list_paths(storage, "/memories/proj").await.is_empty(),
        "{storage}: after renaming a directory no file is left below the source"
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&[
            "/memories/archive/2024/proj/.hidden",
            "/memories/archive/2024/proj/a.md",
            "/memories/archive/2024/proj/sub/b.md",
            "/memories/archive/2024/proj/sub/deep/c.md",
            "/memories/proj2/x.md",
            "/memories/project.md",
        ]),
        "{storage}: rename of a directory moves exactly the files below it"
    );
    // Into a name that shares the source's prefix: not "into itself".
    ok(
        storage,
        "rename a directory to a longer sibling name",
        storage
            .rename(&p("/memories/proj2"), &p("/memories/proj2x"))
            .await,
    );
    assert_eq!(
        get(storage, "/memories/proj2x/x.md").await,
        b"sibling dir",
        "{storage}: rename /memories/proj2 to /memories/proj2x (a prefix, not a subtree) works"
    );
}

/// rename: nothing at `from` is NotFound, checked before anything else (even when `to` is
/// taken or below a file).
pub async fn rename_missing_is_not_found(storage: &dyn Storage) {
    put(storage, "/memories/rm/taken.md", "t").await;
    for to in [
        "/memories/rm/new.md",
        "/memories/rm/taken.md",
        "/memories/rm/taken.md/x",
    ] {
        let e = err(
            storage,
            &format!("rename a missing path to {to}"),
            storage.rename(&p("/memories/rm/missing.md"), &p(to)).await,
        );
        assert!(
            matches!(&e, Error::NotFound { path } if path.as_str() == "/memories/rm/missing.md"),
            "{storage}: rename of a missing source is NotFound naming the source (checked \
             first), with to = {to}, got {e:?}"
        );
    }
    let e = err(
        storage,
        "rename from below a file",
        storage
            .rename(&p("/memories/rm/taken.md/x"), &p("/memories/rm/y"))
            .await,
    );
    assert!(
        matches!(e, Error::NotFound { .. }),
        "{storage}: rename from a path below a file is NotFound, got {e:?}"
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/rm/taken.md"]),
        "{storage}: a rename that found nothing changes nothing"
    );
}

/// rename: never overwrites: a file or a directory at `to` is AlreadyExists, for files and
/// directories alike, and both sides stay as they were.
pub async fn rename_never_overwrites(storage: &dyn Storage) {
    put(storage, "/memories/no/f1.md", "one").await;
    put(storage, "/memories/no/f2.md", "two").await;
    put(storage, "/memories/no/d1/x.md", "x1").await;
    put(storage, "/memories/no/d2/x.md", "x2").await;
    let before = list_paths(storage, "/memories").await;
    for (from, to) in [
        ("/memories/no/f1.md", "/memories/no/f2.md"),
        ("/memories/no/f1.md", "/memories/no/d1"),
        ("/memories/no/d1", "/memories/no/f2.md"),
        ("/memories/no/d1", "/memories/no/d2"),
        ("/memories/no/f1.md", "/memories"),
    ] {
        let e = err(
            storage,
            &format!("rename {from} onto {to}"),
            storage.rename(&p(from), &p(to)).await,
        );
        assert!(
            matches!(&e, Error::AlreadyExists { path } if path.as_str() == to),
            "{storage}: rename {from} onto the existing {to} is AlreadyExists naming it, \
             got {e:?}"
        );
    }
    assert_eq!(
        list_paths(storage, "/memories").await,
        before,
        "{storage}: a refused rename moves nothing"
    );
    for (path, body) in [
        ("/memories/no/f1.md", "one"),
        ("/memories/no/f2.md", "two"),
        ("/memories/no/d1/x.md", "x1"),
        ("/memories/no/d2/x.md", "x2"),
    ] {
        assert_eq!(
            get(storage, path).await,
            body.as_bytes(),
            "{storage}: rename never overwrites: {path} keeps its content"
        );
    }
}

/// rename: `to` below `from` is RenameIntoItself; `to == from` is refused (RenameIntoItself
/// or AlreadyExists); `/memories` cannot move. Nothing changes.
pub async fn rename_into_itself(storage: &dyn Storage) {
    put(storage, "/memories/self/a.md", "a").await;
    put(storage, "/memories/file.md", "f").await;
    for (from, to) in [
        ("/memories/self", "/memories/self/sub"),
        ("/memories/self", "/memories/self/a.md/deeper"),
        ("/memories", "/memories/elsewhere"),
    ] {
        let e = err(
            storage,
            &format!("rename {from} into {to}"),
            storage.rename(&p(from), &p(to)).await,
        );
        assert!(
            matches!(&e, Error::RenameIntoItself { from: f, to: t }
                if f.as_str() == from && t.as_str() == to),
            "{storage}: rename of {from} to {to}, below itself, is RenameIntoItself, got {e:?}"
        );
    }
    for same in ["/memories/self", "/memories/file.md"] {
        let e = err(
            storage,
            &format!("rename {same} onto itself"),
            storage.rename(&p(same), &p(same)).await,
        );
        assert!(
            matches!(
                e,
                Error::RenameIntoItself { .. } | Error::AlreadyExists { .. }
            ),
            "{storage}: rename of {same} onto itself is refused (RenameIntoItself or \
             AlreadyExists), got {e:?}"
        );
    }
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/file.md", "/memories/self/a.md"]),
        "{storage}: a rename into itself moves nothing"
    );
}

/// rename: an ancestor of `to` that is a file is ParentIsFile naming that ancestor; nothing
/// moves.
pub async fn rename_to_below_file(storage: &dyn Storage) {
    put(storage, "/memories/rp/file.md", "f").await;
    put(storage, "/memories/rp/src.md", "s").await;
    put(storage, "/memories/rp/dir/x.md", "x").await;
    for (from, to) in [
        ("/memories/rp/src.md", "/memories/rp/file.md/child.md"),
        ("/memories/rp/src.md", "/memories/rp/file.md/a/b/c.md"),
        ("/memories/rp/dir", "/memories/rp/file.md/a/dir"),
    ] {
        let e = err(
            storage,
            &format!("rename {from} to {to}"),
            storage.rename(&p(from), &p(to)).await,
        );
        assert!(
            matches!(&e, Error::ParentIsFile { path, parent }
                if path.as_str() == to && parent.as_str() == "/memories/rp/file.md"),
            "{storage}: rename to {to} is ParentIsFile naming the file ancestor \
             /memories/rp/file.md, got {e:?}"
        );
    }
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&[
            "/memories/rp/dir/x.md",
            "/memories/rp/file.md",
            "/memories/rp/src.md"
        ]),
        "{storage}: a rename refused with ParentIsFile moves nothing"
    );
}

/// rename: a file may take the place of a directory emptied by the same kind of move, and a
/// directory may move to where an emptied directory was.
pub async fn rename_after_emptied_directory(storage: &dyn Storage) {
    put(storage, "/memories/ra/d/only.md", "o").await;
    ok(
        storage,
        "rename the only file out of a directory",
        storage
            .rename(&p("/memories/ra/d/only.md"), &p("/memories/ra/only.md"))
            .await,
    );
    ok(
        storage,
        "rename a file to where an emptied directory was",
        storage
            .rename(&p("/memories/ra/only.md"), &p("/memories/ra/d"))
            .await,
    );
    assert_eq!(
        get(storage, "/memories/ra/d").await,
        b"o",
        "{storage}: a file can move to where a directory was emptied"
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/ra/d"]),
        "{storage}: moves through an emptied directory leave exactly one file"
    );
}
