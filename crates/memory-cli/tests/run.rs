//! `memory run` against a fake Messages API on a loopback port: the real binary, a real store.

mod common;

use memory_runner::testing::{FakeApi, Reply, tool_use};
use serde_json::json;

use common::MEMORY;
use common::run::memory_run;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The script of `run_leaves_the_files_claude_wrote_in_the_store`.
fn preferences_script() -> Vec<Reply> {
    vec![
        Reply::message(tool_use(
            Some("Let me check my memory."),
            &[(
                "toolu_a",
                "memory",
                json!({"command": "view", "path": "/memories"}),
            )],
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
    ]
}

#[cfg(feature = "fs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_leaves_the_files_claude_wrote_in_the_store() {
    // Streamed (the default) and not: the same output, the same store, the same requests.
    for streamed in [true, false] {
        run_preferences(streamed).await;
    }
}

#[cfg(feature = "fs")]
async fn run_preferences(streamed: bool) {
    let api = FakeApi::start(preferences_script()).await;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut args = vec![
        "--store",
        store.to_str().unwrap(),
        "--system",
        "Be brief.",
        "--max-iterations",
        "5",
    ];
    if !streamed {
        args.push("--no-stream");
    }
    args.push("I like metric units and brief answers.");
    let out = memory_run(Some(&api), &args).await;
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
    // The memory tool is generally available: no beta header, no context editing.
    assert_eq!(requests[0].header("anthropic-beta"), None);
    assert!(first.get("context_management").is_none());
    assert_eq!(first.get("stream").is_some(), streamed);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_error_is_printed_with_its_status_type_message_and_request_id() {
    let api = FakeApi::start([
        Reply::error(400, "invalid_request_error", "max_tokens: too large")
            .header("request-id", "req_011CXyz"),
    ])
    .await;
    let out = memory_run(Some(&api), &["--store", "mem:", "hello"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "memory: the Messages API answered 400 (invalid_request_error): max_tokens: too large (request-id req_011CXyz)\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_way_fails_the_run_and_says_so() {
    let reply = memory_runner::testing::end_turn("A long answer that never ends");
    let events = memory_runner::testing::stream_events(&reply, 5);
    let api = FakeApi::start([
        Reply::cut(events[..5].to_vec()).header("request-id", "req_cut"),
        Reply::message(reply),
    ])
    .await;
    let out = memory_run(Some(&api), &["--store", "mem:", "hello"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "memory: the streamed reply from the Messages API did not complete (request-id req_cut): \
             the reply stream was cut after 5 events, before message_stop: the reply is incomplete"
        ),
        "{stderr}"
    );
    // What had arrived was printed, then the line was ended; nothing was retried.
    assert_eq!(text(&out.stdout), "A long answer t\n");
    assert_eq!(api.requests().len(), 1);
}

/// A streamed request answered with a plain JSON error body (a proxy ignoring `"stream":
/// true`) is reported as that, with the API's error in it, not as a cut stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_json_answer_to_the_stream_is_reported_as_such() {
    let api = FakeApi::start([
        Reply::error(200, "overloaded_error", "Overloaded").header("request-id", "req_plain")
    ])
    .await;
    let out = memory_run(Some(&api), &["--store", "mem:", "hello"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "memory: the Messages API answered a streamed request with status 200 and content-type \
         application/json, not an event stream: the API's error overloaded_error: Overloaded \
         (request-id req_plain)\n"
    );
    assert_eq!(api.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_editing_flags_send_the_edits_and_their_betas() {
    for (flags, edits, beta) in [
        (
            vec!["--clear-tool-uses"],
            json!([{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]),
            "context-management-2025-06-27",
        ),
        (
            vec!["--compact"],
            json!([{"type": "compact_20260112"}]),
            "compact-2026-01-12",
        ),
        (
            vec!["--clear-tool-uses", "--compact"],
            json!([
                {"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]},
                {"type": "compact_20260112"}
            ]),
            "context-management-2025-06-27,compact-2026-01-12",
        ),
    ] {
        let api = FakeApi::start([Reply::message(memory_runner::testing::end_turn("ok"))]).await;
        let mut args = vec!["--store", "mem:"];
        args.extend(&flags);
        args.push("hello");
        let out = memory_run(Some(&api), &args).await;
        assert!(out.status.success(), "{}", text(&out.stderr));
        let sent = &api.requests()[0];
        assert_eq!(sent.json()["context_management"], json!({ "edits": edits }));
        assert_eq!(sent.header("anthropic-beta"), Some(beta));
    }
}

/// `memory run` sends the official SDKs' `anthropic-version: 2026-10-21` and no sampling
/// parameter (that version refuses `temperature`, `top_p` and `top_k`);
/// `--anthropic-version` sends another; one that cannot be a header exits 2 before any request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_anthropic_version_is_the_sdks_unless_anthropic_version_says() {
    for (flags, version) in [
        (vec![], "2026-10-21"),
        (vec!["--anthropic-version", "2023-06-01"], "2023-06-01"),
    ] {
        for stream in [true, false] {
            let api =
                FakeApi::start([Reply::message(memory_runner::testing::end_turn("ok"))]).await;
            let mut args = vec!["--store", "mem:"];
            args.extend(&flags);
            if !stream {
                args.push("--no-stream");
            }
            args.push("hello");
            let out = memory_run(Some(&api), &args).await;
            assert!(out.status.success(), "{}", text(&out.stderr));
            let sent = &api.requests()[0];
            assert_eq!(sent.header("anthropic-version"), Some(version));
            let body = sent.json();
            for refused in ["temperature", "top_p", "top_k"] {
                assert!(body.get(refused).is_none(), "{refused} in {body}");
            }
        }
    }
    let api = FakeApi::start([]).await;
    let out = memory_run(
        Some(&api),
        &["--store", "mem:", "--anthropic-version", "", "hello"],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("anthropic-version"), "{stderr}");
    assert!(api.requests().is_empty());
    let help = std::process::Command::new(MEMORY)
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = text(&help.stdout);
    assert!(
        help.contains("--anthropic-version <DATE>") && help.contains("2026-10-21"),
        "{help}"
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
