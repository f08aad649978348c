// scripts/s3-test-server.sh run -- cargo run -p example-s3-shared
//! Two hosts' agents sharing one memory store on S3.
//!
//! Two tasks stand for two hosts: each opens its own S3 client on the same `s3://` URL (as two
//! machines would) and runs `memory_core::MemoryTool` over it. Both race to `create` the same
//! file (exactly one wins), then both `insert` lines into one shared log at the same time: the
//! edits are compare-and-swap writes (`If-Match` on the ETag), so none is lost. Last, each host
//! views what the other wrote.
//!
//! With the line above, `scripts/s3-test-server.sh` starts a local S3 server (moto), creates
//! the bucket `memory-local` and exports the `AWS_*` variables; the store is
//! `s3://memory-local/s3-shared-example` unless a URL is given after `--`
//! (`cargo run -p example-s3-shared -- s3://my-bucket/team-a`, with `AWS_REGION`,
//! `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` set for Amazon S3). Without any `AWS_*`
//! endpoint or credentials it runs offline, both "hosts" on one in-memory object store.

use std::sync::Arc;

use memory_core::{MemoryHandler, MemoryTool};
use memory_s3::ObjectStoreStorage;
use serde_json::{Value, json};

const LINES_PER_HOST: usize = 8;
const DEFAULT_URL: &str = "s3://memory-local/s3-shared-example";

/// One host's view of the store: its own S3 client (or, offline, the shared in-memory store).
fn open(
    url: &str,
    offline: &Option<Arc<dyn memory_s3::object_store::ObjectStore>>,
) -> ObjectStoreStorage {
    let opened = match offline {
        Some(store) => ObjectStoreStorage::new(Arc::clone(store), "s3-shared-example"),
        None => ObjectStoreStorage::from_s3_url(url),
    };
    opened.unwrap_or_else(|e| {
        eprintln!("cannot open {url}: {e}");
        std::process::exit(2);
    })
}

async fn call(host: &str, tool: &MemoryTool<ObjectStoreStorage>, input: Value) -> bool {
    let out = tool.execute(&input).await;
    let flag = if out.is_error { " (is_error)" } else { "" };
    println!(
        "[{host}] > {input}\n[{host}] < {}{flag}",
        out.text().unwrap_or("<image>")
    );
    !out.is_error
}

/// What a host does: race for the lead file, then append its lines to the shared log.
async fn host(name: &'static str, tool: Arc<MemoryTool<ObjectStoreStorage>>) -> bool {
    let won = call(
        name,
        &tool,
        json!({"command": "create", "path": "/memories/team/lead.md", "file_text": format!("{name} leads\n")}),
    )
    .await;
    for i in 0..LINES_PER_HOST {
        let input = json!({
            "command": "insert",
            "path": "/memories/team/log.md",
            "insert_line": 1,
            "insert_text": format!("{name}: note {i}"),
        });
        let out = tool.execute(&input).await;
        assert!(!out.is_error, "[{name}] insert failed: {out:?}");
    }
    println!("[{name}] inserted {LINES_PER_HOST} lines into /memories/team/log.md");
    won
}

#[tokio::main]
async fn main() {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| DEFAULT_URL.to_owned());
    let configured = [
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
        "AWS_ENDPOINT",
        "AWS_ACCESS_KEY_ID",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some());
    let offline: Option<Arc<dyn memory_s3::object_store::ObjectStore>> = (!configured
        && std::env::args().nth(1).is_none())
    .then(|| Arc::new(memory_s3::object_store::memory::InMemory::new()) as _);
    if offline.is_some() {
        println!("No AWS_* endpoint or credentials: both hosts share an in-memory object store.");
        println!("Run `scripts/s3-test-server.sh run -- cargo run -p example-s3-shared` for S3.\n");
    }

    let a = Arc::new(MemoryTool::new(open(&url, &offline)));
    let b = Arc::new(MemoryTool::new(open(&url, &offline)));
    println!("host-a and host-b both use {}\n", a.storage());
    if offline.is_none()
        && let Err(e) = a.storage().check().await
    {
        eprintln!("cannot reach {url}: {e}");
        std::process::exit(2);
    }

    // A fresh start, so the example can run again on the same store.
    a.execute(&json!({"command": "delete", "path": "/memories/team"}))
        .await;
    call(
        "host-a",
        &a,
        json!({"command": "create", "path": "/memories/team/log.md", "file_text": "# Team log\n"}),
    )
    .await;

    let (won_a, won_b) = tokio::join!(
        tokio::spawn(host("host-a", Arc::clone(&a))),
        tokio::spawn(host("host-b", Arc::clone(&b))),
    );
    let (won_a, won_b) = (won_a.expect("host-a"), won_b.expect("host-b"));
    assert!(won_a ^ won_b, "exactly one create of lead.md wins");
    println!(
        "\nExactly one create won ({}); the other got `already exists`.\n",
        if won_a { "host-a" } else { "host-b" }
    );

    // Each host sees the other's work: every line of both, none lost.
    let out = b
        .execute(&json!({"command": "view", "path": "/memories/team/log.md"}))
        .await;
    let text = out.text().unwrap_or_default().to_owned();
    println!("[host-b] view /memories/team/log.md\n{text}\n");
    for name in ["host-a", "host-b"] {
        for i in 0..LINES_PER_HOST {
            assert!(
                text.contains(&format!("{name}: note {i}")),
                "{name}: note {i} is missing"
            );
        }
    }
    call(
        "host-a",
        &a,
        json!({"command": "view", "path": "/memories/team"}),
    )
    .await;
    println!(
        "\nAll {} inserted lines are there: no edit was lost.",
        2 * LINES_PER_HOST
    );
}
