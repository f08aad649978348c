//! Command-level checks: the six commands through [`MemoryTool`] over a storage, compared with
//! golden outputs, so the contract is proven identical on every backend.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::Value;

use super::Capabilities;
use crate::{MemoryHandler, MemoryPath, MemoryTool, Storage, ToolContent, WriteMode};

/// The golden transcript: one JSON object a line, run in order on one store. A line is either
/// `{"case", "input", "content", "is_error"}` (run `input`, expect that output) or
/// `{"setup": PATH, "base64" | "text": ...}` (write that file directly through the storage,
/// for content the tool cannot create, such as images). A line with `"needs":
/// "binary_files"` or `"needs": "non_nfc_names"` runs only on a store with that capability
/// (see [`Capabilities`]).
pub const GOLDEN: &str = include_str!("golden/commands.jsonl");

/// Runs the golden transcript on `storage`, which must be empty; clears it afterwards.
pub async fn golden_transcript(storage: Arc<dyn Storage>) {
    let caps = storage.capabilities();
    golden_transcript_with(storage, caps).await;
}

/// [`golden_transcript`] without the lines that need a capability `caps` lacks.
pub async fn golden_transcript_with(storage: Arc<dyn Storage>, caps: Capabilities) {
    let tool = MemoryTool::new(storage.clone());
    let mut mismatches = Vec::new();
    for (number, line) in GOLDEN.lines().enumerate() {
        let step: Value = serde_json::from_str(line).expect("golden lines are JSON");
        let runs = match step.get("needs").and_then(Value::as_str) {
            None => true,
            Some("binary_files") => caps.binary_files,
            Some("non_nfc_names") => caps.non_nfc_names,
            Some(other) => panic!("golden line {}: unknown need {other:?}", number + 1),
        };
        if !runs {
            continue;
        }
        if let Some(path) = step.get("setup").and_then(Value::as_str) {
            let path = MemoryPath::parse(path).expect("golden setup paths are valid");
            let bytes = match (step.get("base64"), step.get("text")) {
                (Some(Value::String(b64)), _) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .expect("golden base64 is valid"),
                (_, Some(Value::String(text))) => text.clone().into_bytes(),
                _ => panic!("golden line {}: setup needs base64 or text", number + 1),
            };
            storage
                .write(&path, bytes, WriteMode::Overwrite)
                .await
                .unwrap_or_else(|e| panic!("{storage}: golden setup of {path} failed: {e}"));
            continue;
        }
        let name = step["case"].as_str().unwrap_or("?");
        let out = tool.execute(&step["input"]).await;
        let content = match &out.content {
            ToolContent::Text(text) => Value::String(text.clone()),
            ToolContent::Blocks(blocks) => Value::Array(blocks.clone()),
        };
        let expected = (
            &step["content"],
            step["is_error"].as_bool().unwrap_or(false),
        );
        if (&content, out.is_error) != expected {
            mismatches.push(format!(
                "golden line {} ({name}): input {}\n  got      {content} is_error={}\n  expected {} is_error={}",
                number + 1,
                step["input"],
                out.is_error,
                expected.0,
                expected.1
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{storage}: {} golden mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    clear(&*storage).await;
}

async fn clear(storage: &dyn Storage) {
    storage
        .delete(&MemoryPath::root())
        .await
        .unwrap_or_else(|e| panic!("{storage}: clearing the store failed: {e}"));
}

/// Many tasks `insert` into one file at once: every insert succeeds and none is lost
/// (compare-and-swap with retries in [`MemoryTool`]).
pub async fn concurrent_inserts_lose_nothing(storage: Arc<dyn Storage>) {
    const TASKS: usize = 8;
    const EACH: usize = 12;
    let tool = Arc::new(MemoryTool::new(storage.clone()));
    let path = "/memories/shared/log.md";
    let created = tool
        .execute(&serde_json::json!({"command": "create", "path": path, "file_text": "log\n"}))
        .await;
    assert!(!created.is_error, "{storage}: create failed: {created:?}");
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let tool = tool.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..EACH {
                let out = tool
                    .execute(&serde_json::json!({
                        "command": "insert", "path": path, "insert_line": 1,
                        "insert_text": format!("task {task} line {i}"),
                    }))
                    .await;
                assert!(!out.is_error, "insert failed: {out:?}");
            }
        }));
    }
    for task in tasks {
        task.await.expect("insert task panicked");
    }
    let file = storage
        .read(&MemoryPath::parse(path).expect("valid"))
        .await
        .expect("log exists");
    let text = String::from_utf8(file.contents).expect("utf-8");
    for task in 0..TASKS {
        for i in 0..EACH {
            let line = format!("task {task} line {i}\n");
            assert!(text.contains(&line), "{storage}: lost update {line:?}");
        }
    }
    assert_eq!(text.lines().count(), 1 + TASKS * EACH, "{storage}: {text}");
    clear(&*storage).await;
}

