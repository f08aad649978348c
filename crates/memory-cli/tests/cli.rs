//! The program around the protocol: store URLs that cannot be opened, the environment, help.

mod common;

use std::process::Command;

use common::{MEMORY, TIMEOUT, exec_command, wait_timeout};
use serde_json::json;

/// Runs `memory exec` with stdin left open: a program that tried to read it would hang, so an
/// exit proves it stopped before reading any line.
fn refused(cmd: &mut Command) -> (i32, String) {
    let mut child = cmd.spawn().expect("start memory");
    let _stdin = child.stdin.take();
    let status = wait_timeout(&mut child, TIMEOUT);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    (
        status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(feature = "fs")]
#[test]
fn a_store_that_is_a_regular_file_exits_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let (code, stderr) = refused(&mut exec_command(file.to_str().unwrap()));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot open store"), "{stderr}");
    assert!(
        stderr.contains("not-a-dir"),
        "the message names the store: {stderr}"
    );
}

#[cfg(feature = "fs")]
#[test]
fn a_store_below_a_regular_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let url = format!("file:{}/sub", file.display());
    let (code, stderr) = refused(&mut exec_command(&url));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot open store"), "{stderr}");
}

#[test]
fn unknown_schemes_and_bad_urls_exit_2() {
    for (url, says) in [
        ("ftp://example.com/x", "unknown store scheme `ftp:`"),
        ("redis://localhost", "unknown store scheme `redis:`"),
        ("", "the store URL is empty"),
        ("file:", "no folder: use file:PATH"),
        ("mem:something", "`mem:` takes nothing"),
    ] {
        let (code, stderr) = refused(&mut exec_command(url));
        assert_eq!(code, 2, "{url}: {stderr}");
        assert!(stderr.contains(says), "{url}: {stderr}");
        assert!(stderr.starts_with("memory: "), "{url}: {stderr}");
    }
}

