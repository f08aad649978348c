//! The admin commands of the real `memory` binary (ls, cat, put, rm, mv, stats, export,
//! import, copy, expire) on a folder, a SQLite file and an encrypted folder: outputs, `--json`
//! shapes, exit statuses, and archives and copies that keep every byte.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

mod common;

use common::{MEMORY, run};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 stdout")
}

/// Asserts the exit status, showing stderr when it differs.
#[track_caller]
fn expect_status(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "stderr: {}", stderr(out));
}

/// One store under test: its URL and, for encrypted stores, the key file.
struct Store {
    url: String,
    key: Option<PathBuf>,
}

impl Store {
    fn folder(dir: &Path) -> Store {
        Store {
            url: dir.join("folder").to_str().unwrap().to_owned(),
            key: None,
        }
    }

    fn sqlite(dir: &Path) -> Store {
        Store {
            url: format!("sqlite:{}", dir.join("memory.db").to_str().unwrap()),
            key: None,
        }
    }

    fn encrypted(dir: &Path) -> Store {
        let key = dir.join("key.hex");
        let out = run(&["keygen", key.to_str().unwrap()], b"");
        expect_status(&out, 0);
        Store {
            url: dir.join("sealed").to_str().unwrap().to_owned(),
            key: Some(key),
        }
    }

    /// `memory COMMAND ARGS --store URL [--encryption-key-file KEY]`.
    fn run(&self, command: &[&str], stdin: &[u8]) -> Output {
        let mut args: Vec<&str> = command.to_vec();
        args.extend(["--store", &self.url]);
        if let Some(key) = &self.key {
            args.extend(["--encryption-key-file", key.to_str().unwrap()]);
        }
        run(&args, stdin)
    }

    #[track_caller]
    fn ok(&self, command: &[&str], stdin: &[u8]) -> Output {
        let out = self.run(command, stdin);
        expect_status(&out, 0);
        out
    }

    fn cat(&self, path: &str) -> Vec<u8> {
        self.ok(&["cat", path], b"").stdout
    }

    fn ls_json(&self) -> Value {
        serde_json::from_slice(&self.ok(&["ls", "--json"], b"").stdout).expect("ls --json")
    }

    /// Every file's path and size, from `ls --json`.
    fn listing(&self) -> Vec<(String, u64)> {
        self.ls_json()["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_owned(),
                    f["size"].as_u64().unwrap(),
                )
            })
            .collect()
    }
}

/// Every byte value, so no encoding can hide a change.
fn all_bytes() -> Vec<u8> {
    (0..=255u8).chain((0..=255u8).rev()).collect()
}

/// Fills a store with text, binary, empty, hidden, nested and non-ASCII files.
fn fill(store: &Store, dir: &Path) -> Vec<(&'static str, Vec<u8>)> {
    let files: Vec<(&'static str, Vec<u8>)> = vec![
        ("/memories/notes.md", b"# Notes\n- likes tea\n".to_vec()),
        ("/memories/empty.txt", Vec::new()),
        ("/memories/.hidden/state.json", b"{\"step\": 3}".to_vec()),
        (
            "/memories/projects/caf\u{e9} menu.md",
            "cr\u{e8}me br\u{fb}l\u{e9}e\r\n".as_bytes().to_vec(),
        ),
        ("/memories/projects/logo.png", all_bytes()),
        ("/memories/a/b/c/deep.bin", vec![0xff, 0xfe, 0x00, 0x80]),
    ];
    for (i, (path, bytes)) in files.iter().enumerate() {
        if i % 2 == 0 {
            store.ok(&["put", path], bytes);
        } else {
            let local = dir.join(format!("local-{i}"));
            std::fs::write(&local, bytes).unwrap();
            store.ok(&["put", path, local.to_str().unwrap()], b"");
        }
    }
    files
}

fn assert_holds(store: &Store, files: &[(&str, Vec<u8>)]) {
    for (path, bytes) in files {
        assert_eq!(&store.cat(path), bytes, "{path} in {}", store.url);
    }
    let mut expected: Vec<(String, u64)> = files
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.len() as u64))
        .collect();
    expected.sort();
    assert_eq!(store.listing(), expected, "{}", store.url);
}

