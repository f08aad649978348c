//! Several OS processes on one database file: this test binary runs itself as worker processes
//! (chosen by the `MEMORY_SQLITE_WORKER` variable, or the conformance suite's), so it has its
//! own `main` instead of the test harness.
//!
//! - `processes_lose_no_edit` and `creates_race_at_the_limit`: the conformance suite's process
//!   checks (`memory_core::conformance::processes`), each process with its own connection.
//! - `kill_9_during_writes`: a worker overwrites self-checking files and moves a directory back
//!   and forth in a loop; it is killed with SIGKILL at random moments, several times. After each
//!   kill the database opens, passes `PRAGMA integrity_check`, every file is whole and holds the
//!   last content the worker saw committed or the one it was writing, and the directory is
//!   entirely at one place or the other.
//! - `history_survives_kill`: the conformance suite's kill -9 check of each file's history (a
//!   worker edits, replaces, renames and deletes until it is killed; after each kill every
//!   replaced content has its version and no version records a change that did not happen).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use memory_core::conformance::processes::{self, OpenAt};
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::SqliteStorage;

const WORKER_VAR: &str = "MEMORY_SQLITE_WORKER";
const PROCESSES: usize = 4;
const APPENDS: usize = 40;
const CRASH_FILES: usize = 4;
const DIR_FILES: usize = 3;
const KILLS: usize = 8;
const HISTORY_KILLS: usize = 6;
const RACE_LIMIT: usize = 30;
const RACE_ROUNDS: usize = 4;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// FNV-1a, 64 bits: enough to tell a whole file from a torn or mixed one.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A small xorshift generator: the tests need variety, not quality.
struct Rng(u64);

