//! The side index as a cache: lazy, reconciled with what changed behind its back, shared
//! between processes, rebuilt when damaged.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_fs::{FsOptions, FsStorage};
use memory_search::{INDEX_DIR, INDEX_FILE, IndexLocation, IndexOptions, Indexed};

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

fn folder(dir: &Path) -> Indexed<FsStorage> {
    let fs = FsStorage::with_options(dir, FsOptions::default().fsync(false)).unwrap();
    // No racy window: these tests change files by hand with a fresh modification time each.
    Indexed::new(
        fs,
        IndexOptions::new(IndexLocation::beside(dir)).racy_window(Duration::ZERO),
    )
}

async fn found(store: &dyn Storage, query: &str) -> Vec<String> {
    store
        .search(&SearchQuery::new(query).unwrap())
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.path.as_str().to_owned())
        .collect()
}

/// Writes `text` at `rel` below `dir/memories` as another program would, with a modification
/// time that differs from the previous one.
fn by_hand(dir: &Path, rel: &str, text: &str) {
    let path = dir.join("memories").join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    // Some file systems tick coarsely: set a time that differs from the last write's
    // explicitly (in the past: a time in the future is re-checked at every search).
    let later = std::time::SystemTime::now() - Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later + Duration::from_nanos(rel.len() as u64))
        .unwrap();
}

#[tokio::test]
async fn nothing_is_opened_until_the_first_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder(dir.path());
    store
        .write(&p("/memories/a.md"), b"alpha".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store.read(&p("/memories/a.md")).await.unwrap();
    store.list(&MemoryPath::root()).await.unwrap();
    assert!(
        !dir.path().join(INDEX_DIR).exists(),
        "writes and reads open no index"
    );
    assert_eq!(found(&store, "alpha").await, ["/memories/a.md"]);
    let index = dir.path().join(INDEX_DIR).join(INDEX_FILE);
    assert!(index.is_file());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&index).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(dir.path().join(INDEX_DIR))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    // The index is outside memories/: the model never sees it.
    let listed: Vec<String> = store
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_owned())
        .collect();
    assert_eq!(listed, ["/memories/a.md"]);
}

