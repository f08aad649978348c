//! `memory mcp --mount store+postgres://...#ID` against stores a `memory serve --db
//! postgres://...` made (`MEMORY_TEST_POSTGRES_URL`, from scripts/pg-test-server.sh): the
//! folder from the store's display name, and an archived store refused naming it.

#![cfg(feature = "postgres")]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

mod common;

use common::MEMORY;
use common::serve::{http, serve};

/// The test PostgreSQL with a schema of its own.
fn pg_url() -> String {
    common::postgres::pg_url(&format!(
        "schema={}",
        common::postgres::unique_schema("mounts")
    ))
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
