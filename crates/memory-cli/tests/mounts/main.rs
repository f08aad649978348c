//! `memory run --mount` and `memory mcp --mount` against a fake Messages API on a loopback port:
//! the real binary, two versioned stores of one database mounted read-only and read-write. Here
//! the helpers (a `memory serve` to mount from, a `memory mcp` session); the tests are in a
//! module per command.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use memory_store::{Actor, CreateStore, ListVersions, MemoryStores, Operation, View};
use serde_json::json;

mod arguments;
#[path = "../common/mod.rs"]
mod common;
mod mcp;
mod run;

use common::MEMORY;
use common::run::memory_run;
use common::serve::http;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A `memory serve` on a free loopback port over `db` ([`common::serve::serve`]), stopped
/// when dropped.
struct Server {
    _running: common::serve::Server,
    addr: String,
}

impl Server {
    fn start(db: &Path) -> Server {
        let (running, addr) = common::serve::serve(db.to_str().unwrap());
        Server {
            _running: running,
            addr,
        }
    }

    /// Creates a store; its id.
    fn create_store(&self, name: &str, description: &str) -> String {
        let body = json!({"name": name, "description": description}).to_string();
        let store = http(&self.addr, "POST", "/v1/memory_stores", &body);
        store["id"].as_str().unwrap().to_owned()
    }
}

/// `memory mcp ARGS`: sends `calls` (tool name and arguments) after the handshake and `tools/list`;
/// the tools/list answer, the calls' answers, standard error and the exit status. A server
/// that exits at start gives no answers.
fn mcp(
    args: &[String],
    calls: &[(&str, serde_json::Value)],
) -> (Vec<serde_json::Value>, String, ExitStatus) {
    let mut child = Command::new(MEMORY)
        .arg("mcp")
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_SESSION_ID")
        .env_remove("MEMORY_STORE_API_KEY")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut messages = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    ];
    for (i, (tool, call)) in calls.iter().enumerate() {
        messages.push(json!({"jsonrpc": "2.0", "id": 3 + i, "method": "tools/call", "params": {"name": tool, "arguments": call}}));
    }
    let expected = 2 + calls.len();
    let reader = std::thread::spawn(move || {
        // Writes fail once a server that refused its arguments has exited: then no answers.
        for m in messages {
            if writeln!(stdin, "{m}").is_err() {
                return Vec::new();
            }
        }
        let mut answers = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if value.get("id").is_some() {
                answers.push(value);
            }
            if answers.len() == expected {
                break;
            }
        }
        drop(stdin);
        answers
    });
    let status = common_wait(&mut child, Duration::from_secs(60));
    let answers = reader.join().unwrap();
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    let answers = answers.into_iter().skip(1).collect();
    (answers, err, status)
}

/// Waits for `child`, killing it after `limit`.
fn common_wait(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("memory mcp did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
