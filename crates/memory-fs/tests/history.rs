//! Each file's history on a folder store: the shared history suite on the Linux fast paths
//! and on the portable ones, and what is particular to a folder: history lives in
//! `base/.memory-history`, never in `memories/`, a read-only open changes nothing, redaction
//! leaves no file holding the redacted bytes, and `history=off` makes no history folder.

use std::path::Path;
use std::sync::Arc;

use memory_core::conformance::history::{self, OpenHistory};
use memory_core::history::Redaction;
use memory_core::options::StoreOptions;
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_fs::{FsOptions, FsStorage, HistoryOptions, SyncMode};

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

/// A fresh folder per open (kept until the test ends), on the fast or the portable paths.
struct Fresh {
    portable: bool,
    sync: SyncMode,
    dirs: std::sync::Mutex<Vec<tempfile::TempDir>>,
}

impl Fresh {
    fn new(portable: bool, sync: SyncMode) -> Self {
        Fresh {
            portable,
            sync,
            dirs: std::sync::Mutex::new(Vec::new()),
        }
    }
}

#[memory_core::async_trait]
impl OpenHistory for Fresh {
    async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
        let dir = tempfile::tempdir().unwrap();
        let store = FsStorage::with_options(
            dir.path(),
            FsOptions::default()
                .portable(self.portable)
                .sync(self.sync)
                .history(options),
        )
        .unwrap();
        assert_eq!(
            store.uses_fast_paths(),
            !self.portable && cfg!(target_os = "linux")
        );
        self.dirs.lock().unwrap().push(dir);
        Arc::new(store)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conformance() {
    history::run_all(&Fresh::new(false, SyncMode::Full)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conformance_portable() {
    history::run_all(&Fresh::new(true, SyncMode::Full)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_conformance_without_fsync() {
    history::run_all(&Fresh::new(false, SyncMode::None)).await;
    history::run_all(&Fresh::new(true, SyncMode::None)).await;
}

/// Every regular file below `dir`, with its bytes.
fn every_file(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

async fn edit(store: &FsStorage, path: &MemoryPath, contents: &[u8]) {
    let current = store.read(path).await.unwrap();
    store
        .write(path, contents.to_vec(), WriteMode::Update(current.version))
        .await
        .unwrap();
}

/// History sits beside `memories/`, never in it: the listing and the count see only the
/// current files, however many versions there are.
#[tokio::test]
async fn history_is_beside_memories_and_never_listed() {
    for portable in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let store =
            FsStorage::with_options(dir.path(), FsOptions::default().portable(portable)).unwrap();
        let path = p("/memories/notes/a.md");
        store
            .write(&path, b"one".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        for n in 0..4 {
            edit(&store, &path, format!("edit {n}").as_bytes()).await;
        }
        store
            .rename(&path, &p("/memories/notes/b.md"))
            .await
            .unwrap();
        assert_eq!(store.file_count().await.unwrap(), 1);
        let listed = store.list(&MemoryPath::root()).await.unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        let in_memories = every_file(&dir.path().join("memories"));
        assert_eq!(in_memories.len(), 1, "{in_memories:?}");
        assert!(dir.path().join(".memory-history").is_dir());
        let revisions = store.history(&p("/memories/notes/b.md")).await.unwrap();
        assert_eq!(revisions.len(), 6);
        // A new open counts the same: history is not walked as files.
        drop(store);
        let store =
            FsStorage::with_options(dir.path(), FsOptions::default().portable(portable)).unwrap();
        assert_eq!(store.file_count().await.unwrap(), 1);
    }
}

/// A read-only open reads history (versions and their bytes) and changes nothing on disk,
/// history folder included.
#[tokio::test]
async fn a_read_only_open_reads_history_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = p("/memories/a.md");
    {
        let store = FsStorage::new(dir.path()).unwrap();
        store
            .write(&path, b"first".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        edit(&store, &path, b"second").await;
    }
    // A change another program made (no record of it): a read-only look sees it, and stores
    // nothing.
    std::fs::write(dir.path().join("memories/a.md"), b"edited by hand").unwrap();
    let before = memory_core::conformance::reopen::folder_snapshot(dir.path());
    let url = dir.path().display().to_string();
    let reader = FsStorage::from_url_read_only(&url, StoreOptions::new()).unwrap();
    let revisions = reader.history(&path).await.unwrap();
    assert_eq!(revisions.len(), 3, "{revisions:?}");
    assert_eq!(reader.read_revision(&path, 1).await.unwrap(), b"first");
    // What another program overwrote was never kept: said so, not made up.
    assert!(matches!(
        reader.read_revision(&path, 2).await,
        Err(Error::Backend { .. })
    ));
    assert_eq!(
        reader.read_revision(&path, 3).await.unwrap(),
        b"edited by hand"
    );
    assert!(reader.history(&MemoryPath::root()).await.unwrap().len() >= 3);
    assert!(matches!(
        reader.write_restored(&path, 1, b"first".to_vec()).await,
        Err(Error::Refused { .. })
    ));
    assert!(matches!(
        reader.redact_revisions(&path, Redaction::AllPast).await,
        Err(Error::Refused { .. })
    ));
    drop(reader);
    assert_eq!(
        before,
        memory_core::conformance::reopen::folder_snapshot(dir.path()),
        "a read-only open changed the folder"
    );
    // A writable open then records the change it missed, once.
    let store = FsStorage::new(dir.path()).unwrap();
    edit(&store, &path, b"fourth").await;
    let revisions = store.history(&path).await.unwrap();
    let numbers: Vec<u64> = revisions.iter().map(|r| r.number).collect();
    assert_eq!(numbers, [4, 3, 2, 1]);
    assert_eq!(
        store.read_revision(&path, 3).await.unwrap(),
        b"edited by hand"
    );
}

/// A read-only open of a store that never kept history sees none and makes no folder.
#[tokio::test]
async fn a_read_only_open_without_history_folder_makes_none() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = FsStorage::with_options(
            dir.path(),
            FsOptions::default().history(HistoryOptions::off()),
        )
        .unwrap();
        store
            .write(&p("/memories/a.md"), b"a".to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    let reader = FsStorage::with_options(dir.path(), FsOptions::default().read_only(true)).unwrap();
    assert!(
        reader
            .history(&MemoryPath::root())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!dir.path().join(".memory-history").exists());
}

/// Redacted bytes are in no file anywhere below the store's folder.
#[tokio::test]
async fn redaction_leaves_no_copy_on_disk() {
    for portable in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let store =
            FsStorage::with_options(dir.path(), FsOptions::default().portable(portable)).unwrap();
        let secret = b"sk-live-0123456789-very-secret";
        let path = p("/memories/keys.md");
        store
            .write(&path, secret.to_vec(), WriteMode::Create)
            .await
            .unwrap();
        edit(&store, &path, b"see the vault").await;
        // Moved and edited: the secret's version moves with the file.
        store.rename(&path, &p("/memories/moved.md")).await.unwrap();
        let path = p("/memories/moved.md");
        edit(&store, &path, b"in the vault").await;
        let holding = |dir: &Path| {
            every_file(dir)
                .into_iter()
                .filter(|(_, bytes)| contains(bytes, secret))
                .map(|(name, _)| name)
                .collect::<Vec<_>>()
        };
        assert!(!holding(dir.path()).is_empty(), "the secret is kept before");
        let redacted = store
            .redact_revisions(&path, Redaction::AllPast)
            .await
            .unwrap();
        assert_eq!(redacted, 3);
        assert_eq!(holding(dir.path()), Vec::<String>::new());
        assert_eq!(store.read(&path).await.unwrap().contents, b"in the vault");
        let revisions = store.history(&path).await.unwrap();
        assert!(
            revisions[1..]
                .iter()
                .all(|r| r.redacted && r.sha256.is_none())
        );
    }
}

/// `history=off` (from the URL) keeps nothing and makes no history folder.
#[tokio::test]
async fn history_off_makes_no_history_folder() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}?history=off", dir.path().display());
    let store = FsStorage::from_url(&url, StoreOptions::new()).unwrap();
    assert!(!store.options().history.enabled);
    let path = p("/memories/a.md");
    store
        .write(&path, b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    edit(&store, &path, b"b").await;
    store.rename(&path, &p("/memories/b.md")).await.unwrap();
    store.delete(&p("/memories/b.md")).await.unwrap();
    assert!(matches!(
        store.history(&MemoryPath::root()).await,
        Err(Error::HistoryOff)
    ));
    assert!(!dir.path().join(".memory-history").exists());
}

/// The history options come from the URL and are checked.
#[test]
fn history_options_from_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "{}?history_max=3&history_days=7&history_session=s-1",
        dir.path().display()
    );
    let store = FsStorage::from_url(&url, StoreOptions::new()).unwrap();
    let history = &store.options().history;
    assert_eq!(history.max_per_file, Some(3));
    assert_eq!(history.session.as_deref(), Some("s-1"));
    assert_eq!(
        history.keep_for,
        Some(std::time::Duration::from_secs(7 * 86_400))
    );
    for key in HistoryOptions::KEYS {
        assert!(memory_fs::URL_OPTIONS.contains(&key), "{key}");
    }
    let bad = format!("{}?history=maybe", dir.path().display());
    assert!(FsStorage::from_url(&bad, StoreOptions::new()).is_err());
}

/// A deleted folder's files each get a `deleted` version, their content kept.
#[tokio::test]
async fn a_folder_delete_keeps_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsStorage::new(dir.path()).unwrap();
    for name in ["a", "b", "c"] {
        store
            .write(
                &p(&format!("/memories/dir/{name}.md")),
                name.as_bytes().to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    store.delete(&MemoryPath::root()).await.unwrap();
    for name in ["a", "b", "c"] {
        let path = p(&format!("/memories/dir/{name}.md"));
        let revisions = store.history(&path).await.unwrap();
        assert_eq!(revisions.len(), 2, "{revisions:?}");
        assert_eq!(
            store.read_revision(&path, 1).await.unwrap(),
            name.as_bytes()
        );
    }
    assert_eq!(store.history(&MemoryPath::root()).await.unwrap().len(), 6);
}

/// The folder of `path`'s history below `base`.
fn history_folder(base: &Path, path: &str) -> std::path::PathBuf {
    let hash = memory_core::history::sha256_hex(path.as_bytes());
    base.join(".memory-history")
        .join(&hash[..2])
        .join(&hash[2..])
}

/// What a kill leaves, made by hand: the replaced file linked into history, then (or not) the
/// new file renamed over it, with no record. The next open tells which happened from the
/// content, even when size and modification time are the same as before.
#[tokio::test]
async fn a_change_cut_short_is_told_from_the_content() {
    for renamed in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let path = p("/memories/a.md");
        {
            let store = FsStorage::new(dir.path()).unwrap();
            store
                .write(&path, b"aaaa".to_vec(), WriteMode::Create)
                .await
                .unwrap();
        }
        let file = dir.path().join("memories/a.md");
        let folder = history_folder(dir.path(), "/memories/a.md");
        std::fs::hard_link(&file, folder.join("1")).unwrap();
        if renamed {
            let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
            let new = dir.path().join("new");
            std::fs::write(&new, b"bbbb").unwrap();
            std::fs::File::options()
                .write(true)
                .open(&new)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
            std::fs::rename(&new, &file).unwrap();
        }
        let store = FsStorage::new(dir.path()).unwrap();
        let revisions = store.history(&path).await.unwrap();
        if renamed {
            let numbers: Vec<u64> = revisions.iter().map(|r| r.number).collect();
            assert_eq!(numbers, [2, 1]);
            assert_eq!(store.read_revision(&path, 1).await.unwrap(), b"aaaa");
            assert_eq!(store.read_revision(&path, 2).await.unwrap(), b"bbbb");
        } else {
            assert_eq!(revisions.len(), 1, "{revisions:?}");
            edit(&store, &path, b"cccc").await;
            assert_eq!(store.read_revision(&path, 1).await.unwrap(), b"aaaa");
            assert_eq!(store.history(&path).await.unwrap().len(), 2);
        }
    }
}

/// A file's time set through the store keeps its history as it is.
#[tokio::test]
async fn setting_a_time_is_no_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsStorage::new(dir.path()).unwrap();
    let path = p("/memories/a.md");
    store
        .write(&path, b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let then = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    assert!(store.set_modified(&path, then).await.unwrap());
    edit(&store, &path, b"b").await;
    let revisions = store.history(&path).await.unwrap();
    assert_eq!(revisions.len(), 2, "{revisions:?}");
}
