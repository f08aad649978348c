//! The history commands of the real `memory` binary (log, cat --version, diff, restore,
//! redact, and --session-id on the commands that write) on a folder, a SQLite file, an
//! encrypted folder, S3 (moto, `MEMORY_TEST_S3_ENDPOINT`) and PostgreSQL
//! (`MEMORY_TEST_POSTGRES_URL`): the versions each change leaves, their JSON, exit statuses
//! and messages. Each scenario is a function of the store; the tests run them on each kind.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;

use common::run;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 stdout")
}

/// Asserts the exit status, showing stderr when it differs.
#[track_caller]
fn expect_status(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        stderr(out)
    );
}

/// One store under test: its URL and, for an encrypted one, the key file.
struct Store {
    url: String,
    key: Option<PathBuf>,
    /// The folder the store lives in, which no message may name.
    dir: PathBuf,
    /// The S3 test server an `s3://` store is on.
    endpoint: Option<String>,
}

impl Store {
    fn folder(dir: &Path) -> Store {
        Store {
            url: dir.join("folder").to_str().unwrap().to_owned(),
            key: None,
            dir: dir.to_owned(),
            endpoint: None,
        }
    }

    fn sqlite(dir: &Path) -> Store {
        Store {
            url: format!("sqlite:{}", dir.join("memory.db").to_str().unwrap()),
            key: None,
            dir: dir.to_owned(),
            endpoint: None,
        }
    }

    /// A prefix of a new bucket on the S3 test server (`MEMORY_TEST_S3_ENDPOINT`).
    fn s3(dir: &Path, test: &str, prefix: &str) -> Store {
        let (endpoint, bucket) = common::s3::s3_bucket(test);
        Store {
            url: format!("s3://{bucket}/{prefix}"),
            key: None,
            dir: dir.to_owned(),
            endpoint: Some(endpoint),
        }
    }

    /// A schema of its own on the test PostgreSQL (`MEMORY_TEST_POSTGRES_URL`).
    fn postgres(dir: &Path, prefix: &str) -> Store {
        let schema = common::postgres::unique_schema(prefix);
        Store {
            url: common::postgres::pg_url(&format!("schema={schema}")),
            key: None,
            dir: dir.to_owned(),
            endpoint: None,
        }
    }

    fn encrypted(dir: &Path) -> Store {
        let key = dir.join("key.hex");
        expect_status(&run(&["keygen", key.to_str().unwrap()], b""), 0);
        Store {
            url: dir.join("sealed").to_str().unwrap().to_owned(),
            key: Some(key),
            dir: dir.to_owned(),
            endpoint: None,
        }
    }

    /// `memory COMMAND ARGS --store URL [--encryption-key-file KEY]`.
    fn run(&self, command: &[&str], stdin: &[u8]) -> Output {
        let mut args: Vec<&str> = command.to_vec();
        args.extend(["--store", &self.url]);
        if let Some(key) = &self.key {
            args.extend(["--encryption-key-file", key.to_str().unwrap()]);
        }
        let out = match &self.endpoint {
            None => run(&args, stdin),
            Some(endpoint) => {
                let mut command = common::memory_command(&args);
                common::s3::point_at(&mut command, endpoint);
                common::feed_and_wait(command.spawn().expect("start memory"), stdin)
            }
        };
        // The store's URL, as the user gave it, may be named; nothing else of the host.
        let host = self.dir.to_str().unwrap();
        let said = stderr(&out).replace(&self.url, "URL");
        assert!(
            !said.contains(host),
            "{command:?} names the host path: {}",
            stderr(&out)
        );
        out
    }

    #[track_caller]
    fn ok(&self, command: &[&str], stdin: &[u8]) -> Output {
        let out = self.run(command, stdin);
        expect_status(&out, 0);
        out
    }

    /// `memory put PATH` of `contents` (the command's extra arguments after it).
    #[track_caller]
    fn put(&self, path: &str, contents: &str, extra: &[&str]) {
        let mut command = vec!["put", path];
        command.extend(extra);
        self.ok(&command, contents.as_bytes());
    }

