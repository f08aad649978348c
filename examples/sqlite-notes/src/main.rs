// cargo run -p example-sqlite-notes
//! An agent's memory in one SQLite file.
//!
//! The program plays two sessions of an agent. In the first, it answers the memory tool calls
//! Claude would send (`view`, `create`, `str_replace`, `insert`, `rename`) with
//! `memory_core::MemoryTool` over a `memory_sqlite::SqliteStorage`. Then it closes the store,
//! opens the same file again as a later session would, and finds its notes there. Last, it
//! shows that the file is an ordinary SQLite database that any SQL tool can query.
//!
//! Without an argument it uses a new file in the temporary folder and removes it at the end;
//! give a path after `--` (`cargo run -p example-sqlite-notes -- notes.db`) to keep the memory
//! between runs (a second run then shows the errors Claude would get, e.g. for a `create` of a
//! file that already exists).

use std::path::PathBuf;

use memory_core::{MemoryHandler, MemoryTool};
use memory_sqlite::SqliteStorage;
use serde_json::{Value, json};

/// Opens the store off the async runtime: opening reads the file and may migrate it.
async fn open(db: PathBuf) -> Result<SqliteStorage, Box<dyn std::error::Error>> {
    Ok(tokio::task::spawn_blocking(move || SqliteStorage::open(db)).await??)
}

/// Runs one tool call and prints it with its result, as the application would log it.
async fn call(tool: &MemoryTool<SqliteStorage>, input: Value) {
    let out = tool.execute(&input).await;
    println!("> {input}");
    let flag = if out.is_error { " (is_error)" } else { "" };
    println!("{}{flag}\n", out.text().unwrap_or("[image]"));
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args_os().nth(1);
    let keep = arg.is_some();
    let db = match arg {
        Some(path) => PathBuf::from(path),
        None => std::env::temp_dir().join(format!("sqlite-notes-{}.db", std::process::id())),
    };
    println!("memory store: {}\n", db.display());

    println!("=== session 1 ===\n");
    let tool = MemoryTool::new(open(db.clone()).await?);
    call(&tool, json!({"command": "view", "path": "/memories"})).await;
    call(
        &tool,
        json!({
            "command": "create",
            "path": "/memories/user/preferences.md",
            "file_text": "# Preferences\n- answers: short\n- language: Rust\n"
        }),
    )
    .await;
    call(
        &tool,
        json!({
            "command": "str_replace",
            "path": "/memories/user/preferences.md",
            "old_str": "- answers: short",
            "new_str": "- answers: short, with a code sample"
        }),
    )
    .await;
    call(
        &tool,
        json!({
            "command": "create",
            "path": "/memories/task.md",
            "file_text": "# Task: port the parser\n- [x] read the grammar\n"
        }),
    )
    .await;
    call(
        &tool,
        json!({
            "command": "insert",
            "path": "/memories/task.md",
            "insert_line": 2,
            "insert_text": "- [ ] write the lexer"
        }),
    )
    .await;
    call(
        &tool,
        json!({"command": "rename", "old_path": "/memories/task.md", "new_path": "/memories/projects/parser.md"}),
    )
    .await;
    // Closing the tool closes the database; everything above is already committed.
    drop(tool);

    println!("=== session 2: the same file, opened again ===\n");
    let tool = MemoryTool::new(open(db.clone()).await?);
    call(&tool, json!({"command": "view", "path": "/memories"})).await;
    call(
        &tool,
        json!({"command": "view", "path": "/memories/projects/parser.md"}),
    )
    .await;

    // What goes back to Claude for a tool_use block.
    let input =
        json!({"command": "view", "path": "/memories/user/preferences.md", "view_range": [2, -1]});
    let block = tool
        .execute(&input)
        .await
        .into_tool_result("toolu_01example");
    println!("tool_result block: {block}\n");
    drop(tool);

    println!("=== the same file through plain SQL ===\n");
    let conn = rusqlite::Connection::open(&db)?;
    let mut stmt = conn.prepare("SELECT path, size, version FROM files ORDER BY path")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    for row in rows {
        let (path, size, version) = row?;
        println!("{path}\t{size} bytes\tversion {version}");
    }
    drop(stmt);
    drop(conn);
    if !keep {
        std::fs::remove_file(&db)?;
    }
    Ok(())
}
