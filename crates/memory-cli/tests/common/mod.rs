//! Helpers shared by the tests that drive the real `memory` binary.
#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod dream;
pub mod postgres;
pub mod run;
pub mod s3;
pub mod serve;

/// The input of each of `processes` processes inserting into `/memories/shared.md` at once:
/// `inserts` insert commands, one a line, alternately at the top and just below the header,
/// the text `p{process}-i{insert}`.
pub fn shared_inserts(processes: usize, inserts: usize) -> Vec<String> {
    (0..processes)
        .map(|p| {
            (0..inserts)
                .map(|i| {
                    line(json!({
                        "command": "insert",
                        "path": "/memories/shared.md",
                        "insert_line": i % 2,
                        "insert_text": format!("p{p}-i{i}"),
                    })) + "\n"
                })
                .collect()
        })
        .collect()
}

/// Asserts that `content`, the end of [`shared_inserts`], holds the header and every insert
/// exactly once, and nothing else.
pub fn assert_each_insert_once(content: &str, processes: usize, inserts: usize) {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for l in content.lines() {
        *seen.entry(l).or_default() += 1;
    }
    assert_eq!(seen.get("header"), Some(&1));
    for p in 0..processes {
        for i in 0..inserts {
            let want = format!("p{p}-i{i}");
            assert_eq!(seen.get(want.as_str()), Some(&1), "{want} lost or doubled");
        }
    }
    assert_eq!(content.lines().count(), 1 + processes * inserts);
}

/// `memory cat PATH --store STORE` (without the caller's store or key variables): the file's
/// text; fails the test unless the command succeeds.
pub fn cat(store: &str, path: &str) -> String {
    let out = Command::new(MEMORY)
        .args(["cat", path, "--store", store])
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .output()
        .expect("memory cat");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The `memory` binary cargo built for these tests.
pub const MEMORY: &str = env!("CARGO_BIN_EXE_memory");

/// Longest any single `memory` process may run in these tests.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// `memory ARGS` with piped stdio, no store variables from the environment and a quiet log.
pub fn memory_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(MEMORY);
    cmd.args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `memory exec --store STORE` with piped stdio and a quiet log.
pub fn exec_command(store: &str) -> Command {
    memory_command(&["exec", "--store", store])
}

/// Runs `memory ARGS` on `input` (bounded by [`TIMEOUT`]) and returns what it did.
pub fn run(args: &[&str], input: &[u8]) -> Output {
    let child = memory_command(args).spawn().expect("start memory");
    feed_and_wait(child, input)
}

/// Runs `memory exec --store STORE` on `input` and returns what it did.
pub fn exec_raw(store: &str, input: &[u8]) -> Output {
    let child = exec_command(store).spawn().expect("start memory");
    feed_and_wait(child, input)
}

/// Writes `input` to the child's stdin, closes it, and waits (bounded by [`TIMEOUT`]).
pub fn feed_and_wait(mut child: Child, input: &[u8]) -> Output {
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        // The child may exit early (bad store): a broken pipe is its business, not ours.
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stderr.read_to_end(&mut buf).map(|_| buf)
    });
    let status = wait_timeout(&mut child, TIMEOUT);
    writer.join().expect("writer thread");
    Output {
        status,
        stdout: out_reader
            .join()
            .expect("stdout thread")
            .expect("read stdout"),
        stderr: err_reader
            .join()
            .expect("stderr thread")
            .expect("read stderr"),
    }
}

/// Waits for `child`, killing it and failing the test after `limit`.
pub fn wait_timeout(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("memory did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs the lines through `memory exec` (each followed by `\n`), checks it exited 0 with one
/// answer per line, and returns the answers.
pub fn exec_lines(store: &str, lines: &[String]) -> Vec<Value> {
    let mut input = String::new();
    for line in lines {
        input.push_str(line);
        input.push('\n');
    }
    answers_of(&exec_raw(store, input.as_bytes()), lines.len())
}

/// The answers in `out`, after checking the exit status and the line count.
pub fn answers_of(out: &Output, expected_lines: usize) -> Vec<Value> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "memory exec failed: {:?}\n{stderr}",
        out.status
    );
    assert!(
        out.stdout.is_empty() || out.stdout.ends_with(b"\n"),
        "unterminated output"
    );
    let answers: Vec<Value> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice(l).unwrap_or_else(|e| {
                panic!("answer is not JSON ({e}): {}", String::from_utf8_lossy(l))
            })
        })
        .collect();
    assert_eq!(
        answers.len(),
        expected_lines,
        "one answer per input line\n{stderr}"
    );
    answers
}

/// One command as a JSON line.
pub fn line(value: Value) -> String {
    serde_json::to_string(&value).expect("serialize")
}

/// The bare answer `{"content": content, "is_error": is_error}`.
pub fn answer(content: &str, is_error: bool) -> Value {
    json!({"content": content, "is_error": is_error})
}

/// The text content of an answer.
pub fn text(answer: &Value) -> &str {
    answer["content"]
        .as_str()
        .unwrap_or_else(|| panic!("content is not text: {answer}"))
}

/// A listing's entries (`(size, path)`), header excluded.
pub fn listing(answer: &Value) -> Vec<(String, String)> {
    let body = text(answer);
    assert_eq!(answer["is_error"], json!(false), "{body}");
    body.lines()
        .skip(1)
        .map(|l| {
            let (size, path) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("bad entry {l:?}"));
            (size.to_owned(), path.to_owned())
        })
        .collect()
}

/// A fresh directory store and its URL.
pub fn dir_store() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().to_str().expect("utf-8 temp path").to_owned();
    (dir, url)
}

/// Folder stores in new temporary folders, one on the Linux fast paths and one with
/// `portable=true` (the paths macOS and Windows take): (folder, URL) each.
#[allow(dead_code)] // Not every test binary uses every helper.
pub fn dir_stores() -> Vec<(tempfile::TempDir, String)> {
    let (fast, url) = dir_store();
    let (portable, base) = dir_store();
    vec![
        (fast, url),
        (portable, format!("file:{base}?portable=true")),
    ]
}

/// Reads `base/memories/rel` from disk.
pub fn read_disk(base: &Path, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(base.join("memories").join(rel)).ok()
}

/// A tiny deterministic PRNG (xorshift64*), so failures can be replayed from the printed seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from `MEMORY_TEST_SEED` or the clock; prints the seed.
    pub fn from_env(test: &str) -> Self {
        let seed = std::env::var("MEMORY_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{test}: MEMORY_TEST_SEED={seed}");
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo)
    }
}