    /// `memory log PATH --json`'s versions.
    #[track_caller]
    fn log(&self, path: &str, extra: &[&str]) -> Vec<Value> {
        let mut command = vec!["log", path, "--json"];
        command.extend(extra);
        let out = self.ok(&command, b"");
        let log: Value = serde_json::from_slice(&out.stdout).expect("log --json is JSON");
        assert_eq!(log["path"], path);
        log["versions"].as_array().expect("versions").clone()
    }
}

/// The stores every scenario runs on, each in its own folder of `dir`.
fn stores(dir: &Path) -> Vec<Store> {
    let folder = dir.join("f");
    let sqlite = dir.join("s");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::create_dir_all(&sqlite).unwrap();
    vec![Store::folder(&folder), Store::sqlite(&sqlite)]
}

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn operations(versions: &[Value]) -> Vec<&str> {
    versions
        .iter()
        .map(|v| v["operation"].as_str().unwrap())
        .collect()
}

fn numbers(versions: &[Value]) -> Vec<u64> {
    versions
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect()
}

const NOTES: &str = "/memories/notes.md";

/// One scenario, run on each kind of store.
type Scenario = fn(&Store);

/// A create, five edits and a delete: seven versions, newest first; the first one's bytes;
/// a diff between two; a restore that brings the file back as an eighth.
fn create_edit_delete_restore(store: &Store) {
    let texts: Vec<String> = (0..6).map(|i| format!("title\nline {i}\nend\n")).collect();
    store.put(NOTES, &texts[0], &["--no-overwrite"]);
    for text in &texts[1..] {
        store.put(NOTES, text, &[]);
    }
    store.ok(&["rm", NOTES], b"");

    let versions = store.log(NOTES, &[]);
    assert_eq!(numbers(&versions), [7, 6, 5, 4, 3, 2, 1], "{versions:?}");
    assert_eq!(
        operations(&versions),
        [
            "deleted", "modified", "modified", "modified", "modified", "modified", "created"
        ]
    );
    let first = &versions[6];
    assert_eq!(first["size"], texts[0].len());
    assert_eq!(first["sha256"], sha256(&texts[0]));
    assert_eq!(first["path"], NOTES);
    assert!(first.get("old_path").is_none() && first.get("session").is_none());
    assert!(first.get("redacted").is_none());
    let time = first["time"].as_str().unwrap();
    assert!(time.ends_with('Z') && time.len() == 20, "{time}");
    assert_eq!(versions[0]["sha256"], Value::Null);
    assert_eq!(versions[0]["size"], 0);
    let times: Vec<&str> = versions
        .iter()
        .map(|v| v["time"].as_str().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");

    // The text log: one line a version, the newest first.
    let text = stdout(&store.ok(&["log", NOTES], b""));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert!(lines[0].trim_start().starts_with("7 ") && lines[0].contains("deleted"));
    assert!(lines[6].contains("created") && lines[6].contains(&sha256(&texts[0])[..12]));
    assert!(lines[6].contains(NOTES), "{text}");

    assert_eq!(
        store.ok(&["cat", NOTES, "--version", "1"], b"").stdout,
        texts[0].as_bytes()
    );

    let diff = store.run(&["diff", NOTES, "--from", "1", "--to", "2"], b"");
    expect_status(&diff, 1);
    let diff = stdout(&diff);
    assert!(diff.contains("-line 0\n+line 1\n"), "{diff}");
    assert!(
        diff.contains("--- /memories/notes.md (version 1)"),
        "{diff}"
    );
    assert!(
        diff.contains("+++ /memories/notes.md (version 2)"),
        "{diff}"
    );
    let same = store.run(&["diff", NOTES, "--from", "3", "--to", "3"], b"");
    expect_status(&same, 0);
    assert!(same.stdout.is_empty());

    let out = stdout(&store.ok(&["restore", NOTES, "--version", "6"], b""));
    assert!(
        out.contains("restored /memories/notes.md to version 6"),
        "{out}"
    );
    assert_eq!(store.ok(&["cat", NOTES], b"").stdout, texts[5].as_bytes());
    let versions = store.log(NOTES, &[]);
    assert_eq!(versions.len(), 8);
    assert_eq!(versions[0]["operation"], "restored");
    assert_eq!(versions[0]["sha256"], sha256(&texts[5]));

    // The default diff: the version before the current one (the deletion) against the file.
    let diff = store.run(&["diff", NOTES], b"");
    expect_status(&diff, 1);
    assert!(stdout(&diff).contains("+line 5"), "{}", stdout(&diff));
    // Written again as it is: nothing differs.
    store.put(NOTES, &texts[5], &[]);
    expect_status(&store.run(&["diff", NOTES], b""), 0);
}

#[test]
fn a_create_five_edits_and_a_delete_are_seven_versions() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        create_edit_delete_restore(&store);
    }
}

