//! `memory run --mount` against a fake Messages API on a loopback port: the real binary, two
//! versioned stores of one database mounted read-only and read-write.

use std::process::{Command, Output};
use std::time::Duration;

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use memory_store::{Actor, CreateStore, ListVersions, MemoryStores, Operation, View};
use serde_json::json;

const MEMORY: &str = env!("CARGO_BIN_EXE_memory");

async fn memory_run(api: &FakeApi, args: &[String]) -> Output {
    let mut cmd = Command::new(MEMORY);
    cmd.arg("run")
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .env_remove("MEMORY_SESSION_ID")
        .env_remove("MEMORY_STORE_API_KEY")
        .env("ANTHROPIC_API_KEY", "sk-cli-test")
        .env("ANTHROPIC_BASE_URL", api.url())
        .env("RUST_LOG", "warn");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_with_two_mounts_leaves_versions_by_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let engine = MemoryStores::open(&db).await.unwrap();
    let store = |name: &str, description: &str| CreateStore {
        name: name.into(),
        description: Some(description.into()),
        ..Default::default()
    };
    let handbook = engine
        .create_store(store("Team Handbook", "How the team works."))
        .await
        .unwrap()
        .id;
    let notes = engine
        .create_store(store("User Notes", "What this user asked to keep."))
        .await
        .unwrap()
        .id;
    engine
        .create_memory(&handbook, "/style.md", "Answer in metric units.\n", None)
        .await
        .unwrap();

    let api = FakeApi::start([
        Reply::message(tool_use(
            Some("Let me look."),
            &[
                ("toolu_1", "memory", json!({"command": "view", "path": "/memories"})),
                (
                    "toolu_2",
                    "memory",
                    json!({"command": "str_replace", "path": "/memories/team-handbook/style.md", "old_str": "metric", "new_str": "imperial"}),
                ),
            ],
        )),
        Reply::message(tool_use(
            None,
            &[
                (
                    "toolu_3",
                    "memory",
                    json!({"command": "create", "path": "/memories/user-notes/prefs.md", "file_text": "- units: metric\n"}),
                ),
                (
                    "toolu_4",
                    "memory",
                    json!({"command": "insert", "path": "/memories/user-notes/prefs.md", "insert_line": 1, "insert_text": "- tone: brief"}),
                ),
                (
                    "toolu_5",
                    "memory",
                    json!({"command": "create", "path": "/memories/prefs.md", "file_text": "x"}),
                ),
            ],
        )),
        Reply::message(end_turn("Noted.")),
    ])
    .await;
    let db = db.display();
    let out = memory_run(
        &api,
        &[
            "--mount".into(),
            format!("Team Handbook=store+sqlite:{db}#{handbook}:ro"),
            "--mount".into(),
            format!("User Notes=store+sqlite:{db}#{notes}"),
            "--session-id".into(),
            "sesn_cli_test".into(),
            "--system".into(),
            "Be brief.".into(),
            "Remember that I like metric units and brief answers.".into(),
        ],
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout), "Let me look.\nNoted.\n");
    assert!(
        stderr.contains("[memory] str_replace /memories/team-handbook/style.md: error: Cannot change /memories/team-handbook/style.md: /memories/team-handbook is read-only"),
        "{stderr}"
    );

    // The system prompt: the user's, then the mount note.
    let requests = api.requests();
    assert_eq!(requests.len(), 3);
    let first = requests[0].json();
    assert_eq!(
        first["system"],
        "Be brief.\n\n\
         Memory stores are mounted in the memory tool's /memories directory, one folder per store:\n\
         - /memories/team-handbook (read-only): \"Team Handbook\". How the team works.\n\
         - /memories/user-notes (read-write): \"User Notes\". What this user asked to keep.\n\
         Files can be created and changed only inside the read-write folders; the read-only ones can be viewed."
    );
    // What Claude saw of `view /memories`, and of the writes outside the mounts.
    let second = requests[1].json();
    let results = second["messages"][2]["content"].as_array().unwrap();
    assert_eq!(
        results[0]["content"],
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n\
         24B\t/memories\n\
         24B\t/memories/team-handbook/\n\
         24B\t/memories/team-handbook/style.md\n\
         0B\t/memories/user-notes/"
    );
    let third = requests[2].json();
    let results = third["messages"][4]["content"].as_array().unwrap();
    assert_eq!(results[2]["is_error"], true);
    assert!(
        results[2]["content"].as_str().unwrap().starts_with(
            "Error: Cannot change /memories/prefs.md: it is outside every mounted folder"
        ),
        "{}",
        results[2]
    );

    // The versions: two in the notes store, by the session; none new in the handbook.
    let versions = engine
        .list_versions(
            &notes,
            ListVersions {
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data;
    let seen: Vec<(Operation, Option<&str>, Option<&Actor>)> = versions
        .iter()
        .rev()
        .map(|v| (v.operation, v.content.as_deref(), v.created_by.as_ref()))
        .collect();
    let me = Actor::session("sesn_cli_test");
    assert_eq!(
        seen,
        [
            (Operation::Created, Some("- units: metric\n"), Some(&me)),
            (
                Operation::Modified,
                Some("- units: metric\n- tone: brief\n"),
                Some(&me)
            ),
        ]
    );
    let handbook_versions = engine
        .list_versions(&handbook, ListVersions::default())
        .await
        .unwrap()
        .data;
    assert_eq!(handbook_versions.len(), 1);
    assert_eq!(handbook_versions[0].created_by, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_that_cannot_open_stops_before_sending() {
    let api = FakeApi::start([Reply::message(end_turn("never sent"))]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let out = memory_run(
        &api,
        &[
            "--mount".into(),
            format!("notes=store+sqlite:{}#memstore_missing", db.display()),
            "hello".into(),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cannot mount `notes`"), "{stderr}");
    assert!(stderr.contains("no memory-stores database"), "{stderr}");
    assert!(api.requests().is_empty());
    let out = memory_run(&api, &["--mount".into(), "notes".into(), "hello".into()]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("NAME=URL[:ro]"));
}

/// `memory mcp --mount`: the tool description carries the mount note, and the read-only mount
/// refuses a write.
#[cfg(feature = "fs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_with_mounts_describes_them() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let engine = MemoryStores::open(&db).await.unwrap();
    let handbook = engine
        .create_store(CreateStore {
            name: "Team Handbook".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let notes_dir = dir.path().join("notes");
    let mut child = Command::new(MEMORY)
        .arg("mcp")
        .arg("--mount")
        .arg(format!(
            "Team Handbook=store+sqlite:{}#{handbook}:ro",
            db.display()
        ))
        .arg("--mount")
        .arg(format!("Notes={}", notes_dir.display()))
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_SESSION_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let answers = tokio::task::spawn_blocking(move || {
        let messages = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory", "arguments": {"command": "create", "path": "/memories/team-handbook/x.md", "file_text": "x"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "memory", "arguments": {"command": "create", "path": "/memories/notes/x.md", "file_text": "x"}}}),
        ];
        for m in messages {
            writeln!(stdin, "{m}").unwrap();
        }
        let mut answers = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let value: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            if value.get("id").is_some() {
                answers.push(value);
            }
            if answers.len() == 4 {
                break;
            }
        }
        drop(stdin);
        answers
    });
    let answers = tokio::time::timeout(Duration::from_secs(30), answers)
        .await
        .expect("memory mcp answered in time")
        .unwrap();
    let _ = child.wait();
    let description = answers[1]["result"]["tools"][0]["description"]
        .as_str()
        .unwrap();
    assert!(
        description.ends_with(
            "Memory stores are mounted in the memory tool's /memories directory, one folder per store:\n\
             - /memories/team-handbook (read-only): \"Team Handbook\".\n\
             - /memories/notes (read-write): \"Notes\".\n\
             Files can be created and changed only inside the read-write folders; the read-only ones can be viewed."
        ),
        "{description}"
    );
    assert_eq!(answers[2]["result"]["isError"], true, "{}", answers[2]);
    assert_eq!(
        answers[2]["result"]["content"][0]["text"],
        "Error: Cannot change /memories/team-handbook/x.md: /memories/team-handbook is read-only"
    );
    assert_ne!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert_eq!(
        std::fs::read_to_string(notes_dir.join("memories/x.md")).unwrap(),
        "x"
    );
}
