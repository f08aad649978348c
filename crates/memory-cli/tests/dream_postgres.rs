//! `memory dream` from PostgreSQL stores (`MEMORY_TEST_POSTGRES_URL`, from
//! scripts/pg-test-server.sh) against the fake Messages API: a `postgres://` store and a
//! `store+postgres://` versioned store as the source, every row of the schema's tables and its
//! sequence values the same after the dream as before, the output written; a source schema
//! that is missing or at another version refused with exit 2 before any request, creating
//! nothing.

#![cfg(all(feature = "postgres", feature = "fs"))]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use memory_runner::testing::{FakeApi, Reply, end_turn, tool_use};
use serde_json::json;

mod common;

use common::MEMORY;
use common::dream::memory_dream;
use common::postgres::{admin, pg_url, unique_schema};
use common::serve::{http, serve};

/// Everything in `schema` a dream could change: whether it exists, its relations, every row
/// of its tables in order (as JSON text, bytea as hex) and its sequences' values.
async fn dump(schema: &str) -> Vec<String> {
    memory_postgres::testing::dump_schema(&admin().await, schema).await
}

/// `memory ARGS` with `stdin`, without the caller's store or key variables.
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
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Claude reads the source, tries to change it, and writes the output.
fn script() -> Vec<Reply> {
    vec![
        Reply::message(tool_use(
            Some("Reading."),
            &[
                (
                    "t1",
                    "memory",
                    json!({"command": "view", "path": "/memories/source"}),
                ),
                (
                    "t2",
                    "memory",
                    json!({"command": "view", "path": "/memories/source/a.md"}),
                ),
            ],
        )),
        Reply::message(tool_use(
            None,
            &[
                (
                    "w1",
                    "memory",
                    json!({"command": "delete", "path": "/memories/source/a.md"}),
                ),
                (
                    "w2",
                    "memory",
                    json!({"command": "create", "path": "/memories/source/new.md", "file_text": "x"}),
                ),
                (
                    "w3",
                    "memory",
                    json!({"command": "str_replace", "path": "/memories/source/b.md", "old_str": "beta", "new_str": "gamma"}),
                ),
                (
                    "o1",
                    "memory",
                    json!({"command": "create", "path": "/memories/output/all.md", "file_text": "alpha and beta\n"}),
                ),
            ],
        )),
        Reply::message(end_turn("Merged a and b.")),
    ]
}

