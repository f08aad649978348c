//! `memory mcp --mount`: the tool's description, a served store mounted at the slug of its
//! name, and search across the mounted stores.

use super::*;

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
