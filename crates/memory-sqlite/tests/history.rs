//! Each file's earlier versions on `SqliteStorage`: memory-core's history suite (a fresh
//! database per store), then what is SQLite's own: the redacted bytes gone from the database,
//! its `-wal` and `-shm` files; `history=off` keeps no row; a store of schema 5 migrated, its
//! files' content kept when first changed; a row another program rewrote; a read-only open.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memory_core::conformance::history::{self, OpenHistory};
use memory_core::history::{Change, HistoryOptions, Redaction};
use memory_core::options::{StoreOptions, SyncMode};
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_sqlite::{IndexMode, SCHEMA_VERSION, SqliteOptions, SqliteStorage};
use rusqlite::Connection;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

/// A new database in a new folder for every store; the folders live as long as the test.
#[derive(Default)]
struct Fresh(Mutex<Vec<tempfile::TempDir>>);

impl Fresh {
    fn db(&self) -> PathBuf {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("memory.db");
        self.0.lock().unwrap().push(dir);
        db
    }
}

#[memory_core::async_trait]
impl OpenHistory for Fresh {
    async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
        let options = SqliteOptions::default()
            .sync(SyncMode::None)
            .history(options);
        Arc::new(SqliteStorage::open_with(self.db(), options).unwrap())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conforms() {
    history::run_all(&Fresh::default()).await;
}

/// The same with every write indexing its words (`index=write`), through the search table's
/// triggers and its deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conforms_indexing_on_write() {
    struct Indexing(Fresh);
    #[memory_core::async_trait]
    impl OpenHistory for Indexing {
        async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
            let options = SqliteOptions::default()
                .sync(SyncMode::None)
                .index(IndexMode::Write)
                .history(options);
            Arc::new(SqliteStorage::open_with(self.0.db(), options).unwrap())
        }
    }
    history::run_all(&Indexing(Fresh::default())).await;
}

fn history_rows(db: &Path) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM history", [], |r| r.get(0))
        .unwrap()
}

/// Whether `needle` occurs in the database file or beside it (`-wal`, `-shm`).
fn on_disk(db: &Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let file = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(bytes) = std::fs::read(&file)
            && bytes.windows(needle.len()).any(|w| w == needle)
        {
            found.push(file.display().to_string());
        }
    }
    found
}

#[tokio::test]
async fn redaction_leaves_no_copy_in_the_database_its_log_or_free_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    // Each write indexes its words: the secret's word is in the search index too.
    let options = SqliteOptions::default().index(IndexMode::Write);
    let store = SqliteStorage::open_with(&db, options).unwrap();
    let path = p("/memories/keys.md");
    // Long enough to fill overflow pages, which a plain delete frees without wiping.
    let mut secret = b"api key Q9f8e7d6c5b4aXyZ\n".to_vec();
    secret.extend("notes\n".repeat(2_000).bytes());
    let secret_line = &secret[..24];
    let word = b"q9f8e7d6c5b4axyz";
    store
        .write(&path, secret.clone(), WriteMode::Create)
        .await
        .unwrap();
    for clean in ["api key: see the vault", "api key: in the vault"] {
        store
            .write(&path, clean.as_bytes().to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
    }
    assert!(
        !on_disk(&db, secret_line).is_empty(),
        "the test must see the secret before redaction"
    );
    assert_eq!(
        store.read_revision(&path, 1).await.unwrap(),
        secret,
        "the secret is a past version"
    );
    let redacted = store
        .redact_revisions(&path, Redaction::AllPast)
        .await
        .unwrap();
    assert_eq!(redacted, 2);
    assert_eq!(
        on_disk(&db, secret_line),
        Vec::<String>::new(),
        "the secret"
    );
    assert_eq!(on_disk(&db, word), Vec::<String>::new(), "its indexed word");
    // The store works on: search finds the current file (indexed again), not the secret.
    let query = memory_core::search::SearchQuery::new("vault").unwrap();
    assert_eq!(store.search(&query).await.unwrap().len(), 1);
    let query = memory_core::search::SearchQuery::new("q9f8e7d6c5b4axyz").unwrap();
    assert!(store.search(&query).await.unwrap().is_empty());
    let log = store.history(&path).await.unwrap();
    assert_eq!(log.len(), 3);
    assert!(log[1].redacted && log[2].redacted && log[2].sha256.is_none());
    assert_eq!(
        store.read(&path).await.unwrap().contents,
        b"api key: in the vault"
    );
    drop(store);
    assert_eq!(
        on_disk(&db, secret_line),
        Vec::<String>::new(),
        "after closing"
    );
}

