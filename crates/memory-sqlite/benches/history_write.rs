//! What history adds to a memory-sqlite write (issue 30: at most 1.3x).
//!
//! One 1.2 KiB overwrite of a file in a store of 200, sync off so the figures are the work and
//! not the disk's flush, each write's contents differing from the last (two notes in turn),
//! the default index mode:
//!
//! - `write/history-off`: `history=off`, the baseline (no revision recorded);
//! - `write/history-on`: the default history (30 days): the replaced content copied into its
//!   revision (one `UPDATE`), the new revision inserted (one `INSERT`), pruning probed;
//! - `write/history-max`: `history_max=10`, pruning by count dropping a revision each write.
//!
//! `cargo bench -p memory-layer-sqlite --bench history_write`. The machine is shared, so
//! timings are noisy; `MEMORY_SQLITE_BENCH_COUNT=N` instead runs N writes of each case without
//! criterion (`MEMORY_SQLITE_BENCH_CASE=name` picks one), for counting instructions under
//! `valgrind --tool=callgrind`: the difference between two runs of different N, divided by
//! the difference of N, is one write's count (the writer thread's work included).

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use memory_core::conformance::notes;
use memory_core::history::HistoryOptions;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::{SqliteOptions, SqliteStorage, SyncMode};

fn note(i: usize) -> Vec<u8> {
    notes::note(i, None).repeat(3).into_bytes()
}

fn path(i: usize) -> MemoryPath {
    MemoryPath::parse(&format!("/memories/d{}/n{i}.md", i % 50)).expect("a valid path")
}

const CASES: &[&str] = &["history-off", "history-on", "history-max"];

fn open(dir: &Path, case: &str, rt: &tokio::runtime::Runtime) -> SqliteStorage {
    let history = match case {
        "history-off" => HistoryOptions::off(),
        "history-max" => HistoryOptions::default().with_max_per_file(10),
        _ => HistoryOptions::default(),
    };
    let options = SqliteOptions::default()
        .sync(SyncMode::None)
        .history(history);
    let store =
        SqliteStorage::open_with(dir.join(format!("{case}.db")), options).expect("a database");
    rt.block_on(async {
        for i in 0..200 {
            store
                .write(&path(i), note(i), WriteMode::Create)
                .await
                .expect("write");
        }
    });
    store
}

#[inline(never)]
fn count(rt: &tokio::runtime::Runtime, store: &SqliteStorage, n: usize) {
    let notes = [note(3), note(4)];
    let p = path(1);
    rt.block_on(async {
        for i in 0..n {
            store
                .write(&p, notes[i % 2].clone(), WriteMode::Overwrite)
                .await
                .expect("write");
        }
    });
}

fn write(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let only = std::env::var("MEMORY_SQLITE_BENCH_CASE").ok();
    let cases: Vec<&str> = CASES
        .iter()
        .copied()
        .filter(|case| only.as_deref().is_none_or(|o| o == *case))
        .collect();
    if let Some(n) = std::env::var("MEMORY_SQLITE_BENCH_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for case in cases {
            let store = open(dir.path(), case, &rt);
            count(&rt, &store, n);
        }
        return;
    }
    let notes = [note(3), note(4)];
    let mut group = c.benchmark_group("write");
    group
        .sample_size(40)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_millis(500));
    let p = path(1);
    let stores: Vec<(&str, SqliteStorage)> = cases
        .iter()
        .map(|case| (*case, open(dir.path(), case, &rt)))
        .collect();
    for (case, store) in &stores {
        let mut i = 0usize;
        group.bench_function(*case, |b| {
            b.to_async(&rt).iter(|| {
                i += 1;
                let bytes = notes[i % 2].clone();
                let (store, p) = (store, &p);
                async move {
                    store
                        .write(p, black_box(bytes), WriteMode::Overwrite)
                        .await
                        .expect("write")
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, write);
criterion_main!(benches);
