//! Checks with several OS processes on one store, each with its own connections, caches and
//! locks: compare-and-swap edits of one file lose nothing, and creates racing at the file
//! limit leave exactly one winner.
//!
//! The checks run the test binary itself again as worker processes, so they live in a test
//! target with its own `main` (`harness = false` in the backend's `Cargo.toml`). The backend
//! says how a process opens its store at a *place* (a text the parent picks and hands to every
//! worker: a database file, a root name) with [`OpenAt`]:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use memory_core::conformance::processes::{self, OpenAt};
//! use memory_core::{InMemoryStorage, Storage};
//!
//! struct Backend;
//!
//! #[memory_core::async_trait]
//! impl OpenAt for Backend {
//!     async fn open(&self, place: &str) -> Arc<dyn Storage> {
//!         // A real backend opens the store at `place` (its file, its root) here.
//!         Arc::new(InMemoryStorage::new())
//!     }
//! }
//!
//! fn main() {
//!     processes::run_worker_if_asked(&Backend);
//!     processes::run_tests(vec![
//!         ("processes_lose_no_edit", Box::new(|| processes::processes_lose_no_edit(&Backend, "a", 4, 40))),
//!         ("creates_race_at_the_limit", Box::new(|| processes::creates_race_at_the_limit(&Backend, "b", 4, 30, 4))),
//!     ]);
//! }
//! ```

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

use super::storage::p;
use crate::{Error, Storage, WriteMode};

/// The variable that makes a run of the test binary a worker: its value is the worker's role.
pub const WORKER_VAR: &str = "MEMORY_CONFORMANCE_WORKER";

/// Exit code of a race worker told the store is full.
const FULL: i32 = 3;

/// How a process opens the backend's store at a place, for the checks of this module.
#[async_trait]
pub trait OpenAt: Send + Sync {
    /// The store at `place`, read-write (creating it on the first open if the backend does).
    async fn open(&self, place: &str) -> Arc<dyn Storage>;
}

fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => panic!("a tokio runtime for the process checks: {e}"),
    }
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// Starts this test binary again as a worker with `role`, its output piped.
fn spawn_worker(role: &str) -> Child {
    let exe = std::env::current_exe()
        .unwrap_or_else(|e| panic!("the test binary's own path, to run workers: {e}"));
    Command::new(exe)
        .env(WORKER_VAR, role)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting a worker process ({role}): {e}"))
}

/// First thing in the test binary's `main`: when this process is a worker one of this
/// module's checks started, does its part and exits the process with the worker's status;
/// otherwise returns at once.
pub fn run_worker_if_asked(backend: &dyn OpenAt) {
    let Ok(role) = std::env::var(WORKER_VAR) else {
        return;
    };
    let parts: Vec<&str> = role.split('|').collect();
    let code = runtime().block_on(async {
        match parts.as_slice() {
            ["append", place, id, appends] => {
                append_lines(
                    &*backend.open(place).await,
                    id,
                    appends.parse().unwrap_or(0),
                )
                .await
            }
            ["race", place, id, limit, start_ms] => {
                let store = backend.open(place).await;
                // Every worker opens first, then all call at the agreed moment.
                let start: u128 = start_ms.parse().unwrap_or(0);
                let now = now_ms();
                if start > now {
                    std::thread::sleep(Duration::from_millis((start - now) as u64));
                }
                let path = p(&format!("/memories/race/{id}.md"));
                match store
                    .create_within(&path, b"mine".to_vec(), limit.parse().unwrap_or(0))
                    .await
                {
                    Ok(_) => 0,
                    Err(Error::StoreFull { .. }) => FULL,
                    Err(e) => {
                        eprintln!("race worker {id}: {e:?}");
                        1
                    }
                }
            }
            _ => {
                eprintln!("unknown conformance worker role {role:?}");
                2
            }
        }
    });
    std::process::exit(code);
}

/// A worker's part of [`processes_lose_no_edit`]: `appends` lines appended to the shared file
/// by compare-and-swap; prints how many times it had to try again.
async fn append_lines(store: &dyn Storage, id: &str, appends: usize) -> i32 {
    let path = p("/memories/shared.md");
    let mut retries = 0u64;
    for n in 0..appends {
        let line = format!("process {id} line {n}\n");
        let mut done = false;
        for _ in 0..10_000 {
            let file = match store.read(&path).await {
                Ok(file) => file,
                Err(e) if e.is_retryable() => continue,
                Err(e) => {
                    eprintln!("append worker {id}: read: {e:?}");
                    return 1;
                }
            };
            let mut body = file.contents;
            body.extend_from_slice(line.as_bytes());
            match store
                .write(&path, body, WriteMode::Update(file.version))
                .await
            {
                Ok(_) => {
                    done = true;
                    break;
                }
                Err(Error::Conflict { .. }) => retries += 1,
                Err(e) if e.is_retryable() => retries += 1,
                Err(e) => {
                    eprintln!("append worker {id}: write: {e:?}");
                    return 1;
                }
            }
        }
        if !done {
            eprintln!("append worker {id}: no progress in 10,000 tries");
            return 1;
        }
    }
    println!("retries {retries}");
    0
}