#[tokio::test]
async fn history_off_keeps_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let options = SqliteOptions::default().history(HistoryOptions::off());
    let store = SqliteStorage::open_with(&db, options).unwrap();
    let (a, b) = (p("/memories/off/a.md"), p("/memories/off/b.md"));
    store
        .write(&a, b"1".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .write(&a, b"2".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    store.create_within(&b, b"b".to_vec(), 10).await.unwrap();
    store.rename(&a, &p("/memories/off/c.md")).await.unwrap();
    store.delete(&p("/memories/off")).await.unwrap();
    assert!(matches!(store.history(&a).await, Err(Error::HistoryOff)));
    drop(store);
    assert_eq!(history_rows(&db), 0);
}

/// The options come from the store URL too.
#[tokio::test]
async fn url_options_set_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}?history_max=2", dir.path().join("m.db").display());
    let store = SqliteStorage::from_url(&url, StoreOptions::new()).unwrap();
    assert_eq!(store.options().history.max_per_file, Some(2));
    let path = p("/memories/a.md");
    store
        .write(&path, b"0".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    for n in 1..4 {
        store
            .write(&path, n.to_string().into_bytes(), WriteMode::Overwrite)
            .await
            .unwrap();
    }
    let numbers: Vec<u64> = store
        .history(&path)
        .await
        .unwrap()
        .iter()
        .map(|r| r.number)
        .collect();
    assert_eq!(numbers, [4, 3]);
    let off =
        SqliteStorage::from_url(&url, StoreOptions::from_pairs([("history", "off")])).unwrap();
    assert!(matches!(off.history(&path).await, Err(Error::HistoryOff)));
    let bad = SqliteStorage::from_url(&url, StoreOptions::from_pairs([("history", "maybe")]));
    assert!(bad.is_err());
}

/// Takes a database of this release back to schema 5, as the release before history left it.
fn downgrade_to_schema_5(db: &Path) {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch(
        "DROP TRIGGER files_revision_forget;
         DROP TABLE history;
         ALTER TABLE files DROP COLUMN revision;",
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 5).unwrap();
}

