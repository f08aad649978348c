//! The `Storage` contract on `SqliteStorage`, file-backed and in memory: the behaviours of
//! memory-core's `storage.rs`, plus what is specific to SQLite (prefixes with `%` and `_`,
//! versions after delete and create, rename atomicity, the index behind prefix queries).

use std::collections::HashSet;
use std::sync::Arc;

use memory_core::{Entry, Error, MemoryPath, Storage, Version, WriteMode};
use memory_sqlite::SqliteStorage;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

/// Runs `check` on a file-backed store and on an in-memory one.
async fn both<F, Fut>(check: F)
where
    F: Fn(Arc<dyn Storage>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    check(Arc::new(
        SqliteStorage::open(dir.path().join("memory.db")).unwrap(),
    ))
    .await;
    check(Arc::new(SqliteStorage::open_in_memory().unwrap())).await;
}

async fn put(s: &dyn Storage, path: &str, body: &str) -> Version {
    s.write(&p(path), body.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap()
}

async fn paths(s: &dyn Storage, dir: &str) -> Vec<String> {
    s.list(&p(dir))
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect()
}

#[tokio::test]
async fn read_write_roundtrip_and_versions() {
    both(|s| async move {
        let v1 = put(&*s, "/memories/a.md", "one").await;
        let f = s.read(&p("/memories/a.md")).await.unwrap();
        assert_eq!(f.contents, b"one");
        assert_eq!(f.version, v1);
        let v2 = s
            .write(&p("/memories/a.md"), b"two".to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
        assert_ne!(v1, v2);
        // Bytes that are not UTF-8 come back exactly.
        let bytes = vec![0u8, 255, 10, 13, 0];
        put(&*s, "/memories/bin.png", "").await;
        s.write(&p("/memories/bin.png"), bytes.clone(), WriteMode::Overwrite)
            .await
            .unwrap();
        assert_eq!(
            s.read(&p("/memories/bin.png")).await.unwrap().contents,
            bytes
        );
    })
    .await;
}

#[tokio::test]
async fn create_is_create_if_absent() {
    both(|s| async move {
        put(&*s, "/memories/a/b.md", "x").await;
        for path in ["/memories/a/b.md", "/memories/a", "/memories"] {
            let e = s
                .write(&p(path), b"y".to_vec(), WriteMode::Create)
                .await
                .unwrap_err();
            assert!(
                matches!(e, Error::AlreadyExists { path: ref q } if q.as_str() == path),
                "{path}: {e:?}"
            );
        }
        // Overwrite of a directory or the root is refused too.
        for path in ["/memories/a", "/memories"] {
            let e = s
                .write(&p(path), b"y".to_vec(), WriteMode::Overwrite)
                .await
                .unwrap_err();
            assert!(matches!(e, Error::AlreadyExists { .. }), "{path}: {e:?}");
        }
        assert_eq!(s.read(&p("/memories/a/b.md")).await.unwrap().contents, b"x");
    })
    .await;
}

#[tokio::test]
async fn compare_and_swap() {
    both(|s| async move {
        let v1 = put(&*s, "/memories/f", "1").await;
        let v2 = s
            .write(
                &p("/memories/f"),
                b"2".to_vec(),
                WriteMode::Update(v1.clone()),
            )
            .await
            .unwrap();
        let stale = s
            .write(
                &p("/memories/f"),
                b"3".to_vec(),
                WriteMode::Update(v1.clone()),
            )
            .await
            .unwrap_err();
        assert!(matches!(stale, Error::Conflict { .. }), "{stale:?}");
        assert!(stale.is_retryable());
        let foreign = s
            .write(
                &p("/memories/f"),
                b"3".to_vec(),
                WriteMode::Update(Version::new("not-ours")),
            )
            .await
            .unwrap_err();
        assert!(matches!(foreign, Error::Conflict { .. }), "{foreign:?}");
        assert_eq!(s.read(&p("/memories/f")).await.unwrap().contents, b"2");
        let missing = s
            .write(
                &p("/memories/g"),
                b"3".to_vec(),
                WriteMode::Update(v2.clone()),
            )
            .await
            .unwrap_err();
        assert!(matches!(missing, Error::NotFound { .. }), "{missing:?}");
        assert!(s.stat(&p("/memories/g")).await.unwrap().is_none());
        put(&*s, "/memories/d/x", "").await;
        let dir = s
            .write(&p("/memories/d"), b"3".to_vec(), WriteMode::Update(v2))
            .await
            .unwrap_err();
        assert!(matches!(dir, Error::NotFound { .. }), "{dir:?}");
    })
    .await;
}

#[tokio::test]
async fn versions_never_repeat_for_a_path() {
    both(|s| async move {
        let mut seen = HashSet::new();
        for round in 0..5 {
            let v = put(&*s, "/memories/again.md", "same").await;
            assert!(
                seen.insert(v.clone()),
                "version {v} repeated in round {round}"
            );
            let v = s
                .write(
                    &p("/memories/again.md"),
                    b"same".to_vec(),
                    WriteMode::Update(v),
                )
                .await
                .unwrap();
            assert!(seen.insert(v));
            s.delete(&p("/memories/again.md")).await.unwrap();
        }
        // A move away and back gives a new version too.
        let v = put(&*s, "/memories/m", "m").await;
        s.rename(&p("/memories/m"), &p("/memories/n"))
            .await
            .unwrap();
        s.rename(&p("/memories/n"), &p("/memories/m"))
            .await
            .unwrap();
        let e = s
            .write(&p("/memories/m"), b"late".to_vec(), WriteMode::Update(v))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Conflict { .. }), "{e:?}");
    })
    .await;
}

