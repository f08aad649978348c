//! The example's two runs against a fake Messages API: what the first saves, the second reads.

use std::process::Command;
use std::time::Duration;

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use serde_json::json;

const PREFS: &str = "- metric units\n- one or two sentences\n";

/// Runs the example's two conversations against a scripted API with `env` set; checks what
/// both runs print and that the second learned the preference from the store.
async fn two_runs(env: &[(&str, &std::ffi::OsStr)]) {
    let prefs = PREFS;
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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_example-remembering-agent"));
    cmd.env("ANTHROPIC_API_KEY", "sk-example-test")
        .env("ANTHROPIC_BASE_URL", api.url())
        .env_remove("AGENT_MEMORY_KEY")
        .envs(env.iter().copied());
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

    let requests = api.requests();
    assert_eq!(requests.len(), 5);
    // The second run starts a new conversation: one user message, no memory of run 1 in it...
    let fourth = requests[3].json();
    assert_eq!(fourth["messages"].as_array().unwrap().len(), 1);
    // ...and learns the preference from the store.
    let fifth = requests[4].json();
    let result = &fifth["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "t3");
    assert_eq!(
        result["content"],
        "Here's the content of /memories/user.md with line numbers:\n     1\t- metric units\n     2\t- one or two sentences\n     3\t"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_run_sees_what_the_first_saved() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("agent-memory");
    two_runs(&[("AGENT_MEMORY", folder.as_os_str())]).await;
    assert_eq!(
        std::fs::read_to_string(folder.join("memories/user.md")).unwrap(),
        PREFS
    );
}

/// The store is configuration: an encrypted SQLite file instead of a folder, same program.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_store_url_and_a_key_file_work_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent-memory.db");
    let key = dir.path().join("memory.key");
    memory_runner::encrypted::generate_key_file(&key).unwrap();
    let url = format!("sqlite:{}", db.display());
    two_runs(&[
        ("AGENT_MEMORY", url.as_ref()),
        ("AGENT_MEMORY_KEY", key.as_os_str()),
    ])
    .await;
    assert!(db.exists());
    // Neither the database nor its write-ahead log holds the preference in the clear.
    let plain = b"metric units";
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes.windows(plain.len()).any(|w| w == plain),
            "{} holds the preference in the clear",
            path.display()
        );
    }
}
