//! Search speed and the cost search adds to writes.
//!
//! - `search/{folder,sqlite,in-memory,encrypted-folder}/{words,question}/{100,2000,20000}`:
//!   one query, two rare words or a whole question holding them (1 to 20 hits), on a folder
//!   store through `Indexed` with a warm side index (reconciled by the search itself: one
//!   listing, nothing re-read; the files' times are set a minute back first, since files
//!   written within the racy window are read again by every search until they are older), on
//!   memory-sqlite's native FTS5, on memory-core's in-memory store, and on an encrypted folder
//!   (no index: each search reads and decrypts every file). PostgreSQL's is in
//!   memory-postgres's `commands` bench. Besides criterion's
//!   estimates, each size prints the p50 and p95 of 200 timed searches (`search-latency ...`).
//! - `write/...`: one 1 KiB overwrite on a folder store, bare and through `Indexed` with its
//!   index open (a search has run), and an SQLite table row written alone or with its FTS5 row
//!   in the same transaction (memory-sqlite's schema has FTS in every write since schema 4;
//!   this measures what the FTS row adds, on the same SQLite). Sync is off everywhere, so the
//!   figures show the work, not the disk's flush time (which only shrinks the ratios).
//!
//! `cargo bench -p memory-layer-search --bench search` (slow: it builds stores of 20,000 files);
//! `MEMORY_SEARCH_BENCH_SIZES=100,2000` picks sizes; `MEMORY_SEARCH_PROFILE=N` runs N warm
//! folder searches without criterion and prints their CPU time (see `profile`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group};
use memory_core::conformance::notes;
use memory_core::options::SyncMode;
use memory_core::search::SearchQuery;
use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_encrypted::{Encrypted, Key, Keyring};
use memory_fs::{FsOptions, FsStorage};
use memory_search::{IndexLocation, IndexOptions, Indexed};
use memory_sqlite::{SqliteOptions, SqliteStorage};

/// A note of about 400 bytes; every 1,000th holds the rare pair the query looks for, so each
/// size has 1 to 20 hits.
fn note(i: usize) -> Vec<u8> {
    notes::note(i, (i % 1000 == 7).then_some("zephyr quasar")).into_bytes()
}

fn path(i: usize) -> MemoryPath {
    MemoryPath::parse(&format!("/memories/d{}/n{i}.md", i % 50)).expect("a valid path")
}

fn sizes() -> Vec<usize> {
    std::env::var("MEMORY_SEARCH_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 2_000, 20_000])
}

async fn fill(store: &dyn Storage, n: usize) {
    for i in 0..n {
        store
            .write(&path(i), note(i), WriteMode::Create)
            .await
            .expect("write");
    }
}

/// A folder store of `n` notes through `Indexed`, its index built and warm: the files are
/// aged past the racy window first (their times set a minute back, as files written earlier
/// would be), so that a search reads nothing and measures what a warm search does (list,
/// compare, query), not the re-reads of files written within the last two seconds.
fn warm_folder(
    rt: &tokio::runtime::Runtime,
    base: &std::path::Path,
    n: usize,
) -> Indexed<FsStorage> {
    let folder = FsStorage::with_options(base, FsOptions::default().sync(SyncMode::None))
        .expect("a folder store");
    let indexed = Indexed::new(folder, IndexOptions::new(IndexLocation::beside(base)));
    rt.block_on(fill(indexed.inner(), n));
    let minute_ago = std::time::SystemTime::now() - Duration::from_secs(60);
    for i in 0..n {
        let file = base.join("memories").join(path(i).relative());
        std::fs::File::options()
            .write(true)
            .open(&file)
            .and_then(|f| f.set_modified(minute_ago))
            .expect("set a file's time");
    }
    let built = Instant::now();
    rt.block_on(indexed.refresh()).expect("index");
    println!(
        "search-index-build folder/{n}: {:.1} ms",
        built.elapsed().as_secs_f64() * 1e3
    );
    let again = rt.block_on(indexed.refresh()).expect("index");
    assert_eq!(again.read, 0, "a warm index reads nothing");
    indexed
}

/// p50 and p95 of `runs` searches, printed for BENCHMARKS.md.
fn latency(rt: &tokio::runtime::Runtime, label: &str, store: &dyn Storage, query: &SearchQuery) {
    // Timed only under `cargo bench` (which passes `--bench`); the test suite's run of the
    // bench (`cargo test --bench`) only checks that it works.
    let runs = if std::env::args().any(|a| a == "--bench") {
        200
    } else {
        3
    };
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let hits = rt.block_on(store.search(query)).expect("search");
            let took = start.elapsed();
            black_box(hits);
            took
        })
        .collect();
    times.sort();
    let at = |q: f64| times[((runs as f64 * q) as usize).min(runs - 1)];
    println!(
        "search-latency {label}: p50 {:.3} ms, p95 {:.3} ms ({runs} searches)",
        at(0.50).as_secs_f64() * 1e3,
        at(0.95).as_secs_f64() * 1e3
    );
}

