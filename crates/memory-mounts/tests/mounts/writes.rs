//! Writes through the mounts: read-only mounts and paths outside every mount refused, every
//! version the session actor's, renames across mounts, a full store.

use super::*;

#[tokio::test]
async fn read_only_mounts_refuse_every_writing_command_and_change_nothing() {
    let f = fixture().await;
    let refused =
        |path: &str| format!("Error: Cannot change {path}: /memories/team-handbook is read-only");
    let file = "/memories/team-handbook/onboarding.md";
    let cases = [
        (
            json!({"command": "create", "path": "/memories/team-handbook/new.md", "file_text": "x"}),
            refused("/memories/team-handbook/new.md"),
        ),
        (
            json!({"command": "str_replace", "path": file, "old_str": "runbook", "new_str": "wiki"}),
            refused(file),
        ),
        (
            json!({"command": "insert", "path": file, "insert_line": 0, "insert_text": "# Onboarding"}),
            refused(file),
        ),
        (json!({"command": "delete", "path": file}), refused(file)),
        (
            json!({"command": "delete", "path": "/memories/team-handbook"}),
            refused("/memories/team-handbook"),
        ),
        (
            json!({"command": "rename", "old_path": file, "new_path": "/memories/team-handbook/o.md"}),
            refused(file),
        ),
        // Out of a read-only mount into a writable one: refused too (it would delete).
        (
            json!({"command": "rename", "old_path": file, "new_path": "/memories/user-notes/o.md"}),
            refused(file),
        ),
        // Into a read-only mount.
        (
            json!({"command": "rename", "old_path": "/memories/user-notes/mine.md", "new_path": "/memories/team-handbook/mine.md"}),
            refused("/memories/team-handbook/mine.md"),
        ),
        // `/memories` itself holds a read-only mount.
        (
            json!({"command": "delete", "path": "/memories"}),
            "Error: Cannot delete the /memories directory itself".to_owned(),
        ),
    ];
    ok(
        &f.tool,
        json!({"command": "create", "path": "/memories/user-notes/mine.md", "file_text": "mine"}),
    )
    .await;
    for (input, expected) in cases {
        let (text, is_error) = run(&f.tool, input.clone()).await;
        assert!(is_error, "{input}");
        assert_eq!(text, expected, "{input}");
    }
    // The storage level refuses deleting /memories while a mount is read-only.
    let e = f
        .tool
        .storage()
        .delete(&MemoryPath::root())
        .await
        .unwrap_err();
    assert!(matches!(e, memory_core::Error::Refused { .. }), "{e:?}");

    let handbook = versions(&f.engine, &f.handbook).await;
    assert_eq!(
        handbook.len(),
        1,
        "the read-only store has only its first version"
    );
    let memory = f
        .engine
        .memory_at_path(&f.handbook, "/onboarding.md")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(memory.content.as_deref(), Some("Read the runbook.\n"));
    let notes = versions(&f.engine, &f.notes).await;
    assert_eq!(notes.len(), 1, "only the create of mine.md: {notes:?}");
    assert!(
        f.tool
            .storage()
            .stat(&p("/memories/user-notes/o.md"))
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn writes_outside_every_mount_are_refused() {
    let f = fixture().await;
    let hint =
        "it is outside every mounted folder; files can be created inside /memories/user-notes";
    for path in [
        "/memories/loose.md",
        "/memories/elsewhere/a.md",
        "/memories/user-note/a.md",
    ] {
        let (text, is_error) = run(
            &f.tool,
            json!({"command": "create", "path": path, "file_text": "x"}),
        )
        .await;
        assert!(is_error);
        assert_eq!(text, format!("Error: Cannot change {path}: {hint}"));
    }
    ok(
        &f.tool,
        json!({"command": "create", "path": "/memories/user-notes/a.md", "file_text": "x"}),
    )
    .await;
    let (text, _) = run(
        &f.tool,
        json!({"command": "rename", "old_path": "/memories/user-notes/a.md", "new_path": "/memories/a.md"}),
    )
    .await;
    assert_eq!(text, format!("Error: Cannot change /memories/a.md: {hint}"));
    // Mount folders are directories that cannot be replaced, moved or renamed.
    let (text, _) = run(
        &f.tool,
        json!({"command": "create", "path": "/memories/user-notes", "file_text": "x"}),
    )
    .await;
    assert_eq!(text, "Error: File /memories/user-notes already exists");
    let (text, _) = run(
        &f.tool,
        json!({"command": "rename", "old_path": "/memories/user-notes", "new_path": "/memories/notes"}),
    )
    .await;
    assert_eq!(
        text,
        "Error: Cannot change /memories/user-notes: a mounted folder cannot be moved or renamed"
    );
    let (text, _) = run(
        &f.tool,
        json!({"command": "rename", "old_path": "/memories/user-notes/a.md", "new_path": "/memories/team-handbook"}),
    )
    .await;
    assert_eq!(
        text,
        "Error: The destination /memories/team-handbook already exists"
    );
    let (text, _) = run(
        &f.tool,
        json!({"command": "view", "path": "/memories/loose.md"}),
    )
    .await;
    assert_eq!(
        text,
        "The path /memories/loose.md does not exist. Please provide a valid path."
    );
    assert_eq!(versions(&f.engine, &f.notes).await.len(), 1);
}

#[tokio::test]
async fn every_version_is_the_session_actors() {
    let f = fixture().await;
    let t = &f.tool;
    ok(t, json!({"command": "create", "path": "/memories/user-notes/prefs.md", "file_text": "- tea\n"})).await;
    ok(t, json!({"command": "str_replace", "path": "/memories/user-notes/prefs.md", "old_str": "tea", "new_str": "green tea"})).await;
    ok(t, json!({"command": "insert", "path": "/memories/user-notes/prefs.md", "insert_line": 1, "insert_text": "- metric units"})).await;
    ok(t, json!({"command": "rename", "old_path": "/memories/user-notes/prefs.md", "new_path": "/memories/user-notes/me/prefs.md"})).await;
    ok(
        t,
        json!({"command": "create", "path": "/memories/user-notes/tmp.md", "file_text": "x"}),
    )
    .await;
    ok(
        t,
        json!({"command": "delete", "path": "/memories/user-notes/tmp.md"}),
    )
    .await;
    // A str_replace that fails writes nothing.
    let (_, is_error) = run(t, json!({"command": "str_replace", "path": "/memories/user-notes/me/prefs.md", "old_str": "coffee", "new_str": "x"})).await;
    assert!(is_error);

    let all = versions(&f.engine, &f.notes).await;
    let ops: Vec<(Operation, Option<&str>)> = all
        .iter()
        .rev()
        .map(|v| (v.operation, v.path.as_deref()))
        .collect();
    assert_eq!(
        ops,
        [
            (Operation::Created, Some("/prefs.md")),
            (Operation::Modified, Some("/prefs.md")),
            (Operation::Modified, Some("/prefs.md")),
            (Operation::Modified, Some("/me/prefs.md")),
            (Operation::Created, Some("/tmp.md")),
            (Operation::Deleted, Some("/tmp.md")),
        ]
    );
    for v in &all {
        assert_eq!(v.created_by, Some(Actor::session(SESSION)), "{v:?}");
    }
    // The rename kept the memory: one id for the first four versions.
    let prefs: Vec<&str> = all
        .iter()
        .rev()
        .take(4)
        .map(|v| v.memory_id.as_str())
        .collect();
    assert!(prefs.iter().all(|id| *id == prefs[0]), "{prefs:?}");
    let head = f
        .engine
        .memory_at_path(&f.notes, "/me/prefs.md")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        head.content.as_deref(),
        Some("- green tea\n- metric units\n")
    );
    // Filtering by session finds them all.
    let by_session = f
        .engine
        .list_versions(
            &f.notes,
            ListVersions {
                session_id: Some(SESSION.into()),
                limit: Some(100),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(by_session.data.len(), all.len());
}

#[tokio::test]
async fn renames_across_mounts_copy_then_delete() {
    let engine = MemoryStores::open_in_memory().unwrap();
    let inbox = new_store(&engine, "Inbox", "").await;
    let projects = new_store(&engine, "Projects", "").await;
    let mounts = Mounts::new([
        store_mount(&engine, &inbox, Access::ReadWrite).await,
        store_mount(&engine, &projects, Access::ReadWrite).await,
    ])
    .unwrap();
    let tool = MemoryTool::new(mounts);
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/inbox/idea/a.md", "file_text": "A"}),
    )
    .await;
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/inbox/idea/b.md", "file_text": "B"}),
    )
    .await;
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/projects/taken.md", "file_text": "T"}),
    )
    .await;
    let (text, _) = run(
        &tool,
        json!({"command": "rename", "old_path": "/memories/inbox/idea", "new_path": "/memories/projects/taken.md"}),
    )
    .await;
    assert_eq!(
        text,
        "Error: The destination /memories/projects/taken.md already exists"
    );
    let text = ok(
        &tool,
        json!({"command": "rename", "old_path": "/memories/inbox/idea", "new_path": "/memories/projects/idea"}),
    )
    .await;
    assert_eq!(
        text,
        "Successfully renamed /memories/inbox/idea to /memories/projects/idea"
    );
    let files: Vec<String> = tool
        .storage()
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.path.to_string())
        .collect();
    assert_eq!(
        files,
        [
            // The emptied mount shows through its hidden mark (see `EMPTY_MARK`).
            "/memories/inbox/.mount",
            "/memories/projects/idea/a.md",
            "/memories/projects/idea/b.md",
            "/memories/projects/taken.md"
        ]
    );
    let ops = |vs: Vec<memory_store::MemoryVersion>| {
        let mut ops: Vec<(&str, String)> = vs
            .into_iter()
            .map(|v| (v.operation.as_str(), v.path.unwrap_or_default()))
            .collect();
        ops.sort();
        ops
    };
    assert_eq!(
        ops(versions(&engine, &inbox).await),
        [
            ("created", "/idea/a.md".to_owned()),
            ("created", "/idea/b.md".to_owned()),
            ("deleted", "/idea/a.md".to_owned()),
            ("deleted", "/idea/b.md".to_owned()),
        ]
    );
    assert_eq!(
        ops(versions(&engine, &projects).await),
        [
            ("created", "/idea/a.md".to_owned()),
            ("created", "/idea/b.md".to_owned()),
            ("created", "/taken.md".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_full_store_is_store_full_for_the_tool() {
    let engine = MemoryStores::with_options(
        memory_store::SqlitePersistence::open_in_memory().unwrap(),
        memory_store::EngineOptions::default().max_memories_per_store(1),
    );
    let s = new_store(&engine, "Tiny", "").await;
    let storage = StoreStorage::local(engine, &s, SESSION).unwrap();
    storage
        .create_within(&p("/memories/a.md"), b"a".to_vec(), 2000)
        .await
        .unwrap();
    // The engine's own limit (1) and the caller's (1) both give StoreFull.
    let e = storage
        .create_within(&p("/memories/b.md"), b"b".to_vec(), 2000)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::StoreFull { max_files: 2000 }), "{e:?}");
    assert_eq!(storage.file_count().await.unwrap(), 1);
    let tool = MemoryTool::new(storage);
    let out = tool
        .execute(&json!({"command": "create", "path": "/memories/c.md", "file_text": "c"}))
        .await;
    assert!(out.is_error, "{out:?}");
}