#[test]
fn an_encrypted_store_keeps_its_history_encrypted() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::encrypted(dir.path());
    create_edit_delete_restore(&store);
    // No plaintext of any version anywhere in the folder.
    for entry in walk(&dir.path().join("sealed")) {
        let bytes = std::fs::read(&entry).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("line 0"),
            "{} holds plaintext",
            entry.display()
        );
    }
    // Without the key, the history is not read either.
    let bare = Store {
        url: store.url.clone(),
        key: None,
        dir: dir.path().to_owned(),
        endpoint: None,
    };
    let out = bare.run(&["log", NOTES], b"");
    expect_status(&out, 2);
    assert!(stderr(&out).contains("encrypted"), "{}", stderr(&out));
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn rename_keeps_the_history(store: &Store) {
    store.put("/memories/draft.md", "one\n", &[]);
    store.put("/memories/draft.md", "two\n", &[]);
    store.ok(&["mv", "/memories/draft.md", "/memories/final.md"], b"");
    let versions = store.log("/memories/final.md", &[]);
    assert_eq!(operations(&versions), ["renamed", "modified", "created"]);
    assert_eq!(versions[0]["old_path"], "/memories/draft.md");
    assert_eq!(versions[0]["path"], "/memories/final.md");
    assert_eq!(
        store
            .ok(&["cat", "/memories/final.md", "--version", "1"], b"")
            .stdout,
        b"one\n"
    );
    let text = stdout(&store.ok(&["log", "/memories/final.md"], b""));
    assert!(text.contains("from /memories/draft.md"), "{text}");
}

#[test]
fn a_rename_keeps_the_history_under_the_new_path() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        rename_keeps_the_history(&store);
    }
}

fn history_max_keeps_three(store: &Store) {
    for i in 0..6 {
        store.put(
            NOTES,
            &format!("v{i}\n"),
            &["--store-option", "history_max=3"],
        );
    }
    let versions = store.log(NOTES, &["--store-option", "history_max=3"]);
    assert_eq!(numbers(&versions), [6, 5, 4], "{versions:?}");
    let out = store.run(&["cat", NOTES, "--version", "1"], b"");
    expect_status(&out, 2);
    assert!(
        stderr(&out).contains("has no version 1"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn history_max_keeps_that_many_versions() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        history_max_keeps_three(&store);
    }
}

fn history_off_keeps_none(store: &Store) {
    store.put(NOTES, "x\n", &["--store-option", "history=off"]);
    store.put(NOTES, "y\n", &["--store-option", "history=off"]);
    for command in [
        vec!["log", NOTES],
        vec!["cat", NOTES, "--version", "1"],
        vec!["restore", NOTES, "--version", "1"],
        vec!["redact", NOTES, "--all"],
        vec!["diff", NOTES],
    ] {
        let mut args = command.clone();
        args.extend(["--store-option", "history=off"]);
        let out = store.run(&args, b"");
        expect_status(&out, 2);
        assert!(
            stderr(&out).contains("history is off for this store"),
            "{command:?}: {}",
            stderr(&out)
        );
    }
    // Nothing was recorded while it was off: no version holds the first write's content,
    // and at most one is there, the current file as a store with history on finds it
    // (memory-s3 shows a file without a record as one `created` version; the SQL stores
    // record it when it next changes).
    let log = store.log(NOTES, &[]);
    assert!(log.len() <= 1, "{log:?}");
    let first = memory_core::history::sha256_hex(b"x\n");
    assert!(log.iter().all(|v| v["sha256"] != first.as_str()), "{log:?}");
}

#[test]
fn with_history_off_log_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        history_off_keeps_none(&store);
    }
    // The in-memory store too.
    let out = run(&["log", "--store", "mem:?history=off"], b"");
    expect_status(&out, 2);
    assert!(stderr(&out).contains("history is off"), "{}", stderr(&out));
}

