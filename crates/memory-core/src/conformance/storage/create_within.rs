//! create_within: the file limit, alone and under concurrency.

use super::*;

/// create_within: creates below the limit; at the limit StoreFull and nothing written; a taken
/// path (file, directory, `/memories`) is AlreadyExists whether the store is full or not; a
/// file ancestor is ParentIsFile; a limit of 0 refuses every create.
pub async fn create_within_limit(storage: &dyn Storage) {
    let v = ok(
        storage,
        "create_within below the limit",
        storage
            .create_within(&p("/memories/w/one.md"), b"one".to_vec(), 2)
            .await,
    );
    let file = ok(
        storage,
        "read what create_within wrote",
        storage.read(&p("/memories/w/one.md")).await,
    );
    assert_eq!(
        file.contents, b"one",
        "{storage}: create_within stores the bytes"
    );
    assert_eq!(
        file.version, v,
        "{storage}: create_within returns the file's version"
    );
    for (path, what) in [
        ("/memories/w/one.md", "a file"),
        ("/memories/w", "a directory"),
        ("/memories", "/memories"),
    ] {
        let e = err(
            storage,
            &format!("create_within over {what} below the limit"),
            storage.create_within(&p(path), b"x".to_vec(), 10).await,
        );
        assert!(
            matches!(&e, Error::AlreadyExists { path: got } if got.as_str() == path),
            "{storage}: create_within over {what} is AlreadyExists naming {path}, got {e:?}"
        );
    }
    let e = err(
        storage,
        "create_within below a file",
        storage
            .create_within(&p("/memories/w/one.md/below"), b"x".to_vec(), 10)
            .await,
    );
    assert!(
        matches!(&e, Error::ParentIsFile { parent, .. } if parent.as_str() == "/memories/w/one.md"),
        "{storage}: create_within below a file is ParentIsFile naming it, got {e:?}"
    );
    ok(
        storage,
        "create_within the last free place",
        storage
            .create_within(&p("/memories/two.md"), b"two".to_vec(), 2)
            .await,
    );
    let e = err(
        storage,
        "create_within at the limit",
        storage
            .create_within(&p("/memories/three.md"), b"three".to_vec(), 2)
            .await,
    );
    assert!(
        matches!(e, Error::StoreFull { max_files: 2 }),
        "{storage}: create_within in a store holding max_files files is StoreFull, got {e:?}"
    );
    assert_eq!(
        stat(storage, "/memories/three.md").await,
        None,
        "{storage}: a create refused as StoreFull writes nothing"
    );
    let e = err(
        storage,
        "create_within over a file, store full",
        storage
            .create_within(&p("/memories/two.md"), b"x".to_vec(), 2)
            .await,
    );
    assert!(
        matches!(&e, Error::AlreadyExists { path } if path.as_str() == "/memories/two.md"),
        "{storage}: a full store still answers AlreadyExists for a taken path, got {e:?}"
    );
    let e = err(
        storage,
        "create_within over a file, store over full",
        storage
            .create_within(&p("/memories/w"), b"x".to_vec(), 1)
            .await,
    );
    assert!(
        matches!(&e, Error::AlreadyExists { .. }),
        "{storage}: a store over its limit still answers AlreadyExists for a directory, got {e:?}"
    );
    assert_eq!(
        get(storage, "/memories/two.md").await,
        b"two",
        "{storage}: a refused create_within leaves the file alone"
    );
    let e = err(
        storage,
        "create_within with a limit of 0",
        storage
            .create_within(&p("/memories/zero.md"), b"0".to_vec(), 0)
            .await,
    );
    assert!(
        matches!(e, Error::StoreFull { max_files: 0 }),
        "{storage}: a limit of 0 is StoreFull, got {e:?}"
    );
    assert_eq!(count(storage, "file_count after create_within").await, 2);
}