/// Many tasks `create` one path at once: exactly one wins, the others are told it exists.
pub async fn concurrent_creates_one_wins(storage: Arc<dyn Storage>) {
    let tool = Arc::new(MemoryTool::new(storage.clone()));
    let mut tasks = Vec::new();
    for task in 0..8 {
        let tool = tool.clone();
        tasks.push(tokio::spawn(async move {
            tool.execute(&serde_json::json!({
                "command": "create", "path": "/memories/race.md", "file_text": format!("winner {task}"),
            }))
            .await
        }));
    }
    let mut winners = 0;
    for task in tasks {
        let out = task.await.expect("create task panicked");
        if out.is_error {
            assert_eq!(
                out.text(),
                Some("Error: File /memories/race.md already exists"),
                "{storage}"
            );
        } else {
            winners += 1;
        }
    }
    assert_eq!(winners, 1, "{storage}: exactly one create must win");
    clear(&*storage).await;
}

/// The configurable limits: size and file count are enforced and refused writes change nothing.
pub async fn limits_are_enforced(storage: Arc<dyn Storage>) {
    let limits = crate::Limits {
        max_file_bytes: 10,
        max_files: 2,
        ..crate::Limits::default()
    };
    let tool = MemoryTool::new(storage.clone()).with_limits(limits);
    let run = |input: Value| {
        let tool = &tool;
        async move { tool.execute(&input).await }
    };
    let out = run(serde_json::json!({"command": "create", "path": "/memories/big.md", "file_text": "12345678901"})).await;
    assert_eq!(
        out.text(),
        Some("Error: /memories/big.md would be 11 bytes, over the limit of 10 bytes"),
        "{storage}"
    );
    assert!(
        storage
            .stat(&MemoryPath::parse("/memories/big.md").expect("valid"))
            .await
            .expect("stat")
            .is_none()
    );
    let out = run(serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "123456789"})).await;
    assert!(!out.is_error, "{storage}: {out:?}");
    let out = run(serde_json::json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "x"})).await;
    assert_eq!(
        out.text(),
        Some("Error: /memories/a.md would be 11 bytes, over the limit of 10 bytes"),
        "{storage}"
    );
    let out = run(serde_json::json!({"command": "str_replace", "path": "/memories/a.md", "old_str": "1", "new_str": "ab"})).await;
    assert!(
        !out.is_error,
        "{storage}: exactly at the limit is allowed: {out:?}"
    );
    let out =
        run(serde_json::json!({"command": "create", "path": "/memories/b.md", "file_text": "b"}))
            .await;
    assert!(!out.is_error, "{storage}: {out:?}");
    let out =
        run(serde_json::json!({"command": "create", "path": "/memories/c.md", "file_text": "c"}))
            .await;
    assert_eq!(
        out.text(),
        Some("Error: The memory store is full (2 files). Delete or consolidate files first."),
        "{storage}"
    );
    let file = storage
        .read(&MemoryPath::parse("/memories/a.md").expect("valid"))
        .await
        .expect("a.md");
    assert_eq!(
        file.contents, b"ab23456789",
        "{storage}: refused edits changed nothing"
    );
    clear(&*storage).await;
}

