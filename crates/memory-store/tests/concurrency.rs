//! Many tasks updating one memory with `content_sha256` preconditions, over two engine handles
//! on one database file (so SQLite's own locking keeps them apart too).

use std::sync::Arc;

use memory_store::{
    Actor, CreateStore, ListVersions, MemoryStores, Operation, Precondition, StoreError,
    UpdateMemory, View,
};
use tokio::sync::Barrier;

const TASKS: usize = 16;

async fn setup() -> (tempfile::TempDir, [MemoryStores; 2], String, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let a = MemoryStores::open(&db).await.unwrap();
    let b = MemoryStores::open(&db).await.unwrap();
    let s = a
        .create_store(CreateStore {
            name: "race".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let m = a.create_memory(&s, "/log.md", "", None).await.unwrap().id;
    (dir, [a, b], s, m)
}

fn cas(content: String, sha: String) -> UpdateMemory {
    UpdateMemory {
        content: Some(content),
        path: None,
        precondition: Some(Precondition::content_sha256(sha)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn same_snapshot_exactly_one_wins() {
    let (_dir, engines, s, m) = setup().await;
    let barrier = Arc::new(Barrier::new(TASKS));
    let mut handles = Vec::new();
    for i in 0..TASKS {
        let (e, s, m, barrier) = (
            engines[i % 2].clone(),
            s.clone(),
            m.clone(),
            barrier.clone(),
        );
        handles.push(tokio::spawn(async move {
            let seen = e.retrieve_memory(&s, &m).await.unwrap();
            barrier.wait().await;
            e.update_memory(
                &s,
                &m,
                cas(format!("task {i}"), seen.content_sha256),
                Some(Actor::session(format!("sesn_{i}"))),
            )
            .await
        }));
    }
    let mut wins = 0;
    for h in handles {
        match h.await.unwrap() {
            Ok(_) => wins += 1,
            Err(StoreError::PreconditionFailed { .. }) => {}
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    assert_eq!(wins, 1);
    let versions = engines[1]
        .list_versions(
            &s,
            ListVersions {
                memory_id: Some(m),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(versions.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retrying_appenders_all_land_and_the_chain_has_no_gap() {
    let (_dir, engines, s, m) = setup().await;
    const EDITS: usize = 3;
    let mut handles = Vec::new();
    for i in 0..TASKS {
        let (e, s, m) = (engines[i % 2].clone(), s.clone(), m.clone());
        handles.push(tokio::spawn(async move {
            let mut conflicts = 0;
            for k in 0..EDITS {
                loop {
                    let cur = e.retrieve_memory(&s, &m).await.unwrap();
                    let next = format!("{}t{i}e{k}\n", cur.content.unwrap());
                    tokio::task::yield_now().await;
                    match e
                        .update_memory(&s, &m, cas(next, cur.content_sha256), None)
                        .await
                    {
                        Ok(_) => break,
                        Err(StoreError::PreconditionFailed { .. }) => conflicts += 1,
                        Err(err) if err.is_retryable() => {}
                        Err(err) => panic!("unexpected {err:?}"),
                    }
                }
            }
            conflicts
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let last = engines[0].retrieve_memory(&s, &m).await.unwrap();
    let lines: Vec<&str> = last.content.as_deref().unwrap().lines().collect();
    assert_eq!(lines.len(), TASKS * EDITS, "an edit was lost");
    for i in 0..TASKS {
        for k in 0..EDITS {
            assert_eq!(
                lines.iter().filter(|l| **l == format!("t{i}e{k}")).count(),
                1
            );
        }
    }
    // The chain: created, then one modified version per edit, each adding exactly one line to
    // its predecessor, newest = the head.
    let mut versions = Vec::new();
    let mut page = None;
    loop {
        let p = engines[1]
            .list_versions(
                &s,
                ListVersions {
                    memory_id: Some(m.clone()),
                    view: View::Full,
                    limit: Some(20),
                    page,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        versions.extend(p.data);
        page = p.next_page;
        if page.is_none() {
            break;
        }
    }
    versions.reverse();
    assert_eq!(versions.len(), 1 + TASKS * EDITS);
    assert_eq!(versions[0].operation, Operation::Created);
    assert_eq!(versions.last().unwrap().id, last.memory_version_id);
    for pair in versions.windows(2) {
        let (before, after) = (
            pair[0].content.as_deref().unwrap(),
            pair[1].content.as_deref().unwrap(),
        );
        assert_eq!(pair[1].operation, Operation::Modified);
        assert!(pair[0].created_at < pair[1].created_at);
        assert!(
            after.starts_with(before),
            "a version skipped its predecessor"
        );
        assert_eq!(after[before.len()..].lines().count(), 1, "gap in the chain");
    }
}

/// Many engines opening the same new file at the same moment (issue: one sometimes saw the
/// other's schema half made and called the file "not a memory-store database").
#[test]
fn many_engines_opening_one_new_file_at_once_all_succeed() {
    use memory_store::SqlitePersistence;
    const OPENERS: usize = 8;
    for round in 0..25 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("new.db");
        let gate = Arc::new(std::sync::Barrier::new(OPENERS));
        let openers: Vec<_> = (0..OPENERS)
            .map(|_| {
                let (db, gate) = (db.clone(), Arc::clone(&gate));
                std::thread::spawn(move || {
                    gate.wait();
                    SqlitePersistence::open(&db).map(drop)
                })
            })
            .collect();
        for opener in openers {
            if let Err(e) = opener.join().unwrap() {
                panic!("round {round}: {e}");
            }
        }
        // And the file is one good database.
        SqlitePersistence::open(&db).unwrap();
    }
}
