//! Tests of [`MemoryTool`] over failing and refusing storage: backend failures, conflicts
//! retried then reported, refusals, and the overwrite create mode.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::InMemoryStorage;
use crate::conformance::faults::{FAKE_HOST_PATH, Faulty, Op};

fn commands() -> Vec<Value> {
    vec![
        json!({"command": "view", "path": "/memories"}),
        json!({"command": "view", "path": "/memories/a.md"}),
        json!({"command": "create", "path": "/memories/new.md", "file_text": "x"}),
        json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "1"}),
        json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "top"}),
        json!({"command": "delete", "path": "/memories/a.md"}),
        json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}),
    ]
}

async fn seeded() -> Arc<Faulty<InMemoryStorage>> {
    let store = Arc::new(Faulty::new(InMemoryStorage::new()));
    let path = MemoryPath::parse("/memories/a.md").unwrap();
    store
        .write(&path, b"one\ntwo\n".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
}

async fn snapshot(store: &Faulty<InMemoryStorage>) -> Vec<(String, Vec<u8>)> {
    let inner = store.inner();
    let mut out = Vec::new();
    for meta in inner.list(&MemoryPath::root()).await.unwrap() {
        let file = inner.read(&meta.path).await.unwrap();
        out.push((meta.path.to_string(), file.contents));
    }
    out
}

#[tokio::test]
async fn backend_failures_are_generic_and_change_nothing() {
    for op in Op::ALL {
        for input in commands() {
            let store = seeded().await;
            let before = snapshot(&store).await;
            store.fail_method(op);
            let tool = MemoryTool::new(store.clone());
            let out = tool.execute(&input).await;
            let text = out.text().unwrap_or_default().to_owned();
            assert!(
                !text.contains(FAKE_HOST_PATH),
                "{op}: leaked detail: {text}"
            );
            assert!(
                !text.contains("Faulty"),
                "{op}: leaked backend name: {text}"
            );
            if text.starts_with("Error: The memory store could not complete") {
                assert!(out.is_error, "{op} {input}");
            }
            store.heal();
            // A command that failed leaves the store exactly as it was.
            if out.is_error {
                assert_eq!(
                    snapshot(&store).await,
                    before,
                    "{op} {input}: partial write"
                );
            }
        }
    }
}

#[tokio::test]
async fn every_command_reports_a_failing_store() {
    for input in commands() {
        let store = seeded().await;
        store.fail_after(0);
        let out = MemoryTool::new(store.clone()).execute(&input).await;
        assert!(out.is_error, "{input}: {out:?}");
        let text = out.text().unwrap();
        assert!(
            text.starts_with("Error: The memory store could not complete "),
            "{input}: {text}"
        );
        assert!(text.contains("application's log"), "{text}");
    }
}

#[tokio::test]
async fn conflicts_are_retried_then_reported() {
    let store = seeded().await;
    let tool = MemoryTool::new(store.clone()).with_limits(Limits {
        max_edit_retries: 3,
        ..Limits::default()
    });
    store.inject_conflicts(3);
    let out = tool
        .execute(&json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "top"}))
        .await;
    assert_eq!(out.text(), Some("The file /memories/a.md has been edited."));
    store.inject_conflicts(4);
    let out = tool
        .execute(&json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "two", "new_str": "2"}))
        .await;
    assert_eq!(
        out.text(),
        Some("Error: /memories/a.md was modified concurrently; view it and retry")
    );
    assert!(out.is_error);
    let file = store
        .inner()
        .read(&MemoryPath::parse("/memories/a.md").unwrap())
        .await
        .unwrap();
    assert_eq!(file.contents, b"top\none\ntwo\n");
}

#[tokio::test]
async fn refusals_show_their_reason_and_change_nothing() {
    let inner = InMemoryStorage::new();
    let path = MemoryPath::parse("/memories/a.md").unwrap();
    inner
        .write(&path, b"one\ntwo\n".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let tool = MemoryTool::new(crate::ReadOnly::new(inner));
    let cases = [
        (
            json!({"command": "create", "path": "/memories/new.md", "file_text": "x"}),
            "/memories/new.md",
        ),
        (
            json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "1"}),
            "/memories/a.md",
        ),
        (
            json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "top"}),
            "/memories/a.md",
        ),
        (
            json!({"command": "delete", "path": "/memories/a.md"}),
            "/memories/a.md",
        ),
        (
            json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}),
            "/memories/a.md",
        ),
    ];
    for (input, shown) in cases {
        let out = tool.execute(&input).await;
        assert!(out.is_error, "{input}");
        assert_eq!(
            out.text(),
            Some(format!("Error: Cannot change {shown}: /memories is read-only").as_str()),
            "{input}"
        );
    }
    let files = tool
        .storage()
        .inner()
        .list(&MemoryPath::root())
        .await
        .unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(
        tool.storage().inner().read(&path).await.unwrap().contents,
        b"one\ntwo\n"
    );
}

#[tokio::test]
async fn overwrite_mode_replaces_files_but_not_directories() {
    let tool = MemoryTool::new(InMemoryStorage::new()).with_create_mode(CreateMode::Overwrite);
    let create =
        |path: &str, text: &str| json!({"command": "create", "path": path, "file_text": text});
    assert!(!tool.execute(&create("/memories/a.md", "1")).await.is_error);
    let out = tool.execute(&create("/memories/a.md", "2")).await;
    assert_eq!(
        out.text(),
        Some("File created successfully at: /memories/a.md")
    );
    let file = tool
        .storage()
        .read(&MemoryPath::parse("/memories/a.md").unwrap())
        .await
        .unwrap();
    assert_eq!(file.contents, b"2");
    assert!(
        !tool
            .execute(&create("/memories/d/x.md", "1"))
            .await
            .is_error
    );
    let out = tool.execute(&create("/memories/d", "2")).await;
    assert_eq!(out.text(), Some("Error: File /memories/d already exists"));
}
