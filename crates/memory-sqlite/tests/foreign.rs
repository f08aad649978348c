//! Rows another tool put in the `files` table whose paths are not memory paths: the store
//! keeps working around them (listings skip them and say how many; `view /memories`, export,
//! `rm -r` and create keep working).

use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage};
use memory_sqlite::SqliteStorage;
use rusqlite::{Connection, params};
use serde_json::json;

const FOREIGN: [&str; 6] = [
    "/memories/notes/../escape.md",
    "/memories/./dot.md",
    "/memories/notes//double.md",
    "/memories/ctl\u{1}name.md",
    "/memories/notes/",
    "/memories/notes/trailing.md/",
];

fn plant(db: &std::path::Path) {
    let conn = Connection::open(db).unwrap();
    for (i, path) in FOREIGN.iter().enumerate() {
        conn.execute(
            "INSERT INTO files (path, contents, size, version, created_ms, modified_ms)
             VALUES (?1, x'66', 1, ?2, 0, 0)",
            params![path, 1_000_000 + i as i64],
        )
        .unwrap();
    }
}

#[tokio::test]
async fn foreign_rows_do_not_break_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStorage::open(&db).unwrap();
    let tool = MemoryTool::new(store.clone());
    for (path, text) in [
        ("/memories/notes/a.md", "alpha\n"),
        ("/memories/b.md", "beta\n"),
    ] {
        let out = tool
            .execute(&json!({"command": "create", "path": path, "file_text": text}))
            .await;
        assert!(!out.is_error, "{out:?}");
    }
    plant(&db);

    // Listings skip the foreign rows and count them.
    let all = store.listing(&MemoryPath::root()).await.unwrap();
    let names: Vec<String> = all.entries.iter().map(|m| m.path.to_string()).collect();
    assert_eq!(names, ["/memories/b.md", "/memories/notes/a.md"]);
    assert_eq!(all.skipped, FOREIGN.len() as u64);
    let file = store
        .listing(&MemoryPath::parse("/memories/b.md").unwrap())
        .await
        .unwrap();
    assert_eq!(file.skipped, 0, "the figure is the listing's own");

    // view /memories works and shows only the memory files.
    let out = tool
        .execute(&json!({"command": "view", "path": "/memories"}))
        .await;
    assert!(!out.is_error, "{out:?}");
    let text = out.text().unwrap_or_default().to_owned();
    assert!(text.contains("a.md") && text.contains("b.md"), "{text}");
    assert!(
        !text.contains("escape") && !text.contains("dot.md"),
        "{text}"
    );
    let root = store.listing(&MemoryPath::root()).await.unwrap();
    assert_eq!(root.skipped, FOREIGN.len() as u64);

    // Create still works (the count includes the foreign rows, so a limit is never passed).
    let out = tool
        .execute(&json!({"command": "create", "path": "/memories/c.md", "file_text": "c\n"}))
        .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(store.file_count().await.unwrap(), 3 + FOREIGN.len());

    // A directory rename takes the foreign rows below it along; the rest stay put.
    let out = tool
        .execute(&json!({"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/moved"}))
        .await;
    assert!(!out.is_error, "{out:?}");
    let moved = store
        .listing(&MemoryPath::parse("/memories/moved").unwrap())
        .await
        .unwrap();
    assert_eq!(moved.entries.len(), 1);
    // `notes/../escape.md`, `notes//double.md`, `notes/trailing.md/` (`notes/` itself is not
    // below `notes`).
    assert_eq!(moved.skipped, 3);

    // rm -r of the whole store works; foreign rows below /memories/ go with it.
    store.delete(&MemoryPath::root()).await.unwrap();
    let root = store.listing(&MemoryPath::root()).await.unwrap();
    assert_eq!(root, memory_core::Listing::default());
    assert_eq!(store.file_count().await.unwrap(), 0);
}
