//! Files kept open after a read (`FsStorage::keeps_files_open`) never let a read see anything
//! but what opening the path would: another program replacing, editing in place, removing or
//! renaming a file, moving a folder away and putting another (or a symbolic link) in its
//! place, between two reads of one store, is seen by the second read.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_fs::FsStorage;

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    memories: PathBuf,
    storage: FsStorage,
}

/// A store holding `/memories/a/b/note.md` ("first") and `/memories/top.md` ("top"), each
/// read often enough that it is kept open (a store starts keeping files at its 16th read).
async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::new(dir.path()).unwrap();
    assert!(
        storage.keeps_files_open(),
        "the test folder must be on a local file system with inotify (here: {})",
        dir.path().display()
    );
    for (path, text) in [
        ("/memories/a/b/note.md", "first"),
        ("/memories/top.md", "top"),
    ] {
        storage
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
        for _ in 0..10 {
            assert_eq!(read(&storage, path).await.unwrap(), text);
        }
    }
    let memories = dir.path().join("memories");
    Fixture {
        _dir: dir,
        memories,
        storage,
    }
}

async fn read(storage: &FsStorage, path: &str) -> memory_core::Result<String> {
    storage
        .read(&p(path))
        .await
        .map(|f| String::from_utf8(f.contents).unwrap())
}

/// Replaces `path` the way the official SDKs and editors do: a new file renamed over it.
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp-outside");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[tokio::test]
async fn a_kept_file_read_again_gives_its_bytes_now() {
    let f = fixture().await;
    let note = f.memories.join("a/b/note.md");
    // Edited in place (the same file, longer, then shorter).
    std::fs::write(&note, "second, and longer than the first").unwrap();
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        "second, and longer than the first"
    );
    std::fs::write(&note, "3rd").unwrap();
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        "3rd"
    );
    // Replaced by another file.
    replace(&note, "fourth");
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        "fourth"
    );
    // Grown far past the size read last (more than one read's worth).
    let big = "x".repeat(200_000);
    std::fs::write(&note, &big).unwrap();
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        big
    );
    // Removed.
    std::fs::remove_file(&note).unwrap();
    assert!(matches!(
        f.storage.read(&p("/memories/a/b/note.md")).await,
        Err(Error::NotFound { .. })
    ));
    // The other kept file is still read right.
    assert_eq!(read(&f.storage, "/memories/top.md").await.unwrap(), "top");
}

#[tokio::test]
async fn this_stores_own_writes_are_read_back() {
    let f = fixture().await;
    for i in 0..5 {
        let text = format!("version {i}");
        f.storage
            .write(
                &p("/memories/a/b/note.md"),
                text.clone().into_bytes(),
                WriteMode::Overwrite,
            )
            .await
            .unwrap();
        assert_eq!(
            read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
            text
        );
    }
    f.storage
        .rename(&p("/memories/a/b/note.md"), &p("/memories/a/moved.md"))
        .await
        .unwrap();
    assert!(read(&f.storage, "/memories/a/b/note.md").await.is_err());
    assert_eq!(
        read(&f.storage, "/memories/a/moved.md").await.unwrap(),
        "version 4"
    );
    f.storage.delete(&p("/memories/a/moved.md")).await.unwrap();
    assert!(read(&f.storage, "/memories/a/moved.md").await.is_err());
}

