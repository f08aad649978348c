//! What `--mount` accepts and refuses: an archived store, bad session ids and instructions
//! (exit 2), the helps, and the mount name before the URL.

use super::*;

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
