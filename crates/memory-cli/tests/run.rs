//! `memory run` against a fake Messages API on a loopback port: the real binary, a real store.

use std::process::{Command, Output};
use std::time::Duration;

use memory_runner::testing::{FakeApi, Reply, tool_use};
use serde_json::json;

const MEMORY: &str = env!("CARGO_BIN_EXE_memory");

/// Runs `memory run ARGS` with the fake API's URL and a test key, off the async runtime so the
/// fake keeps serving.
async fn memory_run(api: Option<&FakeApi>, args: &[&str]) -> Output {
    let mut cmd = Command::new(MEMORY);
    cmd.arg("run")
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("RUST_LOG", "warn");
    if let Some(api) = api {
        cmd.env("ANTHROPIC_API_KEY", "sk-cli-test")
            .env("ANTHROPIC_BASE_URL", api.url());
    }
    let child = tokio::task::spawn_blocking(move || cmd.output());
    tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("memory run finished in time")
        .expect("join")
        .expect("start memory")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(feature = "fs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_leaves_the_files_claude_wrote_in_the_store() {
    let api = FakeApi::start([
        Reply::message(tool_use(
            Some("Let me check my memory."),
            &[("toolu_a", "memory", json!({"command": "view", "path": "/memories"}))],
        )),
        Reply::message(tool_use(
            None,
            &[
                (
                    "toolu_b",
                    "memory",
                    json!({"command": "create", "path": "/memories/preferences.md", "file_text": "- units: metric\n"}),
                ),
                (
                    "toolu_c",
                    "memory",
                    json!({"command": "insert", "path": "/memories/preferences.md", "insert_line": 1, "insert_text": "- tone: brief"}),
                ),
                (
                    "toolu_d",
                    "memory",
                    json!({"command": "delete", "path": "/memories/missing.md"}),
                ),
            ],
        )),
        Reply::message(memory_runner::testing::end_turn(
            "Noted: metric units, brief answers.",
        )),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out = memory_run(
        Some(&api),
        &[
            "--store",
            store.to_str().unwrap(),
            "--system",
            "Be brief.",
            "--max-iterations",
            "5",
            "I like metric units and brief answers.",
        ],
    )
    .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stdout,
        "Let me check my memory.\nNoted: metric units, brief answers.\n"
    );
    assert_eq!(
        stderr,
        "[memory] view /memories: ok\n\
         [memory] create /memories/preferences.md (16 bytes): ok\n\
         [memory] insert /memories/preferences.md at line 1: ok\n\
         [memory] delete /memories/missing.md: error: The path /memories/missing.md does not exist\n"
    );
    assert_eq!(
        std::fs::read_to_string(store.join("memories/preferences.md")).unwrap(),
        "- units: metric\n- tone: brief\n"
    );

    let requests = api.requests();
    assert_eq!(requests.len(), 3);
    let first = requests[0].json();
    assert_eq!(first["model"], "claude-sonnet-4-5");
    assert_eq!(first["system"], "Be brief.");
    assert_eq!(
        first["tools"],
        json!([{"type": "memory_20250818", "name": "memory"}])
    );
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "I like metric units and brief answers."}]}])
    );
    assert_eq!(requests[0].header("x-api-key"), Some("sk-cli-test"));
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some("context-management-2025-06-27")
    );
    let third = requests[2].json();
    let results = third["messages"][4]["content"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_b", "toolu_c", "toolu_d"]);
    assert_eq!(results[2]["is_error"], true);
    assert!(results[0].get("is_error").is_none());
}

#[tokio::test]
async fn a_missing_api_key_is_a_clear_error_before_anything_happens() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out = memory_run(None, &["--store", store.to_str().unwrap(), "hello"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("memory: ANTHROPIC_API_KEY is not set"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        !store.exists(),
        "the store must not be created without a key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_iterations_stops_a_runaway_loop() {
    let turns: Vec<Reply> = (0..6)
        .map(|n| {
            Reply::message(tool_use(
                Some(&format!("turn {n}")),
                &[(
                    &format!("toolu_{n}"),
                    "memory",
                    json!({"command": "view", "path": "/memories"}),
                )],
            ))
        })
        .collect();
    let api = FakeApi::start(turns).await;
    let out = memory_run(
        Some(&api),
        &["--store", "mem:", "--max-iterations", "2", "loop forever"],
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(api.requests().len(), 2);
    assert_eq!(text(&out.stdout), "turn 0\nturn 1\n");
    assert_eq!(
        stderr.matches("[memory] view /memories: ok").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("stopped after 2 requests (--max-iterations)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_error_exits_1_with_the_apis_message() {
    let api = FakeApi::start([Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    )])
    .await;
    let out = memory_run(Some(&api), &["--store", "mem:", "hello"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("401 (authentication_error): invalid x-api-key"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_bad_store_exits_2_before_any_request() {
    let api = FakeApi::start([]).await;
    let out = memory_run(Some(&api), &["--store", "ftp://nowhere", "hello"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown store scheme `ftp:`"), "{stderr}");
    assert!(api.requests().is_empty());
}
