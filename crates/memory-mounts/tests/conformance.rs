//! The shared conformance suite on one store (local engine) and inside one mount of a
//! `Mounts` of two stores, with the store's documented differences checked instead of skipped.

mod common;

use std::sync::Arc;

use common::{Within, local_store, new_store, p, store_rules};
use memory_core::conformance::{Capabilities, run_all_with};
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_mounts::{Access, Mount, Mounts, StoreStorage};
use memory_store::{ListVersions, MemoryStores};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_on_one_store() {
    let (_engine, store) = local_store().await;
    let store: Arc<dyn Storage> = Arc::new(store);
    run_all_with(store.clone(), common::STORE).await;
    store_rules(store).await;
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
            StoreStorage::local(engine.clone(), &notes, common::SESSION).unwrap(),
            Access::ReadWrite,
        )
        .await
        .unwrap(),
        Mount::store(
            StoreStorage::local(engine.clone(), &handbook, common::SESSION).unwrap(),
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
    // The mount's folder is the first of the 20 levels and takes `/user-notes` of the 1,024
    // bytes, so paths inside it go 19 levels and 1,013 bytes deep.
    let inside = Capabilities {
        max_depth: memory_core::MAX_SEGMENTS - 1,
        max_path_bytes: memory_core::MAX_PATH_BYTES - "/user-notes".len(),
        ..common::STORE
    };
    run_all_with(within.clone(), inside).await;
    store_rules(within).await;

    // Emptying the mount leaves its mark only.
    mounts
        .write(
            &p("/memories/user-notes/d0/x.md"),
            b"x".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
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