#[test]
fn file_commands_on_folder_sqlite_and_encrypted_stores() {
    let tmp = tempfile::tempdir().unwrap();
    for store in [
        Store::folder(tmp.path()),
        Store::sqlite(tmp.path()),
        Store::encrypted(tmp.path()),
    ] {
        // A read command on a store that does not exist yet: exit 3, and nothing created.
        let out = store.run(&["ls"], b"");
        expect_status(&out, 3);
        assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));

        let files = fill(&store, tmp.path());
        assert_holds(&store, &files);

        // ls: the tree, sizes as the tool's view, hidden files included.
        let tree = stdout(&store.ok(&["ls"], b""));
        assert_eq!(
            tree,
            "/memories  564B in 6 files\n\
             ├── .hidden/  11B\n\
             │   └── state.json  11B\n\
             ├── a/  4B\n\
             │   └── b/  4B\n\
             │       └── c/  4B\n\
             │           └── deep.bin  4B\n\
             ├── empty.txt  0B\n\
             ├── notes.md  20B\n\
             └── projects/  529B\n\
             \x20   ├── café menu.md  17B\n\
             \x20   └── logo.png  512B\n",
            "{}",
            store.url
        );
        assert_eq!(
            stdout(&store.ok(&["ls", "/memories/projects/logo.png"], b"")),
            "/memories/projects/logo.png  512B\n"
        );
        let json = store.ls_json();
        assert_eq!(json["path"], "/memories");
        assert_eq!(json["type"], "directory");
        assert_eq!(json["size"], 564);
        assert_eq!(json["file_count"], 6);
        let first = &json["files"][0];
        assert_eq!(first["path"], "/memories/.hidden/state.json");
        assert_eq!(first["size"], 11);
        assert!(
            first["modified"].as_str().unwrap().ends_with('Z'),
            "{first}"
        );
        let sub: Value = serde_json::from_slice(
            &store
                .ok(&["ls", "--json", "/memories/notes.md"], b"")
                .stdout,
        )
        .unwrap();
        assert_eq!(sub["type"], "file");
        assert_eq!(sub["files"].as_array().unwrap().len(), 1);

        // stats
        let stats: Value =
            serde_json::from_slice(&store.ok(&["stats", "--json", "--top", "2"], b"").stdout)
                .unwrap();
        assert_eq!(stats["files"], 6);
        assert_eq!(stats["directories"], 5, "{stats}");
        assert_eq!(stats["bytes"], 564);
        assert_eq!(stats["largest"][0]["path"], "/memories/projects/logo.png");
        assert_eq!(stats["largest"][0]["size"], 512);
        assert_eq!(stats["largest"][1]["path"], "/memories/notes.md");
        assert_eq!(stats["largest"].as_array().unwrap().len(), 2);
        assert!(stats["oldest"]["modified"].is_string() && stats["newest"]["modified"].is_string());
        let text = stdout(&store.ok(&["stats"], b""));
        assert!(
            text.starts_with("files        6\ndirectories  5\nbytes        564 (564B)\n"),
            "{text}"
        );

        // put replaces by default; --no-overwrite refuses with 4.
        store.ok(&["put", "/memories/notes.md"], b"v2\n");
        assert_eq!(store.cat("/memories/notes.md"), b"v2\n");
        expect_status(
            &store.run(&["put", "--no-overwrite", "/memories/notes.md"], b"v3"),
            4,
        );
        assert_eq!(store.cat("/memories/notes.md"), b"v2\n");
        expect_status(&store.run(&["put", "/memories/notes.md/under"], b"x"), 4);

        // mv: moves, never overwrites.
        store.ok(
            &["mv", "/memories/projects", "/memories/archive/projects"],
            b"",
        );
        assert_eq!(
            store.cat("/memories/archive/projects/logo.png"),
            all_bytes()
        );
        let out = store.run(&["mv", "/memories/notes.md", "/memories/empty.txt"], b"");
        expect_status(&out, 4);
        assert_eq!(stderr(&out), "memory: /memories/empty.txt already exists\n");
        expect_status(&store.run(&["mv", "/memories/nope", "/memories/x"], b""), 3);
        expect_status(
            &store.run(&["mv", "/memories/archive", "/memories/archive/inner"], b""),
            2,
        );

        // rm: files; directories only with -r.
        let out = store.run(&["rm", "/memories/archive"], b"");
        expect_status(&out, 2);
        assert!(stderr(&out).contains("--recursive"));
        store.ok(&["rm", "-r", "/memories/archive"], b"");
        store.ok(&["rm", "/memories/empty.txt"], b"");
        let out = store.run(&["rm", "/memories/empty.txt"], b"");
        expect_status(&out, 3);
        assert_eq!(stderr(&out), "memory: /memories/empty.txt does not exist\n");

        // cat: missing and directories are 3.
        expect_status(&store.run(&["cat", "/memories/gone.md"], b""), 3);
        let out = store.run(&["cat", "/memories/a"], b"");
        expect_status(&out, 3);
        assert!(stderr(&out).contains("is a directory"));

        // Bad paths are usage errors, and no message names a host path.
        let out = store.run(&["cat", "/etc/passwd"], b"");
        expect_status(&out, 2);
        assert_eq!(
            stderr(&out),
            "memory: Path must start with /memories, got: /etc/passwd\n"
        );
        expect_status(&store.run(&["put", "/memories/../x"], b""), 2);

        assert_eq!(
            store.listing(),
            vec![
                ("/memories/.hidden/state.json".to_owned(), 11),
                ("/memories/a/b/c/deep.bin".to_owned(), 4),
                ("/memories/notes.md".to_owned(), 3),
            ]
        );
        store.ok(&["rm", "-r", "/memories"], b"");
        assert_eq!(store.listing(), vec![]);
    }
}

