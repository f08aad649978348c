//! Shared commits on PostgreSQL: durable edits (`sync=full`, every commit flushed to the WAL)
//! by 1 task beside 8 concurrent tasks on one root, through `MemoryTool`.
//!
//! `scripts/pg-test-server.sh run -- cargo bench -p memory-layer-postgres --bench group_commit`. Each
//! bench is named `postgres_durable_edits/<tasks>` with its throughput in edits per second.
//! Each task `str_replace`s in a file of its own, so the tasks never conflict and every edit
//! is one compare-and-swap `UPDATE` committed on its own; an update takes no lock but its
//! row's, so concurrent commits can share WAL flushes (the goal: 8 tasks at least 3x the edits
//! per second of 1).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memory_bench::concurrent_edits::{self, EDITS_PER_ROUND, TASKS};
use memory_core::MemoryTool;
use memory_core::options::StoreOptions;
use memory_postgres::PostgresStorage;

fn url() -> String {
    std::env::var("MEMORY_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: start a PostgreSQL with \
             `eval \"$(scripts/pg-test-server.sh start)\"` or run the bench through \
             `scripts/pg-test-server.sh run -- cargo bench -p memory-layer-postgres`"
        )
    })
}

fn group_commit(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut group = c.benchmark_group("postgres_durable_edits");
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    for tasks in TASKS {
        let storage = rt.block_on(async {
            let url = format!(
                "{}?schema=memory_bench&root=edits-{run}-{tasks}&sync=full",
                url()
            );
            PostgresStorage::from_url(&url, StoreOptions::new())
                .await
                .expect("open the store")
        });
        let tool = Arc::new(MemoryTool::new(storage));
        rt.block_on(concurrent_edits::seed(&tool, tasks));
        group.throughput(Throughput::Elements((tasks * EDITS_PER_ROUND) as u64));
        group.bench_function(format!("{tasks}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        concurrent_edits::round(&tool, tasks).await;
                    }
                    start.elapsed()
                })
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = group_commit
}
criterion_main!(benches);
