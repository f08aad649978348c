//! The `memory` program on PostgreSQL (`MEMORY_TEST_POSTGRES_URL`, from
//! scripts/pg-test-server.sh): `memory exec` processes on one `postgres://` file, and `memory
//! serve --db postgres://...` when the database is unreachable, newer than the binary, or cuts
//! its connections in the middle of requests. Two instances driven by the Python SDK:
//! scripts/stores-sdk-postgres.sh.

#![cfg(feature = "postgres")]

mod common;

use std::collections::HashMap;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::serve::{Server, try_serve};
use common::{
    answers_of, assert_each_insert_once, cat, exec_command, exec_lines, feed_and_wait, line,
    shared_inserts,
};
use serde_json::{Value, json};

const PROCESSES: usize = 8;
const INSERTS_PER_PROCESS: usize = 100;

/// `MEMORY_TEST_POSTGRES_URL`; panics, saying how to start a server, when it is unset.
fn pg_url() -> String {
    match std::env::var("MEMORY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: these tests need a real PostgreSQL. Run \
             `scripts/pg-test-server.sh run -- cargo test -p memory-layer-cli --test postgres`"
        ),
    }
}

/// The password of [`pg_url`], to check that no output shows it.
fn password() -> String {
    let url = pg_url();
    let rest = url.split_once("://").map_or("", |(_, r)| r);
    let userinfo = rest.split_once('@').map_or("", |(u, _)| u);
    let password = userinfo.split_once(':').map_or("", |(_, p)| p).to_owned();
    assert!(password.len() >= 8, "the test URL should carry a password");
    password
}

/// A name no other test run uses.
fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}_{}_{}", std::process::id(), nanos % 1_000_000_000)
}

fn with_options(options: &str) -> String {
    let url = pg_url();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{options}")
}

fn admin() -> (tokio::runtime::Runtime, tokio_postgres::Client) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls)
            .await
            .expect("connect to the test PostgreSQL");
        tokio::spawn(async move {
            let _ = connection.await;
        });
        client
    });
    (rt, client)
}

#[test]
fn eight_processes_inserting_into_one_file_lose_nothing() {
    let url = with_options(&format!("schema=cli_tests&root={}", unique("inserts")));
    let created = exec_lines(
        &url,
        &[line(
            json!({"command": "create", "path": "/memories/shared.md", "file_text": "header\n"}),
        )],
    );
    assert_eq!(created[0]["is_error"], json!(false), "{}", created[0]);
    let inputs = shared_inserts(PROCESSES, INSERTS_PER_PROCESS);
    // Every process first, then the input, so that their edits overlap.
    let children: Vec<Child> = inputs
        .iter()
        .map(|_| exec_command(&url).spawn().expect("start memory"))
        .collect();
    let threads: Vec<_> = children
        .into_iter()
        .zip(inputs)
        .map(|(child, input)| {
            std::thread::spawn(move || {
                answers_of(&feed_and_wait(child, input.as_bytes()), INSERTS_PER_PROCESS)
            })
        })
        .collect();
    for (p, t) in threads.into_iter().enumerate() {
        for (i, a) in t.join().unwrap().iter().enumerate() {
            assert_eq!(a["is_error"], json!(false), "process {p} insert {i}: {a}");
        }
    }
    let content = cat(&url, "/memories/shared.md");
    assert_each_insert_once(&content, PROCESSES, INSERTS_PER_PROCESS);
}

/// Stops the server the way an operator does (SIGTERM), and waits for it.
fn stop(mut server: Server) {
    let _ = Command::new("kill").arg(server.0.id().to_string()).status();
    let _ = server.0.wait();
}

/// One HTTP request; the status and the JSON body (null when the body is not JSON).
fn http(addr: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
    let (status, body) = common::serve::request(addr, method, path, body);
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

#[test]
fn an_unreachable_database_is_exit_2_naming_host_and_port_never_the_password() {
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let secret = "s3cret-Pa55word";
    let (code, err) = try_serve(&format!(
        "postgres://memory:{secret}@127.0.0.1:{port}/memory_test?connect_timeout=2s"
    ))
    .expect_err("memory serve started without its database");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(!err.contains(secret), "the password is shown: {err}");
    // A wrong password: refused, and not shown either.
    let wrong = pg_url().replacen(&password(), secret, 1);
    let (code, err) = try_serve(&wrong).expect_err("started with a wrong password");
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains(secret) && !err.contains(&password()), "{err}");
}

#[test]
fn a_schema_newer_than_the_binary_is_refused_saying_which_versions() {
    let schema = unique("newer");
    let db = with_options(&format!("schema={schema}"));
    let (server, _) = try_serve(&db).expect("memory serve on a new schema");
    stop(server);
    let (rt, client) = admin();
    rt.block_on(client.execute(
        &format!("INSERT INTO \"{schema}\".schema_migrations (version) VALUES (999)"),
        &[],
    ))
    .unwrap();
    let (code, err) = try_serve(&db).expect_err("memory serve started on a newer schema");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("999") && err.contains(&schema), "{err}");
    assert!(
        err.contains(&memory_runner::postgres::SCHEMA_VERSION.to_string()),
        "{err}"
    );
    assert!(!err.contains(&password()), "{err}");
}