#[tokio::test]
async fn parent_is_file_names_the_ancestor() {
    both(|s| async move {
        put(&*s, "/memories/a", "file").await;
        for mode in [WriteMode::Create, WriteMode::Overwrite] {
            let e = s
                .write(&p("/memories/a/b/c.md"), b"x".to_vec(), mode)
                .await
                .unwrap_err();
            match e {
                Error::ParentIsFile { path, parent } => {
                    assert_eq!(path.as_str(), "/memories/a/b/c.md");
                    assert_eq!(parent.as_str(), "/memories/a");
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(paths(&*s, "/memories").await, ["/memories/a"]);
    })
    .await;
}

#[tokio::test]
async fn stat_files_directories_and_nothing() {
    both(|s| async move {
        put(&*s, "/memories/dir/sub/f.md", "hello").await;
        match s.stat(&p("/memories/dir/sub/f.md")).await.unwrap() {
            Some(Entry::File(meta)) => {
                assert_eq!(meta.size, 5);
                assert_eq!(meta.path.as_str(), "/memories/dir/sub/f.md");
                assert!(meta.modified.is_some());
            }
            other => panic!("{other:?}"),
        }
        for dir in ["/memories", "/memories/dir", "/memories/dir/sub"] {
            assert_eq!(
                s.stat(&p(dir)).await.unwrap(),
                Some(Entry::Directory),
                "{dir}"
            );
        }
        for none in [
            "/memories/di",
            "/memories/dir/su",
            "/memories/dir/sub/f.md/x",
            "/memories/x",
        ] {
            assert_eq!(s.stat(&p(none)).await.unwrap(), None, "{none}");
        }
        for missing in ["/memories", "/memories/dir", "/memories/nope"] {
            let e = s.read(&p(missing)).await.unwrap_err();
            assert!(matches!(e, Error::NotFound { .. }), "{missing}: {e:?}");
        }
        // An empty store still has its root.
        s.delete(&p("/memories")).await.unwrap();
        assert_eq!(
            s.stat(&p("/memories")).await.unwrap(),
            Some(Entry::Directory)
        );
    })
    .await;
}

#[tokio::test]
async fn prefixes_match_whole_segments_and_no_wildcards() {
    both(|s| async move {
        for path in [
            "/memories/a/1",
            "/memories/a/.hidden",
            "/memories/a/x/deep",
            "/memories/ab/2",
            "/memories/a-b/3",
            "/memories/a.b/4",
            "/memories/a0/5",
            "/memories/%/6",
            "/memories/%x/7",
            "/memories/_/8",
            "/memories/__/9",
            "/memories/ünï code/with space.md",
        ] {
            put(&*s, path, "x").await;
        }
        assert_eq!(
            paths(&*s, "/memories/a").await,
            ["/memories/a/.hidden", "/memories/a/1", "/memories/a/x/deep"]
        );
        assert_eq!(paths(&*s, "/memories/%").await, ["/memories/%/6"]);
        assert_eq!(paths(&*s, "/memories/_").await, ["/memories/_/8"]);
        assert!(
            paths(&*s, "/memories/a/1").await.is_empty(),
            "a file lists nothing"
        );
        assert!(paths(&*s, "/memories/zzz").await.is_empty());
        // Sorted by bytes, everything under the root.
        let all = paths(&*s, "/memories").await;
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(all, sorted);
        assert_eq!(all.len(), 12);
        let sizes: Vec<u64> = s
            .list(&p("/memories"))
            .await
            .unwrap()
            .iter()
            .map(|m| m.size)
            .collect();
        assert!(sizes.iter().all(|&n| n == 1));

        s.delete(&p("/memories/_")).await.unwrap();
        s.delete(&p("/memories/%")).await.unwrap();
        s.delete(&p("/memories/a")).await.unwrap();
        assert_eq!(
            paths(&*s, "/memories").await,
            [
                "/memories/%x/7",
                "/memories/__/9",
                "/memories/a-b/3",
                "/memories/a.b/4",
                "/memories/a0/5",
                "/memories/ab/2",
                "/memories/ünï code/with space.md",
            ]
        );
        assert_eq!(
            s.stat(&p("/memories/a")).await.unwrap(),
            None,
            "the directory went with its files"
        );
    })
    .await;
}

#[tokio::test]
async fn delete_files_directories_root_and_missing() {
    both(|s| async move {
        put(&*s, "/memories/a/b", "1").await;
        put(&*s, "/memories/a/c/d", "2").await;
        put(&*s, "/memories/e", "3").await;
        let e = s.delete(&p("/memories/nope")).await.unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
        let e = s.delete(&p("/memories/e/x")).await.unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
        s.delete(&p("/memories/a/b")).await.unwrap();
        assert_eq!(
            paths(&*s, "/memories").await,
            ["/memories/a/c/d", "/memories/e"]
        );
        s.delete(&p("/memories/a")).await.unwrap();
        assert_eq!(s.stat(&p("/memories/a")).await.unwrap(), None);
        s.delete(&p("/memories")).await.unwrap();
        assert!(paths(&*s, "/memories").await.is_empty());
        s.delete(&p("/memories")).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn rename_rules() {
    both(|s| async move {
        put(&*s, "/memories/d/x", "x").await;
        put(&*s, "/memories/d/sub/y", "y").await;
        put(&*s, "/memories/f", "f").await;

        let e = s
            .rename(&p("/memories/nope"), &p("/memories/f"))
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::NotFound { .. }),
            "missing source first: {e:?}"
        );
        let e = s
            .rename(&p("/memories/d"), &p("/memories/d/sub/in"))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::RenameIntoItself { .. }), "{e:?}");
        let e = s
            .rename(&p("/memories/d"), &p("/memories/d"))
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::RenameIntoItself { .. } | Error::AlreadyExists { .. }
            ),
            "{e:?}"
        );
        let e = s
            .rename(&p("/memories/f"), &p("/memories/f"))
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::AlreadyExists { .. } | Error::RenameIntoItself { .. }
            ),
            "{e:?}"
        );
        let e = s
            .rename(&p("/memories/d/x"), &p("/memories/f"))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::AlreadyExists { .. }), "{e:?}");
        let e = s
            .rename(&p("/memories/f"), &p("/memories/d"))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::AlreadyExists { .. }), "{e:?}");
        let e = s
            .rename(&p("/memories/d"), &p("/memories/f/inside"))
            .await
            .unwrap_err();
        match e {
            Error::ParentIsFile { path, parent } => {
                assert_eq!(path.as_str(), "/memories/f/inside");
                assert_eq!(parent.as_str(), "/memories/f");
            }
            other => panic!("{other:?}"),
        }
        let e = s
            .rename(&p("/memories"), &p("/memories/elsewhere"))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::RenameIntoItself { .. }), "{e:?}");
        assert_eq!(
            paths(&*s, "/memories").await,
            ["/memories/d/sub/y", "/memories/d/x", "/memories/f"],
            "failed renames change nothing"
        );

        // A directory moves whole, parents of the destination come into being.
        s.rename(&p("/memories/d"), &p("/memories/new/place"))
            .await
            .unwrap();
        assert_eq!(
            paths(&*s, "/memories").await,
            [
                "/memories/f",
                "/memories/new/place/sub/y",
                "/memories/new/place/x"
            ]
        );
        assert_eq!(s.stat(&p("/memories/d")).await.unwrap(), None);
        assert_eq!(
            s.read(&p("/memories/new/place/sub/y"))
                .await
                .unwrap()
                .contents,
            b"y"
        );
        // A file moves, and its old name is free again.
        s.rename(&p("/memories/f"), &p("/memories/g.md"))
            .await
            .unwrap();
        assert_eq!(s.read(&p("/memories/g.md")).await.unwrap().contents, b"f");
        put(&*s, "/memories/f", "again").await;
    })
    .await;
}

