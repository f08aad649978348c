//! A create into a folder this process has just checked sends no check again (see the
//! `folders` module): these cases show it still refuses a file below a file and a file onto a
//! folder when another process (another `ObjectStoreStorage` on the same bucket, with its own
//! caches) changed the folder in between, by a create, a delete and create, or a rename.

use std::sync::Arc;

use memory_core::{Error, MemoryPath, Storage};
use memory_s3::ObjectStoreStorage;
use object_store::ObjectStore;
use object_store::memory::InMemory;

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

fn two_processes() -> (ObjectStoreStorage, ObjectStoreStorage) {
    let bucket: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    (
        ObjectStoreStorage::new(Arc::clone(&bucket), "t").unwrap(),
        ObjectStoreStorage::new(bucket, "t").unwrap(),
    )
}

async fn create(s: &ObjectStoreStorage, path: &str) -> memory_core::Result<()> {
    s.create_within(&p(path), b"x".to_vec(), 100)
        .await
        .map(|_| ())
}

/// `a` learns that `/memories/p` is a folder and which subfolders it has, by two creates.
async fn learn(a: &ObjectStoreStorage) {
    create(a, "/memories/p/one.md").await.unwrap();
    create(a, "/memories/p/two.md").await.unwrap();
}

#[tokio::test]
async fn a_folder_replaced_by_a_file_elsewhere_is_seen() {
    let (a, b) = two_processes();
    learn(&a).await;
    b.delete(&p("/memories/p")).await.unwrap();
    create(&b, "/memories/p").await.unwrap();
    let e = create(&a, "/memories/p/three.md").await.unwrap_err();
    assert!(matches!(e, Error::ParentIsFile { .. }), "{e:?}");
    assert_eq!(a.list(&MemoryPath::root()).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_subfolder_made_elsewhere_is_seen() {
    let (a, b) = two_processes();
    learn(&a).await;
    create(&b, "/memories/p/q/deep.md").await.unwrap();
    let e = create(&a, "/memories/p/q").await.unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e:?}");
}

#[tokio::test]
async fn a_file_renamed_into_place_elsewhere_is_seen() {
    let (a, b) = two_processes();
    create(&b, "/memories/elsewhere.md").await.unwrap();
    learn(&a).await;
    // Renames change no count: only their touch of the counter tells `a`.
    b.rename(&p("/memories/p"), &p("/memories/gone"))
        .await
        .unwrap();
    b.rename(&p("/memories/elsewhere.md"), &p("/memories/p"))
        .await
        .unwrap();
    let e = create(&a, "/memories/p/three.md").await.unwrap_err();
    assert!(matches!(e, Error::ParentIsFile { .. }), "{e:?}");
}

/// The same process: its own creates, deletes and renames keep its facts true.
#[tokio::test]
async fn own_changes_keep_the_facts_true() {
    let (a, _) = two_processes();
    learn(&a).await;
    create(&a, "/memories/p/q/deep.md").await.unwrap();
    let e = create(&a, "/memories/p/q").await.unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e:?}");
    create(&a, "/memories/p/file.md").await.unwrap();
    let e = create(&a, "/memories/p/file.md/below.md")
        .await
        .unwrap_err();
    assert!(matches!(e, Error::ParentIsFile { .. }), "{e:?}");
    a.delete(&p("/memories/p")).await.unwrap();
    create(&a, "/memories/p").await.unwrap();
    let e = create(&a, "/memories/p/again.md").await.unwrap_err();
    assert!(matches!(e, Error::ParentIsFile { .. }), "{e:?}");
    a.delete(&p("/memories/p")).await.unwrap();
    learn(&a).await;
    create(&a, "/memories/r.md").await.unwrap();
    a.rename(&p("/memories/p"), &p("/memories/moved"))
        .await
        .unwrap();
    a.rename(&p("/memories/r.md"), &p("/memories/p"))
        .await
        .unwrap();
    let e = create(&a, "/memories/p/three.md").await.unwrap_err();
    assert!(matches!(e, Error::ParentIsFile { .. }), "{e:?}");
}
