//! memory-store's engine on `PostgresPersistence` (feature `stores`), against a real server:
//! the data round-trips (stores, memories, versions with actors, redaction, archive), and two
//! engines with pools of their own (as two `memory serve` instances) on one schema keep the
//! memory limit, the preconditions and the path-occupancy rule exact.

#![cfg(feature = "stores")]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use memory_core::options::StoreOptions as UrlOptions;
use memory_postgres::{PostgresOpenError, PostgresPersistence};
use memory_store::{
    Actor, CreateStore, EngineOptions, ListMemories, ListVersions, MemoryListItem, MemoryStores,
    Operation, Precondition, Reason, StoreError, UpdateMemory, UpdateStore, View,
};

type Engine = MemoryStores<PostgresPersistence>;

/// The engine's tables in `schema`, with a pool of 8: two pools hold as many connections as
/// the racing tasks, so that the races happen in the database.
async fn persistence(schema: &str) -> PostgresPersistence {
    PostgresPersistence::from_url(
        &common::url_with(&format!("schema={schema}&pool_size=8")),
        UrlOptions::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("cannot open the engine's tables: {e}"))
}

/// Two engines with pools of their own on one new schema.
async fn engines(options: EngineOptions) -> (String, [Engine; 2]) {
    let schema = common::unique("stores");
    let a = MemoryStores::with_options(persistence(&schema).await, options.clone());
    let b = MemoryStores::with_options(persistence(&schema).await, options);
    (schema, [a, b])
}

