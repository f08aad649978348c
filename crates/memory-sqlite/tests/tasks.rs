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
