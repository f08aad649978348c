//! list: every file below a directory, sorted, whole segments only.

use super::*;

/// list: every file below the directory at any depth, sorted by path bytes, with sizes.
pub async fn list_sorted_with_sizes(storage: &dyn Storage) {
    let files = [
        "/memories/l/ab",
        "/memories/l/a b",
        "/memories/l/a.md",
        "/memories/l/a/x",
        "/memories/l/a/y/z",
        "/memories/l/aB",
        "/memories/l/Z",
        "/memories/l/é",
        "/memories/l/_",
        "/memories/l/~",
    ];
    for (i, path) in files.iter().enumerate() {
        put(storage, path, vec![b'x'; i * 3]).await;
    }
    let listed = ok(storage, "list", storage.list(&p("/memories/l")).await);
    let got: Vec<&str> = listed.iter().map(|m| m.path.as_str()).collect();
    let mut expected: Vec<&str> = files.to_vec();
    expected.sort();
    assert_eq!(
        got, expected,
        "{storage}: list returns every file at any depth, sorted by path (byte order)"
    );
    for meta in &listed {
        let i = files
            .iter()
            .position(|f| *f == meta.path.as_str())
            .unwrap_or(usize::MAX);
        assert_eq!(
            meta.size,
            (i * 3) as u64,
            "{storage}: list gives each file's byte length ({})",
            meta.path
        );
    }
    let root: Vec<String> = list_paths(storage, "/memories").await;
    assert_eq!(
        root,
        expected.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
        "{storage}: list of /memories returns every file"
    );
}

/// list: hidden files (names starting with `.`) and hidden directories are listed.
pub async fn list_includes_hidden_files(storage: &dyn Storage) {
    put(storage, "/memories/.config", "c").await;
    put(storage, "/memories/h/.hidden.md", "h").await;
    put(storage, "/memories/.dir/inside.md", "i").await;
    put(storage, "/memories/h/node_modules/x.js", "n").await;
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&[
            "/memories/.config",
            "/memories/.dir/inside.md",
            "/memories/h/.hidden.md",
            "/memories/h/node_modules/x.js",
        ]),
        "{storage}: list includes hidden files, hidden directories and node_modules"
    );
    assert!(
        matches!(
            stat(storage, "/memories/.config").await,
            Some(Entry::File(_))
        ),
        "{storage}: stat sees a hidden file"
    );
}

/// list: only whole segments match: listing `/memories/a` never returns `/memories/ab` or
/// `/memories/a.md`.
pub async fn list_whole_segment_prefix(storage: &dyn Storage) {
    for path in [
        "/memories/a/in.md",
        "/memories/ab/out.md",
        "/memories/a.md",
        "/memories/a b/out.md",
        "/memories/a-/out.md",
    ] {
        put(storage, path, "x").await;
    }
    assert_eq!(
        list_paths(storage, "/memories/a").await,
        strings(&["/memories/a/in.md"]),
        "{storage}: list of /memories/a matches whole segments only"
    );
    assert!(
        list_paths(storage, "/memories/a/i").await.is_empty(),
        "{storage}: list of a name prefix of a file is empty"
    );
}

/// list: a missing directory, a file, and a path below a file give an empty list.
pub async fn list_missing_or_file_is_empty(storage: &dyn Storage) {
    put(storage, "/memories/lf/file.md", "x").await;
    for path in [
        "/memories/none",
        "/memories/lf/file.md",
        "/memories/lf/file.md/below",
    ] {
        let got = ok(
            storage,
            &format!("list {path}"),
            storage.list(&p(path)).await,
        );
        assert!(
            got.is_empty(),
            "{storage}: list of {path} (missing or a file) is empty, got {got:?}"
        );
    }
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/lf/file.md"]),
        "{storage}: list of /memories finds the file"
    );
}

/// listing: its entries are what `list` returns for the same directory, and a store written
/// only through this library has nothing foreign to skip.
pub async fn listing_matches_list(storage: &dyn Storage) {
    for path in [
        "/memories/ls/a.md",
        "/memories/ls/deep/b.md",
        "/memories/c.md",
    ] {
        put(storage, path, "x").await;
    }
    for dir in ["/memories", "/memories/ls", "/memories/none"] {
        let listed = ok(storage, &format!("list {dir}"), storage.list(&p(dir)).await);
        let listing = ok(
            storage,
            &format!("listing {dir}"),
            storage.listing(&p(dir)).await,
        );
        assert_eq!(
            listing.entries, listed,
            "{storage}: listing of {dir} holds what list returns"
        );
        assert_eq!(
            listing.skipped, 0,
            "{storage}: listing of {dir} skipped entries in a store only this library wrote"
        );
    }
}
