//! `StoreStorage` over HTTP against a real `memory-server` on 127.0.0.1 (an ephemeral port):
//! the shared conformance checks, and what the server records.

mod common;

use std::sync::Arc;

use memory_core::{MemoryHandler, MemoryTool, Storage};
use memory_mounts::{Access, HttpStores, Mount, Mounts, StoreStorage};
use memory_server::{ApiKeys, ServerConfig};
use memory_store::{Actor, ListVersions, MemoryStores};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

struct Server {
    url: String,
    engine: MemoryStores,
    _stop: oneshot::Sender<()>,
}

async fn start(config: ServerConfig) -> Server {
    let engine = MemoryStores::open_in_memory().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(memory_server::serve(
        listener,
        engine.clone(),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    Server {
        url: format!("http://{addr}"),
        engine,
        _stop: stop,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_over_http() {
    let server = start(ServerConfig::default()).await;
    let id = common::new_store(&server.engine, "Remote", "").await;
    let client = HttpStores::new(&server.url, None).unwrap();
    let storage: Arc<dyn Storage> = Arc::new(StoreStorage::http(client, &id));
    assert!(
        storage.to_string().starts_with("Store(http://127.0.0.1:"),
        "{storage}"
    );
    memory_core::conformance::run_all_with(storage.clone(), common::STORE).await;
    common::store_rules(storage).await;
}

#[tokio::test]
async fn remote_mounts_with_an_api_key() {
    let keys = ApiKeys::parse("apikey_01agent sk-agent\n").unwrap();
    let server = start(ServerConfig::default().api_keys(Some(keys))).await;
    let notes =
        common::new_store(&server.engine, "User Notes", "What the user asked to keep.").await;
    let handbook = common::new_store(&server.engine, "Team Handbook", "").await;

    let wrong = HttpStores::new(&server.url, Some("sk-wrong".into())).unwrap();
    let e = StoreStorage::http(wrong, &notes)
        .retrieve()
        .await
        .unwrap_err();
    assert!(!e.is_retryable(), "{e:?}");

    let client = HttpStores::new(&server.url, Some("sk-agent".into())).unwrap();
    let mounts = Mounts::new([
        Mount::store(
            StoreStorage::http(client.clone(), &notes),
            Access::ReadWrite,
        )
        .await
        .unwrap(),
        Mount::store(StoreStorage::http(client, &handbook), Access::ReadOnly)
            .await
            .unwrap(),
    ])
    .unwrap();
    assert!(mounts.note().contains(
        "- /memories/user-notes (read-write): \"User Notes\". What the user asked to keep."
    ));
    let tool = MemoryTool::new(mounts);
    for input in [
        json!({"command": "create", "path": "/memories/user-notes/units.md", "file_text": "metric\n"}),
        json!({"command": "str_replace", "path": "/memories/user-notes/units.md", "old_str": "metric", "new_str": "SI units"}),
    ] {
        let out = tool.execute(&input).await;
        assert!(!out.is_error, "{out:?}");
    }
    let out = tool
        .execute(
            &json!({"command": "create", "path": "/memories/team-handbook/x.md", "file_text": "x"}),
        )
        .await;
    assert!(out.is_error);
    let versions = server
        .engine
        .list_versions(&notes, ListVersions::default())
        .await
        .unwrap()
        .data;
    assert_eq!(versions.len(), 2);
    for v in versions {
        // Without a session id the server records the key's actor.
        assert_eq!(v.created_by, Some(Actor::api_key("apikey_01agent")));
    }

    // Naming the session: the server records the session actor, with the key that sent it.
    let session_client = HttpStores::new(&server.url, Some("sk-agent".into()))
        .unwrap()
        .with_session_id("sesn_01tester")
        .unwrap();
    let tool = MemoryTool::new(StoreStorage::http(session_client, &notes));
    let out = tool
        .execute(&json!({"command": "insert", "path": "/memories/units.md", "insert_line": 0, "insert_text": "# Units"}))
        .await;
    assert!(!out.is_error, "{out:?}");
    let newest = server
        .engine
        .list_versions(&notes, ListVersions::default())
        .await
        .unwrap()
        .data;
    assert_eq!(newest.len(), 3);
    assert_eq!(
        newest[0].created_by,
        Some(Actor::session_via_key("sesn_01tester", "apikey_01agent"))
    );
    assert!(
        HttpStores::new(&server.url, None)
            .unwrap()
            .with_session_id("bad id!")
            .is_err()
    );
    assert!(
        server
            .engine
            .list_versions(&handbook, ListVersions::default())
            .await
            .unwrap()
            .data
            .is_empty()
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_retryable_failure() {
    // A port nobody listens on: bind one, then free it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let storage = StoreStorage::http(HttpStores::new(&url, None).unwrap(), "memstore_01x");
    let tool = MemoryTool::new(storage);
    let out = tool
        .execute(&json!({"command": "view", "path": "/memories/a.md"}))
        .await;
    assert!(out.is_error);
    let text = out.text().unwrap();
    assert_eq!(
        text,
        "Error: The memory store could not complete view on /memories/a.md. Try again in a moment."
    );
    assert!(!text.contains("127.0.0.1"));
}
