//! What history costs a write: the same edits with `history=on` (the default: 30 days, every
//! version) and `history=off`, with `sync=none` (so that the disk does not decide) and
//! `sync=full` (durable), in a store of 100 files.
//!
//! `scripts/pg-test-server.sh run -- cargo bench -p memory-layer-postgres --bench history`.
//!
//! - `history/<sync>/<write>/<history>`: `write` is `edit` (a compare-and-swap update of one
//!   file, as `str_replace` makes it: one statement either way) or `overwrite` (a replace of
//!   one file); each iteration changes one of the 100 files, so each file keeps a growing
//!   history as a store in use does.

use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use criterion::{Criterion, criterion_group, criterion_main};
use memory_core::options::StoreOptions;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_postgres::PostgresStorage;
use tokio::runtime::Runtime;

const FILES: usize = 100;

fn url() -> String {
    std::env::var("MEMORY_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: run the bench through \
             `scripts/pg-test-server.sh run -- cargo bench -p memory-layer-postgres --bench history`"
        )
    })
}

fn path(i: usize) -> MemoryPath {
    MemoryPath::parse(&format!("/memories/notes/n{i}.md")).expect("a valid path")
}

async fn store(sync: &str, history: &str) -> PostgresStorage {
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    let url = format!(
        "{}?schema=bench_history&root=r{run}_{sync}_{history}&sync={sync}&history={history}&pool_size=2",
        url()
    );
    let store = PostgresStorage::from_url(&url, StoreOptions::new())
        .await
        .expect("open the bench store");
    for i in 0..FILES {
        let body = format!("# note {i}\n\n{}\n", "some remembered line\n".repeat(40));
        store
            .write(&path(i), body.into_bytes(), WriteMode::Create)
            .await
            .expect("seed a file");
    }
    store
}

fn history(c: &mut Criterion) {
    let rt: Runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    for sync in ["none", "full"] {
        for write in ["edit", "overwrite"] {
            let mut group = c.benchmark_group(format!("history/{sync}/{write}"));
            for history in ["off", "on"] {
                let store = rt.block_on(store(sync, history));
                // Each file's content and version, so that an iteration is the write alone.
                let mut files: Vec<(Vec<u8>, memory_core::Version)> = rt.block_on(async {
                    let mut files = Vec::with_capacity(FILES);
                    for i in 0..FILES {
                        let file = store.read(&path(i)).await.expect("read");
                        files.push((file.contents, file.version));
                    }
                    files
                });
                let mut n = 0usize;
                group.bench_function(history, |b| {
                    b.iter(|| {
                        n += 1;
                        let at = n % FILES;
                        let (body, version) = &mut files[at];
                        body.extend_from_slice(format!("line {n}\n").as_bytes());
                        let mode = match write {
                            "edit" => WriteMode::Update(version.clone()),
                            _ => WriteMode::Overwrite,
                        };
                        let written = rt
                            .block_on(store.write(&path(at), body.clone(), mode))
                            .expect("write");
                        *version = black_box(written);
                    });
                });
            }
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = history
}
criterion_main!(benches);
