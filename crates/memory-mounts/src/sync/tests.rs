//! The sync rules on a real SQLite engine, with two folders standing for two machines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use memory_store::{
    Actor, CreateStore, DeletedMemory, ListMemories, Memory, MemoryListItem, MemoryStores, Page,
    Result as StoreResult, Store, StoreError, StoresApi, UpdateMemory, View,
};

use super::*;

struct World {
    dir: tempfile::TempDir,
    api: Arc<dyn StoresApi>,
    store_id: String,
}

impl World {
    async fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let engine = MemoryStores::open(dir.path().join("stores.db"))
            .await
            .unwrap();
        let store = engine
            .create_store(CreateStore {
                name: "Notes".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        World {
            api: Arc::new(engine.acting_as(Some(Actor::session("sesn_test".to_owned())))),
            store_id: store.id,
            dir,
        }
    }

    fn folder(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn sync(&self, name: &str, options: SyncOptions) -> FolderSync {
        self.sync_with(self.api.clone(), name, options)
    }

    fn sync_with(&self, api: Arc<dyn StoresApi>, name: &str, options: SyncOptions) -> FolderSync {
        FolderSync::open(
            api,
            &self.store_id,
            &self.folder(name),
            &self.dir.path().join(format!("state/{name}.json")),
            options,
        )
        .unwrap()
    }

    /// The store's memories: path → content.
    async fn remote(&self) -> BTreeMap<String, String> {
        let page = self
            .api
            .list_memories(
                &self.store_id,
                ListMemories {
                    limit: Some(20),
                    view: View::Full,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        page.data
            .into_iter()
            .filter_map(|item| match item {
                MemoryListItem::Memory(m) => Some((m.path, m.content.unwrap_or_default())),
                MemoryListItem::Prefix(_) => None,
            })
            .collect()
    }

    async fn remote_memory(&self, path: &str) -> Option<Memory> {
        self.api
            .memory_at_path(&self.store_id, path, true)
            .await
            .unwrap()
    }

    async fn create_remote(&self, path: &str, content: &str) {
        self.api
            .create_memory(&self.store_id, path, content, None)
            .await
            .unwrap();
    }

    async fn edit_remote(&self, path: &str, content: &str) {
        let memory = self.remote_memory(path).await.unwrap();
        let update = UpdateMemory {
            content: Some(content.into()),
            ..Default::default()
        };
        self.api
            .update_memory(&self.store_id, &memory.id, update)
            .await
            .unwrap();
    }

    async fn delete_remote(&self, path: &str) {
        let memory = self.remote_memory(path).await.unwrap();
        self.api
            .delete_memory(&self.store_id, &memory.id, None)
            .await
            .unwrap();
    }
}

/// The folder's files (not the marker): relative path → content.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                if rel != MARKER_FILE {
                    out.insert(rel, std::fs::read_to_string(&path).unwrap());
                }
            }
        }
    }
    out
}