#[test]
fn export_then_import_reproduces_every_byte_in_another_backend() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = Store::folder(tmp.path());
    let files = fill(&folder, tmp.path());
    let archive = tmp.path().join("backup.jsonl");
    let out = folder.ok(&["export", "--out", archive.to_str().unwrap()], b"");
    assert!(out.stdout.is_empty());
    // Piped: a summary, but no progress bar drawing.
    assert_eq!(stderr(&out), "memory: exported 6 files (564B)\n");

    // The archive is JSON Lines with a checksum per file.
    let text = std::fs::read_to_string(&archive).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert_eq!(lines[0]["format"], "memory-archive");
    assert_eq!(lines[0]["version"], 1);
    assert_eq!(lines[7], json!({"type": "end", "files": 6, "bytes": 564}));
    assert!(
        lines[1..7]
            .iter()
            .all(|l| l["sha256"].as_str().unwrap().len() == 64)
    );
    // Export to standard output gives the same files.
    let piped = folder.ok(&["export", "--quiet"], b"");
    assert!(piped.stderr.is_empty());
    let piped_lines: Vec<Value> = stdout(&piped)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(piped_lines[1..], lines[1..]);

    for target in [Store::sqlite(tmp.path()), Store::encrypted(tmp.path())] {
        let out = target.ok(&["import", archive.to_str().unwrap()], b"");
        assert_eq!(stderr(&out), "memory: imported 6 files (564B)\n");
        assert_holds(&target, &files);

        // Again: refused before anything is written; --overwrite replaces.
        target.ok(&["put", "/memories/notes.md"], b"changed");
        let out = target.run(&["import", archive.to_str().unwrap()], b"");
        expect_status(&out, 4);
        assert!(stderr(&out).contains("--overwrite"), "{}", stderr(&out));
        assert_eq!(target.cat("/memories/notes.md"), b"changed");
        target.ok(&["import", "--overwrite", "--quiet", "-"], text.as_bytes());
        assert_holds(&target, &files);
    }

    // A damaged archive is refused (exit 5) and nothing is written.
    let fresh = Store {
        url: format!("sqlite:{}", tmp.path().join("fresh.db").to_str().unwrap()),
        key: None,
    };
    let tampered = text.replacen("likes tea", "likes tee", 1);
    let out = fresh.run(&["import", "-"], tampered.as_bytes());
    expect_status(&out, 5);
    assert!(
        stderr(&out).contains("SHA-256 of /memories/notes.md"),
        "{}",
        stderr(&out)
    );
    let truncated: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    let out = fresh.run(&["import", "-"], truncated.as_bytes());
    expect_status(&out, 5);
    assert!(stderr(&out).contains("truncated"), "{}", stderr(&out));
    expect_status(&fresh.run(&["ls"], b""), 3);
    expect_status(
        &fresh.run(
            &["import", tmp.path().join("no-such.jsonl").to_str().unwrap()],
            b"",
        ),
        3,
    );
}

