//! What encryption costs over the inner store: write and read of 1 KiB and 64 KiB files,
//! through `Encrypted<InMemoryStorage>` and through `InMemoryStorage` alone.
//!
//! `cargo bench -p memory-layer-encrypted`. The in-memory store does no I/O, so the difference is
//! the wrapper's whole cost (AES-256-GCM, the data-key wrap, random draws, copies); over a
//! real folder or database it is a much smaller share.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_encrypted::{Encrypted, Key, Keyring};

fn overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let path = MemoryPath::parse("/memories/bench/notes.md").expect("a valid path");
    let plain = InMemoryStorage::new();
    let encrypted = Encrypted::new(
        InMemoryStorage::new(),
        Keyring::new(Key::generate().expect("a random key")),
    );
    let stores: [(&str, &dyn Storage); 2] = [("plain", &plain), ("encrypted", &encrypted)];

    for size in [1024usize, 64 * 1024] {
        let label = format!("{}KiB", size / 1024);
        let contents = vec![b'm'; size];
        let mut group = c.benchmark_group(format!("write {label}"));
        group.throughput(Throughput::Bytes(size as u64));
        for (name, store) in stores {
            group.bench_with_input(
                BenchmarkId::from_parameter(name),
                &contents,
                |b, contents| {
                    b.to_async(&rt).iter(|| async {
                        store
                            .write(&path, black_box(contents.clone()), WriteMode::Overwrite)
                            .await
                            .expect("write")
                    });
                },
            );
        }
        group.finish();

        let mut group = c.benchmark_group(format!("read {label}"));
        group.throughput(Throughput::Bytes(size as u64));
        for (name, store) in stores {
            rt.block_on(store.write(&path, contents.clone(), WriteMode::Overwrite))
                .expect("setup write");
            group.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.to_async(&rt)
                    .iter(|| async { black_box(store.read(&path).await.expect("read")) });
            });
        }
        group.finish();
    }
}

criterion_group!(benches, overhead);
criterion_main!(benches);
