//! `memory run --mount`: versions left by the session, and a mount that cannot open stopping
//! the run before anything is sent.

use super::*;

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
        Some(&api),
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
        Some(&api),
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
    let out = memory_run(Some(&api), &["--mount", "notes", "hello"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("NAME=URL[:ro]"));
}
