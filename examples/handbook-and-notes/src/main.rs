// cargo run -p example-handbook-and-notes
//! Two versioned memory stores under one memory tool: a read-only "Team Handbook" the team
//! maintains, and a read-write "User Notes" store where the agent keeps what it learns.
//!
//! The program sets up both stores in one memory-stores database (in the temporary folder,
//! removed at the end), mounts them at `/memories/team-handbook` and `/memories/user-notes`,
//! prints the note a system prompt would carry, then answers, one by one, the memory-tool calls
//! an agent would make in a session (no model and no network: the calls are scripted). The
//! handbook refuses the agent's edit; the notes take its writes, each one a version attributed
//! to the session. Last, it prints the history of the note the agent changed, as
//! `memory store history` or the API's `memory_versions` would show it.

use memory_core::{MemoryHandler, MemoryTool};
use memory_mounts::memory_store::{
    Actor, CreateStore, ListVersions, MemoryStores, StoreError, View,
};
use memory_mounts::{Access, Mount, Mounts, StoreStorage, new_session_id};
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let engine = MemoryStores::open(dir.path().join("memory-stores.db")).await?;

    // What the team and the application set up beforehand (through the API, `memory store`,
    // or as here the engine), recorded as written by a person.
    let (handbook, notes) = create_stores(&engine).await?;

    // One session of the agent: every write it makes is a version by this session.
    let session = new_session_id();
    let mounts = Mounts::new([
        Mount::store(
            StoreStorage::local(engine.clone(), &handbook, &session)?,
            Access::ReadOnly,
        )
        .await?
        .with_instructions("Follow it; suggest changes to the user instead of editing it."),
        Mount::store(
            StoreStorage::local(engine.clone(), &notes, &session)?,
            Access::ReadWrite,
        )
        .await?,
    ])?;
    println!("System prompt note:\n{}\n", mounts.note());
    let tool = MemoryTool::new(mounts);

    let calls = [
        json!({"command": "view", "path": "/memories"}),
        json!({"command": "view", "path": "/memories/team-handbook/style/answers.md"}),
        json!({"command": "str_replace", "path": "/memories/team-handbook/style/answers.md", "old_str": "metric", "new_str": "imperial"}),
        json!({"command": "view", "path": "/memories/user-notes/profile.md"}),
        json!({"command": "str_replace", "path": "/memories/user-notes/profile.md", "old_str": "- units: unknown", "new_str": "- units: imperial (asked on Monday)"}),
        json!({"command": "insert", "path": "/memories/user-notes/profile.md", "insert_line": 3, "insert_text": "- prefers short answers"}),
        json!({"command": "create", "path": "/memories/todo.md", "file_text": "call back"}),
        json!({"command": "create", "path": "/memories/user-notes/todo.md", "file_text": "- send the release checklist\n"}),
    ];
    for input in calls {
        let out = tool.execute(&input).await;
        let flag = if out.is_error { " (error)" } else { "" };
        println!("> {}", summary(&input));
        println!("{}{flag}\n", out.text().unwrap_or("[image]"));
    }

    print_history(&engine, &notes, "/profile.md").await?;
    Ok(())
}

async fn create_stores(engine: &MemoryStores) -> Result<(String, String), StoreError> {
    let admin = Some(Actor::user("user_01TeamLead"));
    let handbook = engine
        .create_store(CreateStore {
            name: "Team Handbook".into(),
            description: Some("How the team works: answers, reviews, releases.".into()),
            ..Default::default()
        })
        .await?
        .id;
    engine
        .create_memory(
            &handbook,
            "/style/answers.md",
            "- Answer in metric units unless the user prefers others.\n- Keep answers short.\n",
            admin.clone(),
        )
        .await?;
    engine
        .create_memory(
            &handbook,
            "/releases.md",
            "Releases go out on Tuesdays after the checklist.\n",
            admin.clone(),
        )
        .await?;
    let notes = engine
        .create_store(CreateStore {
            name: "User Notes".into(),
            description: Some("What this user asked the agent to remember.".into()),
            ..Default::default()
        })
        .await?
        .id;
    engine
        .create_memory(
            &notes,
            "/profile.md",
            "# Profile\n- name: Sam\n- units: unknown\n",
            admin,
        )
        .await?;
    Ok((handbook, notes))
}

/// `view /memories`, `str_replace /memories/x.md`, ...
fn summary(input: &Value) -> String {
    let field = |name: &str| input[name].as_str().unwrap_or_default();
    match field("command") {
        "rename" => format!("rename {} {}", field("old_path"), field("new_path")),
        command => format!("{command} {}", field("path")),
    }
}

/// Every version of the memory at `path`, oldest first: what changed, when and by whom.
async fn print_history(engine: &MemoryStores, store: &str, path: &str) -> Result<(), StoreError> {
    let memory = engine
        .memory_at_path(store, path)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            message: format!("no memory at {path}"),
        })?;
    let versions = engine
        .list_versions(
            store,
            ListVersions {
                memory_id: Some(memory.id.clone()),
                view: View::Full,
                ..Default::default()
            },
        )
        .await?
        .data;
    println!("History of {path} ({}), oldest first:", memory.id);
    for v in versions.iter().rev() {
        let who = match &v.created_by {
            Some(Actor::Session { session_id, .. }) => format!("session {session_id}"),
            Some(Actor::User { user_id }) => format!("user {user_id}"),
            Some(Actor::Api { api_key_id }) => format!("API key {api_key_id}"),
            Some(other) => format!("{other:?}"),
            None => "unknown".to_owned(),
        };
        let sha = v.content_sha256.as_deref().unwrap_or("-");
        println!(
            "- {} {} by {who} ({} bytes, sha256 {}...)",
            v.id,
            v.operation.as_str(),
            v.content_size_bytes.unwrap_or(0),
            sha.get(..12).unwrap_or(sha),
        );
        for line in v.content.as_deref().unwrap_or("").lines() {
            println!("    {line}");
        }
    }
    Ok(())
}