#[tokio::test]
async fn a_schema_5_store_is_migrated_and_keeps_what_its_first_change_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v5.db");
    let path = p("/memories/notes.md");
    {
        let store =
            SqliteStorage::open_with(&db, SqliteOptions::default().history(HistoryOptions::off()))
                .unwrap();
        store
            .write(&path, b"a thousand lines".to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    downgrade_to_schema_5(&db);
    let store = SqliteStorage::open(&db).unwrap();
    let version: i64 = Connection::open(&db)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(
        store.read(&path).await.unwrap().contents,
        b"a thousand lines"
    );
    assert!(store.history(&path).await.unwrap().is_empty());
    store
        .write(&path, b"a placeholder".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let log = store.history(&path).await.unwrap();
    let changes: Vec<(u64, Change)> = log.iter().map(|r| (r.number, r.change)).collect();
    assert_eq!(changes, [(2, Change::Modified), (1, Change::Created)]);
    assert_eq!(
        log[1].session, None,
        "the kept content's session is not known"
    );
    assert_eq!(
        store.read_revision(&path, 1).await.unwrap(),
        b"a thousand lines"
    );
    memory_core::history::restore(&store, &path, 1)
        .await
        .unwrap();
    assert_eq!(
        store.read(&path).await.unwrap().contents,
        b"a thousand lines"
    );
    assert_eq!(store.file_count().await.unwrap(), 1);
    drop(store);
    // Opening again migrates nothing more.
    let store = SqliteStorage::open(&db).unwrap();
    assert_eq!(store.history(&path).await.unwrap().len(), 3);
}

/// A row another program rewrote is not the revision the library recorded: its content is
/// kept as a revision of its own when the store next changes it.
#[tokio::test]
async fn a_row_rewritten_by_another_program_is_kept_when_next_changed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let store = SqliteStorage::open(&db).unwrap();
    let path = p("/memories/a.md");
    store
        .write(&path, b"ours".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE files SET contents = X'7468656972730A' WHERE path = '/memories/a.md'",
            [],
        )
        .unwrap();
    store
        .write(&path, b"ours again".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let log = store.history(&path).await.unwrap();
    let changes: Vec<(u64, Change)> = log.iter().map(|r| (r.number, r.change)).collect();
    assert_eq!(
        changes,
        [
            (3, Change::Modified),
            (2, Change::Modified),
            (1, Change::Created)
        ]
    );
    assert_eq!(store.read_revision(&path, 2).await.unwrap(), b"theirs\n");
    // Version 1 was never copied (the other program replaced it first): said so, typed as
    // a backend failure, not as a deletion or a redaction.
    match store.read_revision(&path, 1).await {
        Err(Error::Backend { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(store.read_revision(&path, 3).await.unwrap(), b"ours again");
}

#[tokio::test]
async fn a_read_only_store_reads_history_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let path = p("/memories/a.md");
    {
        let store = SqliteStorage::open(&db).unwrap();
        store
            .write(&path, b"1".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store
            .write(&path, b"2".to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let store = SqliteStorage::open_with(&db, SqliteOptions::default().read_only(true)).unwrap();
    assert_eq!(store.history(&path).await.unwrap().len(), 2);
    assert_eq!(store.read_revision(&path, 1).await.unwrap(), b"1");
    assert_eq!(store.read_revision(&path, 2).await.unwrap(), b"2");
    assert!(matches!(
        store.write_restored(&path, 1, b"1".to_vec()).await,
        Err(Error::Refused { .. })
    ));
    assert!(matches!(
        store.redact_revisions(&path, Redaction::AllPast).await,
        Err(Error::Refused { .. })
    ));
    drop(store);
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "nothing changed on disk"
    );
}

/// Makes revisions `numbers` of `path` 40 days old, as if written then.
fn age(db: &Path, path: &str, numbers: &[u64]) {
    let conn = Connection::open(db).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86_400);
    let us = old
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    for &number in numbers {
        let changed = conn
            .execute(
                "UPDATE history SET time_us = ?3 WHERE path = ?1 AND number = ?2",
                rusqlite::params![path, number as i64, us],
            )
            .unwrap();
        assert_eq!(changed, 1, "{path} {number}");
    }
}

fn numbers(log: &[memory_core::history::Revision]) -> Vec<u64> {
    log.iter().map(|r| r.number).collect()
}

/// `history_days` (30 by default): a change drops the path's revisions older than that, never
/// the current one; moved revisions older than the path's own go too.
#[tokio::test]
async fn revisions_older_than_the_days_are_pruned_as_the_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let store = SqliteStorage::open(&db).unwrap();
    let a = p("/memories/a.md");
    for (n, text) in ["1", "2", "3"].iter().enumerate() {
        let mode = if n == 0 {
            WriteMode::Create
        } else {
            WriteMode::Overwrite
        };
        store
            .write(&a, text.as_bytes().to_vec(), mode)
            .await
            .unwrap();
    }
    age(&db, a.as_str(), &[1, 2, 3]);
    // Aged, and nothing changed since: still there (pruning happens as the file changes).
    assert_eq!(numbers(&store.history(&a).await.unwrap()), [3, 2, 1]);
    store
        .write(&a, b"4".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    // 1 and 2 were replaced long ago; 3 only now, so it is kept for the whole period.
    assert_eq!(numbers(&store.history(&a).await.unwrap()), [4, 3]);
    assert_eq!(store.read_revision(&a, 4).await.unwrap(), b"4");
    assert_eq!(store.read_revision(&a, 3).await.unwrap(), b"3");

    // Onto a deleted file's young history, a file whose revisions are old.
    let (c, d) = (p("/memories/c.md"), p("/memories/d.md"));
    store
        .write(&d, b"old d".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store.delete(&d).await.unwrap();
    store
        .write(&c, b"c1".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .write(&c, b"c2".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    age(&db, c.as_str(), &[1, 2]);
    store.rename(&c, &d).await.unwrap();
    let log = store.history(&d).await.unwrap();
    // c1 (3) was replaced long ago; c2 (4) only by the rename; d's own are young.
    assert_eq!(numbers(&log), [5, 4, 2, 1], "{log:?}");
    assert_eq!(store.read(&d).await.unwrap().contents, b"c2");
    assert_eq!(store.read_revision(&d, 5).await.unwrap(), b"c2");
    assert_eq!(store.read_revision(&d, 4).await.unwrap(), b"c2");
}

/// `redact_all_past` (for a store just encrypted in place): every file's past content below
/// a folder gone with one scrub, the records and the current files kept.
#[tokio::test]
async fn redacting_a_whole_store_leaves_no_past_content() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    let secret = b"plaintext Zx81QuokkaTopSecret";
    let files = ["/memories/a.md", "/memories/d/b.md", "/memories/d/e/c.md"];
    for name in files {
        let path = p(name);
        let mut old = secret.to_vec();
        old.extend("filler\n".repeat(1_000).bytes());
        store.write(&path, old, WriteMode::Create).await.unwrap();
        store
            .write(&path, b"an envelope".to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
    }
    store.delete(&p("/memories/d/e/c.md")).await.unwrap();
    assert!(!on_disk(&db, secret).is_empty());
    assert_eq!(store.redact_all_past(&MemoryPath::root()).await.unwrap(), 4);
    assert_eq!(on_disk(&db, secret), Vec::<String>::new());
    for name in files {
        let log = store.history(&p(name)).await.unwrap();
        assert!(log.iter().any(|r| r.redacted), "{name}: {log:?}");
    }
    assert_eq!(
        store.read(&p("/memories/a.md")).await.unwrap().contents,
        b"an envelope"
    );
    // Nothing left to redact.
    assert_eq!(store.redact_all_past(&p("/memories/d")).await.unwrap(), 0);
}
