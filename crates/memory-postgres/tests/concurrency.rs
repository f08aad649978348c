//! Writers in separate pools (as separate processes would be) racing on one root: the file
//! limit is exact and compare-and-swap loses no update.

mod common;

use std::sync::Arc;

use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_postgres::PostgresStorage;

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

/// `n` stores on one new root, each with a pool (and connections) of its own.
async fn stores(n: usize) -> Vec<Arc<PostgresStorage>> {
    let root = common::unique("race");
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(Arc::new(
            common::open(&format!(
                "schema={}&root={root}&pool_size=2",
                common::SHARED_SCHEMA
            ))
            .await,
        ));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn create_within_at_max_files_minus_one_has_exactly_one_winner() {
    const MAX: usize = 50;
    let stores = stores(8).await;
    for round in 0..5 {
        stores[0].delete(&MemoryPath::root()).await.unwrap();
        for i in 0..MAX - 1 {
            stores[i % 8]
                .write(
                    &p(&format!("/memories/seed/{i}.md")),
                    b"s".to_vec(),
                    WriteMode::Create,
                )
                .await
                .unwrap();
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(16));
        let mut tasks = Vec::new();
        for t in 0..16 {
            let store = Arc::clone(&stores[t % 8]);
            let barrier = Arc::clone(&barrier);
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                store
                    .create_within(&p(&format!("/memories/new/{t}.md")), b"n".to_vec(), MAX)
                    .await
            }));
        }
        let mut winners = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(_) => winners += 1,
                Err(Error::StoreFull { max_files: MAX }) => {}
                Err(e) => panic!("round {round}: a loser gets StoreFull, got {e:?}"),
            }
        }
        assert_eq!(winners, 1, "round {round}: exactly one create wins");
        for store in &stores {
            assert_eq!(store.file_count().await.unwrap(), MAX, "round {round}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_compare_and_swap_writers_lose_nothing() {
    const WRITERS: usize = 8;
    const EDITS: usize = 25;
    let stores = stores(WRITERS).await;
    let path = p("/memories/log.md");
    stores[0]
        .write(&path, Vec::new(), WriteMode::Create)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for (w, store) in stores.iter().enumerate() {
        let store = Arc::clone(store);
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut conflicts = 0usize;
            for e in 0..EDITS {
                // As str_replace does: read, change, write back only at the version read.
                loop {
                    let file = store.read(&path).await.unwrap();
                    let mut text = file.contents;
                    text.extend_from_slice(format!("writer {w} edit {e}\n").as_bytes());
                    match store
                        .write(&path, text, WriteMode::Update(file.version))
                        .await
                    {
                        Ok(_) => break,
                        Err(Error::Conflict { .. }) => conflicts += 1,
                        Err(other) => panic!("writer {w}: {other:?}"),
                    }
                }
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for task in tasks {
        conflicts += task.await.unwrap();
    }
    let text = String::from_utf8(stores[0].read(&path).await.unwrap().contents).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        WRITERS * EDITS,
        "every edit is in the file ({conflicts} conflicts retried)"
    );
    for w in 0..WRITERS {
        for e in 0..EDITS {
            assert!(
                lines.contains(&format!("writer {w} edit {e}").as_str()),
                "writer {w} edit {e} is kept"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creates_of_a_file_and_a_file_below_it_never_both_win() {
    // `/memories/x` as a file and `/memories/x/y` below it are creates of different rows:
    // only the root's lock keeps a file and a directory from sharing a path.
    let stores = stores(4).await;
    for round in 0..20 {
        stores[0].delete(&MemoryPath::root()).await.unwrap();
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let (a, b) = (Arc::clone(&stores[1]), Arc::clone(&stores[2]));
        let (ba, bb) = (Arc::clone(&barrier), Arc::clone(&barrier));
        let file = tokio::spawn(async move {
            ba.wait().await;
            a.write(&p("/memories/x"), b"f".to_vec(), WriteMode::Create)
                .await
        });
        let below = tokio::spawn(async move {
            bb.wait().await;
            b.write(&p("/memories/x/y"), b"d".to_vec(), WriteMode::Overwrite)
                .await
        });
        let (file, below) = (file.await.unwrap(), below.await.unwrap());
        assert!(
            file.is_ok() != below.is_ok(),
            "round {round}: exactly one of the two wins: {file:?} / {below:?}"
        );
        assert_eq!(stores[3].file_count().await.unwrap(), 1, "round {round}");
    }
}
