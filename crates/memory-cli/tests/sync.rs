//! `memory sync DIR STORE` as a process: over a `memory serve` server and a `store+sqlite:`
//! database, its JSON report and exit statuses, and `--watch` until SIGTERM. The merge rules
//! themselves are memory-mounts' unit tests; the official SDK's side is tests/stores-sdk.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

use common::serve::{http, serve};
use common::{MEMORY, TIMEOUT, wait_timeout};

/// `memory sync ARGS`, bounded by [`TIMEOUT`].
fn sync(args: &[&str]) -> Output {
    let mut child = sync_command(args).spawn().expect("start memory sync");
    wait_timeout(&mut child, TIMEOUT);
    child.wait_with_output().unwrap()
}

fn sync_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(MEMORY);
    cmd.arg("sync")
        .args(args)
        .env_remove("MEMORY_STORE_API_KEY")
        .env_remove("MEMORY_SYNC_STATE_DIR")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The one JSON report of a `--json` pass.
fn report(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| {
        panic!(
            "no report; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

fn paths(report: &Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect()
}

/// The store's memories over the API: path → content.
fn remote(addr: &str, store: &str) -> Vec<(String, String)> {
    let page = http(
        addr,
        "GET",
        &format!("/v1/memory_stores/{store}/memories?view=full&limit=20"),
        "",
    );
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn create_store(addr: &str) -> String {
    let store = http(
        addr,
        "POST",
        "/v1/memory_stores",
        &json!({"name": "Notes"}).to_string(),
    );
    store["id"].as_str().unwrap().to_owned()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn two_folders_meet_through_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve(s(&dir.path().join("stores.db")));
    let store = create_store(&addr);
    http(
        &addr,
        "POST",
        &format!("/v1/memory_stores/{store}/memories"),
        &json!({"path": "/hello.md", "content": "hi"}).to_string(),
    );
    let url = format!("store+http://{addr}#{store}");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let state = dir.path().join("state");
    let pass = |folder: &Path| {
        let out = sync(&[s(folder), &url, "--json", "--state-dir", s(&state)]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        report(&out)
    };

    let first = pass(&a);
    assert_eq!(first["recovered"], "the first sync of this folder");
    assert_eq!(paths(&first, "pulled"), ["/hello.md"]);
    assert_eq!(
        std::fs::read(a.join(".anthropic-memory-store")).unwrap(),
        format!("version 1\n{store}").into_bytes()
    );
    pass(&b);
    std::fs::create_dir_all(a.join("notes")).unwrap();
    std::fs::write(a.join("notes/todo.md"), "- milk\n").unwrap();
    assert_eq!(paths(&pass(&a), "pushed"), ["/notes/todo.md"]);
    assert_eq!(paths(&pass(&b), "pulled"), ["/notes/todo.md"]);
    assert_eq!(
        std::fs::read_to_string(b.join("notes/todo.md")).unwrap(),
        "- milk\n"
    );
    // Nothing changed: the human summary says so.
    let out = sync(&[s(&a), &url, "--state-dir", s(&state)]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "in sync");
    assert_eq!(remote(&addr, &store).len(), 2);
}

#[test]
fn a_folder_without_the_marker_blocks_and_bad_stores_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve(s(&dir.path().join("stores.db")));
    let store = create_store(&addr);
    let url = format!("store+http://{addr}#{store}");
    let folder = dir.path().join("notes");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("mine.md"), "mine").unwrap();
    let state = dir.path().join("state");

    let out = sync(&[s(&folder), &url, "--json", "--state-dir", s(&state)]);
    assert_eq!(out.status.code(), Some(1));
    let blocked = report(&out)["blocked"].as_str().unwrap().to_owned();
    assert!(blocked.contains("--adopt"), "{blocked}");
    assert!(remote(&addr, &store).is_empty());

    let out = sync(&[
        s(&folder),
        &url,
        "--adopt",
        "--json",
        "--state-dir",
        s(&state),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(paths(&report(&out), "pushed"), ["/mine.md"]);

    for bad in [
        format!("sqlite:{}", s(&dir.path().join("x.db"))),
        format!("store+http://{addr}#memstore_nosuchstore"),
        format!("store+sqlite:{}#{store}", s(&dir.path().join("missing.db"))),
    ] {
        let out = sync(&[s(&folder), &bad, "--state-dir", s(&state)]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(!out.stderr.is_empty());
    }
    let out = sync(&[s(&folder), &url, "--watch", "--interval", "1s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 5s"));
}

#[test]
fn a_sqlite_store_file_is_synced_without_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let store = {
        let (_server, addr) = serve(s(&db));
        create_store(&addr)
    };
    let url = format!("store+sqlite:{}#{store}", s(&db));
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let state = dir.path().join("state");
    for folder in [&a, &b] {
        let out = sync(&[s(folder), &url, "--state-dir", s(&state)]);
        assert_eq!(out.status.code(), Some(0));
    }
    std::fs::write(b.join("plan.md"), "from b").unwrap();
    let out = sync(&[s(&b), &url, "--json", "--state-dir", s(&state)]);
    assert_eq!(paths(&report(&out), "pushed"), ["/plan.md"]);
    let out = sync(&[
        s(&a),
        &url,
        "--json",
        "--read-only",
        "--state-dir",
        s(&state),
    ]);
    assert_eq!(paths(&report(&out), "pulled"), ["/plan.md"]);
}

#[cfg(unix)]
#[test]
fn watch_syncs_on_changes_and_makes_a_last_pass_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve(s(&dir.path().join("stores.db")));
    let store = create_store(&addr);
    let url = format!("store+http://{addr}#{store}");
    let folder = dir.path().join("a");
    let state = dir.path().join("state");
    let state_arg = s(&state).to_owned();
    let mut watch = sync_command(&[
        s(&folder),
        &url,
        "--watch",
        "--interval",
        "1h",
        "--delete-after",
        "1h",
        "--json",
        "--state-dir",
        &state_arg,
    ])
    .spawn()
    .unwrap();
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !done() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{what} never happened"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for("the first pass", &|| {
        folder.join(".anthropic-memory-store").exists()
    });
    // A change is synced long before the hour's pass.
    std::fs::write(folder.join("new.md"), "new").unwrap();
    wait_for("the upload", &|| remote(&addr, &store).len() == 1);
    // Another sync of the same pair is refused while this one runs.
    let out = sync(&[s(&folder), &url, "--state-dir", s(&state)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("another `memory sync`"));
    // Deleted, then SIGTERM: the last pass deletes without waiting the hour.
    std::fs::remove_file(folder.join("new.md")).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let killed = Command::new("kill")
        .args(["-TERM", &watch.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(wait_timeout(&mut watch, TIMEOUT).success());
    let out = watch.wait_with_output().unwrap();
    let last = report(&out);
    assert!(
        paths(&last, "deleted_remote") == ["/new.md"] || remote(&addr, &store).is_empty(),
        "{last}"
    );
    assert!(remote(&addr, &store).is_empty());
}
