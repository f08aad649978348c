//! `memory exec --store s3://BUCKET/PREFIX`: several processes on one S3 store (moto's
//! server, when `MEMORY_TEST_S3_ENDPOINT` is set) lose no edit, and of several racing creates
//! exactly one wins; an unreachable endpoint is exit status 2 with a message naming it.

#![cfg(feature = "s3")]

mod common;

use std::collections::HashMap;

use std::process::Command;
use std::time::Duration;

use common::s3::{point_at, s3_bucket};
use common::{answers_of, exec_command, feed_and_wait, line, shared_inserts};
use serde_json::{Value, json};

const PROCESSES: usize = 4;
const INSERTS_PER_PROCESS: usize = 15;
const RACERS: usize = 6;

/// `memory exec --store URL` with the `AWS_*` variables pointing at `endpoint`.
fn s3_command(url: &str, endpoint: &str) -> Command {
    let mut cmd = exec_command(url);
    point_at(&mut cmd, endpoint);
    cmd
}

/// Starts every process first, then feeds them all at once.
fn run_concurrently(url: &str, endpoint: &str, inputs: Vec<String>) -> Vec<Vec<Value>> {
    let children: Vec<_> = inputs
        .iter()
        .map(|_| s3_command(url, endpoint).spawn().expect("start memory"))
        .collect();
    let handles: Vec<_> = children
        .into_iter()
        .zip(inputs)
        .map(|(child, input)| {
            std::thread::spawn(move || {
                let lines = input.lines().count();
                let out = feed_and_wait(child, input.as_bytes());
                assert!(
                    out.status.success(),
                    "memory exec failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                answers_of(&out, lines)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("process thread"))
        .collect()
}

fn run_one(url: &str, endpoint: &str, input: Value) -> Value {
    let out = feed_and_wait(
        s3_command(url, endpoint).spawn().expect("start memory"),
        (line(input) + "\n").as_bytes(),
    );
    answers_of(&out, 1).remove(0)
}

#[test]
fn processes_on_one_s3_store_lose_no_edit() {
    let (endpoint, bucket) = s3_bucket("processes_on_one_s3_store_lose_no_edit");
    let url = format!("s3://{bucket}/shared");
    let created = run_one(
        &url,
        &endpoint,
        json!({"command": "create", "path": "/memories/shared.md", "file_text": "header\n"}),
    );
    assert_eq!(created["is_error"], json!(false), "{created}");

    let inputs = shared_inserts(PROCESSES, INSERTS_PER_PROCESS);
    for (p, answers) in run_concurrently(&url, &endpoint, inputs).iter().enumerate() {
        for (i, a) in answers.iter().enumerate() {
            assert_eq!(
                a,
                &json!({"content": "The file /memories/shared.md has been edited.", "is_error": false}),
                "process {p} insert {i}"
            );
        }
    }

    let view = run_one(
        &url,
        &endpoint,
        json!({"command": "view", "path": "/memories/shared.md"}),
    );
    let text = view["content"].as_str().expect("text");
    let mut seen: HashMap<String, usize> = HashMap::new();
    for numbered in text.lines().skip(1) {
        let content = numbered.split_once('\t').map_or("", |(_, c)| c);
        *seen.entry(content.to_owned()).or_default() += 1;
    }
    for p in 0..PROCESSES {
        for i in 0..INSERTS_PER_PROCESS {
            assert_eq!(
                seen.get(&format!("p{p}-i{i}")),
                Some(&1),
                "insert p{p}-i{i} landed exactly once:\n{text}"
            );
        }
    }
    assert_eq!(seen.get("header"), Some(&1));
}

#[test]
fn racing_creates_from_processes_one_wins() {
    let (endpoint, bucket) = s3_bucket("racing_creates_from_processes_one_wins");
    let url = format!("s3://{bucket}/race");
    let inputs: Vec<String> = (0..RACERS)
        .map(|r| {
            line(json!({"command": "create", "path": "/memories/race.md", "file_text": format!("racer {r}\n")}))
                + "\n"
        })
        .collect();
    let answers = run_concurrently(&url, &endpoint, inputs);
    let winners: Vec<usize> = answers
        .iter()
        .enumerate()
        .filter(|(_, a)| a[0]["is_error"] == json!(false))
        .map(|(r, _)| r)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one create wins: {answers:?}");
    for (r, a) in answers.iter().enumerate() {
        if r != winners[0] {
            assert_eq!(
                a[0],
                json!({"content": "Error: File /memories/race.md already exists", "is_error": true}),
                "racer {r}"
            );
        }
    }
    let view = run_one(
        &url,
        &endpoint,
        json!({"command": "view", "path": "/memories/race.md"}),
    );
    assert_eq!(
        view["content"],
        json!(format!(
            "Here's the content of /memories/race.md with line numbers:\n     1\tracer {}\n     2\t",
            winners[0]
        ))
    );
}

/// Offline: nothing listens at the endpoint, so the store cannot be opened: exit status 2
/// before any line is read, with a message naming the endpoint.
#[test]
fn unreachable_endpoint_is_exit_2_naming_it() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let endpoint = format!("http://127.0.0.1:{port}");
    let started = std::time::Instant::now();
    let out = feed_and_wait(
        s3_command("s3://bucket/prefix", &endpoint)
            .spawn()
            .expect("start memory"),
        b"{\"command\": \"view\", \"path\": \"/memories\"}\n",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "no line answered: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&endpoint), "names the endpoint: {stderr}");
    assert!(stderr.contains("s3://bucket/prefix"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}