/// Views past 16,000 characters are truncated with a notice ([`long_views_truncate`]); the
/// 999,999-line limit holds ([`line_limit_holds`]).
pub async fn big_views(storage: Arc<dyn Storage>) {
    long_views_truncate(storage.clone()).await;
    line_limit_holds(storage).await;
}

/// A 29 KB file of 3,001 lines views truncated, and a range past the cut shows its end.
pub async fn long_views_truncate(storage: Arc<dyn Storage>) {
    let tool = MemoryTool::new(storage.clone());
    let path = MemoryPath::parse("/memories/big.txt").expect("valid");
    let text: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    storage
        .write(&path, text.into_bytes(), WriteMode::Create)
        .await
        .expect("write big.txt");
    let out = tool
        .execute(&serde_json::json!({"command": "view", "path": "/memories/big.txt"}))
        .await;
    let shown = out.text().expect("text");
    assert!(!out.is_error);
    // Numbered lines take 13 characters for 1..=9, 14 for 10..=99, 15 for 100..=999 and 16
    // after, plus one newline between lines: lines 1 to 1006 fit in 16,000 characters.
    assert!(
        shown.ends_with(
            "\n[Output truncated: showed lines 1-1006 of 3001. Use view_range to see the rest.]"
        ),
        "{storage}: {}",
        &shown[shown.len().saturating_sub(120)..]
    );
    let out = tool
        .execute(&serde_json::json!({"command": "view", "path": "/memories/big.txt", "view_range": [2990, -1]}))
        .await;
    assert!(
        out.text()
            .expect("text")
            .ends_with("  3000\tline 3000\n  3001\t"),
        "{storage}"
    );
    clear(&*storage).await;
}

/// A file of more than 999,999 lines (1,000,000 empty ones, written through the storage: the
/// tool's size limit keeps it from creating one) is refused by `view`.
pub async fn line_limit_holds(storage: Arc<dyn Storage>) {
    let tool = MemoryTool::new(storage.clone());
    let many = MemoryPath::parse("/memories/many.txt").expect("valid");
    storage
        .write(&many, vec![b'\n'; 999_999], WriteMode::Create)
        .await
        .expect("write many.txt");
    let out = tool
        .execute(&serde_json::json!({"command": "view", "path": "/memories/many.txt"}))
        .await;
    assert_eq!(
        out.text(),
        Some("File /memories/many.txt exceeds maximum line limit of 999,999 lines."),
        "{storage}"
    );
    assert!(out.is_error);
    clear(&*storage).await;
}

/// Runs every command-level check on `storage`, which must be empty.
/// The checks that need a capability the store lacks ([`Storage::capabilities`]) are left out.
pub async fn run_all(storage: Arc<dyn Storage>) {
    let caps = storage.capabilities();
    run_all_with(storage, caps).await;
}

/// [`run_all`] for a store with fewer [`Capabilities`]: golden lines that need more are left
/// out, and the 999,999-line check needs `large_files`.
pub async fn run_all_with(storage: Arc<dyn Storage>, caps: Capabilities) {
    golden_transcript_with(storage.clone(), caps).await;
    concurrent_inserts_lose_nothing(storage.clone()).await;
    concurrent_creates_one_wins(storage.clone()).await;
    limits_are_enforced(storage.clone()).await;
    long_views_truncate(storage.clone()).await;
    if caps.large_files {
        line_limit_holds(storage).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InMemoryStorage;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn command_suite_on_in_memory_storage() {
        run_all(Arc::new(InMemoryStorage::new())).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn both_tiers_on_in_memory_storage() {
        crate::conformance::run_all(Arc::new(InMemoryStorage::new())).await;
    }
}
