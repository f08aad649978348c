//! Opening databases: new, migrated from an older schema, foreign, corrupt, too new, locked.

use std::path::Path;
use std::time::Duration;

use memory_core::{Entry, Error, MemoryPath, Storage, WriteMode};
use memory_sqlite::{APPLICATION_ID, SCHEMA_VERSION, SqliteOptions, SqliteStorage};
use rusqlite::Connection;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

fn pragma(db: &Path, name: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .pragma_query_value(None, name, |r| r.get(0))
        .unwrap()
}

/// The error text an operator sees (the model never does).
fn open_error(db: &Path) -> String {
    let e = SqliteStorage::open(db).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Backend {
                backend: "Sqlite",
                retryable: false,
                ..
            }
        ),
        "{e:?}"
    );
    let source = std::error::Error::source(&e)
        .map(|s| s.to_string())
        .unwrap_or_default();
    format!("{e} / {source}")
}

#[test]
fn a_new_file_gets_the_schema_wal_and_our_marks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    SqliteStorage::open(&db).unwrap();
    assert_eq!(pragma(&db, "application_id"), i64::from(APPLICATION_ID));
    assert_eq!(pragma(&db, "user_version"), SCHEMA_VERSION);
    let conn = Connection::open(&db).unwrap();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // An empty (zero-length) file is an empty database: initialised too.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    SqliteStorage::open(&empty).unwrap();
    assert_eq!(pragma(&empty, "user_version"), SCHEMA_VERSION);
}

/// Schema version 1 exactly as it shipped: no `size` or `created_ms` columns.
const SCHEMA_V1: &str = "
    CREATE TABLE files (
        path        TEXT    NOT NULL PRIMARY KEY COLLATE BINARY,
        contents    BLOB    NOT NULL,
        version     INTEGER NOT NULL,
        modified_ms INTEGER NOT NULL
    );
    CREATE TABLE counters (
        name  TEXT    NOT NULL PRIMARY KEY,
        value INTEGER NOT NULL
    );";

#[tokio::test]
async fn migrates_a_version_1_store_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v1.db");
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(SCHEMA_V1).unwrap();
        conn.execute_batch(
            "INSERT INTO files VALUES ('/memories/notes/a.md', X'68656C6C6F', 7, 1700000000000);
             INSERT INTO files VALUES ('/memories/b.md', X'', 9, 1700000001000);
             INSERT INTO counters VALUES ('version', 9);",
        )
        .unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let s = SqliteStorage::open(&db).unwrap();
    assert_eq!(pragma(&db, "user_version"), SCHEMA_VERSION);
    let f = s.read(&p("/memories/notes/a.md")).await.unwrap();
    assert_eq!(f.contents, b"hello");
    assert_eq!(f.version.as_str(), "7");
    // Sizes were filled in from the contents.
    let sizes: Vec<(String, u64)> = s
        .list(&p("/memories"))
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.path.to_string(), m.size))
        .collect();
    assert_eq!(
        sizes,
        [
            ("/memories/b.md".to_owned(), 0),
            ("/memories/notes/a.md".to_owned(), 5)
        ]
    );
    match s.stat(&p("/memories/notes/a.md")).await.unwrap() {
        Some(Entry::File(meta)) => assert_eq!(
            meta.modified,
            Some(std::time::UNIX_EPOCH + Duration::from_millis(1_700_000_000_000))
        ),
        other => panic!("{other:?}"),
    }
    // The version counter carried over: new versions never repeat old ones.
    let v = s
        .write(
            &p("/memories/notes/a.md"),
            b"hi".to_vec(),
            WriteMode::Update(f.version),
        )
        .await
        .unwrap();
    assert_eq!(v.as_str(), "10");
    drop(s);
    // Opening again does not run the migration again (it would fail: the columns exist).
    let s = SqliteStorage::open(&db).unwrap();
    assert_eq!(
        s.read(&p("/memories/notes/a.md")).await.unwrap().contents,
        b"hi"
    );
    let created: i64 = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT created_ms FROM files WHERE path = '/memories/b.md'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(created, 1_700_000_001_000);
    // The file count (schema version 3) starts from the files already there, and follows.
    assert_eq!(s.file_count().await.unwrap(), 2);
    s.write(
        &p("/memories/c.md"),
        b"c".to_vec(),
        memory_core::WriteMode::Create,
    )
    .await
    .unwrap();
    assert_eq!(s.file_count().await.unwrap(), 3);
    s.delete(&p("/memories/c.md")).await.unwrap();
    assert_eq!(s.file_count().await.unwrap(), 2);
}

fn file_bytes(db: &Path) -> Vec<u8> {
    std::fs::read(db).unwrap()
}

#[test]
fn refuses_another_applications_schema_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO customers (name) VALUES ('Ada');",
        )
        .unwrap();
    }
    let before = file_bytes(&db);
    let msg = open_error(&db);
    assert!(
        msg.contains("another application") && msg.contains("customers"),
        "{msg}"
    );
    assert!(msg.contains("shop.db"), "{msg}");
    assert_eq!(file_bytes(&db), before, "the foreign file was changed");
    assert!(!dir.path().join("shop.db-wal").exists());

    // A file with another application id, even without tables.
    let other = dir.path().join("other.db");
    Connection::open(&other)
        .unwrap()
        .pragma_update(None, "application_id", 0x1234_5678)
        .unwrap();
    let msg = open_error(&other);
    assert!(msg.contains("application_id 0x12345678"), "{msg}");
}