#[cfg(feature = "fs")]
#[test]
fn the_store_comes_from_memory_store_when_no_flag_is_given() {
    let mut cmd = Command::new(MEMORY);
    cmd.arg("exec")
        .env("MEMORY_STORE", "gopher://x")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (code, stderr) = refused(&mut cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("gopher"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(MEMORY);
    cmd.arg("exec")
        .env("MEMORY_STORE", dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = common::feed_and_wait(
        cmd.spawn().unwrap(),
        (common::line(json!({"command": "create", "path": "/memories/env.md", "file_text": "e"}))
            + "\n")
            .as_bytes(),
    );
    assert_eq!(common::answers_of(&out, 1)[0]["is_error"], json!(false));
    assert_eq!(
        common::read_disk(dir.path(), "env.md").as_deref(),
        Some(&b"e"[..])
    );
}

#[cfg(feature = "fs")]
#[test]
fn the_default_store_is_memory_in_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(MEMORY);
    cmd.arg("exec")
        .current_dir(dir.path())
        .env_remove("MEMORY_STORE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = common::feed_and_wait(
        cmd.spawn().unwrap(),
        (common::line(json!({"command": "create", "path": "/memories/d.md", "file_text": "d"}))
            + "\n")
            .as_bytes(),
    );
    assert_eq!(common::answers_of(&out, 1)[0]["is_error"], json!(false));
    let path = dir.path().join("memory").join("memories").join("d.md");
    assert_eq!(std::fs::read(path).unwrap(), b"d");
}

#[test]
fn empty_input_exits_0_with_no_output() {
    let out = common::exec_raw("mem:", b"");
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
}

#[test]
fn logs_never_reach_stdout() {
    let mut cmd = exec_command("mem:");
    cmd.env("RUST_LOG", "trace");
    let out = common::feed_and_wait(
        cmd.spawn().unwrap(),
        b"{\"command\":\"view\",\"path\":\"/memories\"}\nnot json\n",
    );
    let answers = common::answers_of(&out, 2);
    assert_eq!(answers[0]["is_error"], json!(false));
}

#[test]
fn help_explains_the_program_with_an_example() {
    let out = Command::new(MEMORY).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "memory_20250818",
        "exec",
        "keygen",
        "Example",
        "/memories/notes.md",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
    let out = Command::new(MEMORY)
        .args(["exec", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--store",
        "MEMORY_STORE",
        "tool_use",
        "tool_result",
        "mem:",
        "sqlite:PATH",
        "exit",
    ] {
        assert!(help.contains(needle), "exec --help lacks {needle}:\n{help}");
    }
}

#[cfg(feature = "fs")]
#[test]
fn a_directory_store_is_shared_between_runs() {
    let (_dir, url) = common::dir_store();
    common::exec_lines(
        &url,
        &[common::line(
            json!({"command": "create", "path": "/memories/keep.md", "file_text": "kept"}),
        )],
    );
    let answers = common::exec_lines(
        &url,
        &[common::line(
            json!({"command": "view", "path": "/memories/keep.md"}),
        )],
    );
    assert_eq!(
        answers[0],
        common::answer(
            "Here's the content of /memories/keep.md with line numbers:\n     1\tkept",
            false
        )
    );
}

#[cfg(feature = "fs")]
#[test]
fn the_readme_transcript_runs_with_one_expected_error() {
    let transcript = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/transcript.jsonl"
    ))
    .unwrap();
    let lines = transcript
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    let (_dir, url) = common::dir_store();
    for store in [url.as_str(), "mem:"] {
        let answers = common::answers_of(&common::exec_raw(store, &transcript), lines);
        let errors: Vec<usize> = answers
            .iter()
            .enumerate()
            .filter(|(_, a)| a["is_error"] == json!(true))
            .map(|(i, _)| i + 1)
            .collect();
        // Line 2 looks for notes of an earlier session, which a fresh store does not have.
        assert_eq!(errors, vec![2], "{answers:#?}");
        let last = answers.last().unwrap();
        assert_eq!(last["type"], json!("tool_result"));
        let listing = last["content"].as_str().unwrap();
        assert!(
            listing.contains("\t/memories/archive/2025-06/\n"),
            "{listing}"
        );
        assert!(!listing.contains("scratch"), "{listing}");
    }
}

#[cfg(feature = "sqlite")]
#[test]
fn sqlite_stores_keep_files_between_runs() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("memory.db").display());
    let answers = common::exec_lines(
        &url,
        &[common::line(
            json!({"command": "create", "path": "/memories/s.md", "file_text": "in sqlite\n"}),
        )],
    );
    assert_eq!(
        answers[0],
        common::answer("File created successfully at: /memories/s.md", false)
    );
    let answers = common::exec_lines(
        &url,
        &[common::line(
            json!({"command": "view", "path": "/memories/s.md"}),
        )],
    );
    assert_eq!(
        answers[0],
        common::answer(
            "Here's the content of /memories/s.md with line numbers:\n     1\tin sqlite\n     2\t",
            false
        )
    );
    assert!(dir.path().join("memory.db").is_file());
}

#[cfg(feature = "sqlite")]
#[test]
fn a_sqlite_store_that_is_not_a_database_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(
        &file,
        "this is not a SQLite database, just some text that is long enough".repeat(20),
    )
    .unwrap();
    let (code, stderr) = refused(&mut exec_command(&format!("sqlite:{}", file.display())));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot open store"), "{stderr}");
}

