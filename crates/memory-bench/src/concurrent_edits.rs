//! The workload of the group-commit benches (memory-bench's on SQLite, memory-postgres' on
//! PostgreSQL): `tasks` concurrent tasks, each `str_replace`-ing in a file of its own through
//! one `MemoryTool`, so the tasks never conflict and every edit is one committed write.

use std::hint::black_box;
use std::sync::Arc;

use memory_core::{MemoryHandler, MemoryTool, Storage};
use serde_json::json;

/// The writer counts the benches compare.
pub const TASKS: [usize; 2] = [1, 8];

/// Edits each task makes per timed round.
pub const EDITS_PER_ROUND: usize = 8;

/// Creates each task's file, `/memories/task-N.md`, holding `counter: a`.
///
/// # Panics
/// When a create fails: the bench cannot measure anything then.
pub async fn seed<S: Storage + 'static>(tool: &MemoryTool<S>, tasks: usize) {
    for task in 0..tasks {
        let out = tool
            .execute(&json!({
                "command": "create",
                "path": format!("/memories/task-{task}.md"),
                "file_text": "counter: a\n",
            }))
            .await;
        assert!(!out.is_error, "seed: {out:?}");
    }
}

/// One timed round: `tasks` tasks at once, each making [`EDITS_PER_ROUND`] edits to its own
/// file (`a` to `b` and back, so the file ends as it began).
///
/// # Panics
/// When an edit fails or a task panics.
pub async fn round<S: Storage + 'static>(tool: &Arc<MemoryTool<S>>, tasks: usize) {
    let mut running = Vec::with_capacity(tasks);
    for task in 0..tasks {
        let tool = Arc::clone(tool);
        running.push(tokio::spawn(async move {
            let path = format!("/memories/task-{task}.md");
            for _ in 0..EDITS_PER_ROUND / 2 {
                for (old, new) in [("a", "b"), ("b", "a")] {
                    let out = tool
                        .execute(&json!({
                            "command": "str_replace", "path": path,
                            "old_str": format!("counter: {old}"),
                            "new_str": format!("counter: {new}"),
                        }))
                        .await;
                    assert!(!out.is_error, "edit: {out:?}");
                    black_box(out);
                }
            }
        }));
    }
    for task in running {
        task.await.expect("an edit task");
    }
}