/// `processes` worker processes each append `appends` lines to one file of the store at
/// `place` through compare-and-swap, trying again on a conflict: every line is there, exactly
/// once. Returns a note for the report (the retries it took). `place` must hold no store yet
/// or an empty one.
pub fn processes_lose_no_edit(
    backend: &dyn OpenAt,
    place: &str,
    processes: usize,
    appends: usize,
) -> String {
    let shared = p("/memories/shared.md");
    runtime().block_on(async {
        let store = backend.open(place).await;
        if let Err(e) = store
            .write(&shared, b"# shared\n".to_vec(), WriteMode::Create)
            .await
        {
            panic!("{store}: setup: create {shared}: {e:?}");
        }
    });
    let children: Vec<Child> = (0..processes)
        .map(|id| spawn_worker(&format!("append|{place}|{id}|{appends}")))
        .collect();
    let mut retries = 0u64;
    for child in children {
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("waiting for a worker: {e}"));
        assert!(
            out.status.success(),
            "an append worker failed: {}",
            out.status
        );
        let text = String::from_utf8_lossy(&out.stdout);
        retries += text
            .trim()
            .strip_prefix("retries ")
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("an append worker said {text:?}"));
    }
    let text = runtime().block_on(async {
        let store = backend.open(place).await;
        match store.read(&shared).await {
            Ok(file) => String::from_utf8_lossy(&file.contents).into_owned(),
            Err(e) => panic!("{store}: read {shared} after the workers: {e:?}"),
        }
    });
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"# shared"), "the file's first line");
    assert_eq!(
        lines.len(),
        1 + processes * appends,
        "a line was lost or doubled by {processes} processes editing one file"
    );
    for id in 0..processes {
        for n in 0..appends {
            let want = format!("process {id} line {n}");
            assert!(lines.contains(&want.as_str()), "missing {want:?}");
        }
    }
    format!("{retries} compare-and-swap retries")
}

/// A store at `place` one file short of `limit`; `processes` worker processes call
/// `create_within` at the same moment, `rounds` times: each round exactly one wins, every
/// other one is told the store is full, and the store holds `limit` files. `place` must hold
/// no store yet or an empty one.
pub fn creates_race_at_the_limit(
    backend: &dyn OpenAt,
    place: &str,
    processes: usize,
    limit: usize,
    rounds: usize,
) -> String {
    runtime().block_on(async {
        let store = backend.open(place).await;
        for i in 0..limit.saturating_sub(1) {
            let path = p(&format!("/memories/seed/{i}.md"));
            if let Err(e) = store.write(&path, b"x".to_vec(), WriteMode::Create).await {
                panic!("{store}: setup: create {path}: {e:?}");
            }
        }
    });
    for round in 0..rounds {
        // Late enough for every worker to have started and opened the store.
        let start = now_ms() + 1_500;
        let children: Vec<Child> = (0..processes)
            .map(|id| spawn_worker(&format!("race|{place}|{round}-{id}|{limit}|{start}")))
            .collect();
        let mut codes = Vec::new();
        for child in children {
            let out = child
                .wait_with_output()
                .unwrap_or_else(|e| panic!("waiting for a worker: {e}"));
            codes.push(out.status.code());
        }
        let won = codes.iter().filter(|c| **c == Some(0)).count();
        let full = codes.iter().filter(|c| **c == Some(FULL)).count();
        assert_eq!(
            (won, full),
            (1, processes - 1),
            "round {round}: of {processes} processes racing at the limit one wins and the others \
             are told the store is full; exit codes {codes:?} (0 won, {FULL} full)"
        );
        runtime().block_on(async {
            let store = backend.open(place).await;
            let count = store.file_count().await;
            assert!(
                matches!(count, Ok(n) if n == limit),
                "{store}: round {round}: the store holds the limit's {limit} files, got {count:?}"
            );
            // Back to one short of the limit for the next round.
            if let Err(e) = store.delete(&p("/memories/race")).await {
                panic!("{store}: delete the round's file: {e:?}");
            }
        });
    }
    format!("{rounds} rounds of {processes} processes")
}

/// A test of a `harness = false` binary: its name and its body, which panics on failure and
/// returns a note for the report.
pub type ProcessTest<'a> = (&'a str, Box<dyn FnOnce() -> String + 'a>);

/// Runs `tests` in order as the test harness would report them (`test NAME ... ok (time;
/// note)` or `FAILED`, then a count) and exits the process with status 1 if any failed.
pub fn run_tests(tests: Vec<ProcessTest<'_>>) {
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in tests {
        let started = Instant::now();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(test)) {
            Ok(note) => {
                passed += 1;
                println!("test {name} ... ok ({:.2?}; {note})", started.elapsed());
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
