//! Every ```sh block of the workspace's README.md runs as written, in order, on a fresh
//! directory: the blocks that can run here are run with `sh -e`, one after the other in one
//! scratch directory (a fresh HOME inside it), with the `memory` binary cargo built for these
//! tests first on PATH; the others are skipped by [`SKIPPED`], each named by a line of its own
//! and the reason it cannot run in a test.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Blocks not run here: a line that only that block has, and why.
const SKIPPED: &[(&str, &str)] = &[
    (
        "scripts/test.sh",
        "the test command itself (it runs this test, and takes about 25 minutes)",
    ),
    (
        "cargo build --release -p memory-layer-cli",
        "builds the release binary (minutes); the test puts its own build first on PATH instead",
    ),
    (
        "export ANTHROPIC_API_KEY=...",
        "needs a real Anthropic API key and sends requests to the API",
    ),
    (
        "claude mcp add memory -- memory mcp --store ~/.claude-memory",
        "installs `memory` into the user's PATH and needs a real Claude Code to configure",
    ),
    (
        "memory sync ~/.claude/memory store+https://memory.example.com#memstore_01abc --watch",
        "needs a memory serve at that address holding that store, and --watch runs until stopped \
         (memory sync's own tests: crates/memory-cli/tests/sync.rs, tests/stores-sdk/sync_test.py)",
    ),
];

/// Files of the repository the blocks read, copied into the scratch directory.
const REPOSITORY_FILES: &[&str] = &["examples/transcript.jsonl"];

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// The ```sh blocks of `markdown`, in order, each with the line number of its opening fence.
fn sh_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        match current.as_mut() {
            None if line.trim_end() == "```sh" => current = Some((index + 1, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    assert!(current.is_none(), "README.md ends inside a ```sh block");
    blocks
}

/// The block as the test runs it: `cargo run [FLAGS] -p memory-layer-cli -- ARGS` (how a reader with
/// nothing installed starts the program) becomes `memory ARGS`, the binary cargo built for these
/// tests, first on PATH, instead of a second cargo build inside the test.
fn with_built_binary(block: &str) -> String {
    block
        .lines()
        .map(
            |line| match (line.find("cargo run"), line.find("-p memory-layer-cli -- ")) {
                (Some(start), Some(flag)) if start < flag => format!(
                    "{}memory {}",
                    &line[..start],
                    &line[flag + "-p memory-layer-cli -- ".len()..]
                ),
                _ => line.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_readme_sh_block_runs_as_written_in_order() {
    let root = repository_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("read README.md");
    let blocks = sh_blocks(&readme);
    assert!(
        blocks.len() >= 5,
        "README.md has {} ```sh blocks",
        blocks.len()
    );

    // Every skip names exactly one block, so a stale entry is noticed.
    for (line, why) in SKIPPED {
        let matching = blocks
            .iter()
            .filter(|(_, text)| text.lines().any(|l| l.trim() == *line))
            .count();
        assert_eq!(
            matching, 1,
            "SKIPPED names {line:?} ({why}) in {matching} blocks"
        );
    }

    let scratch = tempfile::tempdir().expect("scratch directory");
    for file in REPOSITORY_FILES {
        let to = scratch.path().join(file);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(root.join(file), &to).expect("copy a repository file");
    }
    let home = scratch.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let bin_dir = Path::new(common::MEMORY).parent().expect("binary's folder");
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");

    let mut ran = 0;
    for (line, text) in &blocks {
        if SKIPPED
            .iter()
            .any(|(skip, _)| text.lines().any(|l| l.trim() == *skip))
        {
            continue;
        }
        let script = with_built_binary(text);
        let child = Command::new("sh")
            .args(["-e", "-c", &script])
            .current_dir(scratch.path())
            .env("PATH", &path)
            .env("HOME", &home)
            .env("RUST_LOG", "warn")
            .env_remove("XDG_DATA_HOME")
            .env_remove("MEMORY_STORE")
            .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_BASE_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sh");
        let out = common::feed_and_wait(child, b"");
        assert!(
            out.status.success(),
            "the ```sh block at README.md line {line} failed ({}):\n{script}\n\
             --- stdout ---\n{}\n--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        ran += 1;
    }
    assert!(ran >= 3, "only {ran} README blocks ran");
}