async fn new_store(e: &Engine) -> String {
    e.create_store(CreateStore {
        name: "Test".into(),
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_round_trips_between_instances() {
    let (schema, [a, b]) = engines(EngineOptions::default()).await;
    let store = a
        .create_store(CreateStore {
            name: "Prefs".into(),
            description: Some("zero \u{0} byte, ünï".into()),
            metadata: Some(BTreeMap::from([("team".into(), "core".into())])),
        })
        .await
        .unwrap();
    assert_eq!(b.retrieve_store(&store.id).await.unwrap(), store);
    let actor = Actor::session_via_key("sesn_1", "apikey_9");
    let m = a
        .create_memory(
            &store.id,
            "/notes/a.md",
            "hello \u{0} world\n",
            Some(actor.clone()),
        )
        .await
        .unwrap();
    let seen = b.retrieve_memory(&store.id, &m.id).await.unwrap();
    assert_eq!(seen, m);
    let updated = b
        .update_memory(
            &store.id,
            &m.id,
            UpdateMemory {
                content: Some("changed".into()),
                path: Some("/notes/b.md".into()),
                precondition: Some(Precondition::content_sha256(m.content_sha256.clone())),
            },
            Some(Actor::user("user_1")),
        )
        .await
        .unwrap();
    assert_eq!(updated.path, "/notes/b.md");
    let versions = a
        .list_versions(
            &store.id,
            ListVersions {
                memory_id: Some(m.id.clone()),
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0].operation, Operation::Modified);
    assert_eq!(versions[0].created_by, Some(Actor::user("user_1")));
    assert_eq!(versions[1].created_by, Some(actor));
    assert_eq!(versions[1].content.as_deref(), Some("hello \u{0} world\n"));
    // The key that sent a session's write finds it.
    let by_key = b
        .list_versions(
            &store.id,
            ListVersions {
                api_key_id: Some("apikey_9".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(by_key.len(), 1);
    assert_eq!(by_key[0].id, versions[1].id);
    // Redacting the old version, not the head.
    let redacted = a
        .redact_version(&store.id, &versions[1].id, Some(Actor::user("user_2")))
        .await
        .unwrap();
    assert!(redacted.redacted_at.is_some() && redacted.content.is_none());
    let again = b
        .retrieve_version(&store.id, &versions[1].id)
        .await
        .unwrap();
    assert_eq!(again.redacted_by, Some(Actor::user("user_2")));
    assert!(again.path.is_none());
    // Listing, with a roll-up.
    a.create_memory(&store.id, "/notes/deep/c.md", "c", None)
        .await
        .unwrap();
    let page = b
        .list_memories(
            &store.id,
            ListMemories {
                path_prefix: Some("/notes/".into()),
                depth: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let items: Vec<String> = page
        .data
        .iter()
        .map(|i| match i {
            MemoryListItem::Memory(m) => m.path.clone(),
            MemoryListItem::Prefix(p) => format!("prefix:{}", p.path),
        })
        .collect();
    assert_eq!(items, ["/notes/b.md", "prefix:/notes/deep/"]);
    // Archive, seen by the other instance.
    a.archive_store(&store.id).await.unwrap();
    let e = b
        .create_memory(&store.id, "/x.md", "x", None)
        .await
        .unwrap_err();
    assert_eq!(e.reason(), Reason::StoreArchived, "{e:?}");
    let e = b
        .update_store(
            &store.id,
            UpdateStore {
                name: Some("other".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.reason(), Reason::StoreArchived, "{e:?}");
    // A new handle on the schema sees it all; deleting removes it all.
    let c: Engine = MemoryStores::new(persistence(&schema).await);
    assert!(
        c.retrieve_store(&store.id)
            .await
            .unwrap()
            .archived_at
            .is_some()
    );
    c.delete_store(&store.id).await.unwrap();
    assert!(matches!(
        a.retrieve_store(&store.id).await.unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

/// A write holds its store's row, not the schema: a writer of one store waits for another
/// writer of that store, never for a writer of a different one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_holds_its_own_store_only() {
    let (schema, [a, b]) = engines(EngineOptions::default()).await;
    let (held, free) = (new_store(&a).await, new_store(&a).await);
    // An open transaction holding `held`'s row, as a writer of it does.
    let mut admin = common::admin().await;
    let tx = admin.transaction().await.unwrap();
    tx.execute(
        &format!("SELECT 1 FROM \"{schema}\".stores WHERE id = $1 FOR UPDATE"),
        &[&held],
    )
    .await
    .unwrap();
    let bound = std::time::Duration::from_secs(10);
    tokio::time::timeout(bound, b.create_memory(&free, "/x.md", "x", None))
        .await
        .expect("a write to another store waited for the held one")
        .unwrap();
    let waiting = tokio::spawn({
        let (b, held) = (b.clone(), held.clone());
        async move { b.create_memory(&held, "/y.md", "y", None).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        !waiting.is_finished(),
        "a write to a held store did not wait"
    );
    tx.rollback().await.unwrap();
    let made = tokio::time::timeout(bound, waiting)
        .await
        .expect("the write still waits after the holder ended")
        .unwrap()
        .unwrap();
    assert_eq!(made.path, "/y.md");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_memory_limit_is_exact_across_instances() {
    const MAX: u64 = 25;
    const TASKS: usize = 16;
    let (_, engines) = engines(EngineOptions::default().max_memories_per_store(MAX)).await;
    let engines = Arc::new(engines);
    for round in 0..5 {
        let store = new_store(&engines[0]).await;
        for i in 0..MAX - 1 {
            engines[(i % 2) as usize]
                .create_memory(&store, &format!("/seed/{i}.md"), "s", None)
                .await
                .unwrap();
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(TASKS));
        let mut tasks = Vec::new();
        for t in 0..TASKS {
            let (engines, store, barrier) = (engines.clone(), store.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                engines[t % 2]
                    .create_memory(&store, &format!("/new/{t}.md"), "n", None)
                    .await
            }));
        }
        let mut wins = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(_) => wins += 1,
                Err(e) => assert_eq!(e.reason(), Reason::StoreFull, "round {round}: {e:?}"),
            }
        }
        assert_eq!(
            wins, 1,
            "round {round}: exactly one create fills the last place"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_updates_with_one_precondition_over_two_instances_have_one_winner() {
    let (_, engines) = engines(EngineOptions::default()).await;
    let engines = Arc::new(engines);
    let store = new_store(&engines[0]).await;
    let m = engines[0]
        .create_memory(&store, "/shared.md", "start", None)
        .await
        .unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let mut tasks = Vec::new();
    for t in 0..8 {
        let (engines, store, id, sha, barrier) = (
            engines.clone(),
            store.clone(),
            m.id.clone(),
            m.content_sha256.clone(),
            barrier.clone(),
        );
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            engines[t % 2]
                .update_memory(
                    &store,
                    &id,
                    UpdateMemory {
                        content: Some(format!("task {t}")),
                        path: None,
                        precondition: Some(Precondition::content_sha256(sha)),
                    },
                    Some(Actor::session(format!("sesn_{t}"))),
                )
                .await
        }));
    }
    let mut wins = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => wins += 1,
            Err(StoreError::PreconditionFailed { .. }) => {}
            Err(e) => panic!("a loser's precondition fails, got {e:?}"),
        }
    }
    assert_eq!(wins, 1);
    let versions = engines[1]
        .list_versions(
            &store,
            ListVersions {
                memory_id: Some(m.id),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(versions.len(), 2, "one created, one modified version");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_path_and_a_path_below_it_never_both_exist() {
    let (_, engines) = engines(EngineOptions::default()).await;
    let engines = Arc::new(engines);
    for round in 0..10 {
        let store = new_store(&engines[0]).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let mut tasks = Vec::new();
        for (t, path) in ["/x", "/x/y"].into_iter().enumerate() {
            let (engines, store, barrier) = (engines.clone(), store.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                engines[t].create_memory(&store, path, "v", None).await
            }));
        }
        let mut wins = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(_) => wins += 1,
                Err(e) => assert_eq!(e.reason(), Reason::PathConflict, "round {round}: {e:?}"),
            }
        }
        assert_eq!(wins, 1, "round {round}");
    }
}

#[tokio::test]
async fn root_is_not_an_engine_option() {
    let e = PostgresPersistence::from_url(&common::url_with("root=a"), UrlOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(e, PostgresOpenError::Options(_)), "{e:?}");
    let p = persistence(&common::unique("shown")).await;
    for text in [format!("{p}"), format!("{p:?}")] {
        assert!(!text.contains(&common::password()), "{text}");
    }
}
