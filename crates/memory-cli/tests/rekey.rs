//! `memory rekey` on the real binary: key rotation of an encrypted folder store, resumable,
//! reading old files through `--old-key-file` meanwhile, and plaintext files only adopted on
//! request.
#![cfg(all(feature = "encrypted", feature = "fs"))]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const MEMORY: &str = env!("CARGO_BIN_EXE_memory");

fn memory(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(MEMORY)
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start memory");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait for memory")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn keygen(dir: &Path, name: &str) -> String {
    let file = dir.join(name).to_str().expect("utf-8 path").to_owned();
    ok(&memory(&["keygen", &file], b""));
    file
}

fn cat(store: &str, path: &str, keys: &[&str]) -> Output {
    let mut args = vec!["cat", path, "--store", store];
    args.extend_from_slice(keys);
    memory(&args, b"")
}

#[test]
fn rekey_rotates_resumably_and_adopts_plaintext_only_when_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("store").to_str().expect("utf-8").to_owned();
    let old = keygen(dir.path(), "old.key");
    let new = keygen(dir.path(), "new.key");

    for (path, text) in [
        ("/memories/a.md", "alpha\n"),
        ("/memories/d/b.md", "beta\n"),
    ] {
        let out = memory(
            &[
                "put",
                path,
                "-",
                "--store",
                &store,
                "--encryption-key-file",
                &old,
            ],
            text.as_bytes(),
        );
        ok(&out);
    }
    // With only the new key the old files cannot be read; with the old one as a reading key
    // they can, and a write then goes under the new key.
    assert!(
        !cat(&store, "/memories/a.md", &["--encryption-key-file", &new])
            .status
            .success()
    );
    let both = [
        "--encryption-key-file",
        new.as_str(),
        "--old-key-file",
        old.as_str(),
    ];
    assert_eq!(cat(&store, "/memories/a.md", &both).stdout, b"alpha\n");
    // A write with only the new key is refused at open (the store's key check names the old
    // key): exit 2, nothing written. With the old key as a reading key it goes under the new.
    let refused = memory(
        &[
            "put",
            "/memories/c.md",
            "-",
            "--store",
            &store,
            "--encryption-key-file",
            &new,
        ],
        b"gamma\n",
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not in the keyring"));
    let mut put = vec!["put", "/memories/c.md", "-", "--store", store.as_str()];
    put.extend_from_slice(&both);
    ok(&memory(&put, b"gamma\n"));

    let rekey = |extra: &[&str]| {
        let mut args = vec![
            "rekey",
            "--store",
            store.as_str(),
            "--encryption-key-file",
            new.as_str(),
        ];
        args.extend_from_slice(extra);
        memory(&args, b"")
    };
    // Without the old key, the two old files fail and stay as they were: exit 1.
    let out = rekey(&[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot rekey /memories/a.md"), "{stderr}");
    assert!(stderr.contains("cannot rekey /memories/d/b.md"), "{stderr}");
    // The program's own messages (not the operator's log lines) name no host path.
    let messages: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("memory: "))
        .collect();
    assert!(!messages.is_empty(), "{stderr}");
    for line in messages {
        assert!(
            !line.contains(dir.path().to_str().expect("utf-8")),
            "host path in {line}"
        );
    }

    // With it, everything moves; run again, nothing is left to do.
    let summary = ok(&rekey(&["--old-key-file", &old]));
    assert!(summary.contains("2 of 3 files re-encrypted"), "{summary}");
    assert!(summary.contains("1 already under it"), "{summary}");
    let summary = ok(&rekey(&[]));
    assert!(summary.contains("0 of 3 files re-encrypted"), "{summary}");
    for (path, text) in [
        ("/memories/a.md", "alpha\n"),
        ("/memories/d/b.md", "beta\n"),
        ("/memories/c.md", "gamma\n"),
    ] {
        let out = cat(&store, path, &["--encryption-key-file", &new]);
        assert_eq!(out.stdout, text.as_bytes(), "{path}");
        assert!(
            !cat(&store, path, &["--encryption-key-file", &old])
                .status
                .success()
        );
    }

    // A plaintext file planted in the folder is reported, then adopted on request.
    std::fs::write(dir.path().join("store/memories/plain.md"), b"plain\n").expect("plant");
    let out = rekey(&["--quiet"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("it is plaintext"));
    ok(&rekey(&["--encrypt-plaintext"]));
    assert_eq!(
        cat(
            &store,
            "/memories/plain.md",
            &["--encryption-key-file", &new]
        )
        .stdout,
        b"plain\n"
    );
    let on_disk = std::fs::read(dir.path().join("store/memories/plain.md")).expect("read");
    assert!(
        !on_disk.windows(5).any(|w| w == b"plain"),
        "encrypted on disk"
    );
}

#[test]
fn rekey_needs_usable_key_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("store");
    std::fs::create_dir_all(store.join("memories")).expect("store");
    let missing = dir.path().join("missing.key");
    let out = memory(
        &[
            "rekey",
            "--store",
            store.to_str().expect("utf-8"),
            "--encryption-key-file",
            missing.to_str().expect("utf-8"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot use the key files"));
}
