//! Several OS processes on one database file: this test binary runs itself as worker processes
//! (chosen by the `MEMORY_SQLITE_WORKER` variable), so it has its own `main` instead of the
//! test harness.
//!
//! - `processes_lose_no_edit`: worker processes append lines to one memory file through
//!   compare-and-swap with retries; every line is found, exactly once.
//! - `kill_9_during_writes`: a worker overwrites self-checking files and moves a directory back
//!   and forth in a loop; it is killed with SIGKILL at random moments, several times. After each
//!   kill the database opens, passes `PRAGMA integrity_check`, every file is whole and holds the
//!   last content the worker saw committed or the one it was writing, and the directory is
//!   entirely at one place or the other.
//! - `creates_race_at_the_limit`: a store one file short of its limit; several processes, each
//!   with its own connection, create a file with `create_within` at the same moment; exactly
//!   one wins, every other one is told the store is full. Several rounds.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::SqliteStorage;

const WORKER_VAR: &str = "MEMORY_SQLITE_WORKER";
const PROCESSES: usize = 4;
const APPENDS: usize = 40;
const CRASH_FILES: usize = 4;
const DIR_FILES: usize = 3;
const KILLS: usize = 8;
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
        ["append", db, id] => rt.block_on(async {
            let s = SqliteStorage::open(db).unwrap();
            let path = p("/memories/shared.md");
            let mut retries = 0;
            for n in 0..APPENDS {
                let line = format!("process {id} line {n}\n");
                let mut done = false;
                for _ in 0..10_000 {
                    let file = match s.read(&path).await {
                        Ok(f) => f,
                        Err(e) if e.is_retryable() => continue,
                        Err(e) => panic!("read: {e:?}"),
                    };
                    let mut body = file.contents;
                    body.extend_from_slice(line.as_bytes());
                    match s.write(&path, body, WriteMode::Update(file.version)).await {
                        Ok(_) => {
                            done = true;
                            break;
                        }
                        Err(e) if e.is_retryable() => retries += 1,
                        Err(e) => panic!("write: {e:?}"),
                    }
                }
                assert!(done, "process {id}: no progress");
            }
            println!("retries {retries}");
        }),
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
        ["race", db, go, id] => rt.block_on(async {
            let s = SqliteStorage::open(db).unwrap();
            // Everyone opens first, then waits for the same signal.
            while !Path::new(go).exists() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let path = p(&format!("/memories/race/{id}.md"));
            match s.create_within(&path, b"mine".to_vec(), RACE_LIMIT).await {
                Ok(_) => println!("won"),
                Err(memory_core::Error::StoreFull { max_files }) => {
                    assert_eq!(max_files, RACE_LIMIT);
                    println!("full");
                }
                Err(e) => panic!("create_within: {e:?}"),
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

fn processes_lose_no_edit(dir: &Path) -> String {
    let db = dir.join("shared.db");
    runtime().block_on(async {
        SqliteStorage::open(&db)
            .unwrap()
            .write(
                &p("/memories/shared.md"),
                b"# shared\n".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    });
    let children: Vec<Child> = (0..PROCESSES)
        .map(|id| spawn_worker(&format!("append|{}|{id}", db.display()), Stdio::piped()))
        .collect();
    let mut retries = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "a worker failed: {}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        retries += text
            .trim()
            .strip_prefix("retries ")
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("worker said {text:?}"));
    }
    let text = runtime().block_on(async {
        let s = SqliteStorage::open(&db).unwrap();
        String::from_utf8(s.read(&p("/memories/shared.md")).await.unwrap().contents).unwrap()
    });
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# shared");
    assert_eq!(
        lines.len(),
        1 + PROCESSES * APPENDS,
        "a line was lost or doubled"
    );
    for id in 0..PROCESSES {
        for n in 0..APPENDS {
            let want = format!("process {id} line {n}");
            assert!(lines.contains(&want.as_str()), "missing {want:?}");
        }
    }
    format!("{retries} compare-and-swap retries")
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

fn creates_race_at_the_limit(dir: &Path) -> String {
    let db = dir.join("race.db");
    runtime().block_on(async {
        let s = SqliteStorage::open(&db).unwrap();
        for i in 0..RACE_LIMIT - 1 {
            s.write(
                &p(&format!("/memories/seed/{i}.md")),
                b"x".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        }
    });
    for round in 0..RACE_ROUNDS {
        let go = dir.join(format!("go-{round}"));
        let children: Vec<Child> = (0..PROCESSES)
            .map(|id| {
                spawn_worker(
                    &format!("race|{}|{}|{round}-{id}", db.display(), go.display()),
                    Stdio::piped(),
                )
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(&go, b"").unwrap();
        let mut answers = Vec::new();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "a worker failed: {}", out.status);
            answers.push(String::from_utf8_lossy(&out.stdout).trim().to_owned());
        }
        let won = answers.iter().filter(|a| *a == "won").count();
        assert_eq!(won, 1, "round {round}: {answers:?}");
        assert_eq!(
            answers.iter().filter(|a| *a == "full").count(),
            PROCESSES - 1,
            "round {round}: {answers:?}"
        );
        runtime().block_on(async {
            let s = SqliteStorage::open(&db).unwrap();
            assert_eq!(s.file_count().await.unwrap(), RACE_LIMIT, "round {round}");
            // Back to one short of the limit for the next round.
            s.delete(&p("/memories/race")).await.unwrap();
        });
    }
    format!("{RACE_ROUNDS} rounds of {PROCESSES} processes")
}

fn main() {
    if let Ok(role) = std::env::var(WORKER_VAR) {
        worker(&role);
        return;
    }
    type Test = fn(&Path) -> String;
    let tests: [(&str, Test); 3] = [
        ("processes_lose_no_edit", processes_lose_no_edit),
        ("creates_race_at_the_limit", creates_race_at_the_limit),
        ("kill_9_during_writes", kill_9_during_writes),
    ];
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in tests {
        let dir = tempfile::tempdir().unwrap();
        let path: PathBuf = dir.path().to_owned();
        let started = Instant::now();
        match std::panic::catch_unwind(|| test(&path)) {
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
