//! Objects another tool put under the store's prefix whose keys are not memory paths (a `..`,
//! `.` or empty segment, a control character): the store keeps working around them. Planted
//! with bare HTTP requests on the S3 test server (object_store itself refuses such keys), so
//! this runs when `MEMORY_TEST_S3_ENDPOINT` is set.

use memory_s3::testing as common;

use std::time::Duration;

use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `PUT /BUCKET/KEY` with `key` sent as written (percent-encoded by the caller where the
/// request line needs it), no signature (moto does not check).
async fn plant(server: &common::S3Server, raw_key: &str) {
    let host = server.endpoint.strip_prefix("http://").unwrap();
    let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
    let request = format!(
        "PUT /{}/{raw_key} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx",
        server.bucket
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        // moto answers one request at a time, in HTTP/1.0.
        answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
        "planting {raw_key}: {answer}"
    );
}

#[tokio::test]
async fn foreign_objects_do_not_break_the_store() {
    let server = common::S3Server::from_env("foreign_objects_do_not_break_the_store").await;
    let storage = server.storage("tenant");
    let tool = MemoryTool::new(server.storage("tenant"));
    for (path, text) in [
        ("/memories/notes/a.md", "alpha\n"),
        ("/memories/b.md", "beta\n"),
    ] {
        let out = tool
            .execute(&json!({"command": "create", "path": path, "file_text": text}))
            .await;
        assert!(!out.is_error, "{out:?}");
    }
    // Keys object_store refuses (each alone used to fail every listing), and one it accepts
    // that is not a memory path (a trailing `/`, a "folder" object).
    let planted = [
        "tenant/memories/notes/%2E%2E/escape.md",
        "tenant/memories/%2E/dot.md",
        "tenant/memories/notes//double.md",
        "tenant/memories/ctl%01name.md",
        "tenant/memories/notes/sub/",
    ];
    for key in planted {
        plant(&server, key).await;
    }

    let listing = storage.listing(&MemoryPath::root()).await.unwrap();
    let all: Vec<String> = listing.entries.iter().map(|m| m.path.to_string()).collect();
    assert_eq!(all, ["/memories/b.md", "/memories/notes/a.md"]);
    assert_eq!(listing.skipped, planted.len() as u64);

    for input in [
        json!({"command": "view", "path": "/memories"}),
        json!({"command": "view", "path": "/memories/notes"}),
        json!({"command": "create", "path": "/memories/c.md", "file_text": "c\n"}),
        json!({"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/moved"}),
        json!({"command": "view", "path": "/memories/moved/a.md"}),
        json!({"command": "delete", "path": "/memories/moved"}),
    ] {
        let out = tool.execute(&input).await;
        assert!(!out.is_error, "{input}: {out:?}");
        let text = out.text().unwrap_or_default();
        assert!(
            !text.contains("escape") && !text.contains("ctl"),
            "{input}: {text}"
        );
    }
    let listing = storage.listing(&MemoryPath::root()).await.unwrap();
    let all: Vec<String> = listing.entries.iter().map(|m| m.path.to_string()).collect();
    assert_eq!(all, ["/memories/b.md", "/memories/c.md"]);
    // Foreign objects are left where they were (the store never deletes what it cannot name)
    // and are still counted as skipped.
    assert_eq!(listing.skipped, planted.len() as u64);
    assert_eq!(storage.file_count().await.unwrap(), 2);
    // rm -r of the whole store removes every memory file.
    storage.delete(&MemoryPath::root()).await.unwrap();
    assert!(storage.list(&MemoryPath::root()).await.unwrap().is_empty());
}
