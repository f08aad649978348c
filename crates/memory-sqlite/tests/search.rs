//! Search on SQLite: FTS5 in the same database, written when each [`IndexMode`] says (in the
//! write's transaction, in batches on the writer thread, or before a search), and kept true
//! when another program changes the `files` table.

use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::{
    APPLICATION_ID, INDEX_BATCH, IndexMode, SCHEMA_VERSION, SqliteOptions, SqliteStorage,
};
use rusqlite::{Connection, params};

/// Takes a database of this release back to schema 5 (before history), so that an older
/// schema can be made from it.
const UNDO_SCHEMA_6: &str = "DROP TRIGGER files_revision_forget; DROP TABLE history;
     ALTER TABLE files DROP COLUMN revision;";

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

/// A store whose writes index their files in their own transactions ([`IndexMode::Write`]).
fn open_indexing_writes(db: &std::path::Path) -> SqliteStorage {
    SqliteStorage::open_with(db, SqliteOptions::default().index(IndexMode::Write)).unwrap()
}

/// Rows marked for indexing, read straight from the file.
fn marked(db: &std::path::Path) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM search_stale", [], |r| r.get(0))
        .unwrap()
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
    let store = open_indexing_writes(&db);
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
    let store = open_indexing_writes(&db);
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
        conn.execute_batch(UNDO_SCHEMA_6).unwrap();
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

/// A row another program changed is marked stale; the library's own overwrite of that file
/// before any search (an upsert, whose conflict clause SQLite applies to the statements of
/// the triggers it fires too) must still mark it without a constraint error, and index it.
#[tokio::test]
async fn overwriting_a_row_changed_by_another_program_works_before_any_search() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    let path = p("/memories/a.md");
    store
        .write(&path, b"first wombat".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE files SET contents = ?1, version = 1000 WHERE path = '/memories/a.md'",
            [b"by hand: a quokka".to_vec()],
        )
        .unwrap();
    store
        .write(&path, b"then a numbat".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_eq!(found(&store, "numbat").await, ["/memories/a.md"]);
    assert!(found(&store, "quokka").await.is_empty());
    assert!(found(&store, "wombat").await.is_empty());
    assert_eq!(indexed(&db, "numbat"), 1);
}

