//! Search on SQLite: FTS5 in the same database, written in the transaction of each write,
//! and kept true when another program changes the `files` table.

use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::{APPLICATION_ID, SCHEMA_VERSION, SqliteStorage};
use rusqlite::{Connection, params};

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

async fn found(store: &SqliteStorage, q: &str) -> Vec<String> {
    store
        .search(&SearchQuery::new(q).unwrap())
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.path.to_string())
        .collect()
}

/// Rows of the FTS table that hold `word`, read straight from the file.
fn indexed(db: &std::path::Path, word: &str) -> i64 {
    let conn = Connection::open(db).unwrap();
    conn.query_row(
        "SELECT count(*) FROM search WHERE search MATCH ?1",
        [format!("\"{word}\"")],
        |r| r.get(0),
    )
    .unwrap()
}

#[tokio::test]
async fn words_are_indexed_in_the_write_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    store
        .write(
            &p("/memories/a.md"),
            b"Quokka notes".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    // Indexed by the write itself: no search has run yet.
    assert_eq!(indexed(&db, "quokka"), 1);
    let stale: i64 = Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM search_stale", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stale, 0, "the library's own write leaves nothing stale");
    store
        .write(
            &p("/memories/a.md"),
            b"numbat notes".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    assert_eq!(indexed(&db, "quokka"), 0, "old words go with the overwrite");
    assert_eq!(indexed(&db, "numbat"), 1);
    store
        .create_within(&p("/memories/b.md"), b"wallaby".to_vec(), 100)
        .await
        .unwrap();
    assert_eq!(indexed(&db, "wallaby"), 1, "create_within indexes too");
    store.delete(&p("/memories")).await.unwrap();
    assert_eq!(indexed(&db, "numbat") + indexed(&db, "wallaby"), 0);
}

#[tokio::test]
async fn binary_content_leaves_no_words_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    let mut blob = b"\xff\xfe secretword ".to_vec();
    blob.push(0x80);
    store
        .write(&p("/memories/blob"), blob, WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(indexed(&db, "secretword"), 0);
    assert!(found(&store, "secretword").await.is_empty());
    // A text file that becomes binary loses its words.
    store
        .write(&p("/memories/t"), b"plainword".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .write(
            &p("/memories/t"),
            b"\xffplainword".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    assert_eq!(indexed(&db, "plainword"), 0);
}

#[tokio::test]
async fn rows_changed_by_another_program_are_found_on_the_next_search() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    store
        .write(
            &p("/memories/a.md"),
            b"original echidna".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    store
        .write(
            &p("/memories/b.md"),
            b"doomed platypus".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE files SET contents = ?1, version = 1000 WHERE path = '/memories/a.md'",
            [b"changed by hand: dingo".to_vec()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO files (path, contents, size, version, created_ms, modified_ms)
             VALUES ('/memories/new.md', ?1, 5, 1001, 0, 0)",
            params![b"a bilby appears".to_vec()],
        )
        .unwrap();
        conn.execute("DELETE FROM files WHERE path = '/memories/b.md'", [])
            .unwrap();
    }
    assert_eq!(found(&store, "dingo").await, ["/memories/a.md"]);
    assert!(
        found(&store, "echidna").await.is_empty(),
        "old words are gone"
    );
    assert_eq!(found(&store, "bilby").await, ["/memories/new.md"]);
    assert!(found(&store, "platypus").await.is_empty());
    assert_eq!(
        indexed(&db, "platypus"),
        0,
        "a deleted row's words are gone"
    );
    assert_eq!(
        indexed(&db, "dingo"),
        1,
        "the search indexed the changed row"
    );
}

#[tokio::test]
async fn a_store_from_before_search_is_indexed_by_its_first_search() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    {
        let store = SqliteStorage::open(&db).unwrap();
        store
            .write(
                &p("/memories/old.md"),
                b"a kakapo from before".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    {
        // Take the file back to schema 3, as a release without search left it.
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(
            "DROP TRIGGER search_mark_insert; DROP TRIGGER search_mark_update;
             DROP TRIGGER search_forget; DROP TABLE search; DROP TABLE search_stale;",
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
        assert_eq!(
            conn.pragma_query_value(None, "application_id", |r| r.get::<_, i32>(0))
                .unwrap(),
            APPLICATION_ID
        );
    }
    let store = SqliteStorage::open(&db).unwrap();
    let version: i64 = Connection::open(&db)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let hits = store
        .search(&SearchQuery::new("kakapo").unwrap())
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, p("/memories/old.md"));
    assert_eq!(hits[0].lines, [1]);
    assert_eq!(hits[0].snippet, "a kakapo from before");
}

#[tokio::test]
async fn hits_match_the_shared_rule_and_rank_by_bm25() {
    let store = SqliteStorage::open_in_memory().unwrap();
    for (path, text) in [
        ("/memories/many.md", "tapir tapir tapir\nzoo"),
        ("/memories/once.md", "one tapir\nat the zoo"),
        ("/memories/x.md", "nothing"),
    ] {
        store
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    let hits = store
        .search(&SearchQuery::new("tapir zoo").unwrap())
        .await
        .unwrap();
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["/memories/many.md", "/memories/once.md"]);
    assert_eq!(hits[1].lines, [1, 2]);
    assert_eq!(hits[1].snippet, "one tapir");
    assert!(hits[0].score > hits[1].score);
}

#[tokio::test]
async fn a_read_only_store_searches_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    {
        let store = SqliteStorage::open(&db).unwrap();
        store
            .write(
                &p("/memories/a.md"),
                b"a quoll note".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    let read_only = memory_sqlite::SqliteOptions::default().read_only(true);
    {
        let store = SqliteStorage::open_with(&db, read_only.clone()).unwrap();
        assert_eq!(found(&store, "quoll").await, ["/memories/a.md"]);
    }
    // A row changed by another program is stale; read-only, the search still finds it (by a
    // scan) and leaves the file as it was.
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE files SET contents = ?1 WHERE path = '/memories/a.md'",
            [b"now a numbat note".to_vec()],
        )
        .unwrap();
    let before = std::fs::read(&db).unwrap();
    let store = SqliteStorage::open_with(&db, read_only).unwrap();
    assert_eq!(found(&store, "numbat").await, ["/memories/a.md"]);
    assert!(found(&store, "quoll").await.is_empty());
    drop(store);
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing written");
}
