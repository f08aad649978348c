//! `memory search`: ranked hits as text or JSON, on folder and SQLite stores, with the exit
//! statuses of the table in `memory --help`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const MEMORY: &str = env!("CARGO_BIN_EXE_memory");

fn memory(args: &[&str]) -> Output {
    Command::new(MEMORY)
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .output()
        .expect("run memory")
}

fn put(store: &str, path: &str, text: &str, dir: &Path) {
    let file = dir.join("input.txt");
    std::fs::write(&file, text).unwrap();
    let out = memory(&["put", path, file.to_str().unwrap(), "--store", store]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn seed(store: &str, dir: &Path) {
    put(
        store,
        "/memories/ops/deploy.md",
        "# Deploys\nRoll back with make rollback.\nRollback twice if the rollback fails.\n",
        dir,
    );
    put(
        store,
        "/memories/ops/oncall.md",
        "Pager rota.\nRollback is the last resort.\n",
        dir,
    );
    put(
        store,
        "/memories/opsx/other.md",
        "rollback elsewhere\n",
        dir,
    );
    put(
        store,
        "/memories/.trash/old.md",
        "rollback in the trash\n",
        dir,
    );
    put(store, "/memories/café.md", "Crème brûlée recipe\n", dir);
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON object: {text}");
    serde_json::from_str(&text).unwrap()
}

fn paths(value: &Value) -> Vec<String> {
    value["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect()
}

fn check_store(store: &str, dir: &Path) {
    seed(store, dir);
    let value = json_of(&memory(&["search", "rollback", "--store", store, "--json"]));
    assert_eq!(value["query"], "rollback");
    let mut found = paths(&value);
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "/memories/ops/deploy.md",
            "/memories/ops/oncall.md",
            "/memories/opsx/other.md"
        ],
        "hidden folders skipped: {value}"
    );
    let scores: Vec<f64> = value["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {value}"
    );
    let first = value["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "/memories/ops/deploy.md")
        .unwrap();
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["path", "score", "lines", "snippet"],
        "exactly these fields, in order"
    );
    assert_eq!(first["lines"], json!([2, 3]));
    assert_eq!(first["snippet"], "Roll back with make rollback.");

    // --path keeps whole folders; --limit cuts.
    let value = json_of(&memory(&[
        "search",
        "rollback",
        "--store",
        store,
        "--json",
        "--path",
        "/memories/ops",
    ]));
    let mut found = paths(&value);
    found.sort_unstable();
    assert_eq!(
        found,
        ["/memories/ops/deploy.md", "/memories/ops/oncall.md"]
    );
    let value = json_of(&memory(&[
        "search", "rollback", "--store", store, "--json", "--limit", "1",
    ]));
    assert_eq!(paths(&value).len(), 1);
    // A rare word ranks its file first; no word is required, `+` requires one.
    let value = json_of(&memory(&[
        "search",
        "pager rollback",
        "--store",
        store,
        "--json",
    ]));
    assert_eq!(paths(&value)[0], "/memories/ops/oncall.md");
    let value = json_of(&memory(&[
        "search",
        "+pager rollback",
        "--store",
        store,
        "--json",
    ]));
    assert_eq!(paths(&value), ["/memories/ops/oncall.md"]);

    // Phrases, prefixes and Unicode.
    let value = json_of(&memory(&[
        "search",
        "\"last resort\"",
        "--store",
        store,
        "--json",
    ]));
    assert_eq!(paths(&value), ["/memories/ops/oncall.md"]);
    let value = json_of(&memory(&[
        "search",
        "roll*",
        "--store",
        store,
        "--json",
        "--path",
        "/memories/ops",
    ]));
    assert_eq!(paths(&value).len(), 2);
    let value = json_of(&memory(&[
        "search",
        "CREME brulee",
        "--store",
        store,
        "--json",
    ]));
    assert_eq!(paths(&value), ["/memories/café.md"]);

    // Nothing matching: an empty list, exit 0.
    let value = json_of(&memory(&["search", "zebra", "--store", store, "--json"]));
    assert_eq!(value, json!({"query": "zebra", "results": []}));
    let out = memory(&["search", "zebra", "--store", store]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());

    // Text: path and lines, then the snippet.
    let out = memory(&["search", "\"make rollback\"", "--store", store]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "/memories/ops/deploy.md  line 2\n    Roll back with make rollback.\n"
    );
}

#[cfg(feature = "fs")]
#[test]
fn searches_a_folder_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    check_store(store.to_str().unwrap(), dir.path());
    // A file written by hand is found by the next search.
    std::fs::write(store.join("memories/by-hand.md"), "a narwhal note\n").unwrap();
    let value = json_of(&memory(&[
        "search",
        "narwhal",
        "--store",
        store.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(paths(&value), ["/memories/by-hand.md"]);
}

#[cfg(feature = "sqlite")]
#[test]
fn searches_a_sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("memory.db").display());
    check_store(&url, dir.path());
}

#[test]
fn bad_queries_and_options_exit_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(store.join("memories")).unwrap();
    let store = store.to_str().unwrap();
    for (args, says) in [
        (
            vec!["search", "\"unclosed"],
            "invalid query: a double quote opens a phrase that is never closed",
        ),
        (vec!["search", "*"], "invalid query"),
        (
            vec!["search", "!!!"],
            "invalid query: the query has no word to search for",
        ),
        (
            vec!["search", "ok", "--limit", "0"],
            "invalid query: the result limit must be between 1 and 100",
        ),
        (vec!["search", "ok", "--limit", "101"], "between 1 and 100"),
        (vec!["search", "ok", "--path", "/etc"], "/memories"),
    ] {
        let mut args = args.clone();
        args.extend(["--store", store]);
        let out = memory(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("memory: ") && stderr.contains(says),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_missing_store_is_not_found_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("nowhere");
    let out = memory(&["search", "x", "--store", store.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!store.exists());
}

#[test]
fn help_explains_the_query_syntax() {
    let out = memory(&["search", "--help"]);
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "\"exact phrase\"",
        "deploy*",
        "--json",
        "--path",
        "--limit",
        "node_modules",
        "Exit status",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}
