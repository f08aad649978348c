//! What the search index adds to a memory-sqlite write.
//!
//! One 1.2 KiB overwrite of a file in a store of 200 (about 180 words, 35 distinct), sync off
//! so the figures are the work and not the disk's flush, each write's contents differing from
//! the last (two notes in turn, so every write changes the file's words):
//!
//! - `write/indexed`: [`IndexMode::Write`], the file's words put in the FTS5 table in the
//!   write's own transaction;
//! - `write/batched`: the default [`IndexMode::Batched`], the row marked and indexed by the
//!   writer thread once per [`INDEX_BATCH`](memory_sqlite::INDEX_BATCH) writes (here the same
//!   file each time, so once per batch);
//! - `write/deferred`: [`IndexMode::Search`], the row only marked for the next search to
//!   index;
//! - `write/no-search`: the same with the search triggers dropped from the file, so the write
//!   is what it was before the store had search (schema 3): the baseline;
//! - `write/same-bytes`: [`IndexMode::Write`], rewriting the bytes already there (the search table is
//!   left alone: the row's words are still right).
//!
//! `cargo bench -p memory-layer-sqlite --bench search_write`. The machine is shared, so timings are
//! noisy; `MEMORY_SQLITE_BENCH_COUNT=N` instead runs N writes of each case without criterion
//! (`MEMORY_SQLITE_BENCH_CASE=name` picks one), for counting instructions under
//! `valgrind --tool=callgrind`, which the load does not change: the difference between two
//! runs of different N, divided by the difference of N, is one write's count (the writer
//! thread's work included).

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use memory_core::conformance::notes;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::{IndexMode, SqliteOptions, SqliteStorage, SyncMode};

/// About 400 bytes of words (the notes memory-search's bench searches).
fn note(i: usize) -> String {
    notes::note(i, None)
}

fn path(i: usize) -> MemoryPath {
    MemoryPath::parse(&format!("/memories/d{}/n{i}.md", i % 50)).expect("a valid path")
}

/// The cases, each a store and whether its writes alternate contents.
const CASES: &[&str] = &["indexed", "batched", "deferred", "no-search", "same-bytes"];

fn open(dir: &Path, case: &str, rt: &tokio::runtime::Runtime) -> SqliteStorage {
    let db = dir.join(format!("{case}.db"));
    let index = match case {
        "indexed" | "same-bytes" => IndexMode::Write,
        "batched" => IndexMode::Batched,
        _ => IndexMode::Search,
    };
    let store = SqliteStorage::open_with(
        &db,
        SqliteOptions::default().sync(SyncMode::None).index(index),
    )
    .expect("a database");
    rt.block_on(async {
        for i in 0..200 {
            store
                .write(&path(i), note(i).repeat(3).into_bytes(), WriteMode::Create)
                .await
                .expect("write");
        }
    });
    if case == "no-search" {
        // What a write was before search: no trigger marks its row. (The library never
        // touches the search tables in a write with `IndexMode::Search`.)
        rusqlite::Connection::open(&db)
            .and_then(|c| {
                c.execute_batch(
                    "DROP TRIGGER search_mark_insert; DROP TRIGGER search_mark_update;
                     DROP TRIGGER search_forget;",
                )
            })
            .expect("drop the search triggers");
    }
    store
}

/// The contents of write number `i` of `case`.
fn contents<'a>(case: &str, notes: &'a [Vec<u8>; 2], i: usize) -> &'a [u8] {
    if case == "same-bytes" {
        &notes[0]
    } else {
        &notes[i % 2]
    }
}

#[inline(never)]
fn count(rt: &tokio::runtime::Runtime, store: &SqliteStorage, case: &str, n: usize) {
    let notes = [
        note(3).repeat(3).into_bytes(),
        note(4).repeat(3).into_bytes(),
    ];
    let p = path(1);
    rt.block_on(async {
        for i in 0..n {
            store
                .write(&p, contents(case, &notes, i).to_vec(), WriteMode::Overwrite)
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
            count(&rt, &store, case, n);
        }
        return;
    }
    let notes = [
        note(3).repeat(3).into_bytes(),
        note(4).repeat(3).into_bytes(),
    ];
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
                let bytes = contents(case, &notes, i).to_vec();
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