#[tokio::test]
async fn rename_that_would_break_path_limits_moves_nothing() {
    both(|s| async move {
        let deep = format!("/memories/d{}", "/n".repeat(18));
        put(&*s, &format!("{deep}/leaf"), "x").await;
        put(&*s, "/memories/d/shallow", "y").await;
        // Moving `d` three levels down would put `leaf` at 22 levels.
        let e = s
            .rename(&p("/memories/d"), &p("/memories/t/u/v"))
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Backend {
                    retryable: false,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            paths(&*s, "/memories").await,
            [format!("{deep}/leaf"), "/memories/d/shallow".to_owned()],
            "all files move or none"
        );
    })
    .await;
}

#[tokio::test]
async fn display_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.db");
    let s = SqliteStorage::open(&db).unwrap();
    assert_eq!(s.to_string(), format!("Sqlite({})", db.display()));
    assert_eq!(s.path(), Some(db.as_path()));
    put(&s, "/memories/keep.md", "kept").await;
    drop(s);
    let s = SqliteStorage::open(&db).unwrap();
    assert_eq!(
        s.read(&p("/memories/keep.md")).await.unwrap().contents,
        b"kept"
    );
    let mem = SqliteStorage::open_in_memory().unwrap();
    assert_eq!(mem.to_string(), "Sqlite(:memory:)");
    assert_eq!(mem.path(), None);
}

/// Prefix queries are range scans on the primary-key index, not full-table scans.
#[tokio::test]
async fn prefix_queries_use_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("plan.db");
    SqliteStorage::open(&db).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    for sql in [
        "SELECT path, size, modified_ms FROM files WHERE path > ?1 AND path < ?2 ORDER BY path",
        "DELETE FROM files WHERE path > ?1 AND path < ?2",
        "SELECT 1 FROM files WHERE path > ?1 AND path < ?2 LIMIT 1",
    ] {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let plan: Vec<String> = stmt
            .query_map(["/memories/a/", "/memories/a0"], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let plan = plan.join("; ");
        assert!(
            plan.starts_with("SEARCH files USING")
                && plan.contains("INDEX sqlite_autoindex_files_1 (path>? AND path<?)"),
            "{sql}: {plan}"
        );
        assert!(
            !plan.contains("TEMP B-TREE"),
            "{sql}: sorts in memory: {plan}"
        );
    }
}
