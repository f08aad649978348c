//! `memory dream` against a fake Messages API: the real binary, real folders; the source left
//! byte for byte as it was, the output's changes listed.
#![cfg(feature = "fs")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use serde_json::json;

mod common;

use common::MEMORY;
use common::dream::memory_dream;

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

/// `memory ARGS` with standard input `stdin` and no store, key or API variables of the
/// caller's.
fn memory(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(MEMORY)
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start memory");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// An encrypted folder store dreamed into an encrypted SQLite store under another key: the
/// source byte for byte as it was, the output readable only with its own key, and a wrong key
/// (or none) exit 2 before any request is sent.
#[cfg(all(feature = "encrypted", feature = "sqlite"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dream_between_encrypted_stores_uses_each_ones_key() {
    let dir = tempfile::tempdir().unwrap();
    let (from_key, into_key) = (dir.path().join("from.key"), dir.path().join("into.key"));
    for key in [&from_key, &into_key] {
        let out = memory(&["keygen", key.to_str().unwrap()], b"");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (from_key, into_key) = (from_key.to_str().unwrap(), into_key.to_str().unwrap());
    let source = dir.path().join("source");
    let source_url = source.to_str().unwrap();
    for (path, text) in [
        ("/memories/a.md", "a secret\n"),
        ("/memories/b.md", "b secret\n"),
    ] {
        let out = memory(
            &[
                "put",
                "--store",
                source_url,
                "--encryption-key-file",
                from_key,
                path,
            ],
            text.as_bytes(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let before = snapshot(&source);
    let db = dir.path().join("out.db");
    let into = format!("sqlite:{}", db.display());

    // A wrong key for the source, or none: exit 2, nothing sent, no output made.
    for keys in [
        vec!["--from-key-file", into_key, "--into-key-file", into_key],
        vec!["--into-key-file", into_key],
    ] {
        let api = FakeApi::start(script()).await;
        let mut args = vec!["--from", source_url, "--into", &into];
        args.extend(keys);
        let out = memory_dream(&api, &args).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("dream's source"), "{stderr}");
        assert!(
            stderr.contains("key") || stderr.contains("encrypted"),
            "{stderr}"
        );
        assert!(api.requests().is_empty(), "a request was sent");
        assert!(!db.exists(), "the output was made");
    }

    let api = FakeApi::start(script()).await;
    let out = memory_dream(
        &api,
        &[
            "--from",
            source_url,
            "--from-key-file",
            from_key,
            "--into",
            &into,
            "--into-key-file",
            into_key,
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "created /memories/all.md\n"
    );
    assert_eq!(snapshot(&source), before, "the source changed");
    // Claude read the source's plaintext.
    let listing = api.requests()[1].json().to_string();
    assert!(
        listing.contains("a.md") && listing.contains("b.md"),
        "{listing}"
    );
    // The output is ciphertext on disk, readable with its key only.
    let raw = std::fs::read(&db).unwrap();
    assert!(
        !raw.windows(7).any(|w| w == b"a and b"),
        "plaintext in the output file"
    );
    let cat = |key: Option<&str>| {
        let mut args = vec!["cat", "--store", &into];
        if let Some(key) = key {
            args.extend(["--encryption-key-file", key]);
        }
        args.push("/memories/all.md");
        memory(&args, b"")
    };
    let out = cat(Some(into_key));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a and b\n");
    for key in [Some(from_key), None] {
        let out = cat(key);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }

    // MEMORY_ENCRYPTION_KEY_FILE is the default of both keys: the output is encrypted under
    // the source's key.
    let api = FakeApi::start(script()).await;
    let same = format!("sqlite:{}", dir.path().join("same.db").display());
    let mut cmd = Command::new(MEMORY);
    cmd.args(["dream", "--from", source_url, "--into", &same])
        .env_remove("MEMORY_STORE")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env("MEMORY_ENCRYPTION_KEY_FILE", from_key)
        .env("ANTHROPIC_API_KEY", "sk-cli-test")
        .env("ANTHROPIC_BASE_URL", api.url());
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = memory(
        &[
            "cat",
            "--store",
            &same,
            "--encryption-key-file",
            from_key,
            "/memories/all.md",
        ],
        b"",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a and b\n");
    assert_eq!(snapshot(&source), before, "the source changed");

    // A forced dream into the encrypted output under the wrong key: exit 2, nothing sent.
    let api = FakeApi::start(script()).await;
    let out = memory_dream(
        &api,
        &[
            "--from",
            source_url,
            "--from-key-file",
            from_key,
            "--into",
            &into,
            "--into-key-file",
            from_key,
            "--force",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("dream's output"), "{stderr}");
    assert!(api.requests().is_empty(), "a request was sent");
}

/// `ANTHROPIC_AUTH_TOKEN` alone is a credential, sent as `Authorization: Bearer`; neither it
/// nor an API key shows in the output, the logs or an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auth_token_is_sent_as_a_bearer_and_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    std::fs::create_dir_all(source.join("memories")).unwrap();
    std::fs::write(source.join("memories/a.md"), "a\n").unwrap();
    let run = |api: &FakeApi, into: &Path, key: Option<&str>| {
        let mut cmd = Command::new(MEMORY);
        cmd.args(["dream", "--from", source.to_str().unwrap(), "--into"])
            .arg(into)
            .env_remove("MEMORY_STORE")
            .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
            .env_remove("ANTHROPIC_API_KEY")
            .env("ANTHROPIC_AUTH_TOKEN", "tok-very-secret")
            .env("ANTHROPIC_BASE_URL", api.url())
            .env("RUST_LOG", "trace");
        if let Some(key) = key {
            cmd.env("ANTHROPIC_API_KEY", key);
        }
        cmd
    };
    let api = FakeApi::start(script()).await;
    let mut cmd = run(&api, &dir.path().join("out1"), None);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let sent = api.requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some("Bearer tok-very-secret")
    );
    assert_eq!(sent[0].header("x-api-key"), None);
    assert!(!stderr.contains("very-secret"), "{stderr}");

    // Refused by the API, with both set: both sent, neither printed.
    let api = FakeApi::start(vec![memory_runner::testing::Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    )])
    .await;
    let mut cmd = run(&api, &dir.path().join("out2"), Some("sk-also-secret"));
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("authentication_error"), "{stderr}");
    let sent = api.requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some("Bearer tok-very-secret")
    );
    assert_eq!(sent[0].header("x-api-key"), Some("sk-also-secret"));
    let printed = format!("{stderr}{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        !printed.contains("very-secret") && !printed.contains("also-secret"),
        "{printed}"
    );
}
