//! The memory tool's commands, timed through `MemoryTool` over every backend.
//!
//! `cargo bench -p memory-bench` (a few minutes), or one slice:
//! `cargo bench -p memory-bench -- 'str_replace/1KiB'`. Each bench is named
//! `<command>/<size>/<backend>`, so a group holds one command on every backend side by side:
//! SQLite beside the folder store (durable edits and views per second: criterion prints the
//! rate as `thrpt`), and each encrypted store beside its inner one (the wrapper's overhead).
//! `python3 bench/criterion_table.py` turns the results into those tables.
//!
//! Every store is filled before timing; per-iteration setup (restoring a file after `insert`,
//! deleting a file after `create`) runs between timed sections, never inside them. The disk
//! stores live under Cargo's `target/tmp`, on the repository's disk.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memory_bench::fixtures::{Backend, BenchStore, scratch_dir, text_file};
use memory_core::{MemoryPath, WriteMode};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// File sizes the per-file benches use.
const SIZES: [(usize, &str); 2] = [(1024, "1KiB"), (64 * 1024, "64KiB")];
/// Files in the directory of the directory-view bench.
const DIR_FILES: usize = 2000;

fn path(s: &str) -> MemoryPath {
    MemoryPath::parse(s).expect("a valid bench path")
}

/// The files the per-file benches start with: for each size a file to view, one to edit, one
/// to insert into and one to rename.
fn bench_files() -> Vec<(MemoryPath, Vec<u8>)> {
    let mut files = Vec::new();
    for (size, label) in SIZES {
        let text = text_file(size).into_bytes();
        for role in ["view", "edit", "insert", "rename-a"] {
            files.push((
                path(&format!("/memories/bench/{role}-{label}.md")),
                text.clone(),
            ));
        }
    }
    files
}

/// `/memories/dir` with 2,000 files of 1 KiB: a store at the default file limit, so it gets a
/// store of its own (a `create` there would be refused).
fn dir_files() -> Vec<(MemoryPath, Vec<u8>)> {
    let small = text_file(1024).into_bytes();
    (0..DIR_FILES)
        .map(|i| {
            (
                path(&format!("/memories/dir/note-{i:04}.md")),
                small.clone(),
            )
        })
        .collect()
}

/// Times `iters` runs of the input `make(i)` returns, with `between(i)` run untimed after each.
async fn timed<M, B, F>(store: &BenchStore, iters: u64, mut make: M, mut between: B) -> Duration
where
    M: FnMut(u64) -> Value,
    B: FnMut(u64) -> F,
    F: Future<Output = ()>,
{
    let mut total = Duration::ZERO;
    for i in 0..iters {
        let input = make(i);
        let start = Instant::now();
        let out = store.execute_ok(&input).await;
        total += start.elapsed();
        black_box(out.unwrap_or_else(|e| panic!("bench command failed: {e}")));
        between(i).await;
    }
    total
}

fn commands(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory-bench");
    let open = |backend: Backend, files: &[(MemoryPath, Vec<u8>)]| {
        let scratch = scratch_dir(&parent).expect("a scratch folder");
        let store = rt
            .block_on(backend.open(scratch.path(), files))
            .unwrap_or_else(|e| panic!("cannot set up {backend}: {e}"));
        (store, scratch)
    };

    let files = bench_files();
    let stores: Vec<(BenchStore, tempfile::TempDir)> = Backend::ALL
        .into_iter()
        .map(|backend| open(backend, &files))
        .collect();
    for (size, label) in SIZES {
        bench_file_commands(c, &rt, &stores, size, label);
    }
    drop(stores);

    let files = dir_files();
    let mut group = c.benchmark_group("view_dir");
    group.throughput(Throughput::Elements(1));
    for backend in Backend::ALL {
        let (store, _scratch) = open(backend, &files);
        group.bench_function(format!("2000files/{backend}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(timed(
                    &store,
                    iters,
                    |_| json!({"command": "view", "path": "/memories/dir"}),
                    |_| async {},
                ))
            })
        });
    }
    group.finish();
}

