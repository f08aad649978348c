//! The shared conformance suite on one store (local engine) and inside one mount of a
//! `Mounts` of two stores, with the store's documented differences checked instead of skipped.

mod common;

use std::sync::Arc;

use common::{Within, local_store, new_store, p, store_rules};
use memory_core::{Entry, MemoryPath, Storage, WriteMode};
use memory_mounts::{Access, Mount, Mounts, StoreStorage};
use memory_store::{ListVersions, MemoryStores};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_on_one_store() {
    let (_engine, store) = local_store().await;
    let store: Arc<dyn Storage> = Arc::new(store);
    common::storage_checks(store.clone(), true).await;
    store_rules(store.clone()).await;
    common::command_checks(store).await;
}

/// Two stores mounted read-write and read-only; the suite runs inside the read-write one,
/// and the read-only one is untouched at the end (its memory has exactly one version).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_within_one_of_two_mounts() {
    let engine = MemoryStores::open_in_memory().unwrap();
    let notes = new_store(&engine, "User Notes", "").await;
    let handbook = new_store(&engine, "Team Handbook", "").await;
    let kept = engine
        .create_memory(&handbook, "/rules.md", "be kind", None)
        .await
        .unwrap();
    let mounts = Mounts::new([
        Mount::store(
            StoreStorage::local(engine.clone(), &notes, common::SESSION),
            Access::ReadWrite,
        )
        .await
        .unwrap(),
        Mount::store(
            StoreStorage::local(engine.clone(), &handbook, common::SESSION),
            Access::ReadOnly,
        )
        .await
        .unwrap(),
    ])
    .unwrap();
    let mounts = Arc::new(mounts);
    let within: Arc<dyn Storage> = Arc::new(Within {
        mounts: mounts.clone(),
        root: p("/memories/user-notes"),
    });
    common::storage_checks(within.clone(), false).await;
    store_rules(within.clone()).await;
    common::command_checks(within).await;

    // deep_nesting, with the mount's folder as the first of the 20 levels: 19 inside it, and a
    // path of exactly 1,024 bytes.
    let segments: Vec<String> = (0..19).map(|i| format!("d{i}")).collect();
    let deepest = p(&format!("/memories/user-notes/{}", segments.join("/")));
    mounts
        .write(&deepest, b"deep".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(mounts.read(&deepest).await.unwrap().contents, b"deep");
    assert!(matches!(
        mounts.stat(&p("/memories/user-notes/d0/d1")).await.unwrap(),
        Some(Entry::Directory)
    ));
    let n = "n".repeat(255);
    let head = format!("/memories/user-notes/{n}/{n}/{n}/");
    let long = format!("{head}{}", "f".repeat(1024 - head.len()));
    assert_eq!(long.len(), 1024);
    mounts
        .write(&p(&long), b"long".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(mounts.read(&p(&long)).await.unwrap().contents, b"long");
    mounts.delete(&p("/memories/user-notes")).await.unwrap();
    let left = mounts.list(&p("/memories/user-notes")).await.unwrap();
    assert_eq!(
        left.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["/memories/user-notes/.mount"],
        "an emptied mount lists only its mark"
    );

    let files: Vec<String> = mounts
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.path.to_string())
        .collect();
    assert_eq!(
        files,
        [
            "/memories/team-handbook/rules.md",
            "/memories/user-notes/.mount"
        ]
    );
    let versions = engine
        .list_versions(&handbook, ListVersions::default())
        .await
        .unwrap();
    assert_eq!(
        versions.data.len(),
        1,
        "the read-only store was never written"
    );
    assert_eq!(versions.data[0].memory_id, kept.id);
}