fn write(dir: &Path, rel: &str, content: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn no_delay() -> SyncOptions {
    SyncOptions {
        delete_after: Duration::ZERO,
        ..SyncOptions::default()
    }
}

#[tokio::test]
async fn the_first_pass_downloads_and_stamps_the_sdks_marker() {
    let world = World::new().await;
    world.create_remote("/a/b.md", "hello").await;
    let mut a = world.sync("a", SyncOptions::default());
    let report = a.pass().await.unwrap();
    assert_eq!(
        report.recovered.as_deref(),
        Some("the first sync of this folder")
    );
    assert_eq!(report.pulled, ["/a/b.md"]);
    let marker = std::fs::read(world.folder("a").join(MARKER_FILE)).unwrap();
    assert_eq!(
        marker,
        format!("version 1\n{}", world.store_id).into_bytes()
    );
    assert_eq!(files(&world.folder("a"))["a/b.md"], "hello");
    // Nothing changed: nothing moves.
    let quiet = a.pass().await.unwrap();
    assert!(quiet.is_quiet() && quiet.is_success(), "{quiet:?}");
}

#[tokio::test]
async fn changes_travel_between_two_folders() {
    let world = World::new().await;
    let mut a = world.sync("a", SyncOptions::default());
    let mut b = world.sync("b", SyncOptions::default());
    a.pass().await.unwrap();
    b.pass().await.unwrap();

    write(&world.folder("a"), "notes/todo.md", "- milk\n");
    assert_eq!(a.pass().await.unwrap().pushed, ["/notes/todo.md"]);
    assert_eq!(b.pass().await.unwrap().pulled, ["/notes/todo.md"]);
    assert_eq!(files(&world.folder("b"))["notes/todo.md"], "- milk\n");

    write(&world.folder("b"), "notes/todo.md", "- milk\n- eggs\n");
    assert_eq!(b.pass().await.unwrap().pushed, ["/notes/todo.md"]);
    assert_eq!(a.pass().await.unwrap().pulled, ["/notes/todo.md"]);
    assert_eq!(files(&world.folder("a")), files(&world.folder("b")));
    assert_eq!(world.remote().await["/notes/todo.md"], "- milk\n- eggs\n");
}

#[tokio::test]
async fn both_sides_edited_the_store_wins_and_the_edit_is_kept_beside_it() {
    let world = World::new().await;
    world.create_remote("/plan.md", "v1").await;
    let mut a = world.sync("a", SyncOptions::default());
    let mut b = world.sync("b", SyncOptions::default());
    a.pass().await.unwrap();
    b.pass().await.unwrap();
    write(&world.folder("a"), "plan.md", "from a");
    write(&world.folder("b"), "plan.md", "from b");
    a.pass().await.unwrap();
    let report = b.pass().await.unwrap();
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    let kept = report.conflicts[0]
        .kept_as
        .trim_start_matches('/')
        .to_owned();
    assert!(kept.starts_with("plan.md.conflict-2"), "{kept}");
    let in_b = files(&world.folder("b"));
    assert_eq!(in_b["plan.md"], "from a");
    assert_eq!(in_b[&kept], "from b");
    // The conflict copy syncs as a new memory, then reaches the other folder.
    assert_eq!(b.pass().await.unwrap().pushed, [format!("/{kept}")]);
    a.pass().await.unwrap();
    assert_eq!(files(&world.folder("a")), in_b);
}

#[tokio::test]
async fn a_local_delete_reaches_the_store_only_after_the_delay() {
    let world = World::new().await;
    world.create_remote("/old.md", "old").await;
    world.create_remote("/keep.md", "keep").await;
    let options = SyncOptions {
        delete_after: Duration::from_millis(300),
        ..SyncOptions::default()
    };
    let mut a = world.sync("a", options);
    a.pass().await.unwrap();
    std::fs::remove_file(world.folder("a").join("old.md")).unwrap();
    let first = a.pass().await.unwrap();
    assert_eq!(first.pending_deletes, ["/old.md"]);
    assert!(world.remote().await.contains_key("/old.md"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(a.pass().await.unwrap().deleted_remote, ["/old.md"]);
    assert!(!world.remote().await.contains_key("/old.md"));
}

#[tokio::test]
async fn the_pending_delete_survives_a_new_run_and_a_returning_file_cancels_it() {
    let world = World::new().await;
    world.create_remote("/x.md", "x").await;
    world.create_remote("/y.md", "y").await;
    let options = SyncOptions {
        delete_after: Duration::from_millis(300),
        ..SyncOptions::default()
    };
    {
        let mut a = world.sync("a", options.clone());
        a.pass().await.unwrap();
        std::fs::remove_file(world.folder("a").join("x.md")).unwrap();
        std::fs::remove_file(world.folder("a").join("y.md")).unwrap();
        write(&world.folder("a"), "z.md", "z");
        a.pass().await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    write(&world.folder("a"), "y.md", "y");
    // A new run (as from cron) remembers when x.md went missing.
    let mut a = world.sync("a", options);
    let report = a.pass().await.unwrap();
    assert_eq!(report.deleted_remote, ["/x.md"], "{report:?}");
    assert!(world.remote().await.contains_key("/y.md"));
}

#[tokio::test]
async fn a_store_delete_removes_the_file_unless_it_was_edited() {
    let world = World::new().await;
    world.create_remote("/gone.md", "gone").await;
    world.create_remote("/edited.md", "edited").await;
    let mut a = world.sync("a", SyncOptions::default());
    a.pass().await.unwrap();
    world.delete_remote("/gone.md").await;
    world.delete_remote("/edited.md").await;
    write(&world.folder("a"), "edited.md", "edited here");
    let report = a.pass().await.unwrap();
    assert_eq!(report.deleted_local, ["/gone.md"]);
    assert_eq!(report.pushed, ["/edited.md"]);
    assert!(!world.folder("a").join("gone.md").exists());
    assert_eq!(world.remote().await["/edited.md"], "edited here");
}

#[tokio::test]
async fn a_wiped_folder_is_downloaded_again_and_deletes_nothing() {
    let world = World::new().await;
    world.create_remote("/one.md", "1").await;
    world.create_remote("/two.md", "2").await;
    let mut a = world.sync("a", no_delay());
    a.pass().await.unwrap();
    // Every file gone, marker kept.
    std::fs::remove_file(world.folder("a").join("one.md")).unwrap();
    std::fs::remove_file(world.folder("a").join("two.md")).unwrap();
    let report = a.pass().await.unwrap();
    assert_eq!(
        report.recovered.as_deref(),
        Some("every file of the folder is gone at once")
    );
    assert_eq!(world.remote().await.len(), 2);
    // The whole folder gone.
    std::fs::remove_dir_all(world.folder("a")).unwrap();
    std::fs::create_dir(world.folder("a")).unwrap();
    let report = a.pass().await.unwrap();
    assert_eq!(
        report.recovered.as_deref(),
        Some("the folder or its marker is gone")
    );
    assert!(report.deleted_remote.is_empty());
    assert_eq!(files(&world.folder("a")).len(), 2);
}

#[tokio::test]
async fn a_missing_or_foreign_marker_blocks_every_push() {
    let world = World::new().await;
    let dir = world.folder("a");
    write(&dir, "notes.md", "mine");
    let mut a = world.sync("a", SyncOptions::default());
    let report = a.pass().await.unwrap();
    assert!(
        report.blocked.as_deref().unwrap().contains("--adopt"),
        "{report:?}"
    );
    assert!(!report.is_success());
    write(&dir, MARKER_FILE, "version 1\nmemstore_other");
    let report = a.pass().await.unwrap();
    assert!(
        report
            .blocked
            .as_deref()
            .unwrap()
            .contains("names another store")
    );
    assert!(world.remote().await.is_empty());
    assert_eq!(files(&dir)["notes.md"], "mine");
    // Adopting works for a missing marker only.
    drop(a);
    let mut adopt = world.sync(
        "a",
        SyncOptions {
            adopt: true,
            ..SyncOptions::default()
        },
    );
    assert!(adopt.pass().await.unwrap().blocked.is_some());
    std::fs::remove_file(dir.join(MARKER_FILE)).unwrap();
    assert_eq!(adopt.pass().await.unwrap().pushed, ["/notes.md"]);
}

#[tokio::test]
async fn read_only_pulls_and_never_writes_to_the_store() {
    let world = World::new().await;
    world.create_remote("/shared.md", "v1").await;
    let mut a = world.sync(
        "a",
        SyncOptions {
            read_only: true,
            delete_after: Duration::ZERO,
            ..SyncOptions::default()
        },
    );
    a.pass().await.unwrap();
    let before = world.remote_memory("/shared.md").await.unwrap();
    write(&world.folder("a"), "new.md", "new");
    write(&world.folder("a"), "shared.md", "edited");
    a.pass().await.unwrap();
    std::fs::remove_file(world.folder("a").join("shared.md")).unwrap();
    a.pass().await.unwrap();
    let after = world.remote_memory("/shared.md").await.unwrap();
    assert_eq!(before.memory_version_id, after.memory_version_id);
    assert_eq!(world.remote().await.len(), 1);
    world.edit_remote("/shared.md", "v2").await;
    assert_eq!(a.pass().await.unwrap().pulled, ["/shared.md"]);
}

#[tokio::test]
async fn refused_files_are_skipped_until_they_change() {
    let world = World::new().await;
    let mut a = world.sync("a", SyncOptions::default());
    a.pass().await.unwrap();
    let dir = world.folder("a");
    std::fs::write(dir.join("big.md"), "x".repeat(MAX_CONTENT_BYTES + 1)).unwrap();
    std::fs::write(dir.join("binary.md"), [0xff, 0xfe, 0x00]).unwrap();
    write(&dir, "fine.md", "fine");
    let report = a.pass().await.unwrap();
    assert_eq!(report.pushed, ["/fine.md"]);
    assert_eq!(report.refused.len(), 2, "{report:?}");
    assert!(report.is_success());
    // Not retried while unchanged.
    assert!(a.pass().await.unwrap().refused.is_empty());
    std::fs::write(dir.join("big.md"), "small now").unwrap();
    assert_eq!(a.pass().await.unwrap().pushed, ["/big.md"]);
}

/// A store whose create answers are lost (the memory is saved, the client hears an error),
/// and which counts the content it hands out.
#[derive(Debug)]
struct LostAnswers {
    inner: Arc<dyn StoresApi>,
    lose: AtomicBool,
    contents_sent: AtomicUsize,
}

impl std::fmt::Display for LostAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "lost answers over {}", self.inner)
    }
}

#[async_trait]
impl StoresApi for LostAnswers {
    async fn retrieve_store(&self, store_id: &str) -> StoreResult<Store> {
        self.inner.retrieve_store(store_id).await
    }
    async fn list_memories(
        &self,
        store_id: &str,
        params: ListMemories,
    ) -> StoreResult<Page<MemoryListItem>> {
        if params.view == View::Full {
            self.contents_sent.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.list_memories(store_id, params).await
    }
    async fn retrieve_memory(&self, store_id: &str, memory_id: &str) -> StoreResult<Memory> {
        self.contents_sent.fetch_add(1, Ordering::SeqCst);
        self.inner.retrieve_memory(store_id, memory_id).await
    }
    async fn create_memory(
        &self,
        store_id: &str,
        path: &str,
        content: &str,
        max_memories: Option<u64>,
    ) -> StoreResult<Memory> {
        let saved = self
            .inner
            .create_memory(store_id, path, content, max_memories)
            .await?;
        if self.lose.load(Ordering::SeqCst) {
            return Err(StoreError::Backend {
                retryable: true,
                source: "the connection dropped before the answer".into(),
            });
        }
        Ok(saved)
    }
    async fn update_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        params: UpdateMemory,
    ) -> StoreResult<Memory> {
        self.inner.update_memory(store_id, memory_id, params).await
    }
    async fn delete_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        expected_content_sha256: Option<&str>,
    ) -> StoreResult<DeletedMemory> {
        self.inner
            .delete_memory(store_id, memory_id, expected_content_sha256)
            .await
    }
}