#[test]
fn copy_moves_a_whole_store_between_backends() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = Store::folder(tmp.path());
    let files = fill(&folder, tmp.path());
    let sqlite = Store::sqlite(tmp.path());
    let out = run(&["copy", &folder.url, &sqlite.url], b"");
    expect_status(&out, 0);
    assert_eq!(stderr(&out), "memory: copied 6 files (564B)\n");
    assert_holds(&sqlite, &files);

    // Into a store that has the files: refused, then replaced with --overwrite.
    sqlite.ok(&["put", "/memories/notes.md"], b"local edit");
    let out = run(&["copy", &folder.url, &sqlite.url], b"");
    expect_status(&out, 4);
    assert_eq!(sqlite.cat("/memories/notes.md"), b"local edit");
    expect_status(
        &run(
            &["copy", "--overwrite", "-q", &folder.url, &sqlite.url],
            b"",
        ),
        0,
    );
    assert_holds(&sqlite, &files);

    // Into and out of an encrypted store.
    let sealed = Store::encrypted(tmp.path());
    let key = sealed.key.clone().unwrap();
    let key = key.to_str().unwrap();
    expect_status(
        &run(
            &[
                "copy",
                "-q",
                &sqlite.url,
                &sealed.url,
                "--to-encryption-key-file",
                key,
            ],
            b"",
        ),
        0,
    );
    assert_holds(&sealed, &files);
    // The folder holds ciphertext, not the notes.
    let on_disk = std::fs::read(Path::new(&sealed.url).join("memories/notes.md")).unwrap();
    assert!(!on_disk.windows(9).any(|w| w == b"likes tea"));
    let plain = Store {
        url: tmp.path().join("plain-again").to_str().unwrap().to_owned(),
        key: None,
    };
    expect_status(
        &run(
            &[
                "copy",
                "-q",
                &sealed.url,
                &plain.url,
                "--from-encryption-key-file",
                key,
            ],
            b"",
        ),
        0,
    );
    assert_holds(&plain, &files);

    expect_status(&run(&["copy", &folder.url, &folder.url], b""), 2);
    expect_status(
        &run(
            &[
                "copy",
                tmp.path().join("none").to_str().unwrap(),
                &plain.url,
            ],
            b"",
        ),
        3,
    );
    expect_status(&run(&["copy", "ftp://x", &plain.url], b""), 2);
}

