//! Each memory-tool command on PostgreSQL beside SQLite, and the versioned-store engine's
//! durable writes by 1 and by 8 concurrent writers on PostgreSQL beside SQLite.
//!
//! `scripts/pg-test-server.sh run -- cargo bench -p memory-layer-postgres --bench commands`.
//!
//! - `commands/<command>/<backend>`: one `view`, `create`, `str_replace`, `insert`, `delete`
//!   or `rename` through `MemoryTool`, durable on both (`sync=full`: PostgreSQL's
//!   `synchronous_commit=on`, SQLite's `synchronous=FULL`), in a store of 100 files.
//! - `search/postgres/{words,question}/2000`: a keyword query in a store of 2,000 notes (see
//!   `search`).
//! - `engine_writes/<backend>/<writers>`: `update_memory` by memory-store's engine (each write
//!   one transaction holding its store, a new version each), each writer in a store of its
//!   own, as the tenants of one `memory serve` deployment; throughput in writes per second.
//!   On PostgreSQL the writers of different stores commit side by side and share WAL flushes;
//!   SQLite serialises every write to its file.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memory_core::options::StoreOptions as UrlOptions;
use memory_core::{MemoryHandler, MemoryTool, Storage};
use memory_postgres::{PostgresPersistence, PostgresStorage};
use memory_store::{CreateStore, MemoryStores, UpdateMemory};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

const WRITERS: [usize; 2] = [1, 8];
const WRITES_PER_ROUND: usize = 8;

fn url() -> String {
    std::env::var("MEMORY_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: run the bench through \
             `scripts/pg-test-server.sh run -- cargo bench -p memory-layer-postgres --bench commands`"
        )
    })
}

fn run_id() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

async fn call(tool: &MemoryTool<Arc<dyn Storage>>, input: Value) {
    let out = tool.execute(&input).await;
    assert!(!out.is_error, "{input}: {out:?}");
    black_box(out);
}

/// The command of iteration `i` (paths distinct where the command needs a fresh one).
fn command(name: &str, i: u64) -> Value {
    match name {
        "view" => json!({"command": "view", "path": "/memories/f/050.md"}),
        "create" => {
            json!({"command": "create", "path": format!("/memories/new/{i}.md"), "file_text": "new\n"})
        }
        "str_replace" => {
            let (old, new) = if i.is_multiple_of(2) {
                ("a", "b")
            } else {
                ("b", "a")
            };
            json!({"command": "str_replace", "path": "/memories/f/000.md",
                   "old_str": format!("counter: {old}"), "new_str": format!("counter: {new}")})
        }
        // Over the 100 files in turn, so that none grows near the file size limit.
        "insert" => json!({"command": "insert", "path": format!("/memories/f/{:03}.md", i % 100),
                           "insert_line": 1, "insert_text": "line"}),
        "delete" => json!({"command": "delete", "path": format!("/memories/del/{i}.md")}),
        "rename" => {
            let (from, to) = if i.is_multiple_of(2) {
                ("002", "moved")
            } else {
                ("moved", "002")
            };
            json!({"command": "rename", "old_path": format!("/memories/f/{from}.md"),
                   "new_path": format!("/memories/f/{to}.md")})
        }
        other => unreachable!("{other}"),
    }
}

fn commands(c: &mut Criterion) {
    let rt = runtime();
    let run = run_id();
    let dir = tempfile::tempdir().expect("a temp dir");
    let backends: Vec<(&str, Arc<dyn Storage>)> = rt.block_on(async {
        let pg = PostgresStorage::from_url(
            &format!(
                "{}?schema=memory_bench&root=commands-{run}&sync=full",
                url()
            ),
            UrlOptions::new(),
        )
        .await
        .expect("open the PostgreSQL store");
        let sqlite = memory_sqlite::SqliteStorage::from_url(
            &format!("sqlite:{}?sync=full", dir.path().join("bench.db").display()),
            UrlOptions::new(),
        )
        .expect("open the SQLite store");
        vec![
            ("postgres", Arc::new(pg) as Arc<dyn Storage>),
            ("sqlite", Arc::new(sqlite) as Arc<dyn Storage>),
        ]
    });
    for (name, storage) in &backends {
        let tool = MemoryTool::new(Arc::clone(storage));
        rt.block_on(async {
            for i in 0..100 {
                call(
                    &tool,
                    json!({"command": "create", "path": format!("/memories/f/{i:03}.md"),
                                   "file_text": "counter: a\nsome notes\n"}),
                )
                .await;
            }
        });
        let _ = name;
    }
    for cmd in [
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
    ] {
        let mut group = c.benchmark_group(format!("commands/{cmd}"));
        for (name, storage) in &backends {
            let tool = MemoryTool::new(Arc::clone(storage));
            let mut next = 0u64;
            group.bench_function(*name, |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        if cmd == "delete" {
                            for i in next..next + iters {
                                call(
                                    &tool,
                                    json!({"command": "create",
                                    "path": format!("/memories/del/{i}.md"), "file_text": "x\n"}),
                                )
                                .await;
                            }
                        }
                        let start = Instant::now();
                        for i in next..next + iters {
                            call(&tool, command(cmd, i)).await;
                        }
                        let took = start.elapsed();
                        next += iters;
                        took
                    })
                })
            });
        }
        group.finish();
    }
}