#[test]
fn lost_connections_are_http_errors_and_the_server_serves_again() {
    let app = unique("cut");
    let db = with_options(&format!(
        "schema=cli_serve&application_name={app}&pool_size=4"
    ));
    let (server, addr) = try_serve(&db).expect("memory serve");
    let (status, store) = http(&addr, "POST", "/v1/memory_stores", r#"{"name":"Cut"}"#);
    assert_eq!(status, 200, "{store}");
    let sid = store["id"].as_str().unwrap().to_owned();

    // Cut every connection of the server, again and again, while it writes.
    let cutting = Arc::new(AtomicBool::new(true));
    let cutter = {
        let (cutting, app) = (Arc::clone(&cutting), app.clone());
        std::thread::spawn(move || {
            let (rt, client) = admin();
            let mut cuts = 0;
            while cutting.load(Ordering::Relaxed) {
                let rows = rt
                    .block_on(client.query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
                        &[&app],
                    ))
                    .unwrap();
                cuts += rows.len();
                std::thread::sleep(Duration::from_millis(15));
            }
            cuts
        })
    };
    let mut answered = Vec::new();
    let mut failed = 0;
    for i in 0..60 {
        let body = json!({"path": format!("/m/{i}.md"), "content": format!("content {i}")});
        let (status, answer) = http(
            &addr,
            "POST",
            &format!("/v1/memory_stores/{sid}/memories"),
            &body.to_string(),
        );
        match status {
            200 => answered.push((format!("/m/{i}.md"), format!("content {i}"))),
            500..=599 => {
                failed += 1;
                let text = answer.to_string();
                assert!(!text.contains(&password()), "{text}");
            }
            other => panic!("write {i}: {other} {answer}"),
        }
    }
    cutting.store(false, Ordering::Relaxed);
    let cuts = cutter.join().unwrap();
    assert!(cuts > 0, "no connection was cut");
    assert!(failed > 0, "no request met a cut connection ({cuts} cuts)");

    // Serving again within seconds.
    let start = Instant::now();
    loop {
        let (status, _) = http(&addr, "GET", &format!("/v1/memory_stores/{sid}"), "");
        if status == 200 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still {status} after 10s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Every 200 is there; every memory is whole (its hash is its content's).
    let (status, list) = http(
        &addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories?limit=100"),
        "",
    );
    assert_eq!(status, 200, "{list}");
    let sha = |text: &str| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(text.as_bytes()));
    let listed: HashMap<String, String> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let path = m["path"].as_str().unwrap();
            let i = path.trim_start_matches("/m/").trim_end_matches(".md");
            assert_eq!(
                m["content_sha256"],
                json!(sha(&format!("content {i}"))),
                "{m}"
            );
            (path.to_owned(), format!("content {i}"))
        })
        .collect();
    for (path, content) in &answered {
        assert_eq!(
            listed.get(path),
            Some(content),
            "{path} answered 200 but is gone"
        );
    }
    stop(server);
}

#[test]
fn the_log_never_shows_the_password() {
    let db = with_options(&format!("schema={}", unique("logged")));
    let mut server = Command::new(common::MEMORY)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-console",
            "--db",
            &db,
        ])
        .env_remove("MEMORY_STORES_DB")
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = common::serve::listening_address(&mut server)
        .unwrap_or_else(|first| panic!("memory serve did not start: {first}"));
    let (status, store) = http(&addr, "POST", "/v1/memory_stores", r#"{"name":"Logged"}"#);
    assert_eq!(status, 200, "{store}");
    let _ = Command::new("kill").arg(server.id().to_string()).status();
    let mut log = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    let _ = server.wait();
    assert!(log.contains("serving memory stores"), "{log}");
    assert!(
        !log.contains(&password()),
        "the log shows the password: {log}"
    );
}

#[test]
fn memory_store_reads_the_stores_memory_serve_keeps_in_postgres() {
    let db = with_options(&format!("schema={}", unique("admin")));
    let (server, addr) = try_serve(&db).expect("memory serve on PostgreSQL");
    let (status, store) = http(&addr, "POST", "/v1/memory_stores", r#"{"name":"pg admin"}"#);
    assert_eq!(status, 200, "{store}");
    let sid = store["id"].as_str().unwrap().to_owned();
    let (status, _) = http(
        &addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        r#"{"path":"/a.md","content":"first"}"#,
    );
    assert_eq!(status, 200);
    stop(server);
    // The admin commands open the same database by the same --db URL.
    let out = Command::new(common::MEMORY)
        .args(["store", "list", "--db", &db])
        .env_remove("MEMORY_STORES_DB")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains(&sid), "{stdout}");
    assert!(!stdout.contains(&password()) && !stderr.contains(&password()));
    // An unreachable database is exit 2, as for memory serve.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = Command::new(common::MEMORY)
        .args(["store", "list", "--db"])
        .arg(format!(
            "postgres://memory:pw-not-shown@127.0.0.1:{port}/memory_test?connect_timeout=2s"
        ))
        .env_remove("MEMORY_STORES_DB")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
    assert!(!stderr.contains("pw-not-shown"), "{stderr}");
}