fn sessions_are_logged(store: &Store) {
    store.put(NOTES, "a\n", &["--session-id", "sesn_put"]);
    store.ok(
        &["mv", NOTES, "/memories/b.md", "--session-id", "sesn_mv"],
        b"",
    );
    store.ok(
        &[
            "restore",
            "/memories/b.md",
            "--version",
            "1",
            "--session-id",
            "sesn_restore",
        ],
        b"",
    );
    store.ok(&["rm", "/memories/b.md", "--session-id", "sesn_rm"], b"");
    // The memory tool's commands through exec.
    let create = r#"{"command": "create", "path": "/memories/c.md", "file_text": "c"}"#;
    let out = store.ok(&["exec", "--session-id", "sesn_exec"], create.as_bytes());
    assert!(
        stdout(&out).contains("\"is_error\":false"),
        "{}",
        stdout(&out)
    );

    let sessions = |path: &str| -> Vec<String> {
        store
            .log(path, &[])
            .iter()
            .map(|v| v["session"].as_str().unwrap_or("-").to_owned())
            .collect()
    };
    assert_eq!(
        sessions("/memories/b.md"),
        ["sesn_rm", "sesn_restore", "sesn_mv", "sesn_put"]
    );
    assert_eq!(sessions("/memories/c.md"), ["sesn_exec"]);
    let text = stdout(&store.ok(&["log", "/memories/c.md"], b""));
    assert!(text.contains("session sesn_exec"), "{text}");

    let out = store.run(&["put", NOTES, "--session-id", "a b"], b"x");
    expect_status(&out, 2);
    assert!(stderr(&out).contains("session id"), "{}", stderr(&out));
}

#[test]
fn the_session_id_is_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        sessions_are_logged(&store);
    }
}

fn redaction_removes_content(store: &Store) {
    store.put(NOTES, "secret: hunter2\n", &[]);
    store.put(NOTES, "still secret: hunter2\n", &[]);
    store.put(NOTES, "nothing to see\n", &[]);

    let out = store.run(&["redact", NOTES, "--version", "3"], b"");
    expect_status(&out, 2);
    assert!(stderr(&out).contains("current content"), "{}", stderr(&out));
    let out = store.run(&["redact", NOTES], b"");
    expect_status(&out, 2);

    let out = stdout(&store.ok(&["redact", NOTES, "--all"], b""));
    assert!(out.contains("redacted 2 versions"), "{out}");
    let out = store.run(&["cat", NOTES, "--version", "1"], b"");
    expect_status(&out, 2);
    assert!(stderr(&out).contains("was redacted"), "{}", stderr(&out));
    let out = store.run(&["restore", NOTES, "--version", "2"], b"");
    expect_status(&out, 2);
    assert_eq!(store.ok(&["cat", NOTES], b"").stdout, b"nothing to see\n");

    let versions = store.log(NOTES, &[]);
    assert_eq!(versions.len(), 3);
    assert!(versions[0].get("redacted").is_none());
    for version in &versions[1..] {
        assert_eq!(version["redacted"], true, "{version}");
        assert_eq!(version["sha256"], Value::Null, "{version}");
    }
    let text = stdout(&store.ok(&["log", NOTES], b""));
    assert_eq!(text.matches("redacted").count(), 2, "{text}");
    // Again: nothing left to redact.
    let out = stdout(&store.ok(&["redact", NOTES, "--all"], b""));
    assert!(out.contains("redacted 0 versions"), "{out}");
}

#[test]
fn redacted_versions_lose_their_content() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        redaction_removes_content(&store);
    }
}

fn folder_log(store: &Store) {
    store.put("/memories/team/a.md", "a\n", &[]);
    store.put("/memories/team/b.md", "b\n", &[]);
    store.put("/memories/elsewhere.md", "e\n", &[]);
    store.ok(&["rm", "/memories/team/b.md"], b"");
    let versions = store.log("/memories/team", &[]);
    let paths: Vec<&str> = versions
        .iter()
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "/memories/team/b.md",
            "/memories/team/b.md",
            "/memories/team/a.md"
        ]
    );
    assert_eq!(operations(&versions), ["deleted", "created", "created"]);
    assert_eq!(store.log("/memories", &[]).len(), 4);
    // The default path is the whole store.
    let out = stdout(&store.ok(&["log"], b""));
    assert_eq!(out.lines().count(), 4, "{out}");
}

