//! Mounts through the memory tool: the table, read-only enforcement for every writing command,
//! writes outside every mount, renames within and across mounts, and attribution of every
//! version to the session actor.

mod common;

use std::sync::Arc;

use common::{SESSION, new_store, p};
use memory_core::{
    Error, InMemoryStorage, MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode,
};
use memory_mounts::{Access, MAX_MOUNTS, Mount, Mounts, MountsError, StoreStorage};
use memory_store::{Actor, ListVersions, MemoryStores, Operation, View};
use serde_json::{Value, json};

struct Fixture {
    engine: MemoryStores,
    handbook: String,
    notes: String,
    tool: MemoryTool<Mounts>,
}

/// A read-only "Team Handbook" store holding `/onboarding.md`, and an empty read-write "User
/// Notes" store, mounted in that order.
async fn fixture() -> Fixture {
    let engine = MemoryStores::open_in_memory().unwrap();
    let handbook = new_store(&engine, "Team Handbook", "How the team works.").await;
    let notes = new_store(&engine, "User Notes", "").await;
    engine
        .create_memory(
            &handbook,
            "/onboarding.md",
            "Read the runbook.\n",
            Some(Actor::user("user_admin")),
        )
        .await
        .unwrap();
    let mounts = Mounts::new([
        Mount::store(
            StoreStorage::local(engine.clone(), &handbook, SESSION).unwrap(),
            Access::ReadOnly,
        )
        .await
        .unwrap(),
        Mount::store(
            StoreStorage::local(engine.clone(), &notes, SESSION).unwrap(),
            Access::ReadWrite,
        )
        .await
        .unwrap(),
    ])
    .unwrap();
    Fixture {
        engine,
        handbook,
        notes,
        tool: MemoryTool::new(mounts),
    }
}

async fn run(tool: &MemoryTool<Mounts>, input: Value) -> (String, bool) {
    let out = tool.execute(&input).await;
    (out.text().unwrap_or_default().to_owned(), out.is_error)
}

async fn ok(tool: &MemoryTool<Mounts>, input: Value) -> String {
    let (text, is_error) = run(tool, input.clone()).await;
    assert!(!is_error, "{input}: {text}");
    text
}

