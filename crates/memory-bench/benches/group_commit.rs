//! Group commit on SQLite: durable edits (`sync=full`, every commit flushed) by 1 task beside
//! 8 concurrent tasks on one store in one process.
//!
//! `cargo bench -p memory-bench --bench group_commit`. Each bench is named
//! `sqlite_durable_edits/<tasks>` and its throughput is in edits per second; the goal (issue:
//! durable writes at the floor) is 8 tasks at least 3x the edits per second of 1 task, because
//! the store's writer thread commits the writes queued at the same moment in one transaction.
//! Each task `str_replace`s in a file of its own through `MemoryTool`, so the tasks never
//! conflict and every edit is one committed write.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memory_bench::concurrent_edits::{self, EDITS_PER_ROUND, TASKS};
use memory_bench::fixtures::scratch_dir;
use memory_core::MemoryTool;
use memory_sqlite::{SqliteOptions, SqliteStorage, SyncMode};

fn group_commit(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory-bench");
    let mut group = c.benchmark_group("sqlite_durable_edits");
    for tasks in TASKS {
        let scratch = scratch_dir(&parent).expect("a scratch folder");
        let storage = SqliteStorage::open_with(
            scratch.path().join("memory.db"),
            SqliteOptions::default().sync(SyncMode::Full),
        )
        .expect("open the database");
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
        drop(tool);
        drop(scratch);
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