/// The dream ran, read the source, had its three writes into the source refused, and wrote
/// the output.
fn assert_dreamed(api: &FakeApi, out: &Output, output: &std::path::Path) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "created /memories/all.md\n"
    );
    let second = api.requests()[1].json().to_string();
    assert!(second.contains("alpha notes"), "{second}");
    assert_eq!(
        stderr.matches("/memories/source is read-only").count(),
        3,
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(output.join("memories/all.md")).unwrap(),
        "alpha and beta\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dream_from_postgres_leaves_every_row_as_it_was() {
    let schema = unique_schema("dream_pg");
    let url = pg_url(&format!("schema={schema}&root=notes"));
    for (path, text) in [
        ("/memories/a.md", "alpha notes\n"),
        ("/memories/b.md", "beta notes\n"),
    ] {
        let out = memory(&["put", "--store", &url, path], text.as_bytes());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let before = dump(&schema).await;
    assert!(before.iter().any(|row| row.contains("alpha")), "{before:?}");

    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    let api = FakeApi::start(script()).await;
    let out = memory_dream(&api, &["--from", &url, "--into", output.to_str().unwrap()]).await;
    assert_dreamed(&api, &out, &output);
    assert_eq!(dump(&schema).await, before, "the source's tables changed");

    // A root that is not there: refused, no row written, nothing sent.
    let api = FakeApi::start(script()).await;
    let elsewhere = pg_url(&format!("schema={schema}&root=elsewhere"));
    let out = memory_dream(
        &api,
        &[
            "--from",
            &elsewhere,
            "--into",
            dir.path().join("o2").to_str().unwrap(),
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("root elsewhere"), "{stderr}");
    assert!(api.requests().is_empty());
    assert_eq!(dump(&schema).await, before, "the open wrote a root row");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_older_source_schema_is_refused_creating_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = unique_schema("dream_pg_missing");
    for from in [
        pg_url(&format!("schema={missing}")),
        format!("store+{}#memstore_x", pg_url(&format!("schema={missing}"))),
    ] {
        let api = FakeApi::start(script()).await;
        let out = memory_dream(
            &api,
            &[
                "--from",
                &from,
                "--into",
                dir.path().join("o").to_str().unwrap(),
            ],
        )
        .await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("does not exist"), "{stderr}");
        assert!(stderr.contains("without read-only"), "{stderr}");
        assert!(api.requests().is_empty());
        assert!(dump(&missing).await.is_empty(), "the schema was created");
    }

    // An older schema (the newest migration's record gone): refused, nothing migrated.
    let older = unique_schema("dream_pg_older");
    let url = pg_url(&format!("schema={older}&root=r"));
    let out = memory(
        &["put", "--store", &url, "/memories/a.md"],
        b"alpha notes\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    admin()
        .await
        .execute(
            &format!(
                "DELETE FROM \"{older}\".schema_migrations WHERE version = (SELECT max(version) FROM \"{older}\".schema_migrations)"
            ),
            &[],
        )
        .await
        .unwrap();
    let before = dump(&older).await;
    let api = FakeApi::start(script()).await;
    let out = memory_dream(
        &api,
        &[
            "--from",
            &url,
            "--into",
            dir.path().join("o").to_str().unwrap(),
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("older than the version"), "{stderr}");
    assert!(api.requests().is_empty());
    assert_eq!(dump(&older).await, before, "the schema was migrated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dream_from_a_postgres_versioned_store_leaves_every_row_as_it_was() {
    let schema = unique_schema("dream_pgstore");
    let db = pg_url(&format!("schema={schema}"));
    let id = {
        let (_server, addr) = serve(&db);
        let body = json!({"name": "Notes", "description": "On PostgreSQL."}).to_string();
        http(&addr, "POST", "/v1/memory_stores", &body)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let from = format!("store+{db}#{id}");
    for (path, text) in [
        ("/memories/a.md", "alpha notes\n"),
        ("/memories/b.md", "beta notes\n"),
    ] {
        let out = memory(&["put", "--store", &from, path], text.as_bytes());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let before = dump(&schema).await;
    assert!(
        before.iter().any(|row| row.starts_with("memory_versions:")),
        "{before:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    let api = FakeApi::start(script()).await;
    let out = memory_dream(&api, &["--from", &from, "--into", output.to_str().unwrap()]).await;
    assert_dreamed(&api, &out, &output);
    assert_eq!(dump(&schema).await, before, "the source's tables changed");
}

/// The same PostgreSQL store named through another name of its server (`localhost` for
/// `127.0.0.1`) is the dream's source: refused even with `--force`, before any request, every
/// row as it was (the server's system identifier, the database, the schema and the root are
/// compared, never the host's name). Another root of the same schema is another store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dream_into_its_postgres_source_under_another_host_name_is_refused() {
    let schema = unique_schema("dream_pg_same");
    let url = pg_url(&format!("schema={schema}&root=notes"));
    assert!(url.contains("@127.0.0.1:"), "{url}");
    let out = memory(
        &["put", "--store", &url, "/memories/a.md"],
        b"alpha notes\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = dump(&schema).await;
    let by_name = url.replace("@127.0.0.1:", "@localhost:");
    for (from, into) in [(&url, &by_name), (&by_name, &url)] {
        let api = FakeApi::start(script()).await;
        let out = memory_dream(&api, &["--from", from, "--into", into, "--force"]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("the same store"), "{stderr}");
        assert!(api.requests().is_empty(), "a request was sent");
        assert_eq!(dump(&schema).await, before, "the source's tables changed");
    }
    // A versioned store on PostgreSQL, by the same id through the other host name.
    let db = pg_url(&format!("schema={schema}_stores"));
    let id = {
        let (_server, addr) = serve(&db);
        let body = json!({"name": "Notes", "description": "On PostgreSQL."}).to_string();
        http(&addr, "POST", "/v1/memory_stores", &body)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let versioned = format!("store+{db}#{id}");
    let out = memory(
        &["put", "--store", &versioned, "/memories/a.md"],
        b"alpha notes\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stores_before = dump(&format!("{schema}_stores")).await;
    let api = FakeApi::start(script()).await;
    let renamed = versioned.replace("@127.0.0.1:", "@localhost:");
    let out = memory_dream(&api, &["--from", &versioned, "--into", &renamed, "--force"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the same store"), "{stderr}");
    assert!(api.requests().is_empty(), "a request was sent");
    assert_eq!(dump(&format!("{schema}_stores")).await, stores_before);

    // Another root on the same server, database and schema is another store.
    let other = by_name.replace("root=notes", "root=dreamed");
    let api = FakeApi::start(script()).await;
    let out = memory_dream(&api, &["--from", &url, "--into", &other]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "created /memories/all.md\n"
    );
}
