//! The mount table: the listing of /memories, the note, slugs and folders, what refuses a mount
//! (an archived store), session ids.

use super::*;

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
