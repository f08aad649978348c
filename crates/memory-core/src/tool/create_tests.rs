//! Tests of the storage calls each command costs (a recording store), and of `create` in a full
//! store.

use serde_json::json;

use super::*;
use crate::InMemoryStorage;
use crate::conformance::faults::{Op, Recording};

fn create(path: &str) -> serde_json::Value {
    json!({"command": "create", "path": path, "file_text": "x"})
}

fn small(
    storage: Recording<InMemoryStorage>,
    mode: CreateMode,
) -> MemoryTool<Recording<InMemoryStorage>> {
    MemoryTool::new(storage)
        .with_limits(Limits {
            max_files: 2,
            ..Limits::default()
        })
        .with_create_mode(mode)
}

#[tokio::test]
async fn create_is_one_create_within_and_never_lists() {
    let tool = small(Recording::new(InMemoryStorage::new()), CreateMode::Reject);
    for path in [
        "/memories/a.md",
        "/memories/b.md",
        "/memories/c.md",
        "/memories/a.md",
    ] {
        tool.execute(&create(path)).await;
    }
    assert_eq!(tool.storage().ops(), [Op::CreateWithin; 4]);
}

/// Cost follows the command: each single-file command makes the storage calls listed
/// here and nothing else; none lists the store (a file view is one read).
#[tokio::test]
async fn single_file_commands_make_only_their_own_calls() {
    let store = Recording::new(InMemoryStorage::new());
    for i in 0..50 {
        let path = MemoryPath::parse(&format!("/memories/many/{i}.md")).unwrap();
        store
            .write(&path, b"x\n".to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    let tool = MemoryTool::new(store);
    let cases: Vec<(serde_json::Value, Vec<Op>)> = vec![
        (create("/memories/a.md"), vec![Op::CreateWithin]),
        (
            json!({"command": "view", "path": "/memories/a.md"}),
            vec![Op::Read],
        ),
        (
            json!({"command": "view", "path": "/memories/a.md", "view_range": [1, 1]}),
            vec![Op::Read],
        ),
        (
            json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": "y"}),
            vec![Op::Read, Op::Write],
        ),
        (
            json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "top"}),
            vec![Op::Read, Op::Write],
        ),
        (
            json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}),
            vec![Op::Stat, Op::Stat, Op::Rename],
        ),
        (
            json!({"command": "delete", "path": "/memories/b.md"}),
            vec![Op::Delete],
        ),
        // A path that is not a file costs one listing of that path only.
        (
            json!({"command": "view", "path": "/memories/missing.md"}),
            vec![Op::Read, Op::List],
        ),
    ];
    for (input, want) in cases {
        tool.storage().take();
        let out = tool.execute(&input).await;
        assert!(
            !out.is_error || input["path"] == "/memories/missing.md",
            "{input}: {out:?}"
        );
        let calls = tool.storage().take();
        let ops: Vec<Op> = calls.iter().map(|c| c.op).collect();
        assert_eq!(ops, want, "{input}");
        for call in calls.iter().filter(|c| c.op == Op::List) {
            assert!(!call.path.is_root(), "{input} listed the store");
        }
    }
}

#[tokio::test]
async fn full_store_answers_taken_paths_and_refuses_new_ones() {
    let tool = small(Recording::new(InMemoryStorage::new()), CreateMode::Reject);
    tool.execute(&create("/memories/a.md")).await;
    tool.execute(&create("/memories/d/b.md")).await;
    let out = tool.execute(&create("/memories/c.md")).await;
    assert_eq!(
        out.text(),
        Some("Error: The memory store is full (2 files). Delete or consolidate files first.")
    );
    assert!(out.is_error);
    let out = tool.execute(&create("/memories/a.md")).await;
    assert_eq!(
        out.text(),
        Some("Error: File /memories/a.md already exists")
    );
    let out = tool.execute(&create("/memories/d")).await;
    assert_eq!(out.text(), Some("Error: File /memories/d already exists"));
    assert_eq!(tool.storage().inner().file_count().await.unwrap(), 2);
}

#[tokio::test]
async fn overwriting_a_file_in_a_full_store_is_not_a_new_file() {
    let tool = small(
        Recording::new(InMemoryStorage::new()),
        CreateMode::Overwrite,
    );
    tool.execute(&create("/memories/a.md")).await;
    tool.execute(&create("/memories/b.md")).await;
    tool.storage().take();
    let out = tool
        .execute(&json!({"command": "create", "path": "/memories/a.md", "file_text": "new"}))
        .await;
    assert_eq!(
        out.text(),
        Some("File created successfully at: /memories/a.md")
    );
    assert_eq!(tool.storage().ops(), [Op::Stat, Op::Write]);
    let a = MemoryPath::parse("/memories/a.md").unwrap();
    assert_eq!(
        tool.storage().inner().read(&a).await.unwrap().contents,
        b"new"
    );
    let out = tool.execute(&create("/memories/c.md")).await;
    assert_eq!(
        out.text(),
        Some("Error: The memory store is full (2 files). Delete or consolidate files first.")
    );
}