impl Rng {
    fn seeded(extra: u64) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Rng((nanos ^ extra.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Content that proves itself whole: `len=<n> fnv=<hash>\n` then `n` bytes of body.
fn self_checking(rng: &mut Rng) -> (Vec<u8>, u64) {
    let len = rng.below(60_000) as usize;
    let mut body = Vec::with_capacity(len + 8);
    while body.len() < len {
        body.extend(rng.next().to_le_bytes().map(|b| b'a' + b % 26));
    }
    body.truncate(len);
    let hash = fnv(&body);
    let mut out = format!("len={len} fnv={hash:016x}\n").into_bytes();
    out.extend_from_slice(&body);
    (out, hash)
}

/// Checks a self-checking file and returns its body's hash.
fn verify(path: &str, contents: &[u8]) -> u64 {
    let newline = contents
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or_else(|| panic!("{path}: no header line: torn file"));
    let header = std::str::from_utf8(&contents[..newline]).unwrap();
    let body = &contents[newline + 1..];
    let (len, hash) = header
        .strip_prefix("len=")
        .and_then(|rest| rest.split_once(" fnv="))
        .unwrap_or_else(|| panic!("{path}: bad header {header:?}"));
    assert_eq!(
        len.parse::<usize>().unwrap(),
        body.len(),
        "{path}: torn file (length)"
    );
    let hash = u64::from_str_radix(hash, 16).unwrap();
    assert_eq!(fnv(body), hash, "{path}: torn or mixed file (checksum)");
    hash
}

fn crash_file(k: usize) -> String {
    format!("/memories/crash/f{k}.txt")
}

fn worker(role: &str) {
    let args: Vec<&str> = role.split('|').collect();
    let rt = runtime();
    match args.as_slice() {
        ["crash", db] => rt.block_on(async {
            let s = SqliteStorage::open(db).unwrap();
            let mut rng = Rng::seeded(u64::from(std::process::id()));
            let mut out = std::io::stdout().lock();
            for i in 0usize.. {
                if i % 5 == 4 {
                    // Move the whole directory to the other side.
                    let (from, to) = match s.stat(&p("/memories/side_a")).await.unwrap() {
                        Some(_) => ("/memories/side_a", "/memories/side_b"),
                        None => ("/memories/side_b", "/memories/side_a"),
                    };
                    s.rename(&p(from), &p(to)).await.unwrap();
                    continue;
                }
                let k = (rng.below(CRASH_FILES as u64)) as usize;
                let (contents, hash) = self_checking(&mut rng);
                writeln!(out, "try {k} {hash:016x}").unwrap();
                out.flush().unwrap();
                let path = p(&crash_file(k));
                if i % 2 == 0 {
                    s.write(&path, contents, WriteMode::Overwrite)
                        .await
                        .unwrap();
                } else {
                    let current = s.read(&path).await.unwrap();
                    s.write(&path, contents, WriteMode::Update(current.version))
                        .await
                        .unwrap();
                }
                writeln!(out, "ok {k} {hash:016x}").unwrap();
                out.flush().unwrap();
            }
        }),
        other => panic!("unknown worker role {other:?}"),
    }
}

fn spawn_worker(role: &str, stdout: Stdio) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .env(WORKER_VAR, role)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// What the crash worker reported per file: the last committed hash and the one in flight.
#[derive(Default, Clone)]
struct Seen {
    committed: Option<u64>,
    in_flight: Option<u64>,
}

fn kill_9_during_writes(dir: &Path) -> String {
    let db = dir.join("crash.db");
    let mut expected: Vec<Seen> = vec![Seen::default(); CRASH_FILES];
    let mut rng = Rng::seeded(7);
    runtime().block_on(async {
        let s = SqliteStorage::open(&db).unwrap();
        for (k, seen) in expected.iter_mut().enumerate() {
            let (contents, hash) = self_checking(&mut rng);
            s.write(&p(&crash_file(k)), contents, WriteMode::Create)
                .await
                .unwrap();
            seen.committed = Some(hash);
        }
        for f in 0..DIR_FILES {
            s.write(
                &p(&format!("/memories/side_a/sub/{f}.md")),
                format!("file {f}").into_bytes(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        }
    });

    let mut total_commits = 0;
    let mut kills_mid_write = 0;
    for round in 0..KILLS {
        let mut child = spawn_worker(&format!("crash|{}", db.display()), Stdio::piped());
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let reader = {
            let stdout = child.stdout.take().unwrap();
            let lines = Arc::clone(&lines);
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    match line {
                        Ok(line) => lines.lock().unwrap().push(line),
                        Err(_) => break,
                    }
                }
            })
        };
        // Wait for the worker to be busy writing, then kill it at a random moment.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !lines.lock().unwrap().iter().any(|l| l.starts_with("ok ")) {
            assert!(
                Instant::now() < deadline,
                "round {round}: the worker never wrote"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(rng.below(150)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();

        // Only whole lines count: the kill may cut the last one.
        kills_mid_write += usize::from(
            lines
                .lock()
                .unwrap()
                .last()
                .is_some_and(|l| !l.starts_with("ok ")),
        );
        for line in lines.lock().unwrap().iter() {
            let parts: Vec<&str> = line.split(' ').collect();
            let [kind, k, hash] = parts.as_slice() else {
                continue;
            };
            let (Ok(k), Ok(hash)) = (k.parse::<usize>(), u64::from_str_radix(hash, 16)) else {
                continue;
            };
            if k >= CRASH_FILES {
                continue;
            }
            match *kind {
                "try" => expected[k].in_flight = Some(hash),
                "ok" => {
                    expected[k].committed = Some(hash);
                    expected[k].in_flight = None;
                    total_commits += 1;
                }
                _ => {}
            }
        }

        let integrity: String = rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok", "round {round}");
        runtime().block_on(async {
            let s = SqliteStorage::open(&db).unwrap();
            for (k, seen) in expected.iter_mut().enumerate() {
                let path = crash_file(k);
                let file = s.read(&p(&path)).await.unwrap();
                let hash = verify(&path, &file.contents);
                assert!(
                    Some(hash) == seen.committed || Some(hash) == seen.in_flight,
                    "round {round}: {path} holds neither the last committed content nor the one being written"
                );
                // Whatever is there now is the committed state for the next round.
                *seen = Seen {
                    committed: Some(hash),
                    in_flight: None,
                };
            }
            let a = s.list(&p("/memories/side_a")).await.unwrap().len();
            let b = s.list(&p("/memories/side_b")).await.unwrap().len();
            assert!(
                (a, b) == (DIR_FILES, 0) || (a, b) == (0, DIR_FILES),
                "round {round}: a directory move was torn: {a} files at side_a, {b} at side_b"
            );
        });
    }
    assert!(
        total_commits >= KILLS,
        "the worker hardly wrote ({total_commits} commits)"
    );
    format!("{total_commits} commits, {kills_mid_write} of {KILLS} kills during a write")
}

/// A process opens the store at a database file's path.
struct Sqlite;

#[memory_core::async_trait]
impl OpenAt for Sqlite {
    async fn open(&self, place: &str) -> Arc<dyn Storage> {
        Arc::new(SqliteStorage::open(place).unwrap())
    }
}

fn main() {
    processes::run_worker_if_asked(&Sqlite);
    if let Ok(role) = std::env::var(WORKER_VAR) {
        worker(&role);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let place = |name: &str| dir.path().join(name).display().to_string();
    let (shared, race, churned) = (place("shared.db"), place("race.db"), place("history.db"));
    processes::run_tests(vec![
        (
            "processes_lose_no_edit",
            Box::new(|| processes::processes_lose_no_edit(&Sqlite, &shared, PROCESSES, APPENDS)),
        ),
        (
            "creates_race_at_the_limit",
            Box::new(|| {
                processes::creates_race_at_the_limit(
                    &Sqlite,
                    &race,
                    PROCESSES,
                    RACE_LIMIT,
                    RACE_ROUNDS,
                )
            }),
        ),
        (
            "kill_9_during_writes",
            Box::new(|| kill_9_during_writes(dir.path())),
        ),
        (
            "history_survives_kill",
            Box::new(|| processes::history_survives_kill(&Sqlite, &churned, HISTORY_KILLS)),
        ),
    ]);
}
