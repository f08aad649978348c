//! file_count: every file, kept exact by every change.

use super::*;

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
