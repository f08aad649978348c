//! The file limit without listing: `create_within` checks the count the store keeps and creates
//! under the store lock, so creates racing at `max_files - 1` leave exactly one winner, across
//! tasks, `FsStorage`s on one folder and processes; the count follows every change and is
//! recounted when a store opens.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_fs::FsStorage;

const MAX: usize = 5;

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

async fn fill(storage: &FsStorage, files: usize) {
    for i in 0..files {
        storage
            .write(
                &p(&format!("/memories/seed/{i}.md")),
                b"s".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creates_in_one_process_leave_exactly_one_winner() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        // Four stores on one folder (four lock handles, as four processes have), two tasks each.
        let stores: Vec<Arc<FsStorage>> = (0..4)
            .map(|_| Arc::new(FsStorage::new(dir.path()).unwrap()))
            .collect();
        fill(&stores[0], MAX - 1).await;
        let mut tasks = Vec::new();
        for task in 0..8 {
            let storage = Arc::clone(&stores[task % 4]);
            tasks.push(tokio::spawn(async move {
                let path = p(&format!("/memories/race/{task}.md"));
                storage.create_within(&path, b"x".to_vec(), MAX).await
            }));
        }
        let mut winners = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(_) => winners += 1,
                Err(Error::StoreFull { max_files: MAX }) => {}
                Err(e) => panic!("round {round}: {e:?}"),
            }
        }
        assert_eq!(winners, 1, "round {round}");
        for storage in &stores {
            assert_eq!(storage.file_count().await.unwrap(), MAX, "round {round}");
        }
        assert_eq!(
            stores[1].list(&MemoryPath::root()).await.unwrap().len(),
            MAX
        );
    }
}

/// Not a test of its own: the body of each child process of
/// [`racing_creates_across_processes_leave_exactly_one_winner`], which runs this test binary
/// again with `MEMORY_FS_RACE_BASE` set; without it, this returns at once.
#[tokio::test]
async fn race_child() {
    let Ok(base) = std::env::var("MEMORY_FS_RACE_BASE") else {
        return;
    };
    let name = std::env::var("MEMORY_FS_RACE_NAME").unwrap();
    let storage = FsStorage::new(&base).unwrap();
    // Start together: wait for the parent's signal.
    let go = Path::new(&base).join("go");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !go.exists() {
        assert!(Instant::now() < deadline, "no start signal");
        std::thread::sleep(Duration::from_millis(1));
    }
    let path = p(&format!("/memories/race/{name}.md"));
    let outcome = match storage.create_within(&path, b"x".to_vec(), MAX).await {
        Ok(_) => "won",
        Err(Error::StoreFull { .. }) => "full",
        Err(e) => panic!("{e:?}"),
    };
    println!("RACE-OUTCOME {outcome}");
}

#[tokio::test]
async fn racing_creates_across_processes_leave_exactly_one_winner() {
    const CHILDREN: usize = 4;
    let exe = std::env::current_exe().unwrap();
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("store");
        let storage = FsStorage::new(&base).unwrap();
        fill(&storage, MAX - 1).await;
        let children: Vec<_> = (0..CHILDREN)
            .map(|i| {
                Command::new(&exe)
                    .args(["--exact", "race_child", "--nocapture", "--test-threads=1"])
                    .env("MEMORY_FS_RACE_BASE", &base)
                    .env("MEMORY_FS_RACE_NAME", format!("child-{i}"))
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        // Let every child open the store (each recounts under the lock), then start them.
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(base.join("go"), b"").unwrap();
        let mut outcomes = Vec::new();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: a child failed");
            let text = String::from_utf8(out.stdout).unwrap();
            // The harness prints its own words on the same line.
            let outcome = text
                .split("RACE-OUTCOME ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or_else(|| panic!("round {round}: no outcome in {text:?}"))
                .to_owned();
            outcomes.push(outcome);
        }
        let winners = outcomes.iter().filter(|o| *o == "won").count();
        assert_eq!(winners, 1, "round {round}: {outcomes:?}");
        assert_eq!(storage.file_count().await.unwrap(), MAX, "round {round}");
        assert_eq!(storage.list(&MemoryPath::root()).await.unwrap().len(), MAX);
    }
}

/// The count follows every kind of change without a listing, and a store that opens counts
/// what others left; files removed by hand never make a store look full.
#[tokio::test]
async fn the_count_follows_every_change() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::new(dir.path()).unwrap();
    let count = || async { storage.file_count().await.unwrap() };
    fill(&storage, 3).await;
    assert_eq!(count().await, 3);
    // An overwrite or update of a file leaves it; an overwrite of a new path adds one.
    storage
        .write(
            &p("/memories/seed/0.md"),
            b"o".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    let v = storage
        .read(&p("/memories/seed/0.md"))
        .await
        .unwrap()
        .version;
    storage
        .write(
            &p("/memories/seed/0.md"),
            b"u".to_vec(),
            WriteMode::Update(v),
        )
        .await
        .unwrap();
    assert_eq!(count().await, 3);
    storage
        .write(&p("/memories/new.md"), b"n".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_eq!(count().await, 4);
    // A refused create changes nothing.
    assert!(matches!(
        storage
            .create_within(&p("/memories/new.md"), b"n".to_vec(), 100)
            .await,
        Err(Error::AlreadyExists { .. })
    ));
    assert_eq!(count().await, 4);
    // Renames keep it; deletes of a file and of a folder take theirs.
    storage
        .rename(&p("/memories/seed"), &p("/memories/moved/seed"))
        .await
        .unwrap();
    assert_eq!(count().await, 4);
    storage
        .delete(&p("/memories/moved/seed/1.md"))
        .await
        .unwrap();
    assert_eq!(count().await, 3);
    storage.delete(&p("/memories/moved")).await.unwrap();
    assert_eq!(count().await, 1);
    // Another store on the folder sees the same count.
    let other = FsStorage::new(dir.path()).unwrap();
    other
        .write(&p("/memories/b.md"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(count().await, 2);
    storage.delete(&MemoryPath::root()).await.unwrap();
    assert_eq!(other.file_count().await.unwrap(), 0);

    // Files placed by hand are counted when a store opens.
    let memories = dir.path().join("memories");
    std::fs::create_dir(memories.join("hand")).unwrap();
    for i in 0..3 {
        std::fs::write(memories.join(format!("hand/{i}.md")), b"h").unwrap();
    }
    let reopened = FsStorage::new(dir.path()).unwrap();
    assert_eq!(reopened.file_count().await.unwrap(), 3);
    // Removed by hand: the stale count says full, the walk before refusing says otherwise.
    std::fs::remove_file(memories.join("hand/0.md")).unwrap();
    std::fs::remove_file(memories.join("hand/1.md")).unwrap();
    reopened
        .create_within(&p("/memories/c.md"), b"c".to_vec(), 3)
        .await
        .unwrap();
    assert_eq!(reopened.file_count().await.unwrap(), 2);
    assert!(matches!(
        reopened
            .create_within(&p("/memories/d.md"), b"d".to_vec(), 2)
            .await,
        Err(Error::StoreFull { max_files: 2 })
    ));
    assert!(!memories.join("d.md").exists());
    // The count lives beside memories/, never inside.
    assert!(dir.path().join(".memories.count").is_file());
    assert_eq!(
        reopened.list(&MemoryPath::root()).await.unwrap().len(),
        2,
        "nothing of the store's own is listed"
    );
}
