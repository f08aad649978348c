//! A store opened read-only changes nothing on disk even where a read-write open would: a
//! folder made by hand gets no lock or count file and no folder of temporary files, a stale
//! temporary file is not cleaned up, a wrong stored count is not corrected. (The conformance
//! suite's `reopen` check covers a store this library made: tests/conformance.rs.)

use std::time::{Duration, SystemTime};

use memory_core::conformance::reopen::folder_snapshot as snapshot;
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_fs::{FsOptions, FsStorage};

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

#[tokio::test]
async fn a_read_only_open_changes_nothing_and_refuses_changes() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("store");
    // A folder made by hand: memories only, no lock or count file, no temporary folder.
    std::fs::create_dir_all(base.join("memories/notes")).unwrap();
    std::fs::write(base.join("memories/notes/tea.md"), "green\n").unwrap();
    std::fs::write(base.join("memories/.hidden"), "h").unwrap();
    let before = snapshot(&base);
    let store = FsStorage::with_options(&base, FsOptions::default().read_only(true)).unwrap();
    assert_eq!(
        store
            .read(&p("/memories/notes/tea.md"))
            .await
            .unwrap()
            .contents,
        b"green\n"
    );
    assert_eq!(store.list(&p("/memories")).await.unwrap().len(), 2);
    assert_eq!(store.file_count().await.unwrap(), 2);
    for refused in [
        store
            .write(&p("/memories/new.md"), b"x".to_vec(), WriteMode::Create)
            .await
            .map(|_| ()),
        store.delete(&p("/memories/notes/tea.md")).await,
        store
            .rename(&p("/memories/notes/tea.md"), &p("/memories/t.md"))
            .await,
    ] {
        assert!(
            matches!(&refused, Err(Error::Refused { reason, .. }) if reason == "/memories is read-only"),
            "{refused:?}"
        );
    }
    drop(store);
    assert_eq!(snapshot(&base), before);

    // A store used read-write before: its lock, count and a stale temporary file stay as they
    // were.
    drop(FsStorage::new(&base).unwrap());
    let stale = base
        .join(".memory-tmp")
        .join("0123456789abcdef0123456789abcdef.tmp");
    std::fs::write(&stale, "left by a crash").unwrap();
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(old)
        .unwrap();
    // A wrong stored count is not corrected on disk either.
    std::fs::write(base.join(".memories.count"), "00000000000000000099\n").unwrap();
    let before = snapshot(&base);
    let store = FsStorage::with_options(&base, FsOptions::default().read_only(true)).unwrap();
    assert_eq!(store.file_count().await.unwrap(), 2);
    drop(store);
    assert_eq!(snapshot(&base), before);
    // What a read-write open does with the same folder: the cleanup the read-only one skipped.
    drop(FsStorage::new(&base).unwrap());
    assert!(!stale.exists());
}

#[tokio::test]
async fn a_read_only_open_of_a_missing_store_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("absent");
    assert!(FsStorage::with_options(&base, FsOptions::default().read_only(true)).is_err());
    assert!(!base.exists());
    std::fs::create_dir(&base).unwrap();
    assert!(FsStorage::with_options(&base, FsOptions::default().read_only(true)).is_err());
    assert_eq!(std::fs::read_dir(&base).unwrap().count(), 0);
}