/// `redact --all` on a folder: the past versions of every file below it, the deleted one's
/// too; the current files and the files elsewhere untouched.
fn folder_redaction(store: &Store) {
    store.put("/memories/team/a.md", "a\n", &[]);
    store.put("/memories/team/b.md", "b\n", &[]);
    store.put("/memories/elsewhere.md", "e\n", &[]);
    store.put("/memories/elsewhere.md", "e2\n", &[]);
    store.ok(&["rm", "/memories/team/b.md"], b"");
    store.put("/memories/team/a.md", "a2\n", &[]);
    let out = stdout(&store.ok(&["redact", "/memories/team", "--all"], b""));
    assert!(
        out.contains("redacted 2 versions of the files below /memories/team"),
        "{out}"
    );
    let out = store.run(&["cat", "/memories/team/b.md", "--version", "1"], b"");
    expect_status(&out, 2);
    assert_eq!(
        store.ok(&["cat", "/memories/team/a.md"], b"").stdout,
        b"a2\n"
    );
    assert_eq!(
        store
            .ok(&["cat", "/memories/elsewhere.md", "--version", "1"], b"")
            .stdout,
        b"e\n"
    );
}

#[test]
fn a_folder_log_holds_every_file_below_it() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        folder_log(&store);
    }
}

fn bad_input_is_refused(store: &Store) {
    store.put(NOTES, "one\n", &[]);
    for (command, says) in [
        (vec!["cat", NOTES, "--version", "9"], "has no version 9"),
        (vec!["cat", NOTES, "--version", "0"], "numbered from 1"),
        (
            vec!["cat", NOTES, "--version", "two"],
            "not a version number",
        ),
        (vec!["restore", NOTES, "--version", "9"], "has no version 9"),
        (vec!["restore", NOTES], "--version"),
        (vec!["diff", NOTES, "--from", "9"], "has no version 9"),
        (vec!["diff", NOTES, "--to", "x"], "not a version number"),
        (vec!["redact", NOTES, "--version", "9"], "has no version 9"),
        (
            vec!["redact", NOTES, "--version", "1", "--all"],
            "cannot be used",
        ),
        (vec!["log", "/etc/passwd"], "must start with /memories"),
        (
            vec!["cat", "/etc/passwd", "--version", "1"],
            "must start with /memories",
        ),
        (
            vec!["restore", "/memories", "--version", "1"],
            "not /memories",
        ),
    ] {
        let out = store.run(&command, b"");
        expect_status(&out, 2);
        assert!(stderr(&out).contains(says), "{command:?}: {}", stderr(&out));
    }
    let out = store.run(&["log", "/memories/never.md"], b"");
    expect_status(&out, 3);
    assert!(stderr(&out).contains("has no versions"), "{}", stderr(&out));
    // A store that is not there is not created by reading its history.
    // A local store (a folder, a SQLite file) that is not there.
    if !store.url.contains("://") {
        let missing = Store {
            url: format!("{}-missing", store.url),
            key: None,
            dir: store.dir.clone(),
            endpoint: None,
        };
        expect_status(&missing.run(&["log"], b""), 3);
    }
}

#[test]
fn redact_all_on_a_folder_covers_every_file_below_it() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        folder_redaction(&store);
    }
}

#[test]
fn bad_input_is_a_clear_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path()) {
        bad_input_is_refused(&store);
    }
}

#[test]
fn binary_versions_are_named_not_dumped() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::folder(dir.path());
    store.ok(&["put", NOTES], b"\x00\x01binary");
    store.ok(&["put", NOTES], b"\x00\x02binary");
    let out = store.run(&["diff", NOTES], b"");
    expect_status(&out, 1);
    let text = stdout(&out);
    assert!(text.starts_with("Binary versions differ"), "{text}");
    assert!(!text.contains('\0'));
}

#[test]
fn help_describes_the_history_commands() {
    for command in ["log", "cat", "diff", "restore", "redact"] {
        let out = run(&["help", command], b"");
        expect_status(&out, 0);
        let text = stdout(&out);
        let option = if command == "diff" {
            "--from"
        } else {
            "--version"
        };
        assert!(
            text.contains(option) || command == "log",
            "{command}: {text}"
        );
        assert!(
            text.contains("Example") || command == "cat",
            "{command}: {text}"
        );
    }
    let text = stdout(&run(&["help", "log"], b""));
    assert!(text.contains("\"redacted\": true"), "{text}");
}

