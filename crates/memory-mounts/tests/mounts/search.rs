//! Search across the mounts: files of every mount found under their folders, over different
//! storages.

use super::*;

/// Search fans out to every mount (the read-only one too), and each hit comes back under its
/// mount's folder; merged by score, cut to the limit after merging; `under` picks the mounts.
#[tokio::test]
async fn search_finds_files_of_every_mount_under_their_folders() {
    use memory_core::search::SearchQuery;

    let f = fixture().await;
    f.engine
        .create_memory(
            &f.notes,
            "/prefs/runbook.md",
            "The runbook lives in the wiki; read the runbook first.\n",
            None,
        )
        .await
        .unwrap();
    f.engine
        .create_memory(&f.notes, "/other.md", "Nothing to see.\n", None)
        .await
        .unwrap();
    let mounts = f.tool.storage();
    let query = SearchQuery::new("runbook").unwrap();
    let hits = mounts.search(&query).await.unwrap();
    let mut paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "/memories/team-handbook/onboarding.md",
            "/memories/user-notes/prefs/runbook.md"
        ]
    );
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "{hits:?}"
    );
    assert!(hits.iter().all(|h| h.lines == [1]), "{hits:?}");

    // The limit applies to the merged list: the best hit of either store.
    let one = mounts
        .search(&query.clone().with_limit(1).unwrap())
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].path, hits[0].path);

    // Below one mount, only its files; outside every mount, nothing.
    let within = mounts
        .search(&query.clone().with_under(p("/memories/user-notes")))
        .await
        .unwrap();
    assert_eq!(within.len(), 1);
    assert_eq!(within[0].path, p("/memories/user-notes/prefs/runbook.md"));
    let deeper = mounts
        .search(&query.clone().with_under(p("/memories/team-handbook/none")))
        .await
        .unwrap();
    assert!(deeper.is_empty(), "{deeper:?}");
    let outside = mounts
        .search(&query.clone().with_under(p("/memories/elsewhere")))
        .await
        .unwrap();
    assert!(outside.is_empty(), "{outside:?}");
    // A word in no file.
    let none = mounts
        .search(&SearchQuery::new("quokka").unwrap())
        .await
        .unwrap();
    assert!(none.is_empty());
}

/// A plain storage and a versioned store in one table: both are searched, each hit under its
/// own folder.
#[tokio::test]
async fn search_spans_different_storages() {
    use memory_core::search::SearchQuery;

    let engine = MemoryStores::open_in_memory().unwrap();
    let notes = new_store(&engine, "User Notes", "").await;
    engine
        .create_memory(&notes, "/a.md", "the kettle is blue\n", None)
        .await
        .unwrap();
    let scratch = Arc::new(InMemoryStorage::new());
    scratch
        .write(
            &p("/memories/b.md"),
            b"a blue kettle, and another kettle\n".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let mounts = Mounts::new([
        Mount::new("Scratch", scratch, Access::ReadOnly),
        store_mount(&engine, &notes, Access::ReadWrite).await,
    ])
    .unwrap();
    let hits = mounts
        .search(&SearchQuery::new("kettle blue").unwrap())
        .await
        .unwrap();
    let mut paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        ["/memories/scratch/b.md", "/memories/user-notes/a.md"]
    );
    assert!(
        hits.iter().all(|h| h.snippet.contains("kettle")),
        "{hits:?}"
    );
}