fn search(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let queries = [
        ("words", SearchQuery::new("zephyr quasar").expect("a query")),
        (
            "question",
            SearchQuery::new("When did the zephyr quasar note come up?").expect("a query"),
        ),
    ];
    let mut group = c.benchmark_group("search");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    for n in sizes() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let indexed = warm_folder(&rt, &dir.path().join("folder"), n);
        let sqlite = SqliteStorage::open_with(
            dir.path().join("store.db"),
            SqliteOptions::default().sync(SyncMode::None),
        )
        .expect("a database");
        rt.block_on(fill(&sqlite, n));
        let memory = InMemoryStorage::new();
        let scanned = n.min(2_000);
        rt.block_on(fill(&memory, scanned));
        // An encrypted folder keeps no index: each search reads and decrypts every file.
        let encrypted = rt
            .block_on(Encrypted::open(
                FsStorage::with_options(
                    dir.path().join("encrypted"),
                    FsOptions::default().sync(SyncMode::None),
                )
                .expect("a folder store"),
                Keyring::new(Key::generate().expect("a key")),
            ))
            .expect("an encrypted store");
        rt.block_on(fill(&encrypted, scanned));
        let mut stores: Vec<(&str, &dyn Storage)> = vec![("folder", &indexed), ("sqlite", &sqlite)];
        // The stores without an index read every file each search: measured up to 2,000.
        if n <= 2_000 {
            stores.push(("in-memory", &memory));
            stores.push(("encrypted-folder", &encrypted));
        }
        for (name, store) in stores {
            for (form, query) in &queries {
                let hits = rt.block_on(store.search(query)).expect("search");
                assert!(!hits.is_empty(), "{name}: {form} finds nothing");
                latency(&rt, &format!("{name}/{form}/{n}"), store, query);
                group.bench_with_input(
                    BenchmarkId::new(format!("{name}/{form}"), n),
                    &n,
                    |b, _| {
                        b.to_async(&rt).iter(|| async {
                            black_box(store.search(query).await.expect("search"))
                        });
                    },
                );
            }
        }
    }
    group.finish();
}

