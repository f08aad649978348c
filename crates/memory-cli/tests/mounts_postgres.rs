//! `memory mcp --mount store+postgres://...#ID` against stores a `memory serve --db
//! postgres://...` made (`MEMORY_TEST_POSTGRES_URL`, from scripts/pg-test-server.sh): the
//! folder from the store's display name, and an archived store refused naming it.

#![cfg(feature = "postgres")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

const MEMORY: &str = env!("CARGO_BIN_EXE_memory");

/// `MEMORY_TEST_POSTGRES_URL` with a schema of its own; panics, saying how to start a server,
/// when it is unset.
fn pg_url() -> String {
    let url = match std::env::var("MEMORY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: these tests need a real PostgreSQL. Run \
             `scripts/pg-test-server.sh run -- cargo test -p memory-cli --test mounts_postgres`"
        ),
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let sep = if url.contains('?') { '&' } else { '?' };
    format!(
        "{url}{sep}schema=mounts_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000
    )
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(db: &str) -> (Server, String) {
    let mut child = Command::new(MEMORY)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-console",
            "--db",
            db,
        ])
        .env_remove("MEMORY_STORES_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .trim()
        .strip_prefix("memory serve: listening on http://")
        .unwrap_or_else(|| panic!("memory serve did not start: {first}"))
        .to_owned();
    (Server(child), addr)
}

fn http(addr: &str, method: &str, path: &str, body: &str) -> Value {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (_, body) = out.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}

/// `memory mcp --mount SPEC`, asked for its tool list: the tool description (`None` when it
/// exited at start), standard error and the exit code.
fn mcp_mount(spec: &str) -> (Option<String>, String, Option<i32>) {
    let mut child = Command::new(MEMORY)
        .args(["mcp", "--mount", spec])
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_SESSION_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    ];
    let mut description = None;
    if messages.iter().all(|m| writeln!(stdin, "{m}").is_ok()) {
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let Ok(line) = line else { break };
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == 2 {
                description = value["result"]["tools"][0]["description"]
                    .as_str()
                    .map(str::to_owned);
                break;
            }
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (description, err, status.code())
}

#[test]
fn postgres_stores_mount_by_name_and_archived_ones_are_refused() {
    let db = pg_url();
    let (_server, addr) = serve(&db);
    let store = |name: &str| {
        let body = json!({"name": name, "description": "On PostgreSQL."}).to_string();
        http(&addr, "POST", "/v1/memory_stores", &body)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let handbook = store("Team Handbook");
    let old = store("Old Handbook");
    http(
        &addr,
        "POST",
        &format!("/v1/memory_stores/{old}/archive"),
        "",
    );
    let url = |id: &str| format!("store+{db}#{id}");

    let (description, stderr, code) = mcp_mount(&url(&handbook));
    assert_eq!(code, Some(0), "{stderr}");
    let description = description.unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        description.contains(
            "- /memories/team-handbook (read-write): \"Team Handbook\". On PostgreSQL.\n"
        ),
        "{description}"
    );

    let (description, stderr, code) = mcp_mount(&format!("{}:ro", url(&old)));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(description.is_none());
    assert!(
        stderr.contains(&format!(
            "the memory store {old} (\"Old Handbook\") is archived and cannot be mounted"
        )),
        "{stderr}"
    );
}