fn bench_file_commands(
    c: &mut Criterion,
    rt: &Runtime,
    stores: &[(BenchStore, tempfile::TempDir)],
    size: usize,
    label: &str,
) {
    let original = text_file(size).into_bytes();
    let view = format!("/memories/bench/view-{label}.md");
    let edit = format!("/memories/bench/edit-{label}.md");
    let insert = format!("/memories/bench/insert-{label}.md");
    let rename_a = format!("/memories/bench/rename-a-{label}.md");
    let rename_b = format!("/memories/bench/rename-b-{label}.md");
    let insert_path = path(&insert);

    let mut group = c.benchmark_group("view_file");
    group.throughput(Throughput::Elements(1));
    for (store, _) in stores {
        group.bench_function(format!("{label}/{}", store.backend()), |b| {
            b.iter_custom(|iters| {
                rt.block_on(timed(
                    store,
                    iters,
                    |_| json!({"command": "view", "path": view}),
                    |_| async {},
                ))
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("create");
    group.throughput(Throughput::Elements(1));
    let file_text = String::from_utf8(original.clone()).expect("text");
    for (store, _) in stores {
        let mut n = 0u64;
        group.bench_function(format!("{label}/{}", store.backend()), |b| {
            b.iter_custom(|iters| {
                let first = n;
                n += iters;
                rt.block_on(timed(
                    store,
                    iters,
                    |i| {
                        json!({"command": "create",
                            "path": format!("/memories/new/{label}-{}.md", first + i),
                            "file_text": file_text})
                    },
                    // The store keeps its size: each new file goes again, untimed.
                    |i| async move {
                        let p = path(&format!("/memories/new/{label}-{}.md", first + i));
                        store.storage().delete(&p).await.expect("untimed delete");
                    },
                ))
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("str_replace");
    group.throughput(Throughput::Elements(1));
    for (store, _) in stores {
        // Swaps MARKER-A for MARKER-B and back: the file keeps its size.
        let mut flips = 0u64;
        group.bench_function(format!("{label}/{}", store.backend()), |b| {
            b.iter_custom(|iters| {
                let first = flips;
                flips += iters;
                rt.block_on(timed(
                    store,
                    iters,
                    |i| {
                        let (old, new) = if (first + i).is_multiple_of(2) {
                            ("MARKER-A", "MARKER-B")
                        } else {
                            ("MARKER-B", "MARKER-A")
                        };
                        json!({"command": "str_replace", "path": edit,
                            "old_str": old, "new_str": new})
                    },
                    |_| async {},
                ))
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("insert");
    group.throughput(Throughput::Elements(1));
    for (store, _) in stores {
        group.bench_function(format!("{label}/{}", store.backend()), |b| {
            b.iter_custom(|iters| {
                rt.block_on(timed(
                    store,
                    iters,
                    |_| {
                        json!({"command": "insert", "path": insert, "insert_line": 3,
                            "insert_text": "- [ ] a line the agent adds"})
                    },
                    // Back to the original, untimed, so every insert sees the same file.
                    |_| {
                        let restored = original.clone();
                        let p = &insert_path;
                        async move {
                            store
                                .storage()
                                .write(p, restored, WriteMode::Overwrite)
                                .await
                                .expect("untimed restore");
                        }
                    },
                ))
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("rename");
    group.throughput(Throughput::Elements(1));
    for (store, _) in stores {
        // Back and forth between two names.
        let mut moves = 0u64;
        group.bench_function(format!("{label}/{}", store.backend()), |b| {
            b.iter_custom(|iters| {
                let first = moves;
                moves += iters;
                rt.block_on(timed(
                    store,
                    iters,
                    |i| {
                        let (from, to) = if (first + i).is_multiple_of(2) {
                            (&rename_a, &rename_b)
                        } else {
                            (&rename_b, &rename_a)
                        };
                        json!({"command": "rename", "old_path": from, "new_path": to})
                    },
                    |_| async {},
                ))
            })
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = config();
    targets = commands
}
criterion_main!(benches);
