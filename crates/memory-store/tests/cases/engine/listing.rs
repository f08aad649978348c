//! Listing memories: depth, prefixes and their rollups, and pagination while others insert.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_depth_prefix_and_rollups() {
    let e = engine().await;
    let s = store(&e).await;
    for p in [
        "/b.md",
        "/a/x.md",
        "/a/deep/y.md",
        "/a/deep/z/w.md",
        "/a-b.md",
        "/c/1",
        "/notes/todo.md",
        "/notes-archive/todo.md",
        "/a/y.md",
    ] {
        e.create_memory(&s, p, p, None).await.unwrap();
    }
    let list =
        |prefix: Option<&str>, depth: Option<i64>, limit: Option<i64>, page: Option<String>| {
            let e = e.clone();
            let s = s.clone();
            let params = ListMemories {
                path_prefix: prefix.map(Into::into),
                depth,
                limit,
                page,
                view: View::Basic,
            };
            async move { e.list_memories(&s, params).await }
        };
    // Whole tree in byte order of path.
    let all = list(None, None, Some(100), None).await.unwrap();
    assert_eq!(
        paths(&all.data),
        [
            "/a-b.md",
            "/a/deep/y.md",
            "/a/deep/z/w.md",
            "/a/x.md",
            "/a/y.md",
            "/b.md",
            "/c/1",
            "/notes-archive/todo.md",
            "/notes/todo.md"
        ]
    );
    assert_eq!(
        paths(
            &list(Some("/"), Some(0), Some(100), None)
                .await
                .unwrap()
                .data
        ),
        paths(&all.data)
    );
    // Basic view: no content, hash and size present.
    match &all.data[0] {
        MemoryListItem::Memory(m) => {
            assert_eq!(m.content, None);
            assert_eq!(m.content_size_bytes, 7);
        }
        other => panic!("{other:?}"),
    }
    // depth 1 at the root: prefixes interleaved in path order.
    let root = list(Some("/"), Some(1), None, None).await.unwrap();
    assert_eq!(
        paths(&root.data),
        [
            "/a-b.md",
            "prefix:/a/",
            "/b.md",
            "prefix:/c/",
            "prefix:/notes-archive/",
            "prefix:/notes/"
        ]
    );
    // Whole segments: /notes/ does not match /notes-archive/.
    assert_eq!(
        paths(&list(Some("/notes/"), None, None, None).await.unwrap().data),
        ["/notes/todo.md"]
    );
    let a1 = list(Some("/a/"), Some(1), None, None).await.unwrap();
    assert_eq!(paths(&a1.data), ["prefix:/a/deep/", "/a/x.md", "/a/y.md"]);
    let deep = list(Some("/a/deep/"), Some(1), None, None).await.unwrap();
    assert_eq!(paths(&deep.data), ["/a/deep/y.md", "prefix:/a/deep/z/"]);
    assert!(
        list(Some("/nothing/"), Some(1), None, None)
            .await
            .unwrap()
            .data
            .is_empty()
    );
    // Prefixes count toward limit; pages neither repeat nor skip.
    let mut got = Vec::new();
    let mut page = None;
    loop {
        let p = list(Some("/"), Some(1), Some(2), page).await.unwrap();
        assert!(p.data.len() <= 2);
        got.extend(paths(&p.data));
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    assert_eq!(got, paths(&root.data));
    // Bad parameters: 400.
    for (prefix, depth, limit) in [
        (Some("/a"), None, None),
        (Some("a/"), None, None),
        (None, Some(2), None),
        (None, Some(-1), None),
        (None, None, Some(0)),
        (None, None, Some(101)),
    ] {
        let err = list(prefix, depth, limit, None).await.unwrap_err();
        assert_eq!(kind(&err).1, 400, "{prefix:?} {depth:?} {limit:?}");
    }
    // A token of another listing: 400.
    let p = list(Some("/"), Some(0), Some(1), None).await.unwrap();
    let err = list(Some("/a/"), Some(0), Some(1), p.next_page)
        .await
        .unwrap_err();
    assert_eq!(kind(&err).1, 400);
    // Full view caps a page at 20 and carries content.
    for i in 0..25 {
        e.create_memory(&s, &format!("/many/{i:02}"), "c", None)
            .await
            .unwrap();
    }
    let full = e
        .list_memories(
            &s,
            ListMemories {
                path_prefix: Some("/many/".into()),
                limit: Some(100),
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(full.data.len(), 20);
    assert!(full.next_page.is_some());
    assert!(
        matches!(&full.data[0], MemoryListItem::Memory(m) if m.content.as_deref() == Some("c"))
    );
    let default = e
        .list_memories(
            &s,
            ListMemories {
                path_prefix: Some("/many/".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(default.data.len(), 20);
    assert_eq!(
        kind(
            &e.list_memories("memstore_x", ListMemories::default())
                .await
                .unwrap_err()
        )
        .1,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pagination_under_concurrent_inserts_neither_repeats_nor_skips() {
    let e = engine().await;
    let s = store(&e).await;
    let mut originals = Vec::new();
    for i in 0..30 {
        let p = format!("/k/{:03}", i * 10);
        e.create_memory(&s, &p, "x", None).await.unwrap();
        originals.push(p);
    }
    let mut seen = Vec::new();
    let mut page = None;
    let mut round = 0;
    loop {
        let p = e
            .list_memories(
                &s,
                ListMemories {
                    limit: Some(4),
                    page,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        seen.extend(paths(&p.data));
        // Insert between pages, before and after the cursor.
        for j in 0..2 {
            e.create_memory(
                &s,
                &format!("/k/{:03}", round * 37 % 300 + j * 151 + 1),
                "n",
                None,
            )
            .await
            .ok();
        }
        round += 1;
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "a path repeated: {seen:?}");
    assert_eq!(sorted, seen, "not in order");
    for p in &originals {
        assert!(seen.contains(p), "{p} skipped");
    }

    // Versions too: newest first, no repeats while new versions are written.
    let mut before = 0;
    let mut page = None;
    loop {
        let p = e
            .list_versions(
                &s,
                ListVersions {
                    limit: Some(100),
                    page,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        before += p.data.len();
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    let mut vseen = Vec::new();
    let mut page = None;
    loop {
        let p = e
            .list_versions(
                &s,
                ListVersions {
                    limit: Some(7),
                    page,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        vseen.extend(p.data.iter().map(|v| (v.created_at, v.id.clone())));
        e.create_memory(&s, &format!("/v/{}", vseen.len()), "n", None)
            .await
            .unwrap();
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    let mut sorted = vseen.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    sorted.dedup();
    assert_eq!(sorted, vseen);
    assert!(vseen.len() >= before, "{} < {before}", vseen.len());
}
