//! write in its three modes (Create, Overwrite, Update), alone and racing.

use super::*;

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

/// Many tasks each append lines with read → modify → write(Update), retrying on Conflict:
/// no update is lost.
pub async fn concurrent_updates_lose_nothing(storage: Arc<dyn Storage>) {
    concurrent_updates_lose_nothing_across(&[storage]).await;
}

/// [`concurrent_updates_lose_nothing`] with the tasks spread over `stores`, several handles on
/// one store (opened separately, as processes open it), at least one task per handle.
pub async fn concurrent_updates_lose_nothing_across(stores: &[Arc<dyn Storage>]) {
    const LINES: usize = 6;
    let task_count = 8.max(stores.len());
    let storage = &stores[0];
    let path = p("/memories/cas/log.md");
    ok(
        &**storage,
        "create the shared file",
        storage
            .write(&path, b"header\n".to_vec(), WriteMode::Create)
            .await,
    );
    let mut tasks = Vec::new();
    for task in 0..task_count {
        let storage = Arc::clone(&stores[task % stores.len()]);
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
    let body = get(&**storage, "/memories/cas/log.md").await;
    let text = String::from_utf8_lossy(&body);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"header"),
        "{storage}: concurrent updates keep the original content"
    );
    let got: BTreeSet<&str> = lines[1..].iter().copied().collect();
    let mut missing = Vec::new();
    for task in 0..task_count {
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
        1 + task_count * LINES,
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
