//! Storage-level conformance checks: one `pub async fn` per behaviour of [`Storage`].
//!
//! Each check expects an empty store, leaves whatever it wrote behind (the caller clears the
//! store between checks; [`run_all`] does) and panics with a message naming the behaviour and
//! the backend (its `Display`) when the backend breaks the contract.
//!
//! A backend crate runs them all with one line:
//!
//! ```no_run
//! # async fn demo() {
//! use std::sync::Arc;
//! use memory_core::InMemoryStorage;
//!
//! memory_core::conformance::storage::run_all(Arc::new(InMemoryStorage::new())).await;
//! # }
//! ```
//!
//! The checks that spawn tasks take an `Arc<dyn Storage>`; run them on a multi-threaded tokio
//! runtime (`#[tokio::test(flavor = "multi_thread")]`) to get real parallelism.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Arc;

use super::Capabilities;
use crate::{Entry, Error, FileMeta, MemoryPath, Result, Storage, Version, WriteMode};

/// Parses a path the suite knows to be valid.
fn p(raw: &str) -> MemoryPath {
    match MemoryPath::parse(raw) {
        Ok(path) => path,
        Err(e) => panic!("conformance suite bug: {raw:?} is not a valid path: {e}"),
    }
}

/// Unwraps a result the check needs, naming the step and the backend on failure.
fn ok<T>(storage: &dyn Storage, what: &str, result: Result<T>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("{storage}: {what}: unexpected error: {e:?}"),
    }
}

/// Returns the error of a result that had to fail, naming the behaviour on success.
fn err<T: Debug>(storage: &dyn Storage, what: &str, result: Result<T>) -> Error {
    match result {
        Ok(value) => panic!("{storage}: {what}: expected an error, got Ok({value:?})"),
        Err(e) => e,
    }
}

/// Writes a file whatever is there, panicking on failure.
async fn put(storage: &dyn Storage, path: &str, contents: impl Into<Vec<u8>>) -> Version {
    ok(
        storage,
        &format!("setup: overwrite {path}"),
        storage
            .write(&p(path), contents.into(), WriteMode::Overwrite)
            .await,
    )
}

/// Reads a file's bytes, panicking on failure.
async fn get(storage: &dyn Storage, path: &str) -> Vec<u8> {
    ok(
        storage,
        &format!("read {path}"),
        storage.read(&p(path)).await,
    )
    .contents
}

async fn stat(storage: &dyn Storage, path: &str) -> Option<Entry> {
    ok(
        storage,
        &format!("stat {path}"),
        storage.stat(&p(path)).await,
    )
}

/// The paths of every file below `dir`, as strings, in the backend's order.
async fn list_paths(storage: &dyn Storage, dir: &str) -> Vec<String> {
    ok(storage, &format!("list {dir}"), storage.list(&p(dir)).await)
        .into_iter()
        .map(|meta| meta.path.as_str().to_owned())
        .collect()
}

fn strings(paths: &[&str]) -> Vec<String> {
    paths.iter().map(|s| (*s).to_owned()).collect()
}

fn is_dir(entry: &Option<Entry>) -> bool {
    matches!(entry, Some(Entry::Directory))
}

fn file_size(entry: &Option<Entry>) -> Option<u64> {
    match entry {
        Some(Entry::File(meta)) => Some(meta.size),
        _ => None,
    }
}

