//! Whether a single-file command's cost grows with the store: a `create` into a store of 10
//! files beside the same `create` into a store of 1,999 files (one below the default 2,000-file
//! limit), on every backend.
//!
//! `cargo bench -p memory-bench --bench store_size`. Each bench is named
//! `create_by_store_size/<files>/<backend>`; the goal (issue: speed that does not grow with the
//! store) is the 1,999-file figure within 1.25x of the 10-file one on every backend. The new
//! file is deleted again between timed sections, so the store keeps its size.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memory_bench::fixtures::{Backend, scratch_dir, text_file};
use memory_core::MemoryPath;
use serde_json::json;

/// The store sizes compared: a small store and one just below the default file limit.
const STORE_SIZES: [usize; 2] = [10, 1_999];

fn path(s: &str) -> MemoryPath {
    MemoryPath::parse(s).expect("a valid bench path")
}

/// `files` notes of 1 KiB spread over 20 folders, as an agent's store would be.
fn seed(files: usize) -> Vec<(MemoryPath, Vec<u8>)> {
    let text = text_file(1024).into_bytes();
    (0..files)
        .map(|i| {
            (
                path(&format!("/memories/topic-{:02}/note-{i:04}.md", i % 20)),
                text.clone(),
            )
        })
        .collect()
}

fn store_size(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory-bench");
    let file_text = text_file(1024);
    let mut group = c.benchmark_group("create_by_store_size");
    group.throughput(Throughput::Elements(1));
    for backend in Backend::ALL {
        for files in STORE_SIZES {
            let scratch = scratch_dir(&parent).expect("a scratch folder");
            let store = rt
                .block_on(backend.open(scratch.path(), &seed(files)))
                .unwrap_or_else(|e| panic!("cannot set up {backend}: {e}"));
            let mut n = 0u64;
            group.bench_function(format!("{files}/{backend}"), |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            n += 1;
                            let new = format!("/memories/new/create-{n}.md");
                            let input =
                                json!({"command": "create", "path": new, "file_text": file_text});
                            let start = Instant::now();
                            let out = store.execute_ok(&input).await;
                            total += start.elapsed();
                            black_box(out.unwrap_or_else(|e| panic!("bench create failed: {e}")));
                            store
                                .storage()
                                .delete(&path(&new))
                                .await
                                .expect("untimed delete");
                        }
                        total
                    })
                })
            });
            drop(store);
            drop(scratch);
        }
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
    targets = store_size
}
criterion_main!(benches);