#[test]
fn refuses_a_file_that_is_not_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.txt");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    let msg = open_error(&db);
    assert!(msg.contains("not a SQLite database or is corrupt"), "{msg}");
    assert_eq!(file_bytes(&db), garbage, "never a silent reset");
}

#[tokio::test]
async fn a_damaged_database_gives_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("damaged.db");
    {
        let s = SqliteStorage::open(&db).unwrap();
        for i in 0..40 {
            s.write(
                &p(&format!("/memories/f{i:02}")),
                vec![b'x'; 3000],
                WriteMode::Create,
            )
            .await
            .unwrap();
        }
    }
    // Fold the WAL into the main file, then overwrite every page after the first (header and
    // schema stay readable) with garbage.
    Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;")
        .unwrap();
    let mut bytes = file_bytes(&db);
    assert!(bytes.len() > 8192);
    for (i, b) in bytes.iter_mut().enumerate().skip(4096) {
        *b = (i * 13 % 251) as u8;
    }
    std::fs::write(&db, &bytes).unwrap();
    match SqliteStorage::open(&db) {
        Err(e) => {
            assert!(
                matches!(
                    e,
                    Error::Backend {
                        retryable: false,
                        ..
                    }
                ),
                "{e:?}"
            )
        }
        Ok(s) => {
            let e = s.list(&p("/memories")).await.unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Backend {
                        retryable: false,
                        ..
                    }
                ),
                "{e:?}"
            );
            let msg = std::error::Error::source(&e).unwrap().to_string();
            assert!(msg.contains("corrupt"), "{msg}");
        }
    }
}

#[test]
fn refuses_a_store_from_a_newer_release() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("future.db");
    SqliteStorage::open(&db).unwrap();
    Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let msg = open_error(&db);
    assert!(msg.contains("newer"), "{msg}");
}

#[test]
fn a_missing_folder_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let msg = open_error(&dir.path().join("no/such/folder/memory.db"));
    assert!(msg.contains("cannot open"), "{msg}");
}

#[tokio::test]
async fn locked_for_too_long_is_retryable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.db");
    let s = SqliteStorage::open_with(
        &db,
        SqliteOptions::default().busy_timeout(Duration::from_millis(200)),
    )
    .unwrap();
    s.write(&p("/memories/a"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let holder = Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = std::time::Instant::now();
    let e = s
        .write(&p("/memories/b"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "{:?}",
        started.elapsed()
    );
    let msg = std::error::Error::source(&e).unwrap().to_string();
    assert!(msg.contains("locked by another connection"), "{msg}");
    // Readers are not blocked by a writer in WAL mode.
    assert_eq!(s.read(&p("/memories/a")).await.unwrap().contents, b"a");
    holder.execute_batch("ROLLBACK").unwrap();
    s.write(&p("/memories/b"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
}

#[test]
fn from_url_reads_the_path_forms_and_the_options() {
    use memory_core::options::{OptionsError, StoreOptions, SyncMode};
    use memory_sqlite::SqliteOpenError;
    let dir = tempfile::tempdir().unwrap();
    let abs = dir.path().join("a.db");
    for url in [
        format!("sqlite:{}", abs.display()),
        format!("sqlite://{}", abs.display()),
        format!("SQLITE:{}", abs.display()),
    ] {
        let s = SqliteStorage::from_url(&url, StoreOptions::new()).unwrap();
        assert_eq!(s.path(), Some(abs.as_path()), "{url}");
        assert_eq!(s.options(), &SqliteOptions::default(), "{url}");
    }
    let url = format!(
        "sqlite:{}?sync=data&busy_timeout=250ms&max_connections=2&inline_reads=false&index=search",
        abs.display()
    );
    let s = SqliteStorage::from_url(&url, StoreOptions::new()).unwrap();
    assert_eq!(s.options().sync, SyncMode::Data);
    assert_eq!(s.options().busy_timeout, Duration::from_millis(250));
    assert_eq!(s.options().max_connections, 2);
    assert!(!s.options().inline_reads);
    assert_eq!(s.options().index, memory_sqlite::IndexMode::Search);
    // A caller's options win over the URL's.
    let s = SqliteStorage::from_url(&url, StoreOptions::from_pairs([("sync", "none")])).unwrap();
    assert_eq!(s.options().sync, SyncMode::None);

    // Refusals: typed, naming the option; no file is created.
    let new = dir.path().join("never.db");
    let err = SqliteStorage::from_url(
        &format!("sqlite:{}?busy=1", new.display()),
        StoreOptions::new(),
    )
    .unwrap_err();
    match &err {
        SqliteOpenError::Options(OptionsError::UnknownOption { key, accepted }) => {
            assert_eq!(key, "busy");
            assert_eq!(
                accepted,
                &[
                    "sync",
                    "busy_timeout",
                    "max_connections",
                    "inline_reads",
                    "index",
                    "history",
                    "history_days",
                    "history_max",
                    "history_session"
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    for bad in [
        "sync=fast",
        "busy_timeout=5",
        "max_connections=0",
        "inline_reads=maybe",
        "index=later",
    ] {
        let err = SqliteStorage::from_url(
            &format!("sqlite:{}?{bad}", new.display()),
            StoreOptions::new(),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                SqliteOpenError::Options(OptionsError::InvalidValue { .. })
            ),
            "{bad}: {err:?}"
        );
    }
    for bad in ["sqlite:", "sqlite://", "file:m.db", "m.db"] {
        assert!(
            matches!(
                SqliteStorage::from_url(bad, StoreOptions::new()),
                Err(SqliteOpenError::Url { .. })
            ),
            "{bad}"
        );
    }
    assert!(!new.exists());
}