/// Deletes everything, and checks that the store is then empty.
pub async fn clear(storage: &dyn Storage) {
    ok(
        storage,
        "delete /memories removes every file",
        storage.delete(&MemoryPath::root()).await,
    );
    let left = list_paths(storage, "/memories").await;
    assert!(
        left.is_empty(),
        "{storage}: delete /memories must remove every file, left: {left:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// read

/// read: returns the bytes last written and the version that write returned.
pub async fn read_returns_last_written(storage: &dyn Storage) {
    let path = p("/memories/read.md");
    let v1 = ok(
        storage,
        "write a new file",
        storage
            .write(&path, b"one\n".to_vec(), WriteMode::Create)
            .await,
    );
    let file = ok(storage, "read a file", storage.read(&path).await);
    assert_eq!(
        file.contents, b"one\n",
        "{storage}: read returns the bytes last written"
    );
    assert_eq!(
        file.version, v1,
        "{storage}: read returns the version the last write returned"
    );
    let v2 = ok(
        storage,
        "overwrite a file",
        storage
            .write(&path, b"two\nlines\n".to_vec(), WriteMode::Overwrite)
            .await,
    );
    let file = ok(storage, "read a rewritten file", storage.read(&path).await);
    assert_eq!(
        file.contents, b"two\nlines\n",
        "{storage}: read returns the bytes of the latest write, not an older one"
    );
    assert_eq!(
        file.version, v2,
        "{storage}: read returns the version of the latest write"
    );
}

/// read: a missing path, a directory, `/memories` and a path below a file are NotFound.
pub async fn read_missing_is_not_found(storage: &dyn Storage) {
    put(storage, "/memories/dir/file.md", "x").await;
    for path in [
        "/memories/missing.md",
        "/memories/dir",
        "/memories",
        "/memories/dir/file.md/below",
        "/memories/dir/fil",
    ] {
        let e = err(
            storage,
            &format!("read {path}"),
            storage.read(&p(path)).await,
        );
        assert!(
            matches!(&e, Error::NotFound { path: got } if got.as_str() == path),
            "{storage}: read of a missing path, a directory or /memories is NotFound naming \
             {path}, got {e:?}"
        );
    }
}

/// read: never returns a torn file; concurrent readers see each write whole or not at all.
pub async fn read_never_torn(storage: Arc<dyn Storage>) {
    const SIZE: usize = 48 * 1024;
    let path = p("/memories/torn.bin");
    let contents = [vec![b'a'; SIZE], vec![b'b'; SIZE + 7]];
    ok(
        &*storage,
        "write the first version",
        storage
            .write(&path, contents[0].clone(), WriteMode::Create)
            .await,
    );
    let writer = {
        let storage = Arc::clone(&storage);
        let path = path.clone();
        let contents = contents.clone();
        tokio::spawn(async move {
            for i in 0..24 {
                let body = contents[(i + 1) % 2].clone();
                ok(
                    &*storage,
                    "overwrite while others read",
                    storage.write(&path, body, WriteMode::Overwrite).await,
                );
                tokio::task::yield_now().await;
            }
        })
    };
    let mut readers = Vec::new();
    for _ in 0..3 {
        let storage = Arc::clone(&storage);
        let path = path.clone();
        let contents = contents.clone();
        readers.push(tokio::spawn(async move {
            for _ in 0..24 {
                let got = ok(
                    &*storage,
                    "read while another task writes",
                    storage.read(&path).await,
                );
                assert!(
                    got.contents == contents[0] || got.contents == contents[1],
                    "{storage}: read never returns a torn file: got {} bytes that are \
                     neither version",
                    got.contents.len()
                );
                tokio::task::yield_now().await;
            }
        }));
    }
    if let Err(e) = writer.await {
        std::panic::resume_unwind(e.into_panic());
    }
    for reader in readers {
        if let Err(e) = reader.await {
            std::panic::resume_unwind(e.into_panic());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// stat

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
    let read = ok(
        storage,
        "read",
        storage.read(&p("/memories/t/old.md")).await,
    );
    assert_eq!(
        read.contents, b"kept",
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

// ---------------------------------------------------------------------------------------------
// write

/// write(Create): creates a new file and its parents; on an existing file or directory it is
/// AlreadyExists and changes nothing.
pub async fn write_create(storage: &dyn Storage) {
    let file = p("/memories/c/new.md");
    ok(
        storage,
        "create a new file",
        storage
            .write(&file, b"first".to_vec(), WriteMode::Create)
            .await,
    );
    assert_eq!(
        get(storage, "/memories/c/new.md").await,
        b"first",
        "{storage}: write(Create) stores the content"
    );
    let e = err(
        storage,
        "create over a file",
        storage
            .write(&file, b"second".to_vec(), WriteMode::Create)
            .await,
    );
    assert!(
        matches!(&e, Error::AlreadyExists { path } if *path == file),
        "{storage}: write(Create) on an existing file is AlreadyExists naming it, got {e:?}"
    );
    assert_eq!(
        get(storage, "/memories/c/new.md").await,
        b"first",
        "{storage}: a failed write(Create) leaves the old content"
    );
    let dir = p("/memories/c");
    let e = err(
        storage,
        "create over a directory",
        storage.write(&dir, b"x".to_vec(), WriteMode::Create).await,
    );
    assert!(
        matches!(&e, Error::AlreadyExists { path } if *path == dir),
        "{storage}: write(Create) on a directory is AlreadyExists naming it, got {e:?}"
    );
    assert!(
        is_dir(&stat(storage, "/memories/c").await),
        "{storage}: a failed write(Create) on a directory leaves the directory"
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/c/new.md"]),
        "{storage}: failed creates add no file"
    );
}

/// write(Create): of many concurrent creates of one path exactly one succeeds; the others are
/// AlreadyExists, and the winner's content is what is stored.
pub async fn write_create_race_one_winner(storage: Arc<dyn Storage>) {
    const TASKS: usize = 16;
    let path = p("/memories/race/winner.md");
    let barrier = Arc::new(tokio::sync::Barrier::new(TASKS));
    let mut tasks = Vec::new();
    for i in 0..TASKS {
        let storage = Arc::clone(&storage);
        let path = path.clone();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let body = format!("task {i}\n").into_bytes();
            (i, storage.write(&path, body, WriteMode::Create).await)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        let (i, result) = match task.await {
            Ok(done) => done,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        match result {
            Ok(_) => winners.push(i),
            Err(Error::AlreadyExists { path: got }) if got == path => {}
            Err(e) => panic!(
                "{storage}: concurrent write(Create) losers get AlreadyExists, task {i} got {e:?}"
            ),
        }
    }
    assert_eq!(
        winners.len(),
        1,
        "{storage}: of {TASKS} concurrent write(Create) of one path exactly one succeeds, \
         winners: {winners:?}"
    );
    assert_eq!(
        get(storage.as_ref(), "/memories/race/winner.md").await,
        format!("task {}\n", winners[0]).into_bytes(),
        "{storage}: the stored content is the winning create's"
    );
}

/// write(Overwrite): creates a missing file, replaces an existing one whatever its version.
pub async fn write_overwrite_replaces_file(storage: &dyn Storage) {
    let path = p("/memories/o/file.md");
    ok(
        storage,
        "overwrite a missing file",
        storage
            .write(&path, b"created".to_vec(), WriteMode::Overwrite)
            .await,
    );
    assert_eq!(
        get(storage, "/memories/o/file.md").await,
        b"created",
        "{storage}: write(Overwrite) creates a missing file"
    );
    ok(
        storage,
        "overwrite an existing file",
        storage
            .write(&path, b"replaced".to_vec(), WriteMode::Overwrite)
            .await,
    );
    assert_eq!(
        get(storage, "/memories/o/file.md").await,
        b"replaced",
        "{storage}: write(Overwrite) replaces an existing file"
    );
    ok(
        storage,
        "overwrite with shorter content",
        storage
            .write(&path, b"r".to_vec(), WriteMode::Overwrite)
            .await,
    );
    assert_eq!(
        get(storage, "/memories/o/file.md").await,
        b"r",
        "{storage}: write(Overwrite) with shorter content leaves no old bytes behind"
    );
}

/// write(Overwrite): on a directory (or `/memories`) it is AlreadyExists and the files below
/// are kept.
pub async fn write_overwrite_directory_is_already_exists(storage: &dyn Storage) {
    put(storage, "/memories/od/inner.md", "keep").await;
    for dir in ["/memories/od", "/memories"] {
        let e = err(
            storage,
            &format!("overwrite the directory {dir}"),
            storage
                .write(&p(dir), b"x".to_vec(), WriteMode::Overwrite)
                .await,
        );
        assert!(
            matches!(&e, Error::AlreadyExists { path } if path.as_str() == dir),
            "{storage}: write(Overwrite) on the directory {dir} is AlreadyExists, got {e:?}"
        );
    }
    assert_eq!(
        get(storage, "/memories/od/inner.md").await,
        b"keep",
        "{storage}: a refused write(Overwrite) on a directory keeps the files below it"
    );
}

/// write: writing `/memories` itself is refused in every mode; Create and Overwrite say
/// AlreadyExists. (Update of a directory may also say NotFound: there is no file at the path.)
pub async fn write_root_is_refused(storage: &dyn Storage) {
    let root = MemoryPath::root();
    for mode in [WriteMode::Create, WriteMode::Overwrite] {
        let e = err(
            storage,
            &format!("write /memories with {mode:?}"),
            storage.write(&root, b"x".to_vec(), mode.clone()).await,
        );
        assert!(
            matches!(&e, Error::AlreadyExists { path } if path.is_root()),
            "{storage}: writing /memories itself with {mode:?} is AlreadyExists, got {e:?}"
        );
    }
    let e = err(
        storage,
        "write /memories with Update",
        storage
            .write(&root, b"x".to_vec(), WriteMode::Update(Version::new("1")))
            .await,
    );
    assert!(
        matches!(&e, Error::AlreadyExists { path } | Error::NotFound { path } if path.is_root()),
        "{storage}: writing /memories itself with Update is AlreadyExists or NotFound, got {e:?}"
    );
    assert!(
        is_dir(&stat(storage, "/memories").await),
        "{storage}: /memories is still a directory after refused writes"
    );
    assert!(
        list_paths(storage, "/memories").await.is_empty(),
        "{storage}: refused writes of /memories add no file"
    );
}

/// write(Update): replaces the file at the current version and returns a new version.
pub async fn write_update_at_current_version(storage: &dyn Storage) {
    let path = p("/memories/u/file.md");
    let v1 = put(storage, "/memories/u/file.md", "v1").await;
    let v2 = ok(
        storage,
        "update at the current version",
        storage
            .write(&path, b"v2".to_vec(), WriteMode::Update(v1.clone()))
            .await,
    );
    assert_ne!(
        v1, v2,
        "{storage}: write(Update) returns a version different from the previous one"
    );
    let file = ok(storage, "read after update", storage.read(&path).await);
    assert_eq!(
        file.contents, b"v2",
        "{storage}: write(Update) at the current version replaces the content"
    );
    assert_eq!(
        file.version, v2,
        "{storage}: read after write(Update) gives the version the update returned"
    );
    ok(
        storage,
        "update again at the newest version",
        storage
            .write(&path, b"v3".to_vec(), WriteMode::Update(v2))
            .await,
    );
    assert_eq!(
        get(storage, "/memories/u/file.md").await,
        b"v3",
        "{storage}: a chain of write(Update) each at the version the last one returned works"
    );
}

/// write(Update): a stale or unknown version is Conflict and changes nothing.
pub async fn write_update_stale_version_is_conflict(storage: &dyn Storage) {
    let path = p("/memories/u/stale.md");
    let old = put(storage, "/memories/u/stale.md", "old").await;
    let current = put(storage, "/memories/u/stale.md", "current").await;
    for (label, version) in [
        ("a stale version", old),
        (
            "a version the backend never issued",
            Version::new("no-such-version"),
        ),
    ] {
        let e = err(
            storage,
            &format!("update with {label}"),
            storage
                .write(&path, b"lost".to_vec(), WriteMode::Update(version))
                .await,
        );
        assert!(
            matches!(&e, Error::Conflict { path: got } if *got == path),
            "{storage}: write(Update) with {label} is Conflict naming the file, got {e:?}"
        );
    }
    let file = ok(storage, "read after conflicts", storage.read(&path).await);
    assert_eq!(
        file.contents, b"current",
        "{storage}: a conflicted write(Update) changes nothing"
    );
    assert_eq!(
        file.version, current,
        "{storage}: a conflicted write(Update) leaves the version as it was"
    );
}

/// write(Update): no file at the path (missing, deleted, or a directory) is NotFound and
/// creates nothing.
pub async fn write_update_missing_is_not_found(storage: &dyn Storage) {
    let v = put(storage, "/memories/u/gone.md", "x").await;
    ok(
        storage,
        "delete a file",
        storage.delete(&p("/memories/u/gone.md")).await,
    );
    for (path, version) in [
        ("/memories/u/gone.md", v.clone()),
        ("/memories/u/never.md", Version::new("1")),
    ] {
        let e = err(
            storage,
            &format!("update {path}"),
            storage
                .write(&p(path), b"x".to_vec(), WriteMode::Update(version))
                .await,
        );
        assert!(
            matches!(&e, Error::NotFound { path: got } if got.as_str() == path),
            "{storage}: write(Update) with no file at {path} is NotFound, got {e:?}"
        );
        assert!(
            stat(storage, path).await.is_none(),
            "{storage}: a failed write(Update) creates nothing at {path}"
        );
    }
    put(storage, "/memories/u/dir/inner.md", "x").await;
    let e = err(
        storage,
        "update a directory",
        storage
            .write(&p("/memories/u/dir"), b"x".to_vec(), WriteMode::Update(v))
            .await,
    );
    assert!(
        matches!(&e, Error::NotFound { .. } | Error::AlreadyExists { .. }),
        "{storage}: write(Update) on a directory is NotFound (no file there) or AlreadyExists, \
         got {e:?}"
    );
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/u/dir/inner.md"]),
        "{storage}: failed write(Update) calls add no file"
    );
}

/// write: an ancestor that is a file gives ParentIsFile naming that ancestor (not necessarily
/// the immediate parent), in every mode, and creates nothing.
pub async fn write_parent_is_file_names_ancestor(storage: &dyn Storage) {
    let version = put(storage, "/memories/pf/file.md", "i am a file").await;
    let cases = [
        ("/memories/pf/file.md/child.md", "/memories/pf/file.md"),
        ("/memories/pf/file.md/x/y/z.md", "/memories/pf/file.md"),
    ];
    for (target, ancestor) in cases {
        for mode in [
            WriteMode::Create,
            WriteMode::Overwrite,
            WriteMode::Update(version.clone()),
        ] {
            let e = err(
                storage,
                &format!("write {target} with {mode:?}"),
                storage.write(&p(target), b"x".to_vec(), mode.clone()).await,
            );
            assert!(
                matches!(&e, Error::ParentIsFile { path, parent }
                    if path.as_str() == target && parent.as_str() == ancestor),
                "{storage}: write({mode:?}) of {target} is ParentIsFile naming the file \
                 ancestor {ancestor}, got {e:?}"
            );
        }
    }
    assert_eq!(
        list_paths(storage, "/memories").await,
        strings(&["/memories/pf/file.md"]),
        "{storage}: a write refused with ParentIsFile creates nothing"
    );
    assert_eq!(
        get(storage, "/memories/pf/file.md").await,
        b"i am a file",
        "{storage}: a write refused with ParentIsFile leaves the ancestor file unchanged"
    );
}

/// write: parent directories come into being, at any depth.
pub async fn write_creates_parents(storage: &dyn Storage) {
    put(storage, "/memories/p1/p2/p3/leaf.md", "leaf").await;
    for dir in ["/memories/p1", "/memories/p1/p2", "/memories/p1/p2/p3"] {
        assert!(
            is_dir(&stat(storage, dir).await),
            "{storage}: write creates the parent directory {dir}"
        );
    }
    assert_eq!(
        get(storage, "/memories/p1/p2/p3/leaf.md").await,
        b"leaf",
        "{storage}: a file written below new parents reads back"
    );
}

/// write: a failed write changes nothing (refused creates, conflicts, file/directory clashes).
pub async fn write_failure_changes_nothing(storage: &dyn Storage) {
    let v = put(storage, "/memories/f/a.md", "a").await;
    put(storage, "/memories/f/d/b.md", "b").await;
    let attempts = [
        (p("/memories/f/a.md"), WriteMode::Create),
        (p("/memories/f/d"), WriteMode::Create),
        (p("/memories/f/d"), WriteMode::Overwrite),
        (p("/memories/f/a.md/c.md"), WriteMode::Overwrite),
        (
            p("/memories/f/a.md"),
            WriteMode::Update(Version::new("stale")),
        ),
    ];
    for (path, mode) in attempts {
        err(
            storage,
            &format!("write {path} with {mode:?}"),
            storage
                .write(&path, b"should not land".to_vec(), mode)
                .await,
        );
    }
    let files = ok(
        storage,
        "list after failed writes",
        storage.list(&MemoryPath::root()).await,
    );
    let summary: Vec<(String, u64)> = files
        .iter()
        .map(|m| (m.path.as_str().to_owned(), m.size))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("/memories/f/a.md".to_owned(), 1),
            ("/memories/f/d/b.md".to_owned(), 1)
        ],
        "{storage}: failed writes change nothing"
    );
    let file = ok(
        storage,
        "read after failed writes",
        storage.read(&p("/memories/f/a.md")).await,
    );
    assert_eq!(
        (file.contents.as_slice(), &file.version),
        (&b"a"[..], &v),
        "{storage}: failed writes leave content and version as they were"
    );
}

/// write: every write that changes a file's content returns a new version, so any earlier
/// version is stale (Conflict).
///
/// A backend whose version is a hash of the content may return the same version when the very
/// same bytes are written again; that is safe for compare-and-swap (an edit computed from those
/// bytes is still correct), and [`write_same_content_version_still_valid`] checks it.
pub async fn write_versions_change(storage: &dyn Storage) {
    let path = p("/memories/v/file.md");
    let mut seen = Vec::new();
    seen.push(ok(
        storage,
        "create",
        storage.write(&path, b"0".to_vec(), WriteMode::Create).await,
    ));
    for i in 1..6 {
        let body = format!("content {i}").into_bytes();
        let mode = if i % 2 == 0 {
            WriteMode::Overwrite
        } else {
            WriteMode::Update(seen[seen.len() - 1].clone())
        };
        let version = ok(
            storage,
            &format!("write {i}"),
            storage.write(&path, body, mode).await,
        );
        assert!(
            !seen.contains(&version),
            "{storage}: write {i} returned {version:?}, a version the file already had"
        );
        seen.push(version);
    }
    for old in &seen[..seen.len() - 1] {
        let e = err(
            storage,
            &format!("update with old version {old:?}"),
            storage
                .write(&path, b"x".to_vec(), WriteMode::Update(old.clone()))
                .await,
        );
        assert!(
            matches!(e, Error::Conflict { .. }),
            "{storage}: every older version is stale after later writes (Conflict), got {e:?}"
        );
    }
    // Deleted and created again with other content: the old version must not match.
    ok(storage, "delete", storage.delete(&path).await);
    ok(
        storage,
        "create again",
        storage
            .write(&path, b"reborn".to_vec(), WriteMode::Create)
            .await,
    );
    let e = err(
        storage,
        "update with a version from before the delete",
        storage
            .write(
                &path,
                b"x".to_vec(),
                WriteMode::Update(seen[seen.len() - 1].clone()),
            )
            .await,
    );
    assert!(
        matches!(e, Error::Conflict { .. }),
        "{storage}: a version from before a delete and re-create is stale (Conflict), got {e:?}"
    );
}

/// write: rewriting the very same bytes either returns a new version, or the same version,
/// which then still works for write(Update) (it names exactly the stored bytes).
pub async fn write_same_content_version_still_valid(storage: &dyn Storage) {
    let path = p("/memories/v/same.md");
    let v1 = put(storage, "/memories/v/same.md", "same").await;
    let v2 = put(storage, "/memories/v/same.md", "same").await;
    if v1 == v2 {
        ok(
            storage,
            "update at a content-derived version after an identical rewrite",
            storage
                .write(&path, b"next".to_vec(), WriteMode::Update(v1))
                .await,
        );
    } else {
        let e = err(
            storage,
            "update at the version before an identical rewrite",
            storage
                .write(&path, b"next".to_vec(), WriteMode::Update(v1))
                .await,
        );
        assert!(
            matches!(e, Error::Conflict { .. }),
            "{storage}: a version replaced by a new one is stale (Conflict), got {e:?}"
        );
        ok(
            storage,
            "update at the newest version",
            storage
                .write(&path, b"next".to_vec(), WriteMode::Update(v2))
                .await,
        );
    }
    assert_eq!(
        get(storage, "/memories/v/same.md").await,
        b"next",
        "{storage}: write(Update) at the current version works after an identical rewrite"
    );
}

// ---------------------------------------------------------------------------------------------
// delete

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

// ---------------------------------------------------------------------------------------------
// list

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

// ---------------------------------------------------------------------------------------------
// rename

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

// ---------------------------------------------------------------------------------------------
// Names and content

/// Unicode (including NFC/NFD look-alikes, kept distinct), spaces and punctuation in names.
pub async fn unicode_and_spaces_in_names(storage: &dyn Storage) {
    unicode_and_spaces_in_names_with(storage, true).await;
}

/// [`unicode_and_spaces_in_names`], with the name that is not in Unicode NFC
/// (`cafe\u{301}.md` beside `caf\u{e9}.md`) only when `non_nfc_names` is set.
pub async fn unicode_and_spaces_in_names_with(storage: &dyn Storage, non_nfc_names: bool) {
    let mut names = vec![
        "/memories/notes with spaces/my file.md",
        "/memories/日本語/メモ.md",
        "/memories/emoji 🧠/🚀 launch.txt",
        "/memories/caf\u{e9}.md",
        "/memories/Case.md",
        "/memories/case.md",
        "/memories/odd/a'b\"c;d$e&f(g)#h!.md",
        "/memories/odd/ trailing space ",
        "/memories/odd/100%.md",
    ];
    if non_nfc_names {
        names.push("/memories/cafe\u{301}.md");
    }
    for (i, path) in names.iter().enumerate() {
        ok(
            storage,
            &format!("create {path}"),
            storage
                .write(
                    &p(path),
                    format!("file {i}").into_bytes(),
                    WriteMode::Create,
                )
                .await,
        );
    }
    for (i, path) in names.iter().enumerate() {
        assert_eq!(
            get(storage, path).await,
            format!("file {i}").into_bytes(),
            "{storage}: {path:?} reads back its own content (names are exact, case-sensitive \
             and not Unicode-normalized)"
        );
    }
    let mut expected: Vec<String> = strings(&names);
    expected.sort();
    assert_eq!(
        list_paths(storage, "/memories").await,
        expected,
        "{storage}: unicode and spaces in names list exactly"
    );
    ok(
        storage,
        "rename a unicode directory",
        storage
            .rename(&p("/memories/日本語"), &p("/memories/emoji 🧠/日本語 2"))
            .await,
    );
    assert_eq!(
        get(storage, "/memories/emoji 🧠/日本語 2/メモ.md").await,
        b"file 1",
        "{storage}: rename works with unicode and spaces in names"
    );
    ok(
        storage,
        "delete a directory with spaces",
        storage.delete(&p("/memories/notes with spaces")).await,
    );
    assert!(
        stat(storage, "/memories/notes with spaces").await.is_none(),
        "{storage}: delete works with spaces in names"
    );
}

/// 0-byte files exist, list with size 0, read back empty and can be updated.
pub async fn empty_files(storage: &dyn Storage) {
    let path = p("/memories/empty/zero.md");
    let v = ok(
        storage,
        "create an empty file",
        storage.write(&path, Vec::new(), WriteMode::Create).await,
    );
    let file = ok(storage, "read an empty file", storage.read(&path).await);
    assert!(
        file.contents.is_empty(),
        "{storage}: an empty file reads back empty"
    );
    assert_eq!(
        file_size(&stat(storage, "/memories/empty/zero.md").await),
        Some(0),
        "{storage}: stat of an empty file is a file of size 0"
    );
    assert!(
        is_dir(&stat(storage, "/memories/empty").await),
        "{storage}: an empty file keeps its directory alive"
    );
    let listed = ok(storage, "list", storage.list(&p("/memories/empty")).await);
    assert_eq!(
        listed
            .iter()
            .map(|m| (m.path.as_str(), m.size))
            .collect::<Vec<_>>(),
        vec![("/memories/empty/zero.md", 0)],
        "{storage}: an empty file is listed with size 0"
    );
    let e = err(
        storage,
        "create over an empty file",
        storage.write(&path, b"x".to_vec(), WriteMode::Create).await,
    );
    assert!(
        matches!(e, Error::AlreadyExists { .. }),
        "{storage}: an empty file exists (Create over it is AlreadyExists), got {e:?}"
    );
    ok(
        storage,
        "update an empty file",
        storage
            .write(&path, b"now full".to_vec(), WriteMode::Update(v))
            .await,
    );
    let v = ok(
        storage,
        "overwrite with nothing",
        storage.write(&path, Vec::new(), WriteMode::Overwrite).await,
    );
    assert_eq!(
        ok(storage, "read emptied", storage.read(&path).await).version,
        v,
        "{storage}: a file emptied by a write reads back with the new version"
    );
    assert!(
        get(storage, "/memories/empty/zero.md").await.is_empty(),
        "{storage}: a file can be emptied"
    );
}

/// Binary content (every byte value, invalid UTF-8, NULs, CR/LF) round-trips exactly, through
/// write, read, list sizes and rename.
pub async fn binary_content_round_trip(storage: &dyn Storage) {
    let mut body: Vec<u8> = (0..=255u8).collect();
    body.extend_from_slice(&[0xff, 0xfe, 0x00, 0xc3, 0x28, b'\r', b'\n', b'\r', 0x80]);
    body.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    assert!(std::str::from_utf8(&body).is_err());
    put(storage, "/memories/bin/image.png", body.clone()).await;
    assert_eq!(
        get(storage, "/memories/bin/image.png").await,
        body,
        "{storage}: binary (non-UTF-8) content reads back byte for byte"
    );
    assert_eq!(
        file_size(&stat(storage, "/memories/bin/image.png").await),
        Some(body.len() as u64),
        "{storage}: stat gives the byte length of binary content"
    );
    ok(
        storage,
        "rename a binary file",
        storage
            .rename(&p("/memories/bin/image.png"), &p("/memories/bin/moved.png"))
            .await,
    );
    assert_eq!(
        get(storage, "/memories/bin/moved.png").await,
        body,
        "{storage}: rename keeps binary content byte for byte"
    );
}

/// The deepest and longest paths [`MemoryPath`] allows work like any other.
pub async fn deep_nesting(storage: &dyn Storage) {
    deep_nesting_to(storage, crate::MAX_SEGMENTS, crate::MAX_PATH_BYTES).await;
}

/// [`deep_nesting`] for a store that holds paths `max_depth` levels deep and `max_path_bytes`
/// long (less than the path limits when the store itself lives below `/memories`, as a
/// mounted store does).
pub async fn deep_nesting_to(storage: &dyn Storage, max_depth: usize, max_path_bytes: usize) {
    let segments: Vec<String> = (0..max_depth).map(|i| format!("d{i}")).collect();
    let deepest = format!("/memories/{}", segments.join("/"));
    put(storage, &deepest, "deep").await;
    assert_eq!(
        get(storage, &deepest).await,
        b"deep",
        "{storage}: a file {} levels deep reads back",
        max_depth
    );
    for depth in 1..max_depth {
        let dir = format!("/memories/{}", segments[..depth].join("/"));
        assert!(
            is_dir(&stat(storage, &dir).await),
            "{storage}: every ancestor of a deep file is a directory ({dir})"
        );
        assert_eq!(
            list_paths(storage, &dir).await,
            vec![deepest.clone()],
            "{storage}: list of {dir} finds the deep file"
        );
    }
    // Three 255-byte names and a last one that makes the path exactly 1,024 bytes long.
    let long_name = "n".repeat(crate::MAX_SEGMENT_BYTES);
    let head = format!("/memories/{long_name}/{long_name}/{long_name}/");
    let last = "f".repeat(max_path_bytes - head.len());
    let long = format!("{head}{last}");
    assert_eq!(long.len(), max_path_bytes);
    put(storage, &long, "long").await;
    assert_eq!(
        get(storage, &long).await,
        b"long",
        "{storage}: a 1,024-byte path with 255-byte names reads back"
    );
    ok(
        storage,
        "rename a file with a 255-byte name",
        storage
            .rename(&p(&long), &p(&format!("/memories/{}", "m".repeat(255))))
            .await,
    );
    assert_eq!(
        get(storage, &format!("/memories/{}", "m".repeat(255))).await,
        b"long",
        "{storage}: a file renamed to a 255-byte name reads back"
    );
    ok(
        storage,
        "delete the top of a deep tree",
        storage.delete(&p("/memories/d0")).await,
    );
    assert!(
        stat(storage, "/memories/d0").await.is_none(),
        "{storage}: delete of the top of a deep tree removes it all"
    );
}

// ---------------------------------------------------------------------------------------------
// Concurrency

/// Many tasks each append lines with read → modify → write(Update), retrying on Conflict:
/// no update is lost.
pub async fn concurrent_updates_lose_nothing(storage: Arc<dyn Storage>) {
    const TASKS: usize = 8;
    const LINES: usize = 6;
    let path = p("/memories/cas/log.md");
    ok(
        &*storage,
        "create the shared file",
        storage
            .write(&path, b"header\n".to_vec(), WriteMode::Create)
            .await,
    );
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let storage = Arc::clone(&storage);
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut conflicts = 0usize;
            for line in 0..LINES {
                loop {
                    let file = ok(&*storage, "read in a CAS loop", storage.read(&path).await);
                    let mut body = file.contents;
                    body.extend_from_slice(format!("task {task} line {line}\n").as_bytes());
                    // Let the other tasks interleave between the read and the write.
                    tokio::task::yield_now().await;
                    match storage
                        .write(&path, body, WriteMode::Update(file.version))
                        .await
                    {
                        Ok(_) => break,
                        Err(Error::Conflict { .. }) => {
                            conflicts += 1;
                            assert!(conflicts < 10_000, "{storage}: a CAS loop made no progress");
                        }
                        Err(e) => panic!("{storage}: write(Update) in a CAS loop failed: {e:?}"),
                    }
                }
            }
        }));
    }
    for task in tasks {
        if let Err(e) = task.await {
            std::panic::resume_unwind(e.into_panic());
        }
    }
    let body = get(&*storage, "/memories/cas/log.md").await;
    let text = String::from_utf8_lossy(&body);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"header"),
        "{storage}: concurrent updates keep the original content"
    );
    let got: BTreeSet<&str> = lines[1..].iter().copied().collect();
    let mut missing = Vec::new();
    for task in 0..TASKS {
        for line in 0..LINES {
            let want = format!("task {task} line {line}");
            if !got.contains(want.as_str()) {
                missing.push(want);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{storage}: concurrent read-modify-write(Update) loses no update; missing: {missing:?}"
    );
    assert_eq!(
        lines.len(),
        1 + TASKS * LINES,
        "{storage}: every update landed exactly once"
    );
}

/// Many tasks race write(Create) on one path: exactly one wins (see
/// [`write_create_race_one_winner`]); repeated a few times on fresh paths.
pub async fn concurrent_creates_one_winner(storage: Arc<dyn Storage>) {
    for round in 0..3 {
        write_create_race_one_winner(Arc::clone(&storage)).await;
        ok(
            &*storage,
            &format!("cleanup after race round {round}"),
            storage.delete(&p("/memories/race")).await,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// file_count

async fn count(storage: &dyn Storage, what: &str) -> usize {
    ok(storage, what, storage.file_count().await)
}

/// file_count: every file at any depth, hidden ones included, as `list(/memories)` returns
/// them; overwrites and updates leave it unchanged; deletes and renames keep it exact.
pub async fn file_count_counts_every_file(storage: &dyn Storage) {
    assert_eq!(
        count(storage, "file_count of an empty store").await,
        0,
        "{storage}: an empty store holds 0 files"
    );
    put(storage, "/memories/a.md", "a").await;
    put(storage, "/memories/.hidden", "h").await;
    put(storage, "/memories/d/e/deep.md", "d").await;
    let v = put(storage, "/memories/d/f.md", "f").await;
    assert_eq!(
        count(storage, "file_count of 4 files").await,
        4,
        "{storage}: file_count counts files at every depth, hidden ones included"
    );
    put(storage, "/memories/a.md", "a2").await;
    ok(
        storage,
        "update d/f.md",
        storage
            .write(&p("/memories/d/f.md"), b"f2".to_vec(), WriteMode::Update(v))
            .await,
    );
    assert_eq!(
        count(storage, "file_count after an overwrite and an update").await,
        4,
        "{storage}: replacing a file's content does not change the count"
    );
    ok(
        storage,
        "rename d to moved",
        storage
            .rename(&p("/memories/d"), &p("/memories/moved"))
            .await,
    );
    assert_eq!(
        count(storage, "file_count after a rename").await,
        4,
        "{storage}: a rename keeps the count"
    );
    ok(
        storage,
        "delete moved",
        storage.delete(&p("/memories/moved")).await,
    );
    let listed = ok(
        storage,
        "list /memories",
        storage.list(&MemoryPath::root()).await,
    )
    .len();
    assert_eq!(
        count(storage, "file_count after a delete").await,
        listed,
        "{storage}: file_count equals the length of list(/memories)"
    );
    assert_eq!(
        listed, 2,
        "{storage}: deleting a directory removes its files"
    );
}

// ---------------------------------------------------------------------------------------------
// create_within

/// create_within: creates below the limit; at the limit StoreFull and nothing written; a taken
/// path (file, directory, `/memories`) is AlreadyExists whether the store is full or not; a
/// file ancestor is ParentIsFile; a limit of 0 refuses every create.
pub async fn create_within_limit(storage: &dyn Storage) {
    let v = ok(
        storage,
        "create_within below the limit",
        storage
            .create_within(&p("/memories/w/one.md"), b"one".to_vec(), 2)
            .await,
    );
    let file = ok(
        storage,
        "read what create_within wrote",
        storage.read(&p("/memories/w/one.md")).await,
    );
    assert_eq!(
        file.contents, b"one",
        "{storage}: create_within stores the bytes"
    );
    assert_eq!(
        file.version, v,
        "{storage}: create_within returns the file's version"
    );
    for (path, what) in [
        ("/memories/w/one.md", "a file"),
        ("/memories/w", "a directory"),
        ("/memories", "/memories"),
    ] {
        let e = err(
            storage,
            &format!("create_within over {what} below the limit"),
            storage.create_within(&p(path), b"x".to_vec(), 10).await,
        );
        assert!(
            matches!(&e, Error::AlreadyExists { path: got } if got.as_str() == path),
            "{storage}: create_within over {what} is AlreadyExists naming {path}, got {e:?}"
        );
    }
    let e = err(
        storage,
        "create_within below a file",
        storage
            .create_within(&p("/memories/w/one.md/below"), b"x".to_vec(), 10)
            .await,
    );
    assert!(
        matches!(&e, Error::ParentIsFile { parent, .. } if parent.as_str() == "/memories/w/one.md"),
        "{storage}: create_within below a file is ParentIsFile naming it, got {e:?}"
    );
    ok(
        storage,
        "create_within the last free place",
        storage
            .create_within(&p("/memories/two.md"), b"two".to_vec(), 2)
            .await,
    );
    let e = err(
        storage,
        "create_within at the limit",
        storage
            .create_within(&p("/memories/three.md"), b"three".to_vec(), 2)
            .await,
    );
    assert!(
        matches!(e, Error::StoreFull { max_files: 2 }),
        "{storage}: create_within in a store holding max_files files is StoreFull, got {e:?}"
    );
    assert_eq!(
        stat(storage, "/memories/three.md").await,
        None,
        "{storage}: a create refused as StoreFull writes nothing"
    );
    let e = err(
        storage,
        "create_within over a file, store full",
        storage
            .create_within(&p("/memories/two.md"), b"x".to_vec(), 2)
            .await,
    );
    assert!(
        matches!(&e, Error::AlreadyExists { path } if path.as_str() == "/memories/two.md"),
        "{storage}: a full store still answers AlreadyExists for a taken path, got {e:?}"
    );
    let e = err(
        storage,
        "create_within over a file, store over full",
        storage
            .create_within(&p("/memories/w"), b"x".to_vec(), 1)
            .await,
    );
    assert!(
        matches!(&e, Error::AlreadyExists { .. }),
        "{storage}: a store over its limit still answers AlreadyExists for a directory, got {e:?}"
    );
    assert_eq!(
        get(storage, "/memories/two.md").await,
        b"two",
        "{storage}: a refused create_within leaves the file alone"
    );
    let e = err(
        storage,
        "create_within with a limit of 0",
        storage
            .create_within(&p("/memories/zero.md"), b"0".to_vec(), 0)
            .await,
    );
    assert!(
        matches!(e, Error::StoreFull { max_files: 0 }),
        "{storage}: a limit of 0 is StoreFull, got {e:?}"
    );
    assert_eq!(count(storage, "file_count after create_within").await, 2);
}

/// create_within is exact under concurrency: creates of different paths racing in a store
/// holding `max_files - 1` files: exactly one succeeds, every other one is StoreFull. Two
/// tasks race several times, then eight at once.
pub async fn create_within_race_at_limit(storage: Arc<dyn Storage>) {
    const MAX_FILES: usize = 3;
    for (round, tasks) in [2, 2, 2, 2, 8].into_iter().enumerate() {
        put(&*storage, "/memories/full/a.md", "a").await;
        put(&*storage, "/memories/full/b.md", "b").await;
        let barrier = Arc::new(tokio::sync::Barrier::new(tasks));
        let mut handles = Vec::new();
        for i in 0..tasks {
            let storage = Arc::clone(&storage);
            let barrier = Arc::clone(&barrier);
            handles.push(tokio::spawn(async move {
                let path = p(&format!("/memories/full/new{i}.md"));
                barrier.wait().await;
                let result = storage
                    .create_within(&path, format!("{i}").into_bytes(), MAX_FILES)
                    .await;
                (i, result)
            }));
        }
        let mut winners = Vec::new();
        for handle in handles {
            let (i, result) = match handle.await {
                Ok(done) => done,
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            };
            match result {
                Ok(_) => winners.push(i),
                Err(Error::StoreFull {
                    max_files: MAX_FILES,
                }) => {}
                Err(e) => panic!(
                    "{storage}: racing create_within at max_files - 1: the losers get StoreFull,                      task {i} got {e:?}"
                ),
            }
        }
        assert_eq!(
            winners.len(),
            1,
            "{storage}: of {tasks} creates racing at max_files - 1 exactly one succeeds              (round {round}), winners: {winners:?}"
        );
        assert_eq!(
            count(&*storage, "file_count after the race").await,
            MAX_FILES,
            "{storage}: the store holds exactly max_files files after the race"
        );
        clear(&*storage).await;
    }
}

// ---------------------------------------------------------------------------------------------
// read-only stores

/// For a store that must refuse every change (a [`ReadOnly`](crate::ReadOnly) stack, a
/// read-only mount): every write mode, `create_within`, `delete` (of `file` and of
/// `/memories`) and `rename` (from and onto `file`) is [`Error::Refused`], and `file` (which
/// the caller put there) is unchanged afterwards, still listed and counted. Not part of
/// [`run_all`]: call it from the read-only store's own tests.
pub async fn refuses_every_change(storage: &dyn Storage, file: &MemoryPath) {
    let before = ok(storage, "read the existing file", storage.read(file).await);
    let count = ok(storage, "file_count", storage.file_count().await);
    let elsewhere = p("/memories/refused-new-file.md");
    let attempts: Vec<(&str, Result<()>)> = vec![
        (
            "write(Create) of a new file",
            storage
                .write(&elsewhere, b"x".to_vec(), WriteMode::Create)
                .await
                .map(drop),
        ),
        (
            "write(Overwrite) of the file",
            storage
                .write(file, b"x".to_vec(), WriteMode::Overwrite)
                .await
                .map(drop),
        ),
        (
            "write(Update) of the file at its version",
            storage
                .write(
                    file,
                    b"x".to_vec(),
                    WriteMode::Update(before.version.clone()),
                )
                .await
                .map(drop),
        ),
        (
            "create_within of a new file",
            storage
                .create_within(&elsewhere, b"x".to_vec(), usize::MAX)
                .await
                .map(drop),
        ),
        ("delete of the file", storage.delete(file).await),
        (
            "delete of /memories",
            storage.delete(&MemoryPath::root()).await,
        ),
        ("rename of the file", storage.rename(file, &elsewhere).await),
    ];
    for (what, result) in attempts {
        let e = err(storage, what, result);
        assert!(
            matches!(e, Error::Refused { .. }),
            "{storage}: a read-only store refuses {what} with Error::Refused, got {e:?}"
        );
    }
    let after = ok(storage, "read the file again", storage.read(file).await);
    assert_eq!(
        after, before,
        "{storage}: refused changes leave the file as it was"
    );
    assert_eq!(
        ok(storage, "file_count again", storage.file_count().await),
        count,
        "{storage}: refused changes add or remove no file"
    );
    assert_eq!(
        ok(storage, "stat the new path", storage.stat(&elsewhere).await),
        None,
        "{storage}: a refused create leaves nothing behind"
    );
}

// ---------------------------------------------------------------------------------------------
// run_all

/// Runs every check in this module on `storage`, clearing the store (delete `/memories`)
/// before each one.
///
/// The store must be empty when called, and is empty again afterwards. Panics (with the
/// behaviour and the backend's `Display` in the message) on the first check that fails.
///
/// What the store can hold is read from [`Storage::capabilities`]: for a store with fewer
/// [`Capabilities`], the checks that need more run in their narrower form (text instead of
/// bytes, NFC names only, shallower paths) or, for binary content, not at all. The store's own
/// refusals are for its crate's tests to check.
pub async fn run_all(storage: Arc<dyn Storage>) {
    let caps = storage.capabilities();
    run_all_with(storage, caps).await;
}

/// [`run_all`] with capabilities given by the caller instead of read from the store (for a
/// test that narrows them further than the store declares).
pub async fn run_all_with(storage: Arc<dyn Storage>, caps: Capabilities) {
    let s: &dyn Storage = &*storage;
    let existing = ok(
        s,
        "list before the suite",
        s.list(&MemoryPath::root()).await,
    );
    assert!(
        existing.is_empty(),
        "{s}: conformance::storage::run_all needs an empty store, found {} files: {:?}",
        existing.len(),
        existing
            .iter()
            .take(5)
            .map(|m: &FileMeta| m.path.as_str())
            .collect::<Vec<_>>()
    );

    macro_rules! check {
        ($($name:ident),* $(,)?) => {
            $(
                $name(s).await;
                clear(s).await;
            )*
        };
    }
    macro_rules! check_shared {
        ($($name:ident),* $(,)?) => {
            $(
                $name(Arc::clone(&storage)).await;
                clear(s).await;
            )*
        };
    }

    check!(
        read_returns_last_written,
        read_missing_is_not_found,
        stat_file_has_size,
        stat_directories,
        stat_missing_is_none,
        write_create,
        write_overwrite_replaces_file,
        write_overwrite_directory_is_already_exists,
        write_root_is_refused,
        write_update_at_current_version,
        write_update_stale_version_is_conflict,
        write_update_missing_is_not_found,
        write_parent_is_file_names_ancestor,
        write_creates_parents,
        write_failure_changes_nothing,
        write_versions_change,
        write_same_content_version_still_valid,
        delete_file,
        delete_directory_removes_subtree,
        delete_root_removes_everything,
        delete_missing_is_not_found,
        delete_leaves_no_empty_directories,
        list_sorted_with_sizes,
        list_includes_hidden_files,
        list_whole_segment_prefix,
        list_missing_or_file_is_empty,
        rename_file,
        rename_directory_moves_every_file,
        rename_missing_is_not_found,
        rename_never_overwrites,
        rename_into_itself,
        rename_to_below_file,
        rename_after_emptied_directory,
        empty_files,
        file_count_counts_every_file,
        create_within_limit,
        set_modified_is_reported,
    );
    unicode_and_spaces_in_names_with(s, caps.non_nfc_names).await;
    clear(s).await;
    if caps.binary_files {
        binary_content_round_trip(s).await;
        clear(s).await;
    }
    deep_nesting_to(s, caps.max_depth, caps.max_path_bytes).await;
    clear(s).await;
    check_shared!(
        read_never_torn,
        write_create_race_one_winner,
        concurrent_creates_one_winner,
        concurrent_updates_lose_nothing,
        create_within_race_at_limit,
    );
    super::search::run_all_with(Arc::clone(&storage), caps).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InMemoryStorage;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn conformance_in_memory_multi_thread() {
        run_all(Arc::new(InMemoryStorage::new())).await;
    }

    #[tokio::test]
    async fn conformance_in_memory_current_thread() {
        run_all(Arc::new(InMemoryStorage::new())).await;
    }

    /// Forwards everything but `rename` (and `capabilities`), so the trait's provided rename
    /// (copy then delete) runs; it must conform too. With `sloppy`, it breaks compare-and-swap and create-if-absent
    /// (both become plain overwrites), which the suite must catch.
    #[derive(Debug, Default)]
    struct DefaultRename {
        inner: InMemoryStorage,
        sloppy: bool,
    }

    impl std::fmt::Display for DefaultRename {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "DefaultRename({})", self.inner)
        }
    }

    #[async_trait::async_trait]
    impl Storage for DefaultRename {
        async fn read(&self, path: &MemoryPath) -> Result<crate::StoredFile> {
            self.inner.read(path).await
        }
        async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
            self.inner.stat(path).await
        }
        async fn write(
            &self,
            path: &MemoryPath,
            contents: Vec<u8>,
            mode: WriteMode,
        ) -> Result<Version> {
            let mode = if self.sloppy {
                WriteMode::Overwrite
            } else {
                mode
            };
            self.inner.write(path, contents, mode).await
        }
        async fn delete(&self, path: &MemoryPath) -> Result<()> {
            self.inner.delete(path).await
        }
        async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
            self.inner.list(dir).await
        }
        async fn file_count(&self) -> Result<usize> {
            self.inner.file_count().await
        }
        async fn create_within(
            &self,
            path: &MemoryPath,
            contents: Vec<u8>,
            max_files: usize,
        ) -> Result<Version> {
            self.inner.create_within(path, contents, max_files).await
        }
    }

    /// Forwards the six base methods only, so the provided `file_count` (a listing) and
    /// `create_within` (count, then create) run.
    #[derive(Debug, Default)]
    struct ProvidedCounts(InMemoryStorage);

    impl std::fmt::Display for ProvidedCounts {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "ProvidedCounts({})", self.0)
        }
    }

    #[async_trait::async_trait]
    impl Storage for ProvidedCounts {
        async fn read(&self, path: &MemoryPath) -> Result<crate::StoredFile> {
            self.0.read(path).await
        }
        async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
            self.0.stat(path).await
        }
        async fn write(
            &self,
            path: &MemoryPath,
            contents: Vec<u8>,
            mode: WriteMode,
        ) -> Result<Version> {
            self.0.write(path, contents, mode).await
        }
        async fn delete(&self, path: &MemoryPath) -> Result<()> {
            self.0.delete(path).await
        }
        async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
            self.0.list(dir).await
        }
        async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
            self.0.rename(from, to).await
        }
    }

    /// The provided methods are right for one writer (racing creates need an override).
    #[tokio::test]
    async fn provided_file_count_and_create_within_for_one_writer() {
        let storage = ProvidedCounts::default();
        file_count_counts_every_file(&storage).await;
        clear(&storage).await;
        create_within_limit(&storage).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn conformance_provided_rename() {
        run_all(Arc::new(DefaultRename::default())).await;
    }

    #[tokio::test]
    #[should_panic(expected = "DefaultRename(InMemory): create over a file: expected an error")]
    async fn suite_catches_create_that_overwrites() {
        let storage = DefaultRename {
            sloppy: true,
            ..Default::default()
        };
        write_create(&storage).await;
    }

    #[tokio::test]
    #[should_panic(expected = "loses no update")]
    async fn suite_catches_lost_updates() {
        let storage = Arc::new(DefaultRename {
            sloppy: true,
            ..Default::default()
        });
        concurrent_updates_lose_nothing(storage).await;
    }

    #[tokio::test]
    #[should_panic(expected = "needs an empty store")]
    async fn run_all_refuses_a_non_empty_store() {
        let storage = Arc::new(InMemoryStorage::new());
        storage
            .write(&p("/memories/x"), Vec::new(), WriteMode::Create)
            .await
            .unwrap();
        run_all(storage).await;
    }
}
