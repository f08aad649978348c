//! `memory run --mount` against a fake Messages API on a loopback port: the real binary, two
//! versioned stores of one database mounted read-only and read-write.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use memory_store::{Actor, CreateStore, ListVersions, MemoryStores, Operation, View};
use serde_json::json;

mod common;

use common::MEMORY;
use common::serve::http;

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
            "--mount-instructions".into(),
            "user-notes=Keep one file per topic.\nBe brief.".into(),
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
        stderr.contains(&format!(
            "memory: mounted \"Team Handbook\" (store {handbook}) at /memories/team-handbook, read-only\n\
             memory: mounted \"User Notes\" (store {notes}) at /memories/user-notes, read-write\n"
        )),
        "{stderr}"
    );
    // The session id was given: not printed.
    assert!(!stderr.contains("session id"), "{stderr}");
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
         - /memories/user-notes (read-write): \"User Notes\". What this user asked to keep. Instructions: Keep one file per topic. Be brief.\n\
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

/// A `memory serve` on a free loopback port over `db`, stopped when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(db: &Path) -> Server {
        let mut child = Command::new(MEMORY)
            .args(["serve", "--listen", "127.0.0.1:0", "--db"])
            .arg(db)
            .env_remove("MEMORY_STORES_DB")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr =
            common::serve::listening_address(&mut child).unwrap_or_else(|first| panic!("{first}"));
        Server { child, addr }
    }

    /// Creates a store; its id.
    fn create_store(&self, name: &str, description: &str) -> String {
        let body = json!({"name": name, "description": description}).to_string();
        let store = http(&self.addr, "POST", "/v1/memory_stores", &body);
        store["id"].as_str().unwrap().to_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `memory mcp ARGS`: sends `calls` (tool name and arguments) after the handshake and `tools/list`;
/// the tools/list answer, the calls' answers, standard error and the exit status. A server
/// that exits at start gives no answers.
fn mcp(
    args: &[String],
    calls: &[(&str, serde_json::Value)],
) -> (Vec<serde_json::Value>, String, ExitStatus) {
    let mut child = Command::new(MEMORY)
        .arg("mcp")
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_SESSION_ID")
        .env_remove("MEMORY_STORE_API_KEY")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut messages = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    ];
    for (i, (tool, call)) in calls.iter().enumerate() {
        messages.push(json!({"jsonrpc": "2.0", "id": 3 + i, "method": "tools/call", "params": {"name": tool, "arguments": call}}));
    }
    let expected = 2 + calls.len();
    let reader = std::thread::spawn(move || {
        // Writes fail once a server that refused its arguments has exited: then no answers.
        for m in messages {
            if writeln!(stdin, "{m}").is_err() {
                return Vec::new();
            }
        }
        let mut answers = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if value.get("id").is_some() {
                answers.push(value);
            }
            if answers.len() == expected {
                break;
            }
        }
        drop(stdin);
        answers
    });
    let status = common_wait(&mut child, Duration::from_secs(60));
    let answers = reader.join().unwrap();
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    let answers = answers.into_iter().skip(1).collect();
    (answers, err, status)
}