#[tokio::test]
async fn a_folder_moved_away_and_replaced_is_read_anew() {
    let f = fixture().await;
    let a = f.memories.join("a");
    // The folder moved away, another in its place with a file of the same name.
    std::fs::rename(&a, f.memories.join("old-a")).unwrap();
    std::fs::create_dir_all(a.join("b")).unwrap();
    std::fs::write(a.join("b/note.md"), "in the new folder").unwrap();
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        "in the new folder"
    );
    // The new folder is watched in turn: a change in it is seen too.
    replace(&a.join("b/note.md"), "changed in the new folder");
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        "changed in the new folder"
    );
    // The old folder, now at another path, is not mistaken for the new one.
    replace(
        &f.memories.join("old-a/b/note.md"),
        "changed in the old folder",
    );
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        "changed in the new folder"
    );
    assert_eq!(
        read(&f.storage, "/memories/old-a/b/note.md").await.unwrap(),
        "changed in the old folder"
    );
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_to_itself_is_refused() {
    let f = fixture().await;
    // The same file, still open, now reached through a symbolic link: the store never follows
    // one, so the read fails as a first read would.
    let a = f.memories.join("a");
    std::fs::rename(&a, f.memories.join("real-a")).unwrap();
    symlink("real-a", &a).unwrap();
    assert!(matches!(
        f.storage.read(&p("/memories/a/b/note.md")).await,
        Err(Error::SymbolicLink { .. })
    ));
    // The file itself swapped for a link to its new name.
    std::fs::rename(f.memories.join("top.md"), f.memories.join("real-top.md")).unwrap();
    symlink("real-top.md", f.memories.join("top.md")).unwrap();
    assert!(matches!(
        f.storage.read(&p("/memories/top.md")).await,
        Err(Error::SymbolicLink { .. })
    ));
}

#[tokio::test]
async fn more_files_than_are_kept_are_all_read_right() {
    let f = fixture().await;
    let n = 150;
    for i in 0..n {
        std::fs::create_dir_all(f.memories.join(format!("d{}", i % 7))).unwrap();
        std::fs::write(
            f.memories.join(format!("d{}/f{i}.md", i % 7)),
            format!("{i}"),
        )
        .unwrap();
    }
    for round in 0..3 {
        for i in 0..n {
            let path = format!("/memories/d{}/f{i}.md", i % 7);
            if round == 2 && i % 3 == 0 {
                replace(&f.memories.join(&path["/memories/".len()..]), "replaced");
                assert_eq!(read(&f.storage, &path).await.unwrap(), "replaced");
            } else if round < 2 {
                assert_eq!(read(&f.storage, &path).await.unwrap(), format!("{i}"));
            }
        }
    }
}

/// Seven thousand changes (21,000 events) in a watched folder overflow the kernel's queue of events (16,384
/// by default): then nothing kept is trusted.
#[tokio::test]
async fn a_lost_event_drops_everything() {
    let f = fixture().await;
    let b = f.memories.join("a/b");
    for i in 0..7_000 {
        std::fs::write(b.join("churn.md"), "x").unwrap();
        std::fs::rename(b.join("churn.md"), b.join(format!("churn-{}.md", i % 2))).unwrap();
    }
    std::fs::write(b.join("note.md"), "after the flood").unwrap();
    replace(&f.memories.join("top.md"), "top, after the flood");
    assert_eq!(
        read(&f.storage, "/memories/a/b/note.md").await.unwrap(),
        "after the flood"
    );
    assert_eq!(
        read(&f.storage, "/memories/top.md").await.unwrap(),
        "top, after the flood"
    );
}

/// Readers on several threads while another program replaces the file again and again: every
/// read gives one whole version, never an older one than a read before it on the same thread,
/// and once the replacing stops every reader sees the last version (no kept file outlives its
/// change, whichever thread took the event).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_racing_a_replacing_program_end_on_the_last_version() {
    let f = fixture().await;
    let storage = std::sync::Arc::new(f.storage);
    let note = f.memories.join("a/b/note.md");
    std::fs::write(&note, "0").unwrap();
    let last = 2_000u32;
    let writer = std::thread::spawn(move || {
        for i in 1..=last {
            replace(&note, &i.to_string());
        }
    });
    let mut readers = Vec::new();
    for _ in 0..3 {
        let storage = std::sync::Arc::clone(&storage);
        readers.push(tokio::spawn(async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            let mut seen = 0u32;
            loop {
                let text = read(&storage, "/memories/a/b/note.md").await.unwrap();
                let n: u32 = text.parse().unwrap();
                assert!(n >= seen, "read {n} after {seen}");
                seen = n;
                if n == last {
                    return;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "a reader never saw the last version (stuck at {n})"
                );
                tokio::task::yield_now().await;
            }
        }));
    }
    writer.join().unwrap();
    for reader in readers {
        reader.await.unwrap();
    }
}
