//! Many tokio tasks editing one file through compare-and-swap, over several `SqliteStorage`
//! handles on one database file (separate connection pools, so SQLite's own locking is what
//! keeps them apart): every edit is found, exactly once.

use std::collections::BTreeSet;
use std::sync::Arc;

use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_sqlite::SqliteStorage;

const HANDLES: usize = 3;
const TASKS: usize = 24;
const EDITS: usize = 8;

/// Appends `line` to `path` with read → modify → write(Update), retrying on conflicts and on
/// busy errors. Returns how many attempts were needed.
async fn append(storage: &dyn Storage, path: &MemoryPath, line: &str) -> usize {
    for attempt in 1..=10_000 {
        let file = match storage.read(path).await {
            Ok(file) => file,
            Err(e) if e.is_retryable() => continue,
            Err(e) => panic!("read failed: {e:?}"),
        };
        let mut body = file.contents;
        body.extend_from_slice(line.as_bytes());
        body.push(b'\n');
        tokio::task::yield_now().await;
        match storage
            .write(path, body, WriteMode::Update(file.version))
            .await
        {
            Ok(_) => return attempt,
            Err(e @ Error::Conflict { .. }) => assert!(e.is_retryable()),
            Err(e) if e.is_retryable() => {}
            Err(e) => panic!("write(Update) failed: {e:?}"),
        }
    }
    panic!("no progress appending {line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_tasks_many_handles_lose_no_edit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let handles: Vec<Arc<dyn Storage>> = (0..HANDLES)
        .map(|_| Arc::new(SqliteStorage::open(&db).unwrap()) as Arc<dyn Storage>)
        .collect();
    let path = MemoryPath::parse("/memories/shared/log.md").unwrap();
    handles[0]
        .write(&path, b"# log\n".to_vec(), WriteMode::Create)
        .await
        .unwrap();

    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let storage = Arc::clone(&handles[task % HANDLES]);
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut attempts = 0;
            for edit in 0..EDITS {
                attempts += append(&*storage, &path, &format!("task {task} edit {edit}")).await;
            }
            attempts
        }));
    }
    let mut attempts = 0;
    for task in tasks {
        attempts += task.await.unwrap();
    }
    assert!(
        attempts > TASKS * EDITS,
        "the tasks never raced, the test proves nothing"
    );

    let text = String::from_utf8(handles[1].read(&path).await.unwrap().contents).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# log");
    assert_eq!(
        lines.len(),
        1 + TASKS * EDITS,
        "an edit landed twice or was lost"
    );
    let got: BTreeSet<&str> = lines[1..].iter().copied().collect();
    for task in 0..TASKS {
        for edit in 0..EDITS {
            assert!(got.contains(format!("task {task} edit {edit}").as_str()));
        }
    }
}

/// Writes queued at the same moment share one transaction (group commit); one that fails
/// must fail alone, and leave nothing of itself behind. Here a directory rename fails after
/// it has already moved one file (the next file's new path would be too deep), in the middle
/// of many concurrent creates, several times: each create succeeds and is there after a
/// reopen, each rename fails, and the directory is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_write_in_a_batch_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("batch.db");
    let store = Arc::new(SqliteStorage::open(&db).unwrap());
    let first = MemoryPath::parse("/memories/d/a.md").unwrap();
    store
        .write(&first, b"first".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    // 20 segments below /memories: at the limit; two more are one too many.
    let deep = format!("/memories/d/{}deep.md", "z/".repeat(18));
    let deep = MemoryPath::parse(&deep).unwrap();
    store
        .write(&deep, b"deep".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    const ROUNDS: usize = 10;
    const CREATES: usize = 16;
    for round in 0..ROUNDS {
        let mut tasks = Vec::new();
        for i in 0..CREATES {
            let creator = Arc::clone(&store);
            tasks.push(tokio::spawn(async move {
                let path = MemoryPath::parse(&format!("/memories/new/{round}-{i}.md")).unwrap();
                creator
                    .write(&path, b"new".to_vec(), WriteMode::Create)
                    .await
            }));
            if i == CREATES / 2 {
                let store = Arc::clone(&store);
                tasks.push(tokio::spawn(async move {
                    let e = store
                        .rename(
                            &MemoryPath::parse("/memories/d").unwrap(),
                            &MemoryPath::parse("/memories/x/y/d").unwrap(),
                        )
                        .await
                        .unwrap_err();
                    assert!(matches!(e, Error::Backend { .. }), "{e:?}");
                    Ok(memory_core::Version::new("rename failed as it should"))
                }));
            }
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
    }
    drop(store);
    let store = SqliteStorage::open(&db).unwrap();
    assert_eq!(store.read(&first).await.unwrap().contents, b"first");
    assert_eq!(store.read(&deep).await.unwrap().contents, b"deep");
    assert!(
        store
            .list(&MemoryPath::parse("/memories/x").unwrap())
            .await
            .unwrap()
            .is_empty(),
        "the failed rename left a file at its destination"
    );
    let created = store
        .list(&MemoryPath::parse("/memories/new").unwrap())
        .await
        .unwrap();
    assert_eq!(created.len(), ROUNDS * CREATES);
}
