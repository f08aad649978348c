//! The reading commands (`ls`, `cat`, `search`, `stats`, `export`, `copy`'s source and
//! `mcp --read-only`) open their store read-only: a folder that holds only `memories/` gets
//! nothing beside it (no `.memories.lock`, `.memories.count` or `.memory-tmp`), and a folder
//! the user may read but not write (here a read-only bind mount, which root cannot write
//! either) can be read.

#![cfg(feature = "fs")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

mod common;

use common::run as memory;

/// Every path below `dir`, relative and sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            if path.is_dir() {
                todo.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A folder store written by hand: `memories/` and two files, nothing else.
fn seeded(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    std::fs::create_dir_all(store.join("memories/notes")).unwrap();
    std::fs::write(store.join("memories/prefs.md"), "Prefers metric units.\n").unwrap();
    std::fs::write(store.join("memories/notes/today.md"), "Deploy at noon.\n").unwrap();
    store
}

/// Runs every reading command on the store at `store` and checks each succeeds.
fn read_everything(store: &Path, scratch: &Path) {
    let url = store.to_str().unwrap();
    let copy_to = scratch.join("copied");
    let mcp_input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory", "arguments": {"command": "view", "path": "/memories/prefs.md"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_search", "arguments": {"query": "deploy"}}}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let runs: Vec<(Vec<&str>, &[u8], &str)> = vec![
        (vec!["ls", "--store", url], b"", "today.md"),
        (
            vec!["ls", "--json", "--store", url],
            b"",
            "\"file_count\":2",
        ),
        (
            vec!["cat", "/memories/prefs.md", "--store", url],
            b"",
            "metric",
        ),
        (vec!["search", "deploy", "--store", url], b"", "today.md"),
        (vec!["stats", "--store", url], b"", "2"),
        (
            vec!["export", "--quiet", "--store", url],
            b"",
            "Deploy at noon.",
        ),
        (
            vec!["copy", url, copy_to.to_str().unwrap(), "--quiet"],
            b"",
            "",
        ),
        (
            vec!["mcp", "--read-only", "--store", url],
            mcp_input.as_bytes(),
            "Prefers metric units.",
        ),
    ];
    for (args, stdin, says) in runs {
        let out = memory(&args, stdin);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stdout.contains(says), "{args:?}: {stdout}");
        if args[0] == "mcp" {
            assert!(stdout.contains("today.md"), "memory_search: {stdout}");
        }
    }
    assert_eq!(
        std::fs::read(copy_to.join("memories/prefs.md")).unwrap(),
        b"Prefers metric units.\n"
    );
}

#[test]
fn reading_commands_create_nothing_beside_the_memories() {
    let tmp = tempfile::tempdir().unwrap();
    let store = seeded(tmp.path());
    let before = tree(&store);
    read_everything(&store, tmp.path());
    assert_eq!(
        tree(&store),
        before,
        "the reading commands changed the folder"
    );
}

/// Unmounts the read-only bind mount when the test ends, even when it fails.
struct BindMount(PathBuf);

impl Drop for BindMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[cfg(target_os = "linux")]
#[test]
fn reading_commands_work_on_a_store_nobody_may_write() {
    let tmp = tempfile::tempdir().unwrap();
    let store = seeded(tmp.path());
    let mounted = tmp.path().join("read-only");
    std::fs::create_dir(&mounted).unwrap();
    let bound = Command::new("mount")
        .arg("--bind")
        .arg(&store)
        .arg(&mounted)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !bound {
        eprintln!("skipping: cannot bind-mount here (not root, or no mount namespace)");
        return;
    }
    let guard = BindMount(mounted.clone());
    let remounted = Command::new("mount")
        .args(["-o", "remount,bind,ro"])
        .arg(&mounted)
        .status()
        .is_ok_and(|s| s.success());
    assert!(remounted, "remounting the bind mount read-only");
    // Not even root writes there.
    assert!(std::fs::write(mounted.join("probe"), "x").is_err());
    let before = tree(&store);
    read_everything(&mounted, tmp.path());
    assert_eq!(tree(&store), before);
    // A writing command is refused (the file system says so), and the store is unchanged.
    let out = memory(
        &[
            "put",
            "/memories/x.md",
            "-",
            "--store",
            mounted.to_str().unwrap(),
        ],
        b"x",
    );
    assert!(!out.status.success());
    drop(guard);
    assert_eq!(tree(&store), before);
}
