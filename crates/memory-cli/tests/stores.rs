//! `memory serve` and `memory store ...` as processes: the server writes a database over HTTP,
//! stops on SIGTERM, and the admin commands read and change that database.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;

use common::serve::{http, listening_address};

const BIN: &str = common::MEMORY;

fn store_cmd(db: &Path, args: &[&str]) -> (i32, Vec<Value>) {
    let out = Command::new(BIN)
        .arg("store")
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

#[test]
fn serve_then_administer_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let mut server = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = listening_address(&mut server).unwrap_or_else(|first| panic!("{first}"));
    assert_eq!(http(&addr, "GET", "/health", "")["status"], "ok");
    let store = http(&addr, "POST", "/v1/memory_stores", r#"{"name":"cli"}"#);
    let sid = store["id"].as_str().unwrap().to_owned();
    let base = format!("/v1/memory_stores/{sid}/memories");
    let m = http(
        &addr,
        "POST",
        &base,
        r#"{"path":"/a/b.md","content":"first"}"#,
    );
    let mid = m["id"].as_str().unwrap().to_owned();
    http(
        &addr,
        "POST",
        &format!("{base}/{mid}"),
        r#"{"content":"second"}"#,
    );
    // SIGTERM: a clean stop.
    let status = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(server.wait().unwrap().code(), Some(0));

    let (code, stores) = store_cmd(&db, &["list"]);
    assert_eq!(code, 0);
    assert_eq!(stores[0]["id"], sid.as_str());
    let (_, items) = store_cmd(&db, &["memories", &sid, "--depth", "1"]);
    assert_eq!(items[0]["type"], "memory_prefix");
    let (_, history) = store_cmd(&db, &["history", &sid, &mid]);
    assert_eq!(history.len(), 2);
    let first_version = history[1]["id"].as_str().unwrap().to_owned();
    // Restore the first content: a new version by the admin user.
    let (code, restored) = store_cmd(
        &db,
        &["restore", &sid, &first_version, "--as-user", "user_admin"],
    );
    assert_eq!(code, 0);
    assert_eq!(restored[0]["id"], mid.as_str());
    let (_, history) = store_cmd(&db, &["history", &sid, &mid, "--full"]);
    assert_eq!(history.len(), 3);
    assert_eq!(history[0]["content"], "first");
    assert_eq!(history[0]["created_by"]["user_id"], "user_admin");
    // Redact the old version; the head is refused (exit 1).
    let (code, red) = store_cmd(&db, &["redact", &sid, &first_version]);
    assert_eq!(code, 0);
    assert_eq!(red[0]["content_sha256"], Value::Null);
    let head = history[0]["id"].as_str().unwrap();
    assert_eq!(store_cmd(&db, &["redact", &sid, head]).0, 1);
    // Export: the store, its memories and every version, with content.
    let (_, export) = store_cmd(&db, &["export", &sid]);
    assert_eq!(export[0]["memory_store"]["id"], sid.as_str());
    assert_eq!(export[0]["memories"][0]["content"], "first");
    assert_eq!(export[0]["memory_versions"].as_array().unwrap().len(), 3);
    // What does not exist is exit 3, with a message: an unknown store, an unknown memory.
    assert_eq!(store_cmd(&db, &["history", "memstore_nope", &mid]).0, 3);
    let out = Command::new(BIN)
        .args(["store", "history", &sid, "mem_nope", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("has no memory mem_nope"), "{stderr}");
}

#[test]
fn serve_refuses_open_binds_without_keys_and_bad_key_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let out = Command::new(BIN)
        .args(["serve", "--listen", "0.0.0.0:0", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--api-keys"));
    let keys = dir.path().join("keys.txt");
    std::fs::write(&keys, "not a key line\n").unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(&db)
        .arg("--api-keys")
        .arg(&keys)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not a key line"));
}