async fn versions(engine: &MemoryStores, store: &str) -> Vec<memory_store::MemoryVersion> {
    engine
        .list_versions(
            store,
            ListVersions {
                limit: Some(100),
                view: View::Full,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .data
}

#[tokio::test]
async fn view_lists_the_mounts() {
    let f = fixture().await;
    ok(
        &f.tool,
        json!({"command": "create", "path": "/memories/user-notes/prefs.md", "file_text": "tea\n"}),
    )
    .await;
    let listing = ok(&f.tool, json!({"command": "view", "path": "/memories"})).await;
    assert_eq!(
        listing,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n\
         22B\t/memories\n\
         18B\t/memories/team-handbook/\n\
         18B\t/memories/team-handbook/onboarding.md\n\
         4B\t/memories/user-notes/\n\
         4B\t/memories/user-notes/prefs.md"
    );
    // An empty mount still shows as a folder, and views as one.
    ok(
        &f.tool,
        json!({"command": "delete", "path": "/memories/user-notes/prefs.md"}),
    )
    .await;
    let listing = ok(&f.tool, json!({"command": "view", "path": "/memories"})).await;
    assert!(
        listing
            .ends_with("\n18B\t/memories/team-handbook/onboarding.md\n0B\t/memories/user-notes/"),
        "{listing}"
    );
    let listing = ok(
        &f.tool,
        json!({"command": "view", "path": "/memories/user-notes"}),
    )
    .await;
    assert!(listing.ends_with("\n0B\t/memories/user-notes"), "{listing}");
    let view = ok(
        &f.tool,
        json!({"command": "view", "path": "/memories/team-handbook/onboarding.md"}),
    )
    .await;
    assert!(
        view.ends_with("     1\tRead the runbook.\n     2\t"),
        "{view}"
    );
}

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
        Mount::store(
            StoreStorage::local(engine.clone(), &inbox, SESSION).unwrap(),
            Access::ReadWrite,
        )
        .await
        .unwrap(),
        Mount::store(
            StoreStorage::local(engine.clone(), &projects, SESSION).unwrap(),
            Access::ReadWrite,
        )
        .await
        .unwrap(),
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
async fn slugs_follow_the_rules() {
    let storage = || -> Arc<dyn Storage> { Arc::new(InMemoryStorage::new()) };
    let mounts = Mounts::new([
        Mount::new("Demo Memory", storage(), Access::ReadWrite),
        Mount::new("demo  memory!", storage(), Access::ReadWrite),
        Mount::new("DEMO-memory", storage(), Access::ReadOnly),
        Mount::new("???", storage(), Access::ReadOnly).with_id("memstore_01Abc"),
        Mount::new("日本語", storage(), Access::ReadOnly),
    ])
    .unwrap();
    assert_eq!(
        mounts.slugs().collect::<Vec<_>>(),
        [
            "demo-memory",
            "demo-memory-2",
            "demo-memory-3",
            "memstore_01Abc",
            "store"
        ]
    );
    let too_many =
        (0..=MAX_MOUNTS).map(|i| Mount::new(format!("m{i}"), storage(), Access::ReadOnly));
    assert_eq!(
        Mounts::new(too_many).unwrap_err(),
        MountsError::TooMany(MAX_MOUNTS + 1)
    );
    // Each mount's storage sees its own /memories.
    mounts
        .write(
            &p("/memories/demo-memory-2/x.md"),
            b"x".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let (_, second) = mounts.mounts().nth(1).unwrap();
    assert_eq!(
        second
            .storage()
            .read(&p("/memories/x.md"))
            .await
            .unwrap()
            .contents,
        b"x"
    );
}

#[tokio::test]
async fn the_note_names_every_mount() {
    let f = fixture().await;
    assert_eq!(
        f.tool.storage().note(),
        "Memory stores are mounted in the memory tool's /memories directory, one folder per store:\n\
         - /memories/team-handbook (read-only): \"Team Handbook\". How the team works.\n\
         - /memories/user-notes (read-write): \"User Notes\".\n\
         Files can be created and changed only inside the read-write folders; the read-only ones can be viewed."
    );
    let only_ro = Mounts::new([Mount::new(
        "Docs\nv2",
        Arc::new(InMemoryStorage::new()),
        Access::ReadOnly,
    )
    .with_description("Line one.\nLine two")])
    .unwrap();
    assert_eq!(
        only_ro.note(),
        "Memory stores are mounted in the memory tool's /memories directory, one folder per store:\n\
         - /memories/docs-v2 (read-only): \"Docs v2\". Line one. Line two.\n\
         Every folder is read-only: files can be viewed but not created or changed."
    );
}

#[tokio::test]
async fn an_archived_store_is_refused_at_mount_time() {
    let engine = MemoryStores::open_in_memory().unwrap();
    let old = new_store(&engine, "Old Handbook", "").await;
    engine.archive_store(&old).await.unwrap();
    let storage = StoreStorage::local(engine.clone(), &old, SESSION).unwrap();
    for access in [Access::ReadOnly, Access::ReadWrite] {
        let e = Mount::store(storage.clone(), access).await.unwrap_err();
        assert!(
            matches!(&e, memory_mounts::MountError::Archived { id, name } if *id == old && name == "Old Handbook"),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("is archived and cannot be mounted"),
            "{e}"
        );
    }
    let e = Mount::store(
        StoreStorage::local(engine, "memstore_nope", SESSION).unwrap(),
        Access::ReadOnly,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            e,
            memory_mounts::MountError::Store(memory_store::StoreError::NotFound { .. })
        ),
        "{e:?}"
    );
}

#[tokio::test]
async fn session_ids_follow_one_rule_on_a_local_engine_too() {
    let engine = MemoryStores::open_in_memory().unwrap();
    let s = new_store(&engine, "Notes", "").await;
    for bad in ["bad id!", "", &"x".repeat(65), "sesn/1"] {
        let e = StoreStorage::local(engine.clone(), &s, bad).unwrap_err();
        assert_eq!(
            e.reason(),
            memory_store::Reason::InvalidParameter,
            "{bad:?}"
        );
    }
    assert!(StoreStorage::local(engine, &s, "sesn_01-ok_ID").is_ok());
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

#[tokio::test]
async fn folders_come_from_the_store_name_unless_overridden_and_instructions_reach_the_note() {
    let engine = MemoryStores::open_in_memory().unwrap();
    let handbook = new_store(&engine, "Team Handbook", "How the team works.").await;
    let notes = new_store(&engine, "User Notes", "").await;
    let local = |id: &str| StoreStorage::local(engine.clone(), id, SESSION).unwrap();
    let mounts = Mounts::new([
        Mount::store(local(&handbook), Access::ReadOnly)
            .await
            .unwrap(),
        Mount::store(local(&notes), Access::ReadWrite)
            .await
            .unwrap()
            .with_folder("mine"),
    ])
    .unwrap();
    assert_eq!(
        mounts.slugs().collect::<Vec<_>>(),
        ["team-handbook", "mine"]
    );
    assert_eq!(
        mounts.mount_path("team-handbook").map(|p| p.as_str()),
        Some("/memories/team-handbook")
    );
    assert_eq!(mounts.mount_path("user-notes"), None);
    let mounts = mounts
        .with_instructions_for("team-handbook", "Check it first.")
        .unwrap();
    let note = mounts.note();
    assert!(
        note.contains("- /memories/team-handbook (read-only): \"Team Handbook\". How the team works. Instructions: Check it first."),
        "{note}"
    );
    // The override names the folder; the note still names the store.
    assert!(
        note.contains("- /memories/mine (read-write): \"User Notes\"."),
        "{note}"
    );
    let e = mounts
        .clone()
        .with_instructions_for("nope", "x")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "no mount has the folder name `nope` (the folders are: team-handbook, mine)"
    );
    let long = "x".repeat(memory_mounts::MAX_INSTRUCTIONS_CHARS + 1);
    let e = mounts
        .clone()
        .with_instructions_for("mine", long.clone())
        .unwrap_err();
    assert!(
        matches!(e, MountsError::InstructionsTooLong { chars: 4097, .. }),
        "{e:?}"
    );
    assert!(
        mounts
            .with_instructions_for("mine", "é".repeat(memory_mounts::MAX_INSTRUCTIONS_CHARS))
            .is_ok()
    );
    // Too long given on the mount itself: refused by the table.
    let e = Mounts::new([
        Mount::new("A", Arc::new(InMemoryStorage::new()), Access::ReadWrite)
            .with_instructions(long),
    ])
    .unwrap_err();
    assert!(
        matches!(e, MountsError::InstructionsTooLong { ref folder, .. } if folder == "a"),
        "{e:?}"
    );
    // An archived store, fetched already, is refused too.
    let store = engine.archive_store(&notes).await.unwrap();
    assert!(Mount::from_store(local(&notes), store, Access::ReadOnly).is_err());
}

/// Search fans out to every mount (the read-only one too), and each hit comes back under its
/// mount's folder; merged by score, cut to the limit after merging; `under` picks the mounts.
#[tokio::test]
async fn search_finds_files_of_every_mount_under_their_folders() {
    use memory_core::search::SearchQuery;

    let f = fixture().await;
    f.engine
        .create_memory(
            &f.notes,
            "/prefs/runbook.md",
            "The runbook lives in the wiki; read the runbook first.\n",
            None,
        )
        .await
        .unwrap();
    f.engine
        .create_memory(&f.notes, "/other.md", "Nothing to see.\n", None)
        .await
        .unwrap();
    let mounts = f.tool.storage();
    let query = SearchQuery::new("runbook").unwrap();
    let hits = mounts.search(&query).await.unwrap();
    let mut paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "/memories/team-handbook/onboarding.md",
            "/memories/user-notes/prefs/runbook.md"
        ]
    );
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "{hits:?}"
    );
    assert!(hits.iter().all(|h| h.lines == [1]), "{hits:?}");

    // The limit applies to the merged list: the best hit of either store.
    let one = mounts
        .search(&query.clone().with_limit(1).unwrap())
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].path, hits[0].path);

    // Below one mount, only its files; outside every mount, nothing.
    let within = mounts
        .search(&query.clone().with_under(p("/memories/user-notes")))
        .await
        .unwrap();
    assert_eq!(within.len(), 1);
    assert_eq!(within[0].path, p("/memories/user-notes/prefs/runbook.md"));
    let deeper = mounts
        .search(&query.clone().with_under(p("/memories/team-handbook/none")))
        .await
        .unwrap();
    assert!(deeper.is_empty(), "{deeper:?}");
    let outside = mounts
        .search(&query.clone().with_under(p("/memories/elsewhere")))
        .await
        .unwrap();
    assert!(outside.is_empty(), "{outside:?}");
    // A word in no file.
    let none = mounts
        .search(&SearchQuery::new("quokka").unwrap())
        .await
        .unwrap();
    assert!(none.is_empty());
}

/// A plain storage and a versioned store in one table: both are searched, each hit under its
/// own folder.
#[tokio::test]
async fn search_spans_different_storages() {
    use memory_core::search::SearchQuery;

    let engine = MemoryStores::open_in_memory().unwrap();
    let notes = new_store(&engine, "User Notes", "").await;
    engine
        .create_memory(&notes, "/a.md", "the kettle is blue\n", None)
        .await
        .unwrap();
    let scratch = Arc::new(InMemoryStorage::new());
    scratch
        .write(
            &p("/memories/b.md"),
            b"a blue kettle, and another kettle\n".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let mounts = Mounts::new([
        Mount::new("Scratch", scratch, Access::ReadOnly),
        Mount::store(
            StoreStorage::local(engine.clone(), &notes, SESSION).unwrap(),
            Access::ReadWrite,
        )
        .await
        .unwrap(),
    ])
    .unwrap();
    let hits = mounts
        .search(&SearchQuery::new("kettle blue").unwrap())
        .await
        .unwrap();
    let mut paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        ["/memories/scratch/b.md", "/memories/user-notes/a.md"]
    );
    assert!(
        hits.iter().all(|h| h.snippet.contains("kettle")),
        "{hits:?}"
    );
}
