//! The example's two runs against a fake Messages API: what the first saves, the second reads.

use std::process::Command;
use std::time::Duration;

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_run_sees_what_the_first_saved() {
    let prefs = "- metric units\n- one or two sentences\n";
    let api = FakeApi::start([
        // Run 1: look, then save the preference.
        Reply::message(tool_use(
            None,
            &[(
                "t1",
                "memory",
                json!({"command": "view", "path": "/memories"}),
            )],
        )),
        Reply::message(tool_use(
            None,
            &[(
                "t2",
                "memory",
                json!({"command": "create", "path": "/memories/user.md", "file_text": prefs}),
            )],
        )),
        Reply::message(end_turn("Got it.")),
        // Run 2: a new conversation; read the memory first.
        Reply::message(tool_use(
            None,
            &[(
                "t3",
                "memory",
                json!({"command": "view", "path": "/memories/user.md"}),
            )],
        )),
        Reply::message(end_turn("42.195 km; about 10 to 15 °C.")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("agent-memory");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_example-remembering-agent"));
    cmd.env("ANTHROPIC_API_KEY", "sk-example-test")
        .env("ANTHROPIC_BASE_URL", api.url())
        .env("AGENT_MEMORY", &folder);
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || cmd.output()),
    )
    .await
    .unwrap()
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Claude: Got it."), "{stdout}");
    assert!(stdout.contains("Claude: 42.195 km"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(folder.join("memories/user.md")).unwrap(),
        prefs
    );

    let requests = api.requests();
    assert_eq!(requests.len(), 5);
    // The second run starts a new conversation: one user message, no memory of run 1 in it...
    let fourth = requests[3].json();
    assert_eq!(fourth["messages"].as_array().unwrap().len(), 1);
    // ...and learns the preference from the folder.
    let fifth = requests[4].json();
    let result = &fifth["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "t3");
    assert_eq!(
        result["content"],
        "Here's the content of /memories/user.md with line numbers:\n     1\t- metric units\n     2\t- one or two sentences\n     3\t"
    );
}