/// Every scenario on an S3 store (moto's server: `scripts/s3-test-server.sh run -- cargo test
/// -p memory-layer-cli --test history`), each in a bucket of its own.
#[cfg(feature = "s3")]
#[test]
fn an_s3_store_keeps_the_same_history() {
    let dir = tempfile::tempdir().unwrap();
    let test = "an_s3_store_keeps_the_same_history";
    let scenarios: [(&str, Scenario); 8] = [
        ("seven", create_edit_delete_restore),
        ("folder-redact", folder_redaction),
        ("rename", rename_keeps_the_history),
        ("max", history_max_keeps_three),
        ("sessions", sessions_are_logged),
        ("redact", redaction_removes_content),
        ("folder", folder_log),
        ("bad", bad_input_is_refused),
    ];
    for (prefix, scenario) in scenarios {
        scenario(&Store::s3(dir.path(), test, prefix));
    }
}

/// `history=off` on S3: the history commands say so, and nothing is recorded.
#[cfg(feature = "s3")]
#[test]
fn an_s3_store_with_history_off_keeps_none() {
    let dir = tempfile::tempdir().unwrap();
    let test = "an_s3_store_with_history_off_keeps_none";
    history_off_keeps_none(&Store::s3(dir.path(), test, "off"));
}

/// Every scenario on a PostgreSQL store (`scripts/pg-test-server.sh run -- cargo test -p
/// memory-layer-cli --test history`), each in a schema of its own.
#[cfg(feature = "postgres")]
#[test]
fn a_postgres_store_keeps_the_same_history() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios: [(&str, Scenario); 9] = [
        ("hist_seven", create_edit_delete_restore),
        ("hist_folder_redact", folder_redaction),
        ("hist_rename", rename_keeps_the_history),
        ("hist_max", history_max_keeps_three),
        ("hist_off", history_off_keeps_none),
        ("hist_sessions", sessions_are_logged),
        ("hist_redact", redaction_removes_content),
        ("hist_folder", folder_log),
        ("hist_bad", bad_input_is_refused),
    ];
    for (prefix, scenario) in scenarios {
        scenario(&Store::postgres(dir.path(), prefix));
    }
}

/// `rekey --encrypt-plaintext` redacts the plaintext versions of the files it encrypts; a
/// rotation keeps the encrypted ones, readable with the old key.
#[cfg(feature = "encrypted")]
#[test]
fn rekey_leaves_no_plaintext_version() {
    let dir = tempfile::tempdir().unwrap();
    let plain = Store::folder(dir.path());
    plain.put(NOTES, "plain one\n", &[]);
    plain.put(NOTES, "plain two\n", &[]);
    let sealed = Store {
        url: plain.url.clone(),
        ..Store::encrypted(dir.path())
    };
    let key = sealed.key.clone().unwrap();
    sealed.ok(
        &[
            "rekey",
            "--encrypt-plaintext",
            "--quiet",
            "--session-id",
            "sesn_rekey",
        ],
        b"",
    );
    let versions = sealed.log(NOTES, &[]);
    assert_eq!(numbers(&versions), [3, 2, 1]);
    assert_eq!(versions[0]["session"], "sesn_rekey");
    assert!(versions[0].get("redacted").is_none());
    assert_eq!(versions[1]["redacted"], true);
    assert_eq!(versions[2]["redacted"], true);
    for file in walk(Path::new(&plain.url)) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("plain"),
            "{} holds plaintext",
            file.display()
        );
    }

    // A rotation: the version under the old key stays, read with --old-key-file.
    let new_key = dir.path().join("new.hex");
    expect_status(&run(&["keygen", new_key.to_str().unwrap()], b""), 0);
    let rotated = Store {
        key: Some(new_key.clone()),
        ..Store::folder(dir.path())
    };
    let old = key.to_str().unwrap();
    rotated.ok(&["rekey", "--quiet", "--old-key-file", old], b"");
    let out = rotated.ok(
        &["cat", NOTES, "--version", "3", "--old-key-file", old],
        b"",
    );
    assert_eq!(out.stdout, b"plain two\n");
}