/// Waits for `child`, killing it after `limit`.
fn common_wait(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("memory mcp did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The done-when of the mounts issue over a running `memory serve`: `--mount
/// store+http://...#<id of "Team Handbook">` shows /memories/team-handbook, the note names
/// it with its description and the instructions given on the command line, and the folder
/// and the generated session id are printed at start.
#[test]
fn mcp_mounts_a_served_store_at_the_slug_of_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("stores.db"));
    let handbook = server.create_store("Team Handbook", "How the team works.");
    http(
        &server.addr,
        "POST",
        &format!("/v1/memory_stores/{handbook}/memories"),
        r#"{"path":"/style.md","content":"Metric units.\n"}"#,
    );
    let (answers, stderr, status) = mcp(
        &[
            "--mount".into(),
            format!("store+http://{}#{handbook}", server.addr),
            "--mount-instructions".into(),
            "team-handbook=Check it before answering.".into(),
        ],
        &[
            ("memory", json!({"command": "view", "path": "/memories"})),
            (
                "memory",
                json!({"command": "create", "path": "/memories/team-handbook/new.md", "file_text": "x"}),
            ),
        ],
    );
    assert!(status.success(), "{stderr}");
    let description = answers[0]["result"]["tools"][0]["description"]
        .as_str()
        .unwrap();
    assert!(
        description.ends_with(
            "Memory stores are mounted in the memory tool's /memories directory, one folder per store:\n\
             - /memories/team-handbook (read-write): \"Team Handbook\". How the team works. Instructions: Check it before answering.\n\
             Files can be created and changed only inside the read-write folders; the read-only ones can be viewed."
        ),
        "{description}"
    );
    let view = answers[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(view.contains("\t/memories/team-handbook/\n"), "{view}");
    assert!(
        view.contains("\t/memories/team-handbook/style.md"),
        "{view}"
    );
    assert_ne!(answers[2]["result"]["isError"], true, "{}", answers[2]);
    assert!(
        stderr.contains(&format!(
            "memory: mounted \"Team Handbook\" (store {handbook}) at /memories/team-handbook, read-write\n"
        )),
        "{stderr}"
    );
    // Without RUST_LOG=info: the generated session id, which the new version names.
    let session = stderr
        .lines()
        .find_map(|l| l.strip_prefix("memory: session id "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{stderr}"))
        .to_owned();
    assert!(session.starts_with("sesn_"), "{session}");
    let versions = http(
        &server.addr,
        "GET",
        &format!("/v1/memory_stores/{handbook}/memory_versions"),
        "",
    );
    assert_eq!(
        versions["data"][0]["created_by"]["session_id"], session,
        "{versions}"
    );

    // NAME= overrides the folder; the note still names the store.
    let (answers, stderr, status) = mcp(
        &[
            "--mount".into(),
            format!("hb=store+http://{}#{handbook}:ro", server.addr),
        ],
        &[],
    );
    assert!(status.success(), "{stderr}");
    let description = answers[0]["result"]["tools"][0]["description"]
        .as_str()
        .unwrap();
    assert!(
        description
            .contains("- /memories/hb (read-only): \"Team Handbook\". How the team works.\n"),
        "{description}"
    );
}

/// An archived store is refused at mount time, naming it, in every URL form; nothing is
/// served.
#[test]
fn mounting_an_archived_store_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let server = Server::start(&db);
    let old = server.create_store("Old Handbook", "Last year's.");
    let archived = http(
        &server.addr,
        "POST",
        &format!("/v1/memory_stores/{old}/archive"),
        "",
    );
    assert!(archived["archived_at"].is_string(), "{archived}");
    for url in [
        format!("store+http://{}#{old}", server.addr),
        format!("store+http://{}#{old}:ro", server.addr),
        format!("old=store+sqlite:{}#{old}", db.display()),
    ] {
        let (answers, stderr, status) = mcp(&["--mount".into(), url.clone()], &[]);
        assert_eq!(status.code(), Some(2), "{url}: {stderr}");
        assert!(answers.is_empty(), "{answers:?}");
        assert!(
            stderr.contains(&format!(
                "the memory store {old} (\"Old Handbook\") is archived and cannot be mounted"
            )),
            "{url}: {stderr}"
        );
    }
}

/// `--session-id` follows memory-store's one rule whatever the store: a bad one is a usage
/// error before anything opens.
#[test]
fn a_bad_session_id_exits_2_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let server = Server::start(&db);
    let notes = server.create_store("Notes", "");
    let mut stores = vec![
        format!("store+sqlite:{}#{notes}", db.display()),
        format!("store+http://{}#{notes}", server.addr),
        "mem:".to_owned(),
        dir.path().join("plain").display().to_string(),
    ];
    // Refused before anything is opened: no database needs to listen there.
    stores.push(format!("store+postgres://u@127.0.0.1:9/db#{notes}"));
    for store in &stores {
        for how in ["--store", "--mount"] {
            let spec = if how == "--mount" && !store.starts_with("store+") {
                format!("plain={store}")
            } else {
                store.clone()
            };
            let (answers, stderr, status) = mcp(
                &[how.into(), spec, "--session-id".into(), "bad id!".into()],
                &[],
            );
            assert_eq!(status.code(), Some(2), "{how} {store}: {stderr}");
            assert!(answers.is_empty());
            assert!(
                stderr.contains("1 to 64 characters from [0-9A-Za-z_-]"),
                "{stderr}"
            );
        }
    }
    assert!(!dir.path().join("plain").exists());
    // The same from the environment.
    let out = Command::new(MEMORY)
        .args(["mcp", "--store", "mem:"])
        .env("MEMORY_SESSION_ID", "sesn 1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// Instructions over 4,096 characters, and instructions for a folder no mount has, are
/// usage errors that say what is wrong.
#[test]
fn bad_mount_instructions_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes").display().to_string();
    let long = format!("notes={}", "x".repeat(4097));
    let (_, stderr, status) = mcp(
        &[
            "--mount".into(),
            format!("notes={notes}"),
            "--mount-instructions".into(),
            long,
        ],
        &[],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("4097 characters; at most 4096"), "{stderr}");
    let (_, stderr, status) = mcp(
        &[
            "--mount".into(),
            format!("Team Notes={notes}"),
            "--mount-instructions".into(),
            "notes=x".into(),
        ],
        &[],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no mount has the folder name `notes` (the folders are: team-notes)"),
        "{stderr}"
    );
    // Checked before the folder store was opened: nothing was created.
    assert!(!dir.path().join("notes").exists());
}

/// `memory mcp --help` has the mounts paragraph `memory run --help` has.
#[test]
fn both_helps_describe_mounts() {
    for command in ["mcp", "run"] {
        let out = Command::new(MEMORY)
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = text(&out.stdout);
        assert!(out.status.success());
        for needle in [
            "Mounts (--mount [NAME=]URL[:ro], up to 8)",
            "(\"Team Handbook\" -> team-handbook)",
            "store+sqlite:PATH#STORE_ID",
            "store+http(s)://",
            "MEMORY_STORE_API_KEY",
            "--mount-instructions",
            "--session-id",
        ] {
            assert!(help.contains(needle), "{command}: {needle}: {help}");
        }
        // --store lists the versioned forms with the others.
        let store_line = help
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("--store <URL>"))
            .nth(1)
            .unwrap();
        assert!(
            store_line.contains("store+sqlite:PATH#STORE_ID"),
            "{store_line}"
        );
    }
}

/// `memory_search` over two mounted stores (one over HTTP, read-only, one in the database
/// file): a file of each is found under its mount's folder.
#[test]
fn mcp_search_finds_a_file_in_each_mounted_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let server = Server::start(&db);
    let handbook = server.create_store("Team Handbook", "");
    let notes = server.create_store("User Notes", "");
    for (store, path, content) in [
        (
            &handbook,
            "/deploy.md",
            "Each deploy goes out on Tuesdays.\n",
        ),
        (&notes, "/todo/deploy.md", "Ask about the Tuesday deploy.\n"),
        (&notes, "/other.md", "Nothing here.\n"),
    ] {
        let body = json!({"path": path, "content": content}).to_string();
        http(
            &server.addr,
            "POST",
            &format!("/v1/memory_stores/{store}/memories"),
            &body,
        );
    }
    let (answers, stderr, status) = mcp(
        &[
            "--mount".into(),
            format!("store+http://{}#{handbook}:ro", server.addr),
            "--mount".into(),
            format!("store+sqlite:{}#{notes}", db.display()),
        ],
        &[
            ("memory_search", json!({"query": "deploy tuesday*"})),
            (
                "memory_search",
                json!({"query": "deploy", "path": "/memories/user-notes"}),
            ),
        ],
    );
    assert!(status.success(), "{stderr}");
    let found = |answer: &serde_json::Value| -> Vec<String> {
        let mut paths: Vec<String> = answer["result"]["structuredContent"]["results"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .map(|hit| hit["path"].as_str().unwrap().to_owned())
            .collect();
        paths.sort();
        paths
    };
    assert_eq!(
        found(&answers[1]),
        [
            "/memories/team-handbook/deploy.md",
            "/memories/user-notes/todo/deploy.md"
        ]
    );
    assert_eq!(found(&answers[2]), ["/memories/user-notes/todo/deploy.md"]);
}

/// `NAME=` is the text before the first `=` that comes ahead of the URL, whatever it holds: a
/// name with `/` is a name, not part of the URL, and a name with nothing left after the slug
/// rule gives the store id's folder, as a display name does. A bad name or a missing URL is
/// refused saying which.
#[test]
fn any_text_before_the_url_is_the_mount_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (first, second) = runtime.block_on(async {
        let engine = MemoryStores::open(&db).await.unwrap();
        let create = |name: &str| CreateStore {
            name: name.into(),
            ..Default::default()
        };
        let first = engine.create_store(create("Handbook")).await.unwrap().id;
        let second = engine.create_store(create("Notes")).await.unwrap().id;
        (first, second)
    });
    let folder = dir.path().join("folder");
    let args = [
        "--mount".to_owned(),
        format!("???=store+sqlite:{}#{first}:ro", db.display()),
        "--mount".to_owned(),
        format!("team/handbook=store+sqlite:{}#{second}", db.display()),
        "--mount".to_owned(),
        format!("a/b={}", folder.display()),
    ];
    let (answers, stderr, status) = mcp(
        &args,
        &[("memory", json!({"command": "view", "path": "/memories"}))],
    );
    assert!(status.success(), "{stderr}");
    let id_folder: String = first
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    for line in [
        format!("mounted \"Handbook\" (store {first}) at /memories/{id_folder}, read-only"),
        format!("mounted \"Notes\" (store {second}) at /memories/team-handbook, read-write"),
        "mounted \"a/b\" at /memories/a-b, read-write".to_owned(),
    ] {
        assert!(stderr.contains(&line), "{line}: {stderr}");
    }
    let listing = answers[1]["result"]["content"][0]["text"].as_str().unwrap();
    for shown in [
        format!("/memories/{id_folder}"),
        "/memories/team-handbook".into(),
        "/memories/a-b".into(),
    ] {
        assert!(listing.contains(&shown), "{shown}: {listing}");
    }
    assert!(
        folder.is_dir(),
        "the folder store was opened at its own path"
    );

    for (spec, says) in [
        (
            format!("=store+sqlite:{}#{first}", db.display()),
            "a mount name is 1 to 255 characters",
        ),
        (
            "notes=?sync=full".to_owned(),
            "the mount `notes` has no store URL",
        ),
    ] {
        let (answers, stderr, status) = mcp(&["--mount".into(), spec.clone()], &[]);
        assert_eq!(status.code(), Some(2), "{spec}: {stderr}");
        assert!(answers.is_empty());
        assert!(stderr.contains(says), "{spec}: {stderr}");
        assert!(!stderr.contains("cannot open store ``"), "{stderr}");
    }
}