/// Runs `tasks` calls of `create_within(path_of(i), "i", max_files)` released together by a
/// barrier, task `i` on `stores[i % stores.len()]`, and returns each task's index with its
/// result.
async fn race_creates(
    stores: &[Arc<dyn Storage>],
    tasks: usize,
    max_files: usize,
    path_of: fn(usize) -> String,
) -> Vec<(usize, Result<Version>)> {
    let barrier = Arc::new(tokio::sync::Barrier::new(tasks));
    let mut handles = Vec::new();
    for i in 0..tasks {
        let storage = Arc::clone(&stores[i % stores.len()]);
        let barrier = Arc::clone(&barrier);
        handles.push(tokio::spawn(async move {
            let path = p(&path_of(i));
            barrier.wait().await;
            let result = storage
                .create_within(&path, format!("{i}").into_bytes(), max_files)
                .await;
            (i, result)
        }));
    }
    let mut results = Vec::new();
    for handle in handles {
        match handle.await {
            Ok(done) => results.push(done),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    results
}

/// create_within never overwrites under concurrency: creates of one path racing in a store
/// with room: exactly one succeeds, every other one is AlreadyExists, and the file holds the
/// winner's bytes.
pub async fn create_within_race_same_path(storage: Arc<dyn Storage>) {
    for tasks in [2, 2, 8] {
        let results = race_creates(std::slice::from_ref(&storage), tasks, 100, |_| {
            "/memories/same/x.md".into()
        })
        .await;
        let mut winners = Vec::new();
        for (i, result) in results {
            match result {
                Ok(_) => winners.push(i),
                Err(Error::AlreadyExists { .. }) => {}
                Err(e) => panic!(
                    "{storage}: racing create_within of one path: the losers get AlreadyExists, \
                     task {i} got {e:?}"
                ),
            }
        }
        assert_eq!(
            winners.len(),
            1,
            "{storage}: of {tasks} create_within of one path racing exactly one succeeds, \
             winners: {winners:?}"
        );
        assert_eq!(
            get(&*storage, "/memories/same/x.md").await,
            format!("{}", winners[0]).into_bytes(),
            "{storage}: the file raced for holds the winner's bytes"
        );
        clear(&*storage).await;
    }
}

/// create_within is exact under concurrency: creates of different paths racing in a store
/// holding `max_files - 1` files: exactly one succeeds, every other one is StoreFull. Two
/// tasks race several times, then eight at once.
pub async fn create_within_race_at_limit(storage: Arc<dyn Storage>) {
    create_within_race_at_limit_across(&[storage]).await;
}

/// [`create_within_race_at_limit`] with the racing tasks spread over `stores`, several
/// handles on one store (opened separately, as processes open it): each round, at least one
/// task per handle; exactly one create succeeds and the store holds `max_files` files.
pub async fn create_within_race_at_limit_across(stores: &[Arc<dyn Storage>]) {
    const MAX_FILES: usize = 3;
    let storage = &stores[0];
    for (round, tasks) in [2, 2, 2, 2, 8].into_iter().enumerate() {
        let tasks = tasks.max(stores.len());
        put(&**storage, "/memories/full/a.md", "a").await;
        put(&**storage, "/memories/full/b.md", "b").await;
        let results = race_creates(stores, tasks, MAX_FILES, |i| {
            format!("/memories/full/new{i}.md")
        })
        .await;
        let mut winners = Vec::new();
        for (i, result) in results {
            match result {
                Ok(_) => winners.push(i),
                Err(Error::StoreFull {
                    max_files: MAX_FILES,
                }) => {}
                Err(e) => panic!(
                    "{storage}: racing create_within at max_files - 1: the losers get StoreFull, \
                     task {i} got {e:?}"
                ),
            }
        }
        assert_eq!(
            winners.len(),
            1,
            "{storage}: of {tasks} creates racing at max_files - 1 exactly one succeeds \
             (round {round}), winners: {winners:?}"
        );
        assert_eq!(
            count(&**storage, "file_count after the race").await,
            MAX_FILES,
            "{storage}: the store holds exactly max_files files after the race"
        );
        assert_eq!(
            list_paths(&**storage, "/memories").await.len(),
            MAX_FILES,
            "{storage}: the store lists exactly max_files files after the race"
        );
        clear(&**storage).await;
    }
}