fn engine_writes(c: &mut Criterion) {
    let rt = runtime();
    let run = run_id();
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut group = c.benchmark_group("engine_writes");
    for backend in ["postgres", "sqlite"] {
        for writers in WRITERS {
            let engine: MemoryStores = rt.block_on(async {
                match backend {
                    "postgres" => {
                        let p = PostgresPersistence::from_url(
                            &format!("{}?schema=engine_bench_{run}&sync=full&pool_size=16", url()),
                            UrlOptions::new(),
                        )
                        .await
                        .expect("open the engine's tables");
                        MemoryStores::new(p)
                    }
                    _ => MemoryStores::open(dir.path().join(format!("engine-{writers}.db")))
                        .await
                        .expect("open the SQLite engine"),
                }
            });
            let targets: Vec<(String, String, String)> = rt.block_on(async {
                let mut out = Vec::new();
                for w in 0..writers {
                    let store = engine
                        .create_store(CreateStore {
                            name: format!("writer {w}"),
                            ..Default::default()
                        })
                        .await
                        .expect("a store");
                    let m = engine
                        .create_memory(&store.id, "/notes.md", "v0", None)
                        .await
                        .expect("a memory");
                    out.push((store.id, m.id, m.content_sha256));
                }
                out
            });
            let targets = Arc::new(targets);
            group.throughput(Throughput::Elements((writers * WRITES_PER_ROUND) as u64));
            group.bench_function(format!("{backend}/{writers}"), |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let start = Instant::now();
                        for round in 0..iters {
                            let mut running = Vec::with_capacity(writers);
                            for w in 0..writers {
                                let (engine, targets) = (engine.clone(), Arc::clone(&targets));
                                running.push(tokio::spawn(async move {
                                    let (store, memory, _) = &targets[w];
                                    for k in 0..WRITES_PER_ROUND {
                                        let m = engine
                                            .update_memory(
                                                store,
                                                memory,
                                                UpdateMemory {
                                                    content: Some(format!("r{round} k{k}")),
                                                    ..Default::default()
                                                },
                                                None,
                                            )
                                            .await
                                            .expect("an update");
                                        black_box(m);
                                    }
                                }));
                            }
                            for task in running {
                                task.await.expect("a writer");
                            }
                        }
                        start.elapsed()
                    })
                })
            });
        }
    }
    group.finish();
}

/// `search/postgres/{words,question}/2000`: one query (two rare words, or a whole question
/// holding them and common ones; the 2 notes holding the rare words rank first) in a store of 2,000 notes of about 400 bytes, as memory-search's
/// bench asks the other stores; prints p50 and p95 of 200 searches besides criterion's figures.
fn search(c: &mut Criterion) {
    use memory_core::search::SearchQuery;
    use memory_core::{MemoryPath, WriteMode};
    const FILES: usize = 2_000;
    let rt = runtime();
    let store = rt.block_on(async {
        let pg = PostgresStorage::from_url(
            &format!(
                "{}?schema=memory_bench&root=search-{}&sync=none",
                url(),
                run_id()
            ),
            UrlOptions::new(),
        )
        .await
        .expect("open the PostgreSQL store");
        for i in 0..FILES {
            let rare = (i % 1000 == 7).then_some("zephyr quasar");
            let path =
                MemoryPath::parse(&format!("/memories/d{}/n{i}.md", i % 50)).expect("a path");
            pg.write(
                &path,
                memory_core::conformance::notes::note(i, rare).into_bytes(),
                WriteMode::Create,
            )
            .await
            .expect("a note");
        }
        pg
    });
    let mut group = c.benchmark_group("search");
    for (form, text) in [
        ("words", "zephyr quasar"),
        ("question", "When did the zephyr quasar note come up?"),
    ] {
        let query = SearchQuery::new(text).expect("a query");
        let runs = if std::env::args().any(|a| a == "--bench") {
            200
        } else {
            3
        };
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let hits = rt.block_on(store.search(&query)).expect("search");
                // The two notes holding the rare words first (a question's common words
                // find more).
                assert!(
                    hits.len() >= 2 && hits[..2].iter().all(|h| h.snippet.contains("zephyr")),
                    "{form}: {hits:?}"
                );
                start.elapsed()
            })
            .collect();
        times.sort();
        let at = |q: f64| times[((runs as f64 * q) as usize).min(runs - 1)];
        println!(
            "search-latency postgres/{form}/{FILES}: p50 {:.3} ms, p95 {:.3} ms ({runs} searches)",
            at(0.50).as_secs_f64() * 1e3,
            at(0.95).as_secs_f64() * 1e3
        );
        group.bench_function(format!("postgres/{form}/{FILES}"), |b| {
            b.iter(|| black_box(rt.block_on(store.search(&query)).expect("search")));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = commands, engine_writes, search
}
criterion_main!(benches);