#[tokio::test]
async fn an_upload_whose_answer_was_lost_is_recognised_by_the_next_listing() {
    let world = World::new().await;
    let lossy = Arc::new(LostAnswers {
        inner: world.api.clone(),
        lose: AtomicBool::new(true),
        contents_sent: AtomicUsize::new(0),
    });
    let mut a = world.sync_with(lossy.clone(), "a", SyncOptions::default());
    a.pass().await.unwrap();
    write(&world.folder("a"), "note.md", "saved");
    let report = a.pass().await.unwrap();
    assert_eq!(report.failed.len(), 1, "{report:?}");
    lossy.lose.store(false, Ordering::SeqCst);
    // Recognised as this sync's own upload: neither a conflict nor a second create.
    let report = a.pass().await.unwrap();
    assert!(report.is_quiet() && report.is_success(), "{report:?}");
    assert_eq!(world.remote().await["/note.md"], "saved");
}

#[tokio::test]
async fn a_pass_that_finds_nothing_changed_moves_no_content() {
    let world = World::new().await;
    for i in 0..30 {
        world.create_remote(&format!("/n/{i}.md"), "note").await;
    }
    let counting = Arc::new(LostAnswers {
        inner: world.api.clone(),
        lose: AtomicBool::new(false),
        contents_sent: AtomicUsize::new(0),
    });
    let mut a = world.sync_with(counting.clone(), "a", SyncOptions::default());
    a.pass().await.unwrap();
    // The download: two pages with content, no fetch per memory.
    assert_eq!(counting.contents_sent.swap(0, Ordering::SeqCst), 2);
    assert!(a.pass().await.unwrap().is_quiet());
    assert_eq!(counting.contents_sent.load(Ordering::SeqCst), 0);
    // One change on the store: one fetch.
    world.edit_remote("/n/7.md", "changed").await;
    assert_eq!(a.pass().await.unwrap().pulled, ["/n/7.md"]);
    assert_eq!(counting.contents_sent.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_second_sync_of_the_same_pair_is_refused_while_one_runs() {
    let world = World::new().await;
    let _a = world.sync("a", SyncOptions::default());
    let err = FolderSync::open(
        world.api.clone(),
        &world.store_id,
        &world.folder("a"),
        &world.dir.path().join("state/a.json"),
        SyncOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, SyncError::Busy { .. }), "{err}");
}

#[test]
fn conflict_stamps_hold_no_separator_a_file_name_refuses() {
    let stamp = compact_utc("2026-12-03T17:05:09.123456Z".parse().unwrap());
    assert_eq!(stamp, "20261203T170509Z");
}
