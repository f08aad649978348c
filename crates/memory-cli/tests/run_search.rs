//! `memory run --search`: Claude gets the `memory_search` tool beside `memory`, over the same
//! store, against a fake Messages API on a loopback port.

mod common;

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use serde_json::json;

use common::run::memory_run;

#[cfg(feature = "fs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_flag_adds_the_search_tool_over_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(store.join("memories/ops")).unwrap();
    std::fs::write(
        store.join("memories/ops/deploy.md"),
        "# Deploys\nRoll back with make rollback.\n",
    )
    .unwrap();
    let api = FakeApi::start(vec![
        Reply::message(tool_use(
            None,
            &[
                (
                    "toolu_a",
                    "memory",
                    json!({"command": "create", "path": "/memories/new.md", "file_text": "rollback drill on friday\n"}),
                ),
                ("toolu_b", "memory_search", json!({"query": "rollback"})),
                ("toolu_c", "memory_search", json!({"query": "\"unclosed"})),
            ],
        )),
        Reply::message(end_turn("Found it.")),
    ])
    .await;
    let out = memory_run(
        Some(&api),
        &[
            "--store",
            store.to_str().unwrap(),
            "--search",
            "--no-stream",
            "Where is the rollback note?",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = api.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    let tools = first["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["memory", "memory_search"], "{first}");
    assert_eq!(tools[1]["input_schema"]["required"], json!(["query"]));
    assert!(
        tools[1]["description"]
            .as_str()
            .unwrap()
            .contains("instead of viewing folder after folder")
    );
    let second = requests[1].json();
    let results = second["messages"][2]["content"].as_array().unwrap();
    assert_eq!(results[1]["tool_use_id"], "toolu_b");
    let found = results[1]["content"].to_string();
    // The search ran after the create of the same turn, and found both files.
    assert!(found.contains("/memories/ops/deploy.md  line 2"), "{found}");
    assert!(found.contains("/memories/new.md  line 1"), "{found}");
    assert!(results[1].get("is_error").is_none(), "{}", results[1]);
    assert_eq!(results[2]["is_error"], true);
    assert!(results[2]["content"].to_string().contains("invalid query"));
}

#[cfg(feature = "fs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_flag_only_the_memory_tool_is_offered() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let api = FakeApi::start(vec![Reply::message(end_turn("Hi."))]).await;
    let out = memory_run(Some(&api), &["--store", store.to_str().unwrap(), "Hello"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = api.requests()[0].json();
    assert_eq!(
        first["tools"],
        json!([{"type": "memory_20250818", "name": "memory"}])
    );
}
