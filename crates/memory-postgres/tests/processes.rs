//! Several OS processes on one root, each with its own pool and connections: this test binary
//! runs itself as worker processes (chosen by the `MEMORY_POSTGRES_WORKER` variable), so it has
//! its own `main` instead of the test harness.
//!
//! - `processes_lose_nothing`: 8 processes each create 100 files of their own and append 10
//!   lines to one shared file through compare-and-swap with retries: all 800 files and all 80
//!   lines are there, each once.
//! - `creates_race_at_the_limit`: the conformance suite's process check
//!   (`memory_core::conformance::processes`): a root one file short of its limit; 8 processes
//!   call `create_within` at once; exactly one wins, the others are told the store is full.
//!   Several rounds.
//! - `kill_9_during_renames`: a process moves a 20-file directory back and forth and is killed
//!   with SIGKILL at random moments: after each kill the directory is entirely at one place or
//!   the other, every file whole.
//! - `history_survives_kill`: the conformance suite's crash check of history
//!   (`memory_core::conformance::processes::history_survives_kill`): a process edits, replaces,
//!   renames and deletes files and is killed with SIGKILL, several rounds; after each, no
//!   current file lacks the version of the content it replaced, and no version records a
//!   change that did not happen.

mod common;

use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::sync::Arc;

use memory_core::conformance::processes::{self, OpenAt};
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_postgres::PostgresStorage;

const WORKER_VAR: &str = "MEMORY_POSTGRES_WORKER";
const PROCESSES: usize = 8;
const INSERTS: usize = 100;
const APPENDS: usize = 10;
const RACE_LIMIT: usize = 40;
const RACE_ROUNDS: usize = 4;
const DIR_FILES: usize = 20;
const KILLS: usize = 6;
/// Rounds of `history_survives_kill`: a worker editing, replacing, renaming and deleting files
/// killed at a different moment each round, the history checked after each.
const HISTORY_KILLS: usize = 8;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn open(root: &str) -> PostgresStorage {
    common::open(&format!(
        "schema={}&root={root}&pool_size=2",
        common::SHARED_SCHEMA
    ))
    .await
}

fn spawn(role: &str, root: &str, index: usize, start_at_ms: u128) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .env(WORKER_VAR, role)
        .env("WORKER_ROOT", root)
        .env("WORKER_INDEX", index.to_string())
        .env("WORKER_START_MS", start_at_ms.to_string())
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// Sleeps until the agreed moment, so that the processes' calls start together.
fn wait_until(ms: u128) {
    let now = now_ms();
    if ms > now {
        std::thread::sleep(Duration::from_millis((ms - now) as u64));
    }
}

fn worker(role: &str) -> i32 {
    let root = std::env::var("WORKER_ROOT").unwrap();
    let index: usize = std::env::var("WORKER_INDEX").unwrap().parse().unwrap();
    let start: u128 = std::env::var("WORKER_START_MS").unwrap().parse().unwrap();
    runtime().block_on(async move {
        let store = open(&root).await;
        wait_until(start);
        match role {
            "insert" => {
                for i in 0..INSERTS {
                    let path = p(&format!("/memories/w{index}/f{i}.md"));
                    store
                        .write(
                            &path,
                            format!("{index}/{i}").into_bytes(),
                            WriteMode::Create,
                        )
                        .await
                        .unwrap();
                    if i % (INSERTS / APPENDS) == 0 {
                        append(&store, &format!("worker {index} line {i}")).await;
                    }
                }
                0
            }
            "rename" => loop {
                for (from, to) in [
                    ("/memories/left", "/memories/right"),
                    ("/memories/right", "/memories/left"),
                ] {
                    match store.rename(&p(from), &p(to)).await {
                        Ok(()) | Err(Error::NotFound { .. }) => {}
                        Err(e) => panic!("rename worker: {e:?}"),
                    }
                }
            },
            other => panic!("unknown worker role {other}"),
        }
    })
}

async fn append(store: &PostgresStorage, line: &str) {
    let path = p("/memories/shared.md");
    loop {
        let file = store.read(&path).await.unwrap();
        let mut text = file.contents;
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
        match store
            .write(&path, text, WriteMode::Update(file.version))
            .await
        {
            Ok(_) => return,
            Err(Error::Conflict { .. }) => continue,
            Err(e) => panic!("append: {e:?}"),
        }
    }
}

fn codes(children: Vec<std::process::Child>) -> Vec<ExitStatus> {
    children
        .into_iter()
        .map(|mut c| c.wait().unwrap())
        .collect()
}

