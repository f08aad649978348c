//! What history costs a write: one `str_replace` of a 1 KiB file through `MemoryTool`, with
//! history on (the default: the replaced content kept, a revision recorded, in the same atomic
//! step) beside the same store opened with `history=off`.
//!
//! `cargo bench -p memory-bench --bench history`. Each bench is named
//! `history_write/<store>/<on|off>`: the folder and SQLite stores with `sync=none` (so the disk
//! does not decide: the 1.3x goal is measured here) and durable (`sync=full`, beside
//! the disk's floor), and the encrypted folder store with `sync=none`. Every iteration edits
//! the same file, so its history grows over the run as an agent's progress file does.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memory_bench::fixtures::{scratch_dir, text_file};
use memory_core::options::StoreOptions;
use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode};
use memory_encrypted::{Encrypted, Key, Keyring};
use memory_fs::{FsOptions, FsStorage};
use memory_sqlite::{SqliteOptions, SqliteStorage};
use serde_json::json;
use tokio::runtime::Runtime;

/// The stores measured: a name and the store options they open with (besides `history`).
const STORES: [(&str, &str); 5] = [
    ("fs-sync-none", "fs"),
    ("fs-durable", "fs"),
    ("sqlite-sync-none", "sqlite"),
    ("sqlite-durable", "sqlite"),
    ("enc-fs-sync-none", "enc-fs"),
];

fn options(name: &str, history: &str) -> StoreOptions {
    let sync = if name.ends_with("sync-none") {
        "none"
    } else {
        "full"
    };
    StoreOptions::from_pairs([("sync", sync), ("history", history)])
}

fn open(scratch: &Path, name: &str, kind: &str, history: &str) -> Arc<dyn Storage> {
    let options = options(name, history);
    match kind {
        "fs" | "enc-fs" => {
            let fs_options = FsOptions::from_options(options).expect("folder store options");
            let store = FsStorage::with_options(scratch, fs_options).expect("open the folder");
            if kind == "enc-fs" {
                let keyring = Keyring::new(Key::from_bytes([0x5a; 32]));
                Arc::new(Encrypted::new(store, keyring))
            } else {
                Arc::new(store)
            }
        }
        _ => {
            let sqlite = SqliteOptions::from_options(options).expect("SQLite store options");
            let store = SqliteStorage::open_with(scratch.join("memory.db"), sqlite)
                .expect("open the database");
            Arc::new(store)
        }
    }
}

fn history_write(c: &mut Criterion) {
    let rt = Runtime::new().expect("a tokio runtime");
    let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory-bench");
    let path = MemoryPath::parse("/memories/progress.md").expect("a valid path");
    let text = format!("status: alpha\n{}", text_file(1024 - 14));
    let mut group = c.benchmark_group("history_write");
    group.throughput(Throughput::Elements(1));
    for (name, kind) in STORES {
        for history in ["on", "off"] {
            let scratch = scratch_dir(&parent).expect("a scratch folder");
            let store = open(scratch.path(), name, kind, history);
            rt.block_on(store.write(&path, text.clone().into_bytes(), WriteMode::Create))
                .expect("seed the file");
            let tool = MemoryTool::new(store);
            // Edits made so far, across criterion's calls: which word the file holds now.
            let edits = std::cell::Cell::new(0u64);
            group.bench_function(format!("{name}/{history}"), |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let start = Instant::now();
                        for _ in 0..iters {
                            // Back and forth, so every edit changes the file.
                            let (old, new) = match edits.replace(edits.get() + 1) % 2 {
                                0 => ("status: alpha", "status: omega"),
                                _ => ("status: omega", "status: alpha"),
                            };
                            let out = tool
                                .execute(&json!({
                                    "command": "str_replace", "path": "/memories/progress.md",
                                    "old_str": old, "new_str": new,
                                }))
                                .await;
                            assert!(!out.is_error, "{out:?}");
                        }
                        start.elapsed()
                    })
                })
            });
            drop(tool);
            drop(scratch);
        }
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = config();
    targets = history_write
}
criterion_main!(benches);
