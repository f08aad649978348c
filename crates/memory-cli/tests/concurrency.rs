//! Several `memory exec` processes on one store (a directory, a SQLite file) at once: no lost
//! update, and of two creates of one path exactly one wins.

#![cfg(feature = "fs")]

mod common;

use common::{
    answers_of, assert_each_insert_once, cat, exec_command, exec_lines, feed_and_wait, line,
    read_disk, shared_inserts,
};
use serde_json::{Value, json};

const PROCESSES: usize = 3;
const INSERTS_PER_PROCESS: usize = 120;

/// Starts every process first, then feeds them, so their edits really overlap.
fn run_concurrently(url: &str, inputs: Vec<String>) -> Vec<Vec<Value>> {
    let children: Vec<_> = inputs
        .iter()
        .map(|_| exec_command(url).spawn().expect("start memory"))
        .collect();
    let handles: Vec<_> = children
        .into_iter()
        .zip(inputs)
        .map(|(child, input)| {
            std::thread::spawn(move || {
                let lines = input.lines().count();
                answers_of(&feed_and_wait(child, input.as_bytes()), lines)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("process thread"))
        .collect()
}

#[test]
fn concurrent_inserts_from_several_processes_lose_nothing() {
    for (dir, url) in common::dir_stores() {
        eprintln!("store {url}");
        concurrent_inserts_from_several_processes_lose_nothing_on(dir, url);
    }
}

fn concurrent_inserts_from_several_processes_lose_nothing_on(dir: tempfile::TempDir, url: String) {
    inserts_from_several_processes_lose_nothing(&url, || {
        String::from_utf8(read_disk(dir.path(), "shared.md").expect("shared.md")).unwrap()
    });
}

/// The same on one SQLite file: each process has its own connections, and SQLite's write lock
/// with compare-and-swap on the version keeps every insert.
#[cfg(feature = "sqlite")]
#[test]
fn concurrent_inserts_on_one_sqlite_file_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", dir.path().join("memory.db").display());
    inserts_from_several_processes_lose_nothing(&url, || cat(&url, "/memories/shared.md"));
}

/// Several processes insert into one file at once; `read` gives the file's final content.
fn inserts_from_several_processes_lose_nothing(url: &str, read: impl Fn() -> String) {
    let url = url.to_owned();
    let created = exec_lines(
        &url,
        &[line(
            json!({"command": "create", "path": "/memories/shared.md", "file_text": "header\n"}),
        )],
    );
    assert_eq!(created[0]["is_error"], json!(false), "{}", created[0]);

    let inputs = shared_inserts(PROCESSES, INSERTS_PER_PROCESS);
    let results = run_concurrently(&url, inputs);
    for (p, answers) in results.iter().enumerate() {
        for (i, a) in answers.iter().enumerate() {
            assert_eq!(
                a,
                &json!({"content": "The file /memories/shared.md has been edited.", "is_error": false}),
                "process {p} insert {i}"
            );
        }
    }

    let content = read();
    assert_each_insert_once(&content, PROCESSES, INSERTS_PER_PROCESS);
    assert!(content.ends_with('\n'));

    // Each process kept its own order: its inserts at line 0 appear newest first.
    for p in 0..PROCESSES {
        let tops: Vec<usize> = content
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("p{p}-i")))
            .map(|i| i.parse().unwrap())
            .filter(|i| i % 2 == 0)
            .collect();
        let mut sorted = tops.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(tops, sorted, "process {p}'s top inserts out of order");
    }
}

#[test]
fn concurrent_edits_with_str_replace_and_insert_lose_nothing() {
    for (dir, url) in common::dir_stores() {
        eprintln!("store {url}");
        concurrent_edits_with_str_replace_and_insert_lose_nothing_on(dir, url);
    }
}

fn concurrent_edits_with_str_replace_and_insert_lose_nothing_on(
    dir: tempfile::TempDir,
    url: String,
) {
    // One counter line per process, bumped with str_replace, plus inserts by everyone.
    let initial: String = (0..PROCESSES).map(|p| format!("counter-{p}=0\n")).collect();
    exec_lines(
        &url,
        &[line(
            json!({"command": "create", "path": "/memories/mixed.md", "file_text": initial}),
        )],
    );
    const ROUNDS: usize = 40;
    let inputs: Vec<String> = (0..PROCESSES)
        .map(|p| {
            let mut s = String::new();
            for r in 0..ROUNDS {
                s += &line(json!({
                    "command": "str_replace",
                    "path": "/memories/mixed.md",
                    "old_str": format!("counter-{p}={r}\n"),
                    "new_str": format!("counter-{p}={}\n", r + 1),
                }));
                s.push('\n');
                s += &line(json!({
                    "command": "insert",
                    "path": "/memories/mixed.md",
                    "insert_line": 0,
                    "insert_text": format!("note {p}/{r}"),
                }));
                s.push('\n');
            }
            s
        })
        .collect();
    let results = run_concurrently(&url, inputs);
    for (p, answers) in results.iter().enumerate() {
        for a in answers {
            assert_eq!(a["is_error"], json!(false), "process {p}: {a}");
        }
    }
    let content = String::from_utf8(read_disk(dir.path(), "mixed.md").unwrap()).unwrap();
    for p in 0..PROCESSES {
        assert!(
            content.contains(&format!("counter-{p}={ROUNDS}\n")),
            "{content}"
        );
        for r in 0..ROUNDS {
            assert!(
                content.contains(&format!("note {p}/{r}\n")),
                "note {p}/{r} lost"
            );
        }
    }
    assert_eq!(content.lines().count(), PROCESSES * (ROUNDS + 1));
}

#[test]
fn of_concurrent_creates_of_one_path_exactly_one_wins() {
    for (dir, url) in common::dir_stores() {
        eprintln!("store {url}");
        of_concurrent_creates_of_one_path_exactly_one_wins_on(dir, url);
    }
}

fn of_concurrent_creates_of_one_path_exactly_one_wins_on(dir: tempfile::TempDir, url: String) {
    const PATHS: usize = 40;
    let inputs: Vec<String> = (0..PROCESSES)
        .map(|p| {
            (0..PATHS)
                .map(|k| {
                    line(json!({
                        "command": "create",
                        "path": format!("/memories/race/{k}.md"),
                        "file_text": format!("written by {p}"),
                    })) + "\n"
                })
                .collect()
        })
        .collect();
    let results = run_concurrently(&url, inputs);
    for k in 0..PATHS {
        let winners: Vec<usize> = (0..PROCESSES)
            .filter(|&p| results[p][k]["is_error"] == json!(false))
            .collect();
        assert_eq!(winners.len(), 1, "path {k}: winners {winners:?}");
        for (p, answers) in results.iter().enumerate() {
            if p != winners[0] {
                assert_eq!(
                    answers[k],
                    json!({"content": format!("Error: File /memories/race/{k}.md already exists"), "is_error": true})
                );
            }
        }
        let on_disk = read_disk(dir.path(), &format!("race/{k}.md")).unwrap();
        assert_eq!(on_disk, format!("written by {}", winners[0]).into_bytes());
    }
}