fn processes_lose_nothing() {
    let root = common::unique("procs");
    runtime().block_on(async {
        let store = open(&root).await;
        store
            .write(&p("/memories/shared.md"), Vec::new(), WriteMode::Create)
            .await
            .unwrap();
    });
    let start = now_ms() + 1500;
    let children = (0..PROCESSES)
        .map(|i| spawn("insert", &root, i, start))
        .collect();
    for status in codes(children) {
        assert!(status.success(), "an insert worker failed: {status}");
    }
    runtime().block_on(async {
        let store = open(&root).await;
        assert_eq!(store.file_count().await.unwrap(), PROCESSES * INSERTS + 1);
        for w in 0..PROCESSES {
            let files = store.list(&p(&format!("/memories/w{w}"))).await.unwrap();
            assert_eq!(files.len(), INSERTS, "worker {w}'s files");
        }
        let text = String::from_utf8(
            store
                .read(&p("/memories/shared.md"))
                .await
                .unwrap()
                .contents,
        )
        .unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), PROCESSES * APPENDS, "{text}");
        lines.sort_unstable();
        lines.dedup();
        assert_eq!(lines.len(), PROCESSES * APPENDS, "each line once");
    });
}

/// A process opens the store at a root of the shared test schema, with a pool of its own.
struct Postgres;

#[memory_core::async_trait]
impl OpenAt for Postgres {
    async fn open(&self, place: &str) -> Arc<dyn Storage> {
        Arc::new(open(place).await)
    }
}

fn kill_9_during_renames() {
    let root = common::unique("kill");
    runtime().block_on(async {
        let store = open(&root).await;
        for i in 0..DIR_FILES {
            store
                .write(
                    &p(&format!("/memories/left/d{}/f{i}.md", i % 4)),
                    format!("file {i}").into_bytes(),
                    WriteMode::Create,
                )
                .await
                .unwrap();
        }
    });
    let mut seed = now_ms() as u64 | 1;
    let mut last_version = None;
    for kill in 0..KILLS {
        let mut child = spawn("rename", &root, 0, 0);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(600 + seed % 900));
        child.kill().unwrap();
        child.wait().unwrap();
        last_version = runtime().block_on(async {
            let store = open(&root).await;
            let left = store.list(&p("/memories/left")).await.unwrap();
            let right = store.list(&p("/memories/right")).await.unwrap();
            assert!(
                (left.len(), right.len()) == (DIR_FILES, 0)
                    || (left.len(), right.len()) == (0, DIR_FILES),
                "kill {kill}: the directory is at one place: {} left, {} right",
                left.len(),
                right.len()
            );
            assert_eq!(store.file_count().await.unwrap(), DIR_FILES);
            let side = if left.is_empty() { "right" } else { "left" };
            for i in 0..DIR_FILES {
                let file = store
                    .read(&p(&format!("/memories/{side}/d{}/f{i}.md", i % 4)))
                    .await
                    .unwrap();
                assert_eq!(
                    file.contents,
                    format!("file {i}").into_bytes(),
                    "kill {kill}"
                );
            }
            // A move gives every file a new version: the worker got to move the directory.
            let version = store
                .read(&p(&format!("/memories/{side}/d0/f0.md")))
                .await
                .unwrap()
                .version;
            assert_ne!(
                Some(&version),
                last_version.as_ref(),
                "kill {kill}: the worker renamed"
            );
            Some(version)
        });
    }
}

fn main() {
    processes::run_worker_if_asked(&Postgres);
    if let Ok(role) = std::env::var(WORKER_VAR) {
        std::process::exit(worker(&role));
    }
    // Fails loudly, saying how to start a server, when there is none.
    let _ = common::url();
    let race_root = common::unique("limit");
    let history_root = common::unique("history_kill");
    processes::run_tests(vec![
        (
            "processes_lose_nothing",
            Box::new(|| {
                processes_lose_nothing();
                format!("{PROCESSES} processes")
            }),
        ),
        (
            "creates_race_at_the_limit",
            Box::new(|| {
                processes::creates_race_at_the_limit(
                    &Postgres,
                    &race_root,
                    PROCESSES,
                    RACE_LIMIT,
                    RACE_ROUNDS,
                )
            }),
        ),
        (
            "kill_9_during_renames",
            Box::new(|| {
                kill_9_during_renames();
                format!("{KILLS} kills")
            }),
        ),
        (
            "history_survives_kill",
            Box::new(|| processes::history_survives_kill(&Postgres, &history_root, HISTORY_KILLS)),
        ),
    ]);
}
