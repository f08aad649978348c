//! Checks with several OS processes on one store, each with its own connections, caches and
//! locks: compare-and-swap edits of one file lose nothing, creates racing at the file
//! limit leave exactly one winner, and a process killed while it writes leaves the history
//! whole ([`history_survives_kill`]).
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
            ["churn", place] => churn(&*backend.open(place).await).await,
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

/// The file [`history_survives_kill`]'s worker edits, and the one it replaces whole, deletes
/// and renames back.
const CHURNED: &str = "/memories/crash/log.md";
const REPLACED: &str = "/memories/crash/whole.md";
const MOVED: &str = "/memories/crash/moved.md";

/// A worker's part of [`history_survives_kill`]: edits until it is killed. Each round appends
/// one line to [`CHURNED`] by compare-and-swap, and replaces, deletes, creates or renames
/// [`REPLACED`].
async fn churn(store: &dyn Storage) -> i32 {
    let (log, whole, moved) = (p(CHURNED), p(REPLACED), p(MOVED));
    for n in 0u64.. {
        let appended = async {
            let file = store.read(&log).await?;
            let mut body = file.contents;
            body.extend(format!("line {n}\n").bytes());
            store
                .write(&log, body, WriteMode::Update(file.version))
                .await
        };
        match appended.await {
            Ok(_) | Err(Error::Conflict { .. }) => {}
            Err(e) => {
                eprintln!("churn worker: append: {e:?}");
                return 1;
            }
        }
        let step = match n % 4 {
            0 => store
                .write(
                    &whole,
                    format!("whole {n}").into_bytes(),
                    WriteMode::Overwrite,
                )
                .await
                .map(drop),
            1 => store.rename(&whole, &moved).await,
            2 => store.rename(&moved, &whole).await,
            _ => store.delete(&whole).await,
        };
        match step {
            Ok(()) | Err(Error::NotFound { .. }) | Err(Error::AlreadyExists { .. }) => {}
            Err(e) => {
                eprintln!("churn worker: step {n}: {e:?}");
                return 1;
            }
        }
        // A pause between rounds keeps the versions a round makes to a few hundred whatever
        // the store's speed, so the check after each kill (which reads every version) stays
        // short; the kill still lands inside a change most of the time.
        std::thread::sleep(Duration::from_micros(500));
    }
    0
}

/// The history invariants after a crash, for one file: every version but the newest holds
/// its content, the newest is the current file (its bytes, or a deletion when there is no
/// file), and for [`CHURNED`] each version is the one before it plus one line: no content a
/// change replaced is missing, and no version records a change that did not happen.
async fn check_history_after_kill(store: &dyn Storage, raw: &str, round: usize) {
    let path = p(raw);
    let revisions = match store.history(&path).await {
        Ok(revisions) => revisions,
        Err(e) => panic!("{store}: round {round}: history of {path}: {e:?}"),
    };
    let current = match store.read(&path).await {
        Ok(file) => Some(file.contents),
        Err(Error::NotFound { .. }) => None,
        Err(e) => panic!("{store}: round {round}: read {path}: {e:?}"),
    };
    let Some(newest) = revisions.first() else {
        assert!(
            current.is_none(),
            "{store}: round {round}: {path} exists without a version"
        );
        return;
    };
    let newest_content = match store.read_revision(&path, newest.number).await {
        Ok(content) => Some(content),
        Err(Error::RevisionWithoutContent {
            redacted: false, ..
        }) => None,
        Err(e) => panic!("{store}: round {round}: read the newest version of {path}: {e:?}"),
    };
    assert_eq!(
        newest_content, current,
        "{store}: round {round}: the newest version of {path} is not its current content"
    );
    let mut previous: Option<Vec<u8>> = None;
    for revision in revisions.iter().rev() {
        let content = match store.read_revision(&path, revision.number).await {
            Ok(content) => content,
            Err(Error::RevisionWithoutContent {
                redacted: false, ..
            }) => {
                previous = None;
                continue;
            }
            Err(e) => panic!(
                "{store}: round {round}: version {} of {path} lost its content: {e:?}",
                revision.number
            ),
        };
        if let Some(previous) = previous.as_ref().filter(|_| raw == CHURNED) {
            let added = content.strip_prefix(previous.as_slice());
            assert!(
                added.is_some_and(|added| added.starts_with(b"line ") && added.ends_with(b"\n")),
                "{store}: round {round}: version {} of {path} is not the one before it plus a line",
                revision.number
            );
        }
        previous = Some(content);
    }
}

/// A worker process edits, replaces, renames and deletes files of the store at `place` until
/// it is killed (`SIGKILL` on Unix, `TerminateProcess` on Windows) at a moment that differs
/// each of `rounds` rounds; after each kill the store, opened again, keeps the history
/// invariants: no current file without the version of the content it replaced, no version
/// for a change that did not happen. `place` must hold no store yet or an empty one.
pub fn history_survives_kill(backend: &dyn OpenAt, place: &str, rounds: usize) -> String {
    runtime().block_on(async {
        let store = backend.open(place).await;
        if let Err(e) = store
            .write(&p(CHURNED), Vec::new(), WriteMode::Create)
            .await
        {
            panic!("{store}: setup: create {CHURNED}: {e:?}");
        }
    });
    let mut versions = 0;
    for round in 0..rounds {
        let mut child = spawn_worker(&format!("churn|{place}"));
        // Let it open the store and get going, then kill it at a different point each round.
        std::thread::sleep(Duration::from_millis(400 + 37 * round as u64));
        if let Ok(Some(status)) = child.try_wait() {
            panic!("round {round}: the churn worker ended by itself: {status}");
        }
        if let Err(e) = child.kill() {
            panic!("round {round}: killing the churn worker: {e}");
        }
        let _ = child.wait();
        versions = runtime().block_on(async {
            let store = backend.open(place).await;
            for raw in [CHURNED, REPLACED, MOVED] {
                check_history_after_kill(&*store, raw, round).await;
            }
            match store.history(&p(CHURNED)).await {
                Ok(revisions) => revisions.len(),
                Err(e) => panic!("{store}: history: {e:?}"),
            }
        });
    }
    format!("{rounds} kills, {versions} versions of the edited file")
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
