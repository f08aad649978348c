//! The shared conformance suite (the storage tier and the command tier) over a store in a
//! temporary folder: on the Linux fast paths and on the portable ones (`portable=true`, what
//! macOS and Windows run), in every sync mode and every place the blocking work can run.

use std::sync::Arc;

use memory_fs::{Blocking, FsOptions, FsStorage, SyncMode};

/// Both tiers on a fresh store with `options`; the suite leaves the store empty, with no
/// folder and no temporary file behind.
async fn both_tiers(options: FsOptions) {
    let dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::with_options(dir.path(), options.clone()).unwrap();
    assert_eq!(storage.to_string(), format!("Fs({})", dir.path().display()));
    if options.portable {
        assert!(
            !storage.uses_fast_paths(),
            "portable=true takes no fast path"
        );
    } else if cfg!(target_os = "linux") {
        assert!(storage.uses_fast_paths(), "this kernel has openat2");
    }
    memory_core::conformance::storage::run_all(Arc::new(storage.clone())).await;
    let temps: Vec<_> = std::fs::read_dir(dir.path().join(".memory-tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(temps.is_empty(), "temporary files left: {temps:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path().join("memories"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left on disk: {left:?}");
    memory_core::conformance::commands::run_all(Arc::new(storage)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance() {
    both_tiers(FsOptions::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_portable() {
    both_tiers(FsOptions::default().portable(true)).await;
}

#[tokio::test]
async fn conformance_portable_without_fsync_on_one_thread() {
    both_tiers(FsOptions::default().portable(true).sync(SyncMode::None)).await;
}

#[tokio::test]
async fn conformance_without_fsync_on_one_thread() {
    both_tiers(FsOptions::default().sync(SyncMode::None)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_syncing_data_only_always_inline() {
    let options = FsOptions::default()
        .sync(SyncMode::Data)
        .blocking(Blocking::Inline);
    both_tiers(options).await;
}

#[tokio::test]
async fn conformance_always_on_the_blocking_pool() {
    let options = FsOptions::default()
        .sync(SyncMode::None)
        .blocking(Blocking::Spawn);
    both_tiers(options).await;
}

/// A folder store opened again on its folder, read-write or read-only.
struct Folder {
    dir: tempfile::TempDir,
    options: FsOptions,
}

#[memory_core::async_trait]
impl memory_core::conformance::reopen::Reopen for Folder {
    async fn open(&self) -> Arc<dyn memory_core::Storage> {
        Arc::new(FsStorage::with_options(self.dir.path(), self.options.clone()).unwrap())
    }
    async fn open_read_only(&self) -> Arc<dyn memory_core::Storage> {
        let options = self.options.clone().read_only(true);
        Arc::new(FsStorage::with_options(self.dir.path(), options).unwrap())
    }
    async fn snapshot(&self) -> String {
        memory_core::conformance::reopen::folder_snapshot(self.dir.path())
    }
}

/// A read-only open changes nothing; stores opened separately on one folder keep the limit
/// and lose no edit; on the fast paths and the portable ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_reopened() {
    for options in [FsOptions::default(), FsOptions::default().portable(true)] {
        let folder = Folder {
            dir: tempfile::tempdir().unwrap(),
            options,
        };
        memory_core::conformance::reopen::run_all(&folder).await;
    }
}
