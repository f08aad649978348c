//! The side index beside a folder store never follows a symbolic link at its folder or its
//! files (issue 28): a link there would write the memories' text wherever it points. The
//! search fails with [`LinkedIndex`] naming the link, and nothing is written at the target.
#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use memory_core::search::SearchQuery;
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_fs::{FsOptions, FsStorage};
use memory_search::{INDEX_DIR, INDEX_FILE, IndexLocation, IndexOptions, Indexed, LinkedIndex};

const WORD: &[u8] = b"zanzibarquokka";

fn folder(dir: &Path) -> Indexed<FsStorage> {
    let fs = FsStorage::with_options(dir, FsOptions::default().fsync(false)).unwrap();
    Indexed::new(
        fs,
        IndexOptions::new(IndexLocation::beside(dir)).racy_window(Duration::ZERO),
    )
}

async fn write_notes(store: &Indexed<FsStorage>) {
    for (path, text) in [
        ("/memories/a.md", "the zanzibarquokka hides here"),
        ("/memories/d/b.md", "another zanzibarquokka note"),
    ] {
        store
            .write(
                &MemoryPath::parse(path).unwrap(),
                text.as_bytes().to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
}

/// The link a refused search names, from the error's typed source.
fn refused_link(e: &Error) -> &Path {
    let Error::Backend { source, .. } = e else {
        panic!("not a backend error: {e:?}");
    };
    let link = source
        .downcast_ref::<LinkedIndex>()
        .unwrap_or_else(|| panic!("not a LinkedIndex: {e:?}"));
    &link.path
}

/// Every file below `dir` (links not followed) holding `WORD`.
fn files_with_word(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                todo.push(entry.path());
            } else if kind.is_file() {
                let bytes = std::fs::read(entry.path()).unwrap();
                if bytes.windows(WORD.len()).any(|w| w == WORD) {
                    found.push(entry.path().display().to_string());
                }
            }
        }
    }
    found
}

async fn search(store: &Indexed<FsStorage>) -> memory_core::Result<usize> {
    store
        .search(&SearchQuery::new("zanzibarquokka").unwrap())
        .await
        .map(|hits| hits.len())
}

#[tokio::test]
async fn a_link_at_the_index_folder_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(INDEX_DIR)).unwrap();
    let store = folder(dir.path());
    write_notes(&store).await;

    let e = search(&store).await.unwrap_err();
    assert_eq!(refused_link(&e), dir.path().join(INDEX_DIR));
    let shown = e.to_string() + &format!("{:?}", std::error::Error::source(&e));
    assert!(shown.contains("remove the link"), "{shown}");
    // Nothing at all was created where the link points.
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    // Still refused the second time (no half-open index left behind).
    assert!(search(&store).await.is_err());
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);

    // Once the link is removed, the next search builds the index in its place.
    std::fs::remove_file(dir.path().join(INDEX_DIR)).unwrap();
    assert_eq!(search(&store).await.unwrap(), 2);
    assert!(dir.path().join(INDEX_DIR).join(INDEX_FILE).is_file());
}

#[tokio::test]
async fn a_link_at_the_index_file_or_a_companion_is_refused_and_its_target_untouched() {
    for (name, target_exists) in [
        (INDEX_FILE.to_owned(), true),
        (INDEX_FILE.to_owned(), false),
        (format!("{INDEX_FILE}-wal"), true),
        (format!("{INDEX_FILE}-wal"), false),
        (format!("{INDEX_FILE}-shm"), false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("target");
        if target_exists {
            std::fs::write(&target, b"").unwrap();
        }
        let index_dir = dir.path().join(INDEX_DIR);
        std::fs::create_dir(&index_dir).unwrap();
        let link = index_dir.join(&name);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let store = folder(dir.path());
        write_notes(&store).await;

        let e = search(&store).await.unwrap_err();
        assert_eq!(refused_link(&e), link, "{name}");
        assert!(files_with_word(elsewhere.path()).is_empty(), "{name}");
        if target_exists {
            assert_eq!(std::fs::read(&target).unwrap(), b"", "{name}");
        } else {
            assert!(!target.exists(), "{name}: created at the link's target");
        }
        // The index folder holds no note text either (no index was written beside the link).
        assert!(files_with_word(&index_dir).is_empty(), "{name}");
    }
}

#[tokio::test]
async fn a_store_reached_through_a_linked_folder_still_has_its_index() {
    // The folders above the index folder are the user's to choose: a store path through a
    // link (a home folder on another disk, macOS's /var -> /private/var) keeps working.
    let real = tempfile::tempdir().unwrap();
    let links = tempfile::tempdir().unwrap();
    let base = links.path().join("store");
    std::os::unix::fs::symlink(real.path(), &base).unwrap();
    let store = folder(&base);
    write_notes(&store).await;
    assert_eq!(search(&store).await.unwrap(), 2);
    assert!(real.path().join(INDEX_DIR).join(INDEX_FILE).is_file());
}

#[tokio::test]
async fn discard_removes_the_index_files_and_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder(dir.path());
    write_notes(&store).await;
    assert_eq!(search(&store).await.unwrap(), 2);
    drop(store);
    assert!(!files_with_word(&dir.path().join(INDEX_DIR)).is_empty());
    IndexLocation::beside(dir.path()).discard().unwrap();
    assert!(files_with_word(&dir.path().join(INDEX_DIR)).is_empty());
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let file = dir
            .path()
            .join(INDEX_DIR)
            .join(format!("{INDEX_FILE}{suffix}"));
        assert!(!file.exists(), "{}", file.display());
    }
    // The notes themselves are untouched; discarding what is not there is fine.
    assert!(dir.path().join("memories/a.md").is_file());
    IndexLocation::beside(dir.path()).discard().unwrap();
    IndexLocation::Memory.discard().unwrap();
}
