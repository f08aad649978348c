//! `memory dream` against a fake Messages API: the real binary, real folders; the source left
//! byte for byte as it was, the output's changes listed.
#![cfg(feature = "fs")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use serde_json::json;

const MEMORY: &str = env!("CARGO_BIN_EXE_memory");

async fn memory_dream(api: &FakeApi, args: &[&str]) -> Output {
    let mut cmd = Command::new(MEMORY);
    cmd.arg("dream")
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .env("ANTHROPIC_API_KEY", "sk-cli-test")
        .env("ANTHROPIC_BASE_URL", api.url())
        .env("RUST_LOG", "warn");
    let child = tokio::task::spawn_blocking(move || cmd.output());
    tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("memory dream finished in time")
        .expect("join")
        .expect("start memory")
}

/// Every entry below `dir`, hidden ones included, with its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                stack.push(path.clone());
                Vec::new()
            };
            out.insert(
                path.strip_prefix(dir).unwrap().display().to_string(),
                (bytes, meta.modified().unwrap()),
            );
        }
    }
    out
}

fn script() -> Vec<Reply> {
    vec![
        Reply::message(tool_use(
            Some("Reading."),
            &[(
                "t1",
                "memory",
                json!({"command": "view", "path": "/memories/source"}),
            )],
        )),
        Reply::message(tool_use(
            None,
            &[
                (
                    "t2",
                    "memory",
                    json!({"command": "delete", "path": "/memories/source/a.md"}),
                ),
                (
                    "t3",
                    "memory",
                    json!({"command": "create", "path": "/memories/output/all.md", "file_text": "a and b\n"}),
                ),
            ],
        )),
        Reply::message(end_turn("Merged a and b.")),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dream_lists_what_it_wrote_and_leaves_the_source_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    std::fs::create_dir_all(source.join("memories")).unwrap();
    std::fs::write(source.join("memories/a.md"), "a\n").unwrap();
    std::fs::write(source.join("memories/b.md"), "b\n").unwrap();
    let before = snapshot(&source);
    for (n, extra) in [(1, vec![]), (2, vec!["--no-stream", "--force"])] {
        let output = dir.path().join(format!("output{n}"));
        let api = FakeApi::start(script()).await;
        let mut args = vec![
            "--from",
            source.to_str().unwrap(),
            "--into",
            output.to_str().unwrap(),
            "--session-id",
            "sesn_cli-dream",
        ];
        args.extend(&extra);
        let out = memory_dream(&api, &args).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "created /memories/all.md\n"
        );
        assert!(
            stderr.contains(
                "[memory] delete /memories/source/a.md: error: Cannot change /memories/source/a.md: /memories/source is read-only"
            ),
            "{stderr}"
        );
        assert!(stderr.contains("\nMerged a and b.\n"), "{stderr}");
        assert!(
            stderr.contains("the dream created 1, changed 0 and deleted 0 files"),
            "{stderr}"
        );
        assert_eq!(snapshot(&source), before, "the source changed");
        assert_eq!(
            std::fs::read_to_string(output.join("memories/all.md")).unwrap(),
            "a and b\n"
        );
    }
    // An output that holds files needs --force: exit 4, nothing sent.
    let api = FakeApi::start(script()).await;
    let output = dir.path().join("output1");
    let out = memory_dream(
        &api,
        &[
            "--from",
            source.to_str().unwrap(),
            "--into",
            output.to_str().unwrap(),
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert!(api.requests().is_empty());
    assert_eq!(snapshot(&source), before);
}

#[tokio::test]
async fn a_bad_session_id_exits_2_before_anything_is_opened() {
    let api = FakeApi::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let (from, into) = (dir.path().join("from"), dir.path().join("into"));
    let out = memory_dream(
        &api,
        &[
            "--from",
            from.to_str().unwrap(),
            "--into",
            into.to_str().unwrap(),
            "--session-id",
            "bad id!",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("1 to 64 characters from [0-9A-Za-z_-]"),
        "{stderr}"
    );
    assert!(!from.exists() && !into.exists(), "a store was opened");
    assert!(api.requests().is_empty(), "a request was sent");
}