fn write(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let contents = note(3).repeat(3);
    let mut group = c.benchmark_group("write");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));

    let bare = FsStorage::with_options(
        dir.path().join("bare"),
        FsOptions::default().sync(SyncMode::None),
    )
    .expect("a folder store");
    let base = dir.path().join("indexed");
    let indexed = Indexed::new(
        FsStorage::with_options(&base, FsOptions::default().sync(SyncMode::None))
            .expect("a folder store"),
        IndexOptions::new(IndexLocation::beside(&base)),
    );
    let p = path(1);
    for store in [&bare as &dyn Storage, &indexed] {
        rt.block_on(fill(store, 200));
    }
    // The index is open: writes through it note their paths.
    rt.block_on(indexed.search(&SearchQuery::new("deploy").expect("a query")))
        .expect("search");
    let stores: [(&str, &dyn Storage); 2] = [("folder", &bare), ("folder-indexed", &indexed)];
    for (name, store) in stores {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                store
                    .write(&p, black_box(contents.clone()), WriteMode::Overwrite)
                    .await
                    .expect("write")
            });
        });
    }

    // What an FTS5 row adds to an SQLite write, on the same database settings.
    let conn = rusqlite::Connection::open(dir.path().join("fts.db")).expect("a database");
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
         CREATE TABLE files (path TEXT PRIMARY KEY, contents BLOB NOT NULL);
         CREATE VIRTUAL TABLE search USING fts5(words, tokenize = 'ascii', content = '', contentless_delete = 1);",
    )
    .expect("a schema");
    let text = String::from_utf8(contents.clone()).expect("UTF-8");
    for with_fts in [false, true] {
        let name = if with_fts {
            "sqlite-row+fts"
        } else {
            "sqlite-row"
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                let tx = conn.unchecked_transaction().expect("a transaction");
                tx.execute(
                    "INSERT INTO files (path, contents) VALUES ('/memories/a.md', ?1)
                     ON CONFLICT (path) DO UPDATE SET contents = excluded.contents",
                    [&contents],
                )
                .expect("a row");
                if with_fts {
                    let words: Vec<String> = memory_core::search::tokenize(&text)
                        .into_iter()
                        .map(|t| t.text)
                        .collect();
                    tx.execute("DELETE FROM search WHERE rowid = 1", [])
                        .expect("delete");
                    tx.execute(
                        "INSERT INTO search (rowid, words) VALUES (1, ?1)",
                        [words.join(" ")],
                    )
                    .expect("words");
                }
                tx.commit().expect("commit");
            });
        });
    }
    // memory-sqlite itself (FTS in every write), for scale.
    let sqlite = SqliteStorage::open_with(
        dir.path().join("store.db"),
        SqliteOptions::default().sync(SyncMode::None),
    )
    .expect("a database");
    rt.block_on(fill(&sqlite, 200));
    group.bench_function("memory-sqlite", |b| {
        b.to_async(&rt).iter(|| async {
            sqlite
                .write(&p, black_box(contents.clone()), WriteMode::Overwrite)
                .await
                .expect("write")
        });
    });
    group.finish();
}

criterion_group!(benches, write, search);

/// `MEMORY_SEARCH_PROFILE=N` (with `MEMORY_SEARCH_BENCH_SIZES=2000`): no criterion; builds the
/// folder store, ages its files past the racy window, warms the index, then runs N searches
/// and exits, for `strace -c -f` or `valgrind --tool=callgrind` (counts that do not depend on
/// the machine's load). Run it with N = 0 too and subtract the set-up.
fn profile(runs: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let query = SearchQuery::new("zephyr quasar").expect("a query");
    for n in sizes() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let base = dir.path().join("folder");
        let indexed = warm_folder(&rt, &base, n);
        let start = Instant::now();
        let cpu = cpu_times();
        for _ in 0..runs {
            black_box(rt.block_on(indexed.search(&query)).expect("search"));
        }
        let (user, system) = cpu_times();
        let r = indexed.last_refresh();
        let per = |after: f64, before: f64| (after - before) * 1e3 / runs.max(1) as f64;
        println!(
            "search-profile folder/{n}: {runs} searches in {:.1} ms; CPU per search {:.2} ms user + {:.2} ms system (last: listed {}, read {})",
            start.elapsed().as_secs_f64() * 1e3,
            per(user, cpu.0),
            per(system, cpu.1),
            r.listed,
            r.read
        );
    }
}

/// The process's user and system CPU time so far, in seconds (`/proc/self/stat`; zeros where
/// there is none): on a loaded machine, CPU time says what a search costs better than the
/// time it waited for a core.
fn cpu_times() -> (f64, f64) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return (0.0, 0.0);
    };
    // After the command name (in parentheses, which may hold spaces): fields 3 onwards;
    // utime and stime are fields 14 and 15, in clock ticks of 1/100 s.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 100.0
    };
    (tick(11), tick(12))
}

fn main() {
    if let Some(runs) = std::env::var("MEMORY_SEARCH_PROFILE")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        profile(runs);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