#[tokio::test]
async fn changes_behind_its_back_are_seen_on_the_next_search_and_only_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder(dir.path());
    for i in 0..20 {
        store
            .write(
                &p(&format!("/memories/n/{i}.md")),
                format!("note {i} about walruses").into_bytes(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    assert_eq!(found(&store, "walruses").await.len(), 10);
    let first = store.last_refresh();
    assert_eq!((first.listed, first.read, first.indexed), (20, 20, 20));

    // Nothing changed: nothing is read.
    found(&store, "walruses").await;
    let again = store.last_refresh();
    assert_eq!((again.listed, again.read, again.removed), (20, 0, 0));

    // By hand: one file changed, one new, one deleted.
    by_hand(dir.path(), "n/3.md", "now about narwhals");
    by_hand(
        dir.path(),
        "n/new.md",
        "a fresh note on narwhals and okapis",
    );
    std::fs::remove_file(dir.path().join("memories/n/4.md")).unwrap();
    let hits = found(&store, "narwhals").await;
    assert_eq!(hits, ["/memories/n/3.md", "/memories/n/new.md"]);
    let r = store.last_refresh();
    assert_eq!((r.listed, r.read, r.indexed, r.removed), (20, 2, 2, 1));
    assert!(
        !found(&store, "walruses")
            .await
            .contains(&"/memories/n/3.md".to_owned())
    );
    assert!(
        !found(&store, "walruses")
            .await
            .contains(&"/memories/n/4.md".to_owned())
    );
    assert_eq!(found(&store, "okapis").await, ["/memories/n/new.md"]);

    // Another process's store (a second Indexed over the same folder and index file).
    let other = folder(dir.path());
    other
        .write(
            &p("/memories/n/5.md"),
            b"rewritten with quokkas".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    assert_eq!(found(&store, "quokkas").await, ["/memories/n/5.md"]);
    assert_eq!(store.last_refresh().read, 1);
    // And the other one sees what the first one's process changed, from the shared file.
    assert_eq!(found(&other, "okapis").await, ["/memories/n/new.md"]);

    // A rename and a delete through the wrapper.
    store
        .rename(&p("/memories/n/new.md"), &p("/memories/moved/new.md"))
        .await
        .unwrap();
    assert_eq!(found(&store, "okapis").await, ["/memories/moved/new.md"]);
    store.delete(&p("/memories/moved")).await.unwrap();
    assert!(found(&store, "okapis").await.is_empty());
}

/// A write through the wrapper whose size and modification time look unchanged (a coarse
/// clock) is still found: the wrapper noted the path.
#[tokio::test]
async fn a_write_through_the_wrapper_is_found_even_within_one_clock_tick() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder(dir.path());
    let path = p("/memories/a.md");
    store
        .write(&path, b"cat".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(found(&store, "cat").await, ["/memories/a.md"]);
    let file = dir.path().join("memories/a.md");
    let before = std::fs::metadata(&file).unwrap().modified().unwrap();
    store
        .write(&path, b"dog".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    // Same size; put the old time back, as a clock ticking in seconds would show it.
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(before)
        .unwrap();
    assert_eq!(found(&store, "dog").await, ["/memories/a.md"]);
    assert!(found(&store, "cat").await.is_empty());
}

/// Without writes through the wrapper, a change within the racy window is caught because the
/// file's time is that close to when the index last confirmed it.
#[tokio::test]
async fn a_change_by_hand_within_one_clock_tick_is_found_through_the_racy_window() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FsStorage::with_options(dir.path(), FsOptions::default().fsync(false)).unwrap();
    let store = Indexed::new(
        fs,
        IndexOptions::new(IndexLocation::beside(dir.path())).racy_window(Duration::from_secs(5)),
    );
    let file = dir.path().join("memories/a.md");
    std::fs::write(&file, "cat").unwrap();
    let time = std::fs::metadata(&file).unwrap().modified().unwrap();
    assert_eq!(found(&store, "cat").await, ["/memories/a.md"]);
    std::fs::write(&file, "dog").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(time)
        .unwrap();
    assert_eq!(found(&store, "dog").await, ["/memories/a.md"]);
}

#[tokio::test]
async fn a_damaged_or_foreign_index_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder(dir.path());
    store
        .write(&p("/memories/a.md"), b"marmot".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(found(&store, "marmot").await, ["/memories/a.md"]);
    drop(store);

    let index = dir.path().join(INDEX_DIR).join(INDEX_FILE);
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    std::fs::write(
        &index,
        b"this is no database, just some bytes of garbage........",
    )
    .unwrap();
    let store = folder(dir.path());
    assert_eq!(found(&store, "marmot").await, ["/memories/a.md"]);
    drop(store);

    // Another schema version: its tables are dropped and built anew.
    {
        let conn = rusqlite::Connection::open(&index).unwrap();
        conn.execute(
            "UPDATE meta SET value = 'memory-search 0' WHERE key = 'schema'",
            [],
        )
        .unwrap();
    }
    let store = folder(dir.path());
    assert_eq!(found(&store, "marmot").await, ["/memories/a.md"]);
    assert_eq!(store.last_refresh().indexed, 1, "rebuilt from the store");

    // An index of another store (by identity) is rebuilt too.
    let fs = FsStorage::with_options(dir.path(), FsOptions::default().fsync(false)).unwrap();
    let other = Indexed::new(
        fs,
        IndexOptions::new(IndexLocation::beside(dir.path())).identity("another store"),
    );
    assert_eq!(found(&other, "marmot").await, ["/memories/a.md"]);
    assert_eq!(other.last_refresh().indexed, 1);
}

/// Many searchers and writers over one folder and one index file, at once: no error, no
/// corruption, and the final search sees the final state.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_indexes_on_one_file_do_not_corrupt_it() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Arc<Indexed<FsStorage>>> =
        (0..4).map(|_| Arc::new(folder(dir.path()))).collect();
    let mut tasks = Vec::new();
    for (n, store) in stores.iter().enumerate() {
        let store = Arc::clone(store);
        tasks.push(tokio::spawn(async move {
            for i in 0..15 {
                let path = p(&format!("/memories/w{n}/{i}.md"));
                store
                    .write(
                        &path,
                        format!("writer{n} item{i} capybara").into_bytes(),
                        WriteMode::Create,
                    )
                    .await
                    .unwrap();
                store
                    .search(&SearchQuery::new("capybara").unwrap())
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    for store in &stores {
        let q = SearchQuery::new("capybara")
            .unwrap()
            .with_limit(100)
            .unwrap();
        assert_eq!(store.search(&q).await.unwrap().len(), 60);
    }
    let conn = rusqlite::Connection::open(dir.path().join(INDEX_DIR).join(INDEX_FILE)).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// Hidden folders and node_modules are not indexed, yet a search of a hidden folder by name
/// finds what is in it (by a scan, as the provided method does).
#[tokio::test]
async fn hidden_files_are_skipped_unless_their_folder_is_searched() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder(dir.path());
    for (path, text) in [
        ("/memories/.hidden/a.md", "lemur"),
        ("/memories/web/node_modules/x.js", "lemur"),
        ("/memories/b.md", "lemur"),
    ] {
        store
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    assert_eq!(found(&store, "lemur").await, ["/memories/b.md"]);
    let q = SearchQuery::new("lemur")
        .unwrap()
        .with_under(p("/memories/.hidden"));
    let hits = store.search(&q).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, p("/memories/.hidden/a.md"));
}

/// On S3 (moto's server): an object written behind the wrapper's back, changed or deleted,
/// is seen on the next search; the index is a local file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_changes_behind_its_back_are_seen() {
    let server = common::s3::S3Server::from_env("s3_changes_behind_its_back_are_seen").await;
    let cache = tempfile::tempdir().unwrap();
    let store = Indexed::new(
        server.storage("behind"),
        IndexOptions::new(IndexLocation::File(cache.path().join("s3.sqlite3"))),
    );
    let raw = server.storage("behind");
    raw.write(
        &p("/memories/a.md"),
        b"first tapir".to_vec(),
        WriteMode::Create,
    )
    .await
    .unwrap();
    assert_eq!(found(&store, "tapir").await, ["/memories/a.md"]);
    // Same size, within the same second: S3's LastModified cannot tell; the racy window can.
    raw.write(
        &p("/memories/a.md"),
        b"first zebra".to_vec(),
        WriteMode::Overwrite,
    )
    .await
    .unwrap();
    assert_eq!(found(&store, "zebra").await, ["/memories/a.md"]);
    assert!(found(&store, "tapir").await.is_empty());
    raw.delete(&p("/memories/a.md")).await.unwrap();
    assert!(found(&store, "zebra").await.is_empty());
    assert_eq!(store.last_refresh().removed, 1);
}

/// The variable that turns [`worker_process`] into a worker writing and searching the folder
/// it names.
const WORKER_DIR: &str = "MEMORY_SEARCH_TEST_WORKER_DIR";

/// One of the processes of [`processes_sharing_one_index_do_not_corrupt_it`]: does nothing
/// unless started by it.
#[tokio::test]
async fn worker_process() {
    let (Ok(dir), Ok(n)) = (
        std::env::var(WORKER_DIR),
        std::env::var("MEMORY_SEARCH_TEST_WORKER_N"),
    ) else {
        return;
    };
    let store = folder(Path::new(&dir));
    for i in 0..25 {
        store
            .write(
                &p(&format!("/memories/p{n}/{i}.md")),
                format!("process{n} item{i} pangolin").into_bytes(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        store
            .search(&SearchQuery::new("pangolin").unwrap())
            .await
            .unwrap();
    }
}

/// Three processes writing and searching one folder store, sharing its index file.
#[tokio::test]
async fn processes_sharing_one_index_do_not_corrupt_it() {
    if std::env::var(WORKER_DIR).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..3)
        .map(|n| {
            std::process::Command::new(&exe)
                .args(["--exact", "worker_process", "--quiet"])
                .env(WORKER_DIR, dir.path())
                .env("MEMORY_SEARCH_TEST_WORKER_N", n.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a worker process failed");
    }
    let store = folder(dir.path());
    let q = SearchQuery::new("pangolin")
        .unwrap()
        .with_limit(100)
        .unwrap();
    assert_eq!(store.search(&q).await.unwrap().len(), 75);
    assert_eq!(
        store.last_refresh().read,
        0,
        "the workers' searches indexed it all"
    );
    let conn = rusqlite::Connection::open(dir.path().join(INDEX_DIR).join(INDEX_FILE)).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// The index with its default racy window (2 s), as memory-runner opens it.
fn folder_default(dir: &Path) -> Indexed<FsStorage> {
    let fs = FsStorage::with_options(dir, FsOptions::default().fsync(false)).unwrap();
    Indexed::new(fs, IndexOptions::new(IndexLocation::beside(dir)))
}

/// Overwrites the start of a file in place, as an editor that writes in place does: same
/// inode, same size, no truncation, the kernel sets the time.
fn edit_in_place(file: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::File::options().write(true).open(file).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.sync_all().unwrap();
}

/// Sets a file's modification time to a minute ago, as a file written earlier would have.
fn age(file: &Path) {
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
        .unwrap();
}

/// Every kind of change by hand, each right after a search (well within one second of it,
/// and within the file system's clock tick for the in-place edits), with the default racy
/// window and no time set by the test: the next search sees it.
#[tokio::test]
async fn every_change_by_hand_right_after_a_search_is_seen_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder_default(dir.path());
    let mem = dir.path().join("memories");
    std::fs::create_dir_all(mem.join("n")).unwrap();
    std::fs::write(mem.join("n/a.md"), "alpha walrus").unwrap();
    std::fs::write(mem.join("n/b.md"), "bravo walrus").unwrap();
    assert_eq!(
        found(&store, "walrus").await,
        ["/memories/n/a.md", "/memories/n/b.md"]
    );

    // Created.
    std::fs::write(mem.join("n/c.md"), "charlie walrus").unwrap();
    assert_eq!(found(&store, "charlie").await, ["/memories/n/c.md"]);
    // Changed in place, same size, at once (within the tick of the search before).
    edit_in_place(&mem.join("n/a.md"), "omega");
    assert_eq!(found(&store, "omega").await, ["/memories/n/a.md"]);
    assert!(found(&store, "alpha").await.is_empty());
    // And again, same size again, right after that search.
    edit_in_place(&mem.join("n/a.md"), "sigma");
    assert_eq!(found(&store, "sigma").await, ["/memories/n/a.md"]);
    assert!(found(&store, "omega").await.is_empty());
    // Renamed.
    std::fs::create_dir_all(mem.join("m")).unwrap();
    std::fs::rename(mem.join("n/b.md"), mem.join("m/b.md")).unwrap();
    assert_eq!(found(&store, "bravo").await, ["/memories/m/b.md"]);
    // Deleted.
    std::fs::remove_file(mem.join("n/c.md")).unwrap();
    assert!(found(&store, "charlie").await.is_empty());
    // A folder renamed, with its files.
    std::fs::rename(mem.join("m"), mem.join("k")).unwrap();
    assert_eq!(found(&store, "bravo").await, ["/memories/k/b.md"]);
}

/// Files whose times are safely in the past are not read by a search; an in-place edit of
/// one (same size, the kernel's time) is read by the next, and only it.
#[tokio::test]
async fn an_in_place_edit_of_a_settled_file_is_found_and_only_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder_default(dir.path());
    let mem = dir.path().join("memories");
    std::fs::create_dir_all(mem.join("n")).unwrap();
    for i in 0..30 {
        let file = mem.join(format!("n/{i:02}.md"));
        std::fs::write(&file, format!("note {i:02} about herons")).unwrap();
        age(&file);
    }
    assert_eq!(found(&store, "herons").await.len(), 10);
    assert_eq!(store.last_refresh().read, 30);
    found(&store, "herons").await;
    let r = store.last_refresh();
    assert_eq!((r.listed, r.read), (30, 0), "settled files are not read");

    edit_in_place(&mem.join("n/07.md"), "EDIT");
    assert_eq!(found(&store, "edit").await, ["/memories/n/07.md"]);
    let r = store.last_refresh();
    assert_eq!((r.listed, r.read, r.indexed), (30, 1, 1));
    // The edited file is within the racy window now: read (and found unchanged) until its
    // time is safely in the past; the others still are not.
    assert_eq!(found(&store, "edit").await, ["/memories/n/07.md"]);
    let r = store.last_refresh();
    assert_eq!((r.read, r.indexed), (1, 0));
}

/// A search of a subfolder reconciles only it; what changed elsewhere meanwhile is seen by
/// the next search of the whole store.
#[tokio::test]
async fn a_search_of_a_subfolder_leaves_the_rest_for_later_searches() {
    let dir = tempfile::tempdir().unwrap();
    let store = folder(dir.path());
    by_hand(dir.path(), "a/1.md", "ibis one");
    by_hand(dir.path(), "b/2.md", "ibis two");
    assert_eq!(found(&store, "ibis").await.len(), 2);
    by_hand(dir.path(), "b/2.md", "stork two");
    std::fs::remove_file(dir.path().join("memories/a/1.md")).unwrap();
    by_hand(dir.path(), "a/3.md", "ibis three");
    let q = SearchQuery::new("ibis")
        .unwrap()
        .with_under(p("/memories/a"));
    let hits: Vec<String> = store
        .search(&q)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.path.as_str().to_owned())
        .collect();
    assert_eq!(hits, ["/memories/a/3.md"]);
    let r = store.last_refresh();
    assert_eq!((r.listed, r.read, r.removed), (1, 1, 1));
    assert_eq!(found(&store, "stork").await, ["/memories/b/2.md"]);
    assert_eq!(found(&store, "ibis").await, ["/memories/a/3.md"]);
}

/// Two wrappers (two processes, in effect) on one index file: what one commits is seen by
/// the other even when its own memory of the rows would call the file unchanged. Here a
/// file changes, the other wrapper indexes the change, then the file is put back with its
/// old size and time (as `cp -p` or a restore would): the first wrapper must not answer from
/// its memory of the old row, since the table now holds the other text.
#[tokio::test]
async fn rows_committed_by_another_connection_are_not_answered_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let first = folder(dir.path());
    let second = folder(dir.path());
    by_hand(dir.path(), "a.md", "old puffin");
    let file = dir.path().join("memories/a.md");
    let old_time = std::fs::metadata(&file).unwrap().modified().unwrap();
    assert_eq!(found(&first, "puffin").await, ["/memories/a.md"]);

    std::fs::write(&file, "new gannet").unwrap();
    assert_eq!(found(&second, "gannet").await, ["/memories/a.md"]);

    std::fs::write(&file, "old puffin").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old_time)
        .unwrap();
    assert_eq!(found(&first, "puffin").await, ["/memories/a.md"]);
    assert!(found(&first, "gannet").await.is_empty());
}