/// Every row of the FTS table's own storage, to tell whether a write touched the index.
fn fts_storage(db: &std::path::Path) -> Vec<(i64, Vec<u8>)> {
    Connection::open(db)
        .unwrap()
        .prepare("SELECT id, block FROM search_data ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[tokio::test]
async fn rewriting_the_same_bytes_leaves_the_index_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = open_indexing_writes(&db);
    let path = p("/memories/a.md");
    let first = store
        .write(&path, b"a solitary tuatara".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let before = fts_storage(&db);
    let second = store
        .write(&path, b"a solitary tuatara".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_ne!(first, second, "the write itself happened");
    assert_eq!(fts_storage(&db), before, "no FTS work for unchanged words");
    assert_eq!(found(&store, "tuatara").await, ["/memories/a.md"]);
    // A change is indexed as ever.
    store
        .write(
            &path,
            b"a solitary kiwi".to_vec(),
            WriteMode::Update(second),
        )
        .await
        .unwrap();
    assert_ne!(fts_storage(&db), before);
    assert_eq!(found(&store, "kiwi").await, ["/memories/a.md"]);
    assert!(found(&store, "tuatara").await.is_empty());
}

#[tokio::test]
async fn with_index_search_only_the_next_search_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let options = SqliteOptions::default().index(IndexMode::Search);
    let store = SqliteStorage::open_with(&db, options.clone()).unwrap();
    store
        .write(
            &p("/memories/a.md"),
            b"a lone kea".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    store
        .create_within(&p("/memories/b.md"), b"the kea again".to_vec(), 10)
        .await
        .unwrap();
    drop(store);
    assert_eq!(
        indexed(&db, "kea"),
        0,
        "neither the writes nor the close indexed"
    );
    assert_eq!(marked(&db), 2, "both rows wait for the next search");
    let store = SqliteStorage::open_with(&db, options).unwrap();
    let mut hits = found(&store, "kea").await;
    hits.sort();
    assert_eq!(hits, ["/memories/a.md", "/memories/b.md"]);
    assert_eq!(indexed(&db, "kea"), 2);
    store
        .write(
            &p("/memories/a.md"),
            b"now a takahe".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    assert_eq!(found(&store, "takahe").await, ["/memories/a.md"]);
    assert_eq!(found(&store, "kea").await, ["/memories/b.md"]);
}

/// The path of note `i` of the batched tests.
fn note_path(i: usize) -> MemoryPath {
    p(&format!("/memories/n{i}.md"))
}

#[tokio::test]
async fn batched_indexing_catches_up_after_a_batch_of_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    assert_eq!(store.options().index, IndexMode::Batched, "the default");
    store
        .write(&note_path(0), b"a first kakapo".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(indexed(&db, "kakapo"), 0, "a write leaves its row marked");
    assert_eq!(marked(&db), 1);
    // A search right after finds it all the same.
    assert_eq!(found(&store, "kakapo").await, ["/memories/n0.md"]);
    assert_eq!(marked(&db), 0);
    // A fresh writer thread, which has counted no write yet.
    drop(store);
    let store = SqliteStorage::open(&db).unwrap();
    // A batch of writes, all queued before the writer thread takes the first (each write's
    // job is queued when its task is first polled, and the tasks run one after another), so no
    // pause lets it catch up early.
    let mut writes = tokio::task::JoinSet::new();
    for i in 1..=INDEX_BATCH {
        let store = store.clone();
        writes.spawn(async move {
            store
                .write(&note_path(i), b"kakapo again".to_vec(), WriteMode::Create)
                .await
        });
    }
    while let Some(written) = writes.join_next().await {
        written.unwrap().unwrap();
    }
    // The writer thread catches up after the batch's last commit, before it takes the next
    // job: once this write is back, the catch-up is done.
    store
        .write(&note_path(100), b"a late kiwi".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(marked(&db), 1, "only the write after the batch waits");
    assert_eq!(indexed(&db, "kakapo"), INDEX_BATCH as i64 + 1);
    assert_eq!(indexed(&db, "kiwi"), 0);
}

#[tokio::test]
async fn batched_indexing_catches_up_when_writes_pause_and_when_the_store_closes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    store
        .write(
            &note_path(0),
            b"a resting kereru".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    // No more writes: the writer thread indexes after `INDEX_IDLE` (100 ms). The wait below
    // is for that to happen at all on a loaded machine, not a timing check.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while marked(&db) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the idle writer never indexed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(indexed(&db, "kereru"), 1);
    for i in 1..4 {
        store
            .write(
                &note_path(i),
                b"a closing pukeko".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    // A file written many times between catch-ups is indexed with its last words.
    for i in 0..10 {
        store
            .write(
                &note_path(0),
                format!("kereru weka{i}").into_bytes(),
                WriteMode::Overwrite,
            )
            .await
            .unwrap();
    }
    // Dropping the last handle joins the writer thread, which indexes what is left first.
    drop(store);
    assert_eq!(marked(&db), 0);
    assert_eq!(indexed(&db, "pukeko"), 3);
    assert_eq!(indexed(&db, "weka9"), 1);
    assert_eq!(indexed(&db, "weka8"), 0);
    assert_eq!(indexed(&db, "resting"), 0, "the first words are gone");
}

#[tokio::test]
async fn batched_indexing_takes_a_store_full_of_marks_a_chunk_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let rows = 600;
    drop(SqliteStorage::open(&db).unwrap());
    {
        // Rows another program wrote: each one marked by the schema's triggers.
        let conn = Connection::open(&db).unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        for i in 0..rows {
            tx.execute(
                "INSERT INTO files (path, contents, size, version, created_ms, modified_ms)
                 VALUES (?1, ?2, 9, ?3, 0, 0)",
                params![format!("/memories/old{i}.md"), b"an old moa".to_vec(), i],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    assert_eq!(marked(&db), rows);
    let store = SqliteStorage::open(&db).unwrap();
    store
        .write(&note_path(0), b"a new moa".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    drop(store);
    // The close indexed one chunk (256 rows, the lowest rowids first), not the whole store.
    let left = marked(&db);
    assert!(left > 0 && left < rows, "{left} rows left marked");
    assert_eq!(indexed(&db, "moa"), rows + 1 - left);
    // A search indexes everything left, chunk by chunk, and finds every file.
    let store = SqliteStorage::open(&db).unwrap();
    let hits = store
        .search(&SearchQuery::new("moa").unwrap().with_limit(100).unwrap())
        .await
        .unwrap();
    assert_eq!(hits.len(), 100);
    assert_eq!(marked(&db), 0);
    assert_eq!(indexed(&db, "moa"), rows + 1);
}

#[tokio::test]
async fn a_schema_4_store_is_migrated_to_marks_that_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let path = p("/memories/a.md");
    SqliteStorage::open(&db)
        .unwrap()
        .write(&path, b"first wombat".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    {
        // Schema 4's marks, and a row another program changed since.
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(UNDO_SCHEMA_6).unwrap();
        conn.execute_batch(
            "DROP TRIGGER search_mark_insert; DROP TRIGGER search_mark_update;
             CREATE TRIGGER search_mark_insert AFTER INSERT ON files
                 BEGIN INSERT OR IGNORE INTO search_stale (id) VALUES (NEW.rowid); END;
             CREATE TRIGGER search_mark_update AFTER UPDATE OF contents ON files
                 BEGIN INSERT OR IGNORE INTO search_stale (id) VALUES (NEW.rowid); END;
             UPDATE files SET contents = x'62792068616e64' WHERE path = '/memories/a.md';",
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 4).unwrap();
    }
    let store = SqliteStorage::open(&db).unwrap();
    let version: i64 = Connection::open(&db)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    store
        .write(&path, b"then a numbat".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_eq!(found(&store, "numbat").await, ["/memories/a.md"]);
}
