//! Dreams against the fake Messages API: the source (a folder, an SQLite file, a versioned
//! store's database) left byte for byte as it was, an attempted write into it refused by code,
//! the output written and reported, a versioned output recording each write as a version by
//! the dream's session.
#![cfg(all(feature = "stores", feature = "fs", feature = "sqlite"))]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use memory_core::{MemoryPath, Storage, WriteMode};
use memory_runner::dream::{Dream, DreamError};
use memory_runner::mounts::memory_store::{Actor, CreateStore, ListVersions, MemoryStores};
use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use memory_runner::{Client, OpenOptions, RetryPolicy, open_with};
use serde_json::{Value, json};

/// Every entry below `dir`, hidden ones included: kind, bytes, permissions and times.
fn snapshot(dir: &Path) -> BTreeMap<String, (bool, Vec<u8>, u32, SystemTime)> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.insert(
                path.strip_prefix(dir).unwrap().display().to_string(),
                (
                    meta.is_dir(),
                    bytes,
                    meta.permissions().mode(),
                    meta.modified().unwrap(),
                ),
            );
        }
    }
    out
}

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

fn client(api: &FakeApi) -> Client {
    Client::builder()
        .api_key("sk-test")
        .base_url(api.url())
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

/// A source with a duplicate, a contradiction and a hidden file.
async fn fill(store: &dyn Storage) {
    for (path, text) in [
        ("/memories/prefs.md", "Units: imperial (2023-01)\n"),
        (
            "/memories/prefs-new.md",
            "Units: metric (2025-06)\nTea: green\n",
        ),
        ("/memories/notes/tea.md", "Tea: green\n"),
        ("/memories/.hidden", "kept\n"),
    ] {
        store
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
}

/// Claude reads the source, tries to change it four ways, then writes the output.
fn script() -> Vec<Reply> {
    vec![
        Reply::message(tool_use(
            Some("Reading the source."),
            &[
                (
                    "t1",
                    "memory",
                    json!({"command": "view", "path": "/memories/source"}),
                ),
                (
                    "t2",
                    "memory",
                    json!({"command": "view", "path": "/memories/source/prefs-new.md"}),
                ),
            ],
        )),
        Reply::message(tool_use(
            None,
            &[
                (
                    "w1",
                    "memory",
                    json!({"command": "create", "path": "/memories/source/evil.md", "file_text": "x"}),
                ),
                (
                    "w2",
                    "memory",
                    json!({"command": "str_replace", "path": "/memories/source/prefs.md", "old_str": "imperial", "new_str": "metric"}),
                ),
                (
                    "w3",
                    "memory",
                    json!({"command": "rename", "old_path": "/memories/source/notes", "new_path": "/memories/source/n"}),
                ),
                (
                    "w4",
                    "memory",
                    json!({"command": "delete", "path": "/memories/source/prefs.md"}),
                ),
            ],
        )),
        Reply::message(tool_use(
            None,
            &[
                (
                    "o1",
                    "memory",
                    json!({"command": "create", "path": "/memories/output/README.md", "file_text": "preferences.md: units and tea.\n"}),
                ),
                (
                    "o2",
                    "memory",
                    json!({"command": "create", "path": "/memories/output/preferences.md", "file_text": "Units: metric (since 2025-06)\nTea: green\n"}),
                ),
            ],
        )),
        Reply::message(end_turn(
            "Merged the two preference files; metric wins (newest).",
        )),
    ]
}

/// The four attempted writes into the source were answered as errors naming the read-only
/// folder.
fn assert_source_writes_refused(api: &FakeApi) {
    let third = api.requests()[2].json();
    let messages = third["messages"].as_array().unwrap();
    let results = messages.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for result in results {
        assert_eq!(result["is_error"], true, "{result}");
        let text = result["content"].as_str().unwrap_or_default();
        assert!(text.contains("/memories/source is read-only"), "{text}");
    }
}

fn system_prompt(api: &FakeApi) -> String {
    api.requests()[0].json()["system"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_dream_over_a_folder_leaves_it_byte_for_byte_and_writes_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let output = dir.path().join("output");
    {
        let store = open_with(source.to_str().unwrap(), &OpenOptions::new())
            .await
            .unwrap();
        fill(&*store).await;
    }
    // A stale temporary file a read-write open would clean up.
    let stale = source.join(".memory-tmp/0123456789abcdef0123456789abcdef.tmp");
    std::fs::write(&stale, "left by a crash").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let before = snapshot(&source);

    for streamed in [true, false] {
        let api = FakeApi::start(script()).await;
        let mut dream = Dream::new(source.to_str().unwrap(), output.to_str().unwrap())
            .instructions("Keep tea notes.")
            .force(!streamed);
        if streamed {
            dream = dream.on_event(|_| {});
        }
        let report = dream.run(client(&api)).await.unwrap();
        assert_eq!(snapshot(&source), before, "the source changed");
        assert_source_writes_refused(&api);
        if streamed {
            assert_eq!(
                report.created,
                [p("/memories/README.md"), p("/memories/preferences.md")]
            );
            assert!(report.changed.is_empty() && report.deleted.is_empty());
        } else {
            // The second dream (forced) over the first one's output rewrote the same files.
            assert!(report.created.is_empty() && report.changed.is_empty());
            assert!(report.deleted.is_empty());
        }
        assert_eq!(
            std::fs::read_to_string(output.join("memories/preferences.md")).unwrap(),
            "Units: metric (since 2025-06)\nTea: green\n"
        );
        assert_eq!(report.requests, 4);
        assert_eq!(
            report.reply.unwrap().text(),
            "Merged the two preference files; metric wins (newest)."
        );
        let system = system_prompt(&api);
        assert!(system.contains("/memories/source (read-only)"), "{system}");
        assert!(system.contains("/memories/output (read-write)"), "{system}");
        assert!(system.ends_with("Keep tea notes."), "{system}");
        assert_eq!(api.requests()[0].json().get("stream").is_some(), streamed);
    }
}

#[tokio::test]
async fn a_dream_refuses_an_output_that_holds_files_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let output = dir.path().join("output");
    fill(
        &*open_with(source.to_str().unwrap(), &OpenOptions::new())
            .await
            .unwrap(),
    )
    .await;
    let out = open_with(output.to_str().unwrap(), &OpenOptions::new())
        .await
        .unwrap();
    out.write(&p("/memories/old.md"), b"old".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let api = FakeApi::start(script()).await;
    let err = Dream::new(source.to_str().unwrap(), output.to_str().unwrap())
        .run(client(&api))
        .await
        .unwrap_err();
    assert!(
        matches!(err, DreamError::OutputNotEmpty { files: 1, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("--force"), "{err}");
    assert!(api.requests().is_empty(), "nothing was sent");
    // The same store twice (however spelt) is refused before anything opens.
    let same = format!("file:{}", output.display());
    let err = Dream::new(output.to_str().unwrap(), &same)
        .force(true)
        .run(client(&api))
        .await
        .unwrap_err();
    assert!(matches!(err, DreamError::SameStore { .. }), "{err:?}");
    // A source that does not exist is not created.
    let missing = dir.path().join("missing");
    let err = Dream::new(missing.to_str().unwrap(), output.to_str().unwrap())
        .force(true)
        .run(client(&api))
        .await
        .unwrap_err();
    assert!(matches!(err, DreamError::Source(_)), "{err:?}");
    assert!(!missing.exists());
}

#[tokio::test]
async fn a_dream_from_sqlite_into_a_versioned_store_records_the_dreams_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("source.db");
    let source_url = format!("sqlite:{}", db.display());
    {
        let store = open_with(&source_url, &OpenOptions::new()).await.unwrap();
        fill(&*store).await;
    }
    let before = snapshot(dir.path());
    // The output: a new versioned store of a memory-stores database elsewhere.
    let stores_dir = tempfile::tempdir().unwrap();
    let stores_db = stores_dir.path().join("stores.db");
    let engine = MemoryStores::open(&stores_db).await.unwrap();
    let store = engine
        .create_store(CreateStore {
            name: "Dreamed".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let into = format!("store+sqlite:{}#{}", stores_db.display(), store.id);

    let api = FakeApi::start(script()).await;
    let report = Dream::new(&source_url, &into)
        .output_options(OpenOptions::new().with_session_id("sesn_dream-1"))
        .run(client(&api))
        .await
        .unwrap();
    assert_eq!(snapshot(dir.path()), before, "the source folder changed");
    assert_source_writes_refused(&api);
    assert_eq!(report.session_id, "sesn_dream-1");
    assert_eq!(
        report.created,
        [p("/memories/README.md"), p("/memories/preferences.md")]
    );
    let versions = engine
        .list_versions(&store.id, ListVersions::default())
        .await
        .unwrap()
        .data;
    assert_eq!(versions.len(), 2);
    for version in &versions {
        assert_eq!(version.created_by, Some(Actor::session("sesn_dream-1")));
    }
    let mut paths: Vec<Value> = versions.iter().map(|v| json!(v.path.as_deref())).collect();
    paths.sort_by_key(|p| p.to_string());
    // The store keeps paths below its own root.
    assert_eq!(paths, [json!("/README.md"), json!("/preferences.md")]);
}

#[tokio::test]
async fn a_dream_from_a_versioned_store_leaves_its_database_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let engine = MemoryStores::open(&db).await.unwrap();
    let store = engine
        .create_store(CreateStore {
            name: "Notes".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    drop(engine);
    let source_url = format!("store+sqlite:{}#{}", db.display(), store.id);
    {
        let options = OpenOptions::new().with_session_id("sesn_fill");
        let source = open_with(&source_url, &options).await.unwrap();
        fill(&*source).await;
    }
    // Every connection is closed: the log is checkpointed into the main file and removed.
    let before = snapshot(dir.path());
    assert!(
        !before.keys().any(|name| name.ends_with("-wal")),
        "{:?}",
        before.keys()
    );
    let output = dir.path().join("dreamed");

    let api = FakeApi::start(script()).await;
    let report = Dream::new(&source_url, output.to_str().unwrap())
        .run(client(&api))
        .await
        .unwrap();
    assert_source_writes_refused(&api);
    assert_eq!(
        report.created,
        [p("/memories/README.md"), p("/memories/preferences.md")]
    );
    let mut after = snapshot(dir.path());
    after.retain(|name, _| !name.starts_with("dreamed"));
    assert_eq!(after, before, "the source database changed");
    // The versioned store holds exactly the versions the fill wrote.
    let engine = MemoryStores::open_read_only(&db).await.unwrap();
    let versions = engine
        .list_versions(&store.id, ListVersions::default())
        .await
        .unwrap()
        .data;
    assert_eq!(versions.len(), 4);
    assert!(
        versions
            .iter()
            .all(|v| v.created_by == Some(Actor::session("sesn_fill")))
    );
}

#[tokio::test]
async fn opening_read_only_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A folder made by hand (no lock, count or temporary folder).
    let folder = dir.path().join("hand");
    std::fs::create_dir_all(folder.join("memories")).unwrap();
    std::fs::write(folder.join("memories/a.md"), "a").unwrap();
    let before = snapshot(&folder);
    let store = open_with(
        folder.to_str().unwrap(),
        &OpenOptions::new().with_read_only(),
    )
    .await
    .unwrap();
    assert_eq!(
        store.read(&p("/memories/a.md")).await.unwrap().contents,
        b"a"
    );
    let err = store
        .write(&p("/memories/b.md"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap_err();
    assert!(matches!(err, memory_core::Error::Refused { .. }), "{err:?}");
    drop(store);
    assert_eq!(snapshot(&folder), before);
    // Encrypted: the envelope's key check reads, and writes no key-check record.
    #[cfg(feature = "encrypted")]
    {
        let key = dir.path().join("key.hex");
        std::fs::write(&key, "ab".repeat(32)).unwrap();
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let plain = dir.path().join("encrypted");
        std::fs::create_dir_all(plain.join("memories")).unwrap();
        let before = snapshot(&plain);
        let options = OpenOptions::new()
            .with_encryption_key_file(&key)
            .with_read_only();
        let store = open_with(plain.to_str().unwrap(), &options).await.unwrap();
        assert!(store.list(&p("/memories")).await.unwrap().is_empty());
        assert!(
            store
                .write(&p("/memories/b.md"), b"b".to_vec(), WriteMode::Create)
                .await
                .is_err()
        );
        drop(store);
        assert_eq!(snapshot(&plain), before);
    }
    // PostgreSQL stores are opened read-only by memory-postgres (no lock, no DDL, no row):
    // a server that is not there is the open's own error, not a refusal of read-only.
    #[cfg(feature = "postgres")]
    for url in [
        "postgres://u@127.0.0.1:9/db?connect_timeout=1s",
        "store+postgres://u@127.0.0.1:9/db?connect_timeout=1s#memstore_x",
    ] {
        let err = open_with(url, &OpenOptions::new().with_read_only())
            .await
            .unwrap_err();
        let memory_runner::OpenError::Open { source, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            matches!(
                source.downcast_ref::<memory_runner::postgres::PostgresOpenError>(),
                Some(memory_runner::postgres::PostgresOpenError::Unreachable { .. })
            ),
            "{err:?}"
        );
    }
    // A versioned store's database that is not there is not created.
    let missing = dir.path().join("nowhere.db");
    let url = format!("store+sqlite:{}#memstore_x", missing.display());
    assert!(
        open_with(&url, &OpenOptions::new().with_read_only())
            .await
            .is_err()
    );
    assert!(!missing.exists());
}

/// An encrypted source given no key is refused before any request (Claude would read
/// ciphertext); so is an encrypted output given none (plaintext would be mixed into it). With
/// each its own key, the dream runs and the output is encrypted under its key.
#[cfg(feature = "encrypted")]
#[tokio::test]
async fn encrypted_stores_need_their_keys_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (source, output) = (dir.path().join("source"), dir.path().join("output"));
    let (from_key, into_key) = (dir.path().join("from.key"), dir.path().join("into.key"));
    memory_runner::encrypted::generate_key_file(&from_key).unwrap();
    memory_runner::encrypted::generate_key_file(&into_key).unwrap();
    let from_options = OpenOptions::new().with_encryption_key_file(&from_key);
    fill(
        &*open_with(source.to_str().unwrap(), &from_options)
            .await
            .unwrap(),
    )
    .await;
    let (from, into) = (source.to_str().unwrap(), output.to_str().unwrap());

    let api = FakeApi::start(script()).await;
    let err = Dream::new(from, into).run(client(&api)).await.unwrap_err();
    assert!(matches!(err, DreamError::Source(_)), "{err:?}");
    assert!(err.to_string().contains("encrypted"), "{err}");
    assert!(api.requests().is_empty(), "a request was sent");

    let api = FakeApi::start(script()).await;
    let report = Dream::new(from, into)
        .source_options(from_options.clone())
        .output_options(OpenOptions::new().with_encryption_key_file(&into_key))
        .run(client(&api))
        .await
        .unwrap();
    assert_eq!(report.created.len(), 2, "{report:?}");
    let readme = std::fs::read(output.join("memories/README.md")).unwrap();
    assert!(!String::from_utf8_lossy(&readme).contains("preferences"));

    // The output is encrypted now: a forced dream into it without its key is refused.
    let api = FakeApi::start(script()).await;
    let err = Dream::new(from, into)
        .source_options(from_options)
        .force(true)
        .run(client(&api))
        .await
        .unwrap_err();
    assert!(matches!(err, DreamError::Output(_)), "{err:?}");
    assert!(api.requests().is_empty(), "a request was sent");
}

/// Refused as one store: `from` and `into`, each way round, forced, before any request, and
/// the source left byte for byte.
async fn assert_one_store(from: &str, into: &str, source_dir: &Path) {
    for (a, b) in [(from, into), (into, from)] {
        let before = snapshot(source_dir);
        let api = FakeApi::start(script()).await;
        let err = Dream::new(a, b)
            .force(true)
            .run(client(&api))
            .await
            .expect_err("a dream into its own source");
        assert!(
            matches!(err, DreamError::SameStore { .. }),
            "{a} -> {b}: {err:?}"
        );
        assert!(api.requests().is_empty(), "{a} -> {b}: a request was sent");
        assert_eq!(snapshot(source_dir), before, "{a} -> {b}");
    }
}

/// `--force` cannot dream into the source through another name: an output inside the source
/// folder (new or existing), a source inside the output folder, the same folder through a
/// symlink or a bind mount, the same SQLite file through a hard link.
#[tokio::test]
async fn a_dream_refuses_its_source_under_any_name() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    fill(
        &*open_with(source.to_str().unwrap(), &OpenOptions::new())
            .await
            .unwrap(),
    )
    .await;
    let src = source.to_str().unwrap().to_owned();
    // Nested: a new output inside the source (not created), and an existing one.
    let inner = source.join("memories/dreamed");
    assert_one_store(&src, inner.to_str().unwrap(), &source).await;
    assert!(!inner.exists(), "the output was created");
    let nested = source.join("deeper/out");
    std::fs::create_dir_all(&nested).unwrap();
    assert_one_store(&src, &format!("file:{}", nested.display()), &source).await;
    // The source inside the output's folder.
    assert_one_store(&src, dir.path().to_str().unwrap(), &source).await;
    // A symlink to the source, and a path through one into it.
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&source, &link).unwrap();
    assert_one_store(&src, link.to_str().unwrap(), &source).await;
    assert_one_store(&src, link.join("memories/x").to_str().unwrap(), &source).await;
    // Other spellings of the same path.
    let dotted = format!("{}/../source/.", source.join("memories").display());
    assert_one_store(&src, &dotted, &source).await;

    // A bind mount of the source, where this system lets us make one (root on Linux).
    let bound = dir.path().join("bound");
    std::fs::create_dir(&bound).unwrap();
    let mounted = std::process::Command::new("mount")
        .arg("--bind")
        .arg(&source)
        .arg(&bound)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        let result = tokio::spawn({
            let (src, bound, source) = (src.clone(), bound.clone(), source.clone());
            async move {
                assert_one_store(&src, bound.to_str().unwrap(), &source).await;
                assert_one_store(&src, bound.join("memories/out").to_str().unwrap(), &source).await;
            }
        })
        .await;
        let _ = std::process::Command::new("umount").arg(&bound).status();
        if let Err(e) = result {
            std::panic::resume_unwind(e.into_panic());
        }
    } else {
        eprintln!("skipping the bind mount case: `mount --bind` is not allowed here");
    }

    // A sibling folder is another store: the dream runs.
    let sibling = dir.path().join("sibling");
    let api = FakeApi::start(script()).await;
    Dream::new(&src, sibling.to_str().unwrap())
        .run(client(&api))
        .await
        .unwrap();

    // One SQLite file through a hard link, and an SQLite output inside the source folder.
    let db = dir.path().join("memory.db");
    let db_url = format!("sqlite:{}", db.display());
    fill(&*open_with(&db_url, &OpenOptions::new()).await.unwrap()).await;
    let linked = dir.path().join("linked.db");
    std::fs::hard_link(&db, &linked).unwrap();
    let before = std::fs::read(&db).unwrap();
    assert_one_store(&db_url, &format!("sqlite:{}", linked.display()), &source).await;
    assert_eq!(std::fs::read(&db).unwrap(), before);
    let inside = source.join("memories/out.db");
    assert_one_store(&src, &format!("sqlite:{}", inside.display()), &source).await;
    assert!(!inside.exists());
}