#[test]
fn expire_lists_with_dry_run_and_deletes_for_real() {
    let tmp = tempfile::tempdir().unwrap();

    // A folder store: age one file by its modification time on disk.
    let folder = Store::folder(tmp.path());
    folder.ok(&["put", "/memories/old.md"], b"stale");
    folder.ok(&["put", "/memories/keep/new.md"], b"fresh");
    let old = Path::new(&folder.url).join("memories/old.md");
    let forty_days = SystemTime::now() - Duration::from_secs(40 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(forty_days)
        .unwrap();
    let out = folder.ok(&["expire", "--older-than", "30d", "--dry-run"], b"");
    assert_eq!(stdout(&out), "/memories/old.md\n");
    assert!(
        stderr(&out).contains("would delete 1 file (5B)"),
        "{}",
        stderr(&out)
    );
    assert!(old.exists());
    let out = folder.ok(&["expire", "--older-than", "30d"], b"");
    assert_eq!(stdout(&out), "/memories/old.md\n");
    assert!(
        stderr(&out).contains("deleted 1 file (5B)"),
        "{}",
        stderr(&out)
    );
    assert!(!old.exists());
    assert_eq!(folder.cat("/memories/keep/new.md"), b"fresh");
    let out = folder.ok(&["expire", "--older-than", "30d"], b"");
    assert_eq!(stdout(&out), "");

    // A SQLite store: age by waiting past a short duration.
    let sqlite = Store::sqlite(tmp.path());
    sqlite.ok(&["put", "/memories/first.md"], b"1");
    std::thread::sleep(Duration::from_millis(1_500));
    sqlite.ok(&["put", "/memories/second.md"], b"2");
    let out = sqlite.ok(
        &["expire", "--older-than", "1s", "--dry-run", "--quiet"],
        b"",
    );
    assert_eq!(stdout(&out), "/memories/first.md\n");
    assert!(out.stderr.is_empty());
    assert_eq!(sqlite.listing().len(), 2);
    let out = sqlite.ok(&["expire", "--older-than", "1s"], b"");
    assert_eq!(stdout(&out), "/memories/first.md\n");
    assert_eq!(
        sqlite.listing(),
        vec![("/memories/second.md".to_owned(), 1)]
    );

    // Durations that are not durations are usage errors.
    for bad in ["30", "thirty days", "1.5h", "-1d"] {
        let out = sqlite.run(&["expire", "--older-than", bad], b"");
        expect_status(&out, 2);
    }
}

#[test]
fn help_documents_exit_statuses_and_bad_urls_are_usage_errors() {
    for command in [
        "ls", "cat", "put", "rm", "mv", "stats", "export", "import", "copy", "expire", "mcp",
    ] {
        let out = run(&[command, "--help"], b"");
        expect_status(&out, 0);
        let help = stdout(&out);
        assert!(help.contains("Exit status:"), "{command}: {help}");
        assert!(help.contains("4  already exists"), "{command}");
    }
    let out = run(&["ls", "--store", "ftp://host/x"], b"");
    expect_status(&out, 2);
    assert!(
        stderr(&out).contains("unknown store scheme"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn expire_with_a_duration_past_the_clock_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = Store::folder(tmp.path());
    folder.ok(&["put", "/memories/a.md"], b"a");
    // Fits the parser, but reaches back before 1970: no file time goes that far.
    let out = folder.run(&["expire", "--older-than", "99999999999w"], b"");
    expect_status(&out, 2);
    assert!(stderr(&out).contains("before 1970"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shorter duration"),
        "{}",
        stderr(&out)
    );
    // Numbers too large to hold, alone or multiplied by their unit.
    for bad in [
        "99999999999999999999999s",
        "99999999999999w",
        "1d99999999999999999999s",
    ] {
        let out = folder.run(&["expire", "--older-than", bad], b"");
        expect_status(&out, 2);
        assert!(stderr(&out).contains("too long"), "{bad}: {}", stderr(&out));
    }
    assert_eq!(folder.cat("/memories/a.md"), b"a");
}

#[cfg(unix)]
#[test]
fn export_archives_are_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let folder = Store::folder(tmp.path());
    folder.ok(&["put", "/memories/secret.md"], b"s3cret");
    let archive = tmp.path().join("backup.jsonl");
    for umask in ["000", "022", "077"] {
        let _ = std::fs::remove_file(&archive);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
            .arg(MEMORY)
            .args(["export", "--quiet", "--store", &folder.url, "--out"])
            .arg(&archive)
            .env_remove("MEMORY_STORE")
            .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
            .output()
            .unwrap();
        expect_status(&out, 0);
        let mode = std::fs::metadata(&archive).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "umask {umask}: mode {mode:o}");
    }
}

/// A row that is not a memory path (written by something else) does not break `stats`, which
/// reports it for the operator, and the store's own files are all still counted.
#[test]
fn stats_counts_entries_that_are_not_memory_files() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::sqlite(tmp.path());
    store.ok(&["put", "/memories/notes.md", "-"], b"kept\n");
    let db = tmp.path().join("memory.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    for (i, foreign) in ["/memories/../escape.md", "/memories/a//b.md"]
        .iter()
        .enumerate()
    {
        conn.execute(
            "INSERT INTO files (path, contents, size, version, created_ms, modified_ms)
             VALUES (?1, x'66', 1, ?2, 0, 0)",
            rusqlite::params![foreign, 1_000_000 + i as i64],
        )
        .unwrap();
    }
    drop(conn);
    let stats: Value =
        serde_json::from_slice(&store.ok(&["stats", "--json"], b"").stdout).expect("stats --json");
    assert_eq!(stats["files"], 1, "{stats}");
    assert_eq!(stats["skipped_entries"], 2, "{stats}");
    let text = stdout(&store.ok(&["stats"], b""));
    assert!(
        text.contains("skipped      2 entries that are not memory files"),
        "{text}"
    );
}

/// `memory copy` and `memory import` keep each file's modification time, so `memory expire`
/// after a migration or a restore sees the files' ages, on folder, SQLite and encrypted
/// stores alike.
#[test]
fn copy_and_import_keep_modification_times() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = Store::folder(tmp.path());
    folder.ok(&["put", "/memories/old.md"], b"stale");
    folder.ok(&["put", "/memories/keep/new.md"], b"fresh");
    let forty_days = SystemTime::now() - Duration::from_secs(40 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(Path::new(&folder.url).join("memories/old.md"))
        .unwrap()
        .set_modified(forty_days)
        .unwrap();
    let expiring = |store: &Store| {
        let out = store.ok(
            &["expire", "--older-than", "30d", "--dry-run", "--quiet"],
            b"",
        );
        stdout(&out)
    };
    assert_eq!(expiring(&folder), "/memories/old.md\n");

    let into = |name: &str| -> Store {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        match name {
            n if n.starts_with("sqlite") => Store::sqlite(&dir),
            n if n.starts_with("sealed") => Store::encrypted(&dir),
            _ => Store::folder(&dir),
        }
    };
    let copy = |from: &Store, to: &Store| {
        let mut args = vec!["copy", &from.url, &to.url, "--quiet"];
        if let Some(key) = &from.key {
            args.extend(["--from-encryption-key-file", key.to_str().unwrap()]);
        }
        if let Some(key) = &to.key {
            args.extend(["--to-encryption-key-file", key.to_str().unwrap()]);
        }
        expect_status(&run(&args, b""), 0);
    };
    // Folder → SQLite → folder, and into an encrypted folder.
    let sqlite = into("sqlite-copy");
    copy(&folder, &sqlite);
    assert_eq!(expiring(&sqlite), "/memories/old.md\n", "folder → SQLite");
    let back = into("folder-copy");
    copy(&sqlite, &back);
    assert_eq!(expiring(&back), "/memories/old.md\n", "SQLite → folder");
    let sealed = into("sealed-copy");
    copy(&folder, &sealed);
    assert_eq!(
        expiring(&sealed),
        "/memories/old.md\n",
        "folder → encrypted folder"
    );
    // The time is the source's, to the second at least.
    let listed = sqlite.ls_json();
    let old = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "/memories/old.md")
        .unwrap()
        .clone();
    let folder_listed = folder.ls_json();
    let original = folder_listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "/memories/old.md")
        .unwrap()
        .clone();
    assert_eq!(old["modified"], original["modified"], "{listed}");

    // Export, then import into a folder and a SQLite store.
    let archive = tmp.path().join("backup.jsonl");
    folder.ok(
        &["export", "--out", archive.to_str().unwrap(), "--quiet"],
        b"",
    );
    for name in ["folder-import", "sqlite-import"] {
        let restored = into(name);
        restored.ok(&["import", archive.to_str().unwrap(), "--quiet"], b"");
        assert_eq!(
            expiring(&restored),
            "/memories/old.md\n",
            "import into {name}"
        );
        assert_eq!(restored.cat("/memories/old.md"), b"stale");
    }
}