#[cfg(all(feature = "encrypted", feature = "fs"))]
#[test]
fn keygen_then_an_encrypted_directory_store() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("memory.key");
    let out = Command::new(MEMORY)
        .arg("keygen")
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&key).unwrap();
    assert_eq!(text.trim().len(), 64);
    assert!(text.trim().bytes().all(|b| b.is_ascii_hexdigit()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // keygen never overwrites a key.
    let again = Command::new(MEMORY)
        .arg("keygen")
        .arg(&key)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert_eq!(std::fs::read_to_string(&key).unwrap(), text);

    let store = dir.path().join("store");
    let url = store.to_str().unwrap();
    let secret = "the launch code is 0000";
    let mut cmd = exec_command(url);
    cmd.arg("--encryption-key-file").arg(&key);
    let input = [
        common::line(
            json!({"command": "create", "path": "/memories/secret.md", "file_text": secret}),
        ),
        common::line(json!({"command": "view", "path": "/memories/secret.md"})),
    ]
    .join("\n");
    let answers = common::answers_of(
        &common::feed_and_wait(cmd.spawn().unwrap(), input.as_bytes()),
        2,
    );
    assert_eq!(
        answers[1],
        common::answer(
            &format!(
                "Here's the content of /memories/secret.md with line numbers:\n     1\t{secret}"
            ),
            false
        )
    );
    let on_disk = common::read_disk(&store, "secret.md").expect("the file is on disk");
    assert!(
        !String::from_utf8_lossy(&on_disk).contains("launch code"),
        "plaintext on disk"
    );

    // The same key comes from the environment too; without a key the file cannot be read.
    let mut cmd = exec_command(url);
    cmd.env("MEMORY_ENCRYPTION_KEY_FILE", &key);
    let out = common::feed_and_wait(
        cmd.spawn().unwrap(),
        (common::line(json!({"command": "view", "path": "/memories/secret.md"})) + "\n").as_bytes(),
    );
    assert_eq!(common::answers_of(&out, 1)[0], answers[1]);
    // Without its key, or with another key, the store does not open: exit 2 before any line
    // is read, so no plaintext is ever written into it and nothing unreadable either.
    let names = || {
        let mut names: Vec<_> = std::fs::read_dir(store.join("memories"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = (
        names(),
        std::fs::read(store.join("memories/secret.md")).unwrap(),
    );
    let (code, stderr) = refused(&mut exec_command(url));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the store is encrypted"), "{stderr}");
    assert!(stderr.contains("--encryption-key-file"), "{stderr}");
    let other = dir.path().join("other.key");
    assert!(
        Command::new(MEMORY)
            .arg("keygen")
            .arg(&other)
            .status()
            .unwrap()
            .success()
    );
    let mut cmd = exec_command(url);
    cmd.arg("--encryption-key-file").arg(&other);
    let (code, stderr) = refused(&mut cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not in the keyring"), "{stderr}");
    // Admin commands and the MCP server refuse alike.
    let out = Command::new(MEMORY)
        .args(["ls", "--store", url])
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(MEMORY)
        .args(["mcp", "--store", url])
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let after = (
        names(),
        std::fs::read(store.join("memories/secret.md")).unwrap(),
    );
    assert_eq!(after, before, "nothing was written");
}

#[cfg(feature = "encrypted")]
#[test]
fn a_bad_key_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("bad.key");
    std::fs::write(&key, "not a key\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    for key_file in [key.clone(), dir.path().join("missing.key")] {
        let mut cmd = exec_command("mem:");
        cmd.arg("--encryption-key-file").arg(&key_file);
        let (code, stderr) = refused(&mut cmd);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("encryption key"), "{stderr}");
    }
}

#[test]
fn exec_help_offers_exactly_the_stores_this_build_opens() {
    let out = Command::new(MEMORY)
        .args(["exec", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(!help.contains("not available"), "{help}");
    assert_eq!(help.contains("s3://BUCKET"), cfg!(feature = "s3"), "{help}");
    assert_eq!(
        help.contains("sqlite:PATH"),
        cfg!(feature = "sqlite"),
        "{help}"
    );
    assert!(help.contains("store+sqlite:PATH#"), "{help}");
    assert!(help.contains("4194304 bytes"), "{help}");
}

#[test]
fn run_takes_every_store_argument_and_the_library_default_iterations() {
    let out = Command::new(MEMORY)
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--store",
        "--encryption-key-file",
        "--old-key-file",
        "--mount",
    ] {
        assert!(help.contains(needle), "run --help lacks {needle}:\n{help}");
    }
    let default = format!("[default: {}]", memory_runner::DEFAULT_MAX_ITERATIONS);
    let line = help
        .lines()
        .skip_while(|l| !l.contains("--max-iterations <N>"))
        .take(4)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(line.contains(&default), "{line}");
}

#[test]
fn a_line_above_the_bound_is_answered_and_the_stream_goes_on() {
    let max = memory_cli::lines::MAX_LINE_BYTES;
    let filler = "x".repeat(max + 1000);
    let mut input = Vec::new();
    input.extend_from_slice(
        (common::line(json!({"command": "create", "path": "/memories/a.md", "file_text": filler}))
            + "\n")
            .as_bytes(),
    );
    input.extend_from_slice(
        format!(
            "{{\"type\":\"tool_use\",\"id\":\"toolu_big\",\"name\":\"memory\",\"input\":{{\"command\":\"create\",\"path\":\"/memories/b.md\",\"file_text\":\"{filler}\"}}}}\n"
        )
        .as_bytes(),
    );
    input.extend_from_slice(
        (common::line(json!({"command": "view", "path": "/memories"})) + "\n").as_bytes(),
    );
    let out = common::exec_raw("mem:", &input);
    assert!(out.status.success());
    let answers = common::answers_of(&out, 3);
    let expected = |bytes: usize| {
        format!(
            "Error: Invalid input line: the line is {bytes} bytes long, more than the {max} bytes (4 MiB) a line may have"
        )
    };
    let first_len = input.iter().position(|b| *b == b'\n').unwrap();
    assert_eq!(answers[0], common::answer(&expected(first_len), true));
    let second_len = input[first_len + 1..]
        .iter()
        .position(|b| *b == b'\n')
        .unwrap();
    assert_eq!(
        answers[1],
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_big",
            "content": expected(second_len),
            "is_error": true,
        })
    );
    // Neither file was created; the stream went on.
    assert_eq!(answers[2]["is_error"], json!(false));
    assert!(!common::text(&answers[2]).contains("a.md"));
}

#[cfg(feature = "fs")]
#[test]
fn mcp_without_a_store_uses_the_user_data_directory_and_says_so() {
    let cwd = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(MEMORY)
        .arg("mcp")
        .current_dir(cwd.path())
        .env_remove("MEMORY_STORE")
        .env("XDG_DATA_HOME", data.path())
        .env("HOME", cwd.path().join("home"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let store = data.path().join("memory");
    assert!(
        stderr.contains(&format!("using {}", store.display())),
        "{stderr}"
    );
    assert!(store.is_dir(), "the store is in the data directory");
    assert!(
        !cwd.path().join("memory").exists(),
        "nothing in the working directory"
    );
    // Without XDG_DATA_HOME: ~/.local/share/memory.
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(MEMORY)
        .arg("mcp")
        .current_dir(cwd.path())
        .env_remove("MEMORY_STORE")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(home.path().join(".local/share/memory").is_dir());
    assert!(!cwd.path().join("memory").exists());
}

#[test]
fn an_unknown_scheme_lists_the_schemes_this_build_has() {
    let (code, stderr) = refused(&mut exec_command("nope://x"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    let mut schemes = vec!["file:", "mem:"];
    if cfg!(feature = "sqlite") {
        schemes.push("sqlite:");
    }
    if cfg!(feature = "s3") {
        schemes.push("s3:");
    }
    for scheme in schemes {
        assert!(stderr.contains(scheme), "lacks {scheme}: {stderr}");
    }
}

#[cfg(feature = "sqlite")]
#[test]
fn an_unknown_store_option_names_it_and_the_accepted_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = exec_command("sqlite:m.db?bogus=1");
    cmd.current_dir(dir.path());
    let (code, stderr) = refused(&mut cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bogus"), "{stderr}");
    assert!(
        stderr.contains("sync"),
        "names the accepted options: {stderr}"
    );
    // Nothing was created under either name.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[cfg(feature = "sqlite")]
#[test]
fn store_options_on_the_command_line_are_checked_like_the_url_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = exec_command("sqlite:m.db");
    cmd.current_dir(dir.path())
        .args(["--store-option", "bogus=1"]);
    let (code, stderr) = refused(&mut cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bogus"), "{stderr}");
    let mut cmd = exec_command("mem:");
    cmd.args(["--store-option", "no-equals-sign"]);
    let (code, stderr) = refused(&mut cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("KEY=VALUE"), "{stderr}");
}

/// A store path written `~/…` with no shell to expand it (an MCP client's JSON `args`,
/// `MEMORY_STORE` in a service file) is in the home directory, for every command that takes
/// a store; nothing named `~` appears in the working directory.
#[cfg(all(feature = "fs", feature = "sqlite"))]
#[test]
fn a_tilde_store_path_is_in_the_home_directory_without_a_shell() {
    let cwd = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let memory = |args: &[&str]| {
        let mut cmd = common::memory_command(args);
        cmd.current_dir(cwd.path())
            .env("HOME", home.path())
            .env("USERPROFILE", home.path());
        cmd
    };
    // Runs it to its end with no input; it must succeed.
    let succeeds = |cmd: &mut Command| {
        let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
        assert!(
            out.status.success(),
            "{:?}: {}",
            cmd.get_args().collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let create =
        (common::line(json!({"command": "create", "path": "/memories/a.md", "file_text": "a"}))
            + "\n")
            .into_bytes();
    for store in [
        "~/.claude-memory",
        "file:~/file-store",
        "sqlite:~/m.db",
        "~",
    ] {
        let out = common::feed_and_wait(
            memory(&["exec", "--store", store]).spawn().unwrap(),
            &create,
        );
        assert!(
            out.status.success(),
            "{store}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            common::answers_of(&out, 1)[0]["is_error"],
            json!(false),
            "{store}"
        );
    }
    assert_eq!(
        std::fs::read(home.path().join(".claude-memory/memories/a.md")).unwrap(),
        b"a"
    );
    assert_eq!(
        std::fs::read(home.path().join("file-store/memories/a.md")).unwrap(),
        b"a"
    );
    assert!(home.path().join("m.db").is_file());
    assert_eq!(
        std::fs::read(home.path().join("memories/a.md")).unwrap(),
        b"a"
    );

    // MEMORY_STORE, an admin command, `memory copy`, `memory mcp` and a mount.
    succeeds(memory(&["ls", "/memories/a.md"]).env("MEMORY_STORE", "~/.claude-memory"));
    succeeds(&mut memory(&[
        "copy",
        "~/.claude-memory",
        "~/copied",
        "--quiet",
    ]));
    assert_eq!(
        std::fs::read(home.path().join("copied/memories/a.md")).unwrap(),
        b"a"
    );
    succeeds(&mut memory(&["mcp", "--store", "~/mcp-store"]));
    assert!(home.path().join("mcp-store").is_dir());
    succeeds(&mut memory(&["mcp", "--mount", "notes=~/mounted"]));
    assert!(home.path().join("mounted").is_dir());
    assert!(
        std::fs::read_dir(cwd.path()).unwrap().next().is_none(),
        "nothing in the working directory: {:?}",
        std::fs::read_dir(cwd.path()).unwrap().collect::<Vec<_>>()
    );

    // No home directory: a clear usage error, and still nothing created.
    for args in [
        &["exec", "--store", "~/.claude-memory"][..],
        &["mcp", "--store", "sqlite:~/m.db"],
        &["mcp", "--mount", "notes=~/mounted"],
    ] {
        let (code, stderr) = refused(memory(args).env_remove("HOME").env_remove("USERPROFILE"));
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("HOME is not set") || stderr.contains("USERPROFILE is not set"),
            "{stderr}"
        );
    }
    assert!(std::fs::read_dir(cwd.path()).unwrap().next().is_none());
}

/// `memory --help` names every kind of store URL this build opens (the list memory-runner
/// compiles in), not only a directory, a SQLite file and memory.
#[test]
fn the_top_help_lists_every_store_url_this_build_opens() {
    let out = Command::new(MEMORY).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let schemes = memory_cli::store_url::compiled_schemes();
    assert!(schemes.len() >= 2, "{schemes:?}");
    for scheme in schemes {
        assert!(
            help.contains(&format!("  {}  ", scheme.form())),
            "--help lacks {}:\n{help}",
            scheme.form()
        );
        assert!(help.contains(scheme.about()), "{help}");
    }
    assert!(
        !help.contains("a directory, a SQLite file, or\nmemory"),
        "{help}"
    );
    assert!(help.contains("~/"), "{help}");
}
