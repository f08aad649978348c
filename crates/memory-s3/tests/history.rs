//! Each file's earlier versions on S3 (moto's server, `MEMORY_TEST_S3_ENDPOINT`) and on
//! object_store's `InMemory`: memory-core's history suite, and what is particular to this
//! store: history objects are never listed or counted, redaction leaves no object holding
//! the secret, `history=off` writes none, and a change whose PUT fails after the replaced
//! content was kept records nothing.

use memory_s3::testing as common;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use futures_util::TryStreamExt;
use futures_util::stream::BoxStream;
use memory_core::conformance::history::{self, OpenHistory};
use memory_core::history::{Change, HistoryOptions, Redaction};
use memory_core::search::SearchQuery;
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_s3::ObjectStoreStorage;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

/// A fresh prefix of one bucket per `open`.
struct OnS3 {
    server: common::S3Server,
    opened: AtomicUsize,
}

#[async_trait]
impl OpenHistory for OnS3 {
    async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
        let n = self.opened.fetch_add(1, Ordering::SeqCst);
        let mut s3 = self.server.options(&format!("history-{n}"));
        s3.history = options;
        Arc::new(s3.build().unwrap())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conforms_on_s3() {
    let server = common::S3Server::from_env("history_conforms_on_s3").await;
    history::run_all(&OnS3 {
        server,
        opened: AtomicUsize::new(0),
    })
    .await;
}

/// A fresh `InMemory` object store per `open`.
struct OnInMemory;

#[async_trait]
impl OpenHistory for OnInMemory {
    async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
        let store = ObjectStoreStorage::new(Arc::new(InMemory::new()), "t").unwrap();
        Arc::new(store.with_history(options))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conforms_on_in_memory() {
    history::run_all(&OnInMemory).await;
}

/// Every object of the bucket, with its bytes.
async fn every_object(store: &dyn ObjectStore) -> Vec<(String, Vec<u8>)> {
    let mut metas: Vec<ObjectMeta> = store.list(None).try_collect().await.unwrap();
    metas.sort_by(|a, b| a.location.cmp(&b.location));
    let mut out = Vec::new();
    for meta in metas {
        let bytes = store
            .get(&meta.location)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        out.push((meta.location.to_string(), bytes.to_vec()));
    }
    out
}

async fn edit(store: &dyn Storage, path: &MemoryPath, contents: &[u8]) {
    let version = store.read(path).await.unwrap().version;
    store
        .write(path, contents.to_vec(), WriteMode::Update(version))
        .await
        .unwrap();
}

/// History objects lie outside `PREFIX/memories/`: listings, the count and search see only
/// the current files, though the bucket holds every version.
#[tokio::test]
async fn history_objects_are_never_listed_or_counted() {
    let server = common::S3Server::from_env("history_objects_are_never_listed_or_counted").await;
    let store = server.storage("kept");
    let (a, b) = (p("/memories/dir/a.md"), p("/memories/b.md"));
    store
        .write(&a, b"quetzal one".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    edit(&store, &a, b"plain two").await;
    edit(&store, &a, b"plain three").await;
    store
        .write(&b, b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store.delete(&b).await.unwrap();
    let listed: Vec<String> = store
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect();
    assert_eq!(listed, ["/memories/dir/a.md"]);
    let listing = store.listing(&MemoryPath::root()).await.unwrap();
    assert_eq!(
        listing.skipped, 0,
        "history objects are not foreign entries"
    );
    assert_eq!(store.file_count().await.unwrap(), 1);
    assert_eq!(store.reconcile_file_count().await.unwrap(), 1);
    let hits = store
        .search(&SearchQuery::new("quetzal").unwrap())
        .await
        .unwrap();
    assert!(hits.is_empty(), "{hits:?}");
    assert_eq!(store.history(&a).await.unwrap().len(), 3);

    let keys: Vec<String> = every_object(&*server.options("").object_store().unwrap())
        .await
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    assert_eq!(
        keys,
        [
            "kept/.memory-count",
            "kept/.memory-history/b.md/1",
            "kept/.memory-history/b.md/2",
            "kept/.memory-history/dir/a.md/1",
            "kept/.memory-history/dir/a.md/2",
            "kept/memories/dir/a.md",
        ],
        "the layout the README describes"
    );
}

/// After redaction, no object of the bucket holds the secret's bytes; the record stays.
#[tokio::test]
async fn redaction_leaves_no_object_holding_the_secret() {
    let server = common::S3Server::from_env("redaction_leaves_no_object_holding_the_secret").await;
    let store = server.storage("redact");
    let path = p("/memories/keys.md");
    let secret = b"sk-live-SECRET-0123456789";
    store
        .write(&path, secret.to_vec(), WriteMode::Create)
        .await
        .unwrap();
    edit(&store, &path, b"see the vault").await;
    store.rename(&path, &p("/memories/moved.md")).await.unwrap();
    let path = p("/memories/moved.md");
    edit(&store, &path, b"in the vault").await;
    let bucket = server.options("").object_store().unwrap();
    let holding = |objects: &[(String, Vec<u8>)]| {
        objects
            .iter()
            .filter(|(_, bytes)| bytes.windows(secret.len()).any(|w| w == secret))
            .map(|(key, _)| key.clone())
            .collect::<Vec<_>>()
    };
    assert!(
        !holding(&every_object(&*bucket).await).is_empty(),
        "the secret is in history"
    );
    assert_eq!(
        store
            .redact_revisions(&path, Redaction::AllPast)
            .await
            .unwrap(),
        3
    );
    assert_eq!(holding(&every_object(&*bucket).await), Vec::<String>::new());
    let revisions = store.history(&path).await.unwrap();
    assert_eq!(revisions.len(), 4, "{revisions:?}");
    assert_eq!(revisions[3].change, Change::Created);
    assert!(revisions[3].redacted && revisions[3].sha256.is_none());
    assert_eq!(
        revisions[3].size,
        secret.len() as u64,
        "the record keeps the size"
    );
    assert!(matches!(
        store.read_revision(&path, 1).await,
        Err(Error::RevisionWithoutContent { redacted: true, .. })
    ));
}

/// `history=off` writes no history object (and no record on the files).
#[tokio::test]
async fn history_off_writes_no_history_objects() {
    let server = common::S3Server::from_env("history_off_writes_no_history_objects").await;
    let mut options = server.options("off");
    options.history = HistoryOptions::off();
    let store = options.build().unwrap();
    let path = p("/memories/a.md");
    store
        .write(&path, b"1".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    edit(&store, &path, b"2").await;
    store
        .write(&path, b"3".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    store.rename(&path, &p("/memories/b.md")).await.unwrap();
    store.delete(&p("/memories/b.md")).await.unwrap();
    let keys: Vec<String> = every_object(&*server.options("").object_store().unwrap())
        .await
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    assert_eq!(keys, ["off/.memory-count"]);
    assert!(matches!(store.history(&path).await, Err(Error::HistoryOff)));
}

/// An `InMemory` store whose PUTs of current files (keys under `memories/`) fail while
/// `failing` is set: as if the process died after keeping the replaced content, before the
/// PUT that replaces it.
#[derive(Debug, Default)]
struct FailingPuts {
    inner: InMemory,
    failing: AtomicBool,
}

impl fmt::Display for FailingPuts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FailingPuts")
    }
}

#[async_trait]
impl ObjectStore for FailingPuts {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        if self.failing.load(Ordering::SeqCst) && location.as_ref().contains("/memories/") {
            return Err(object_store::Error::Generic {
                store: "FailingPuts",
                source: "injected PUT failure".into(),
            });
        }
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// The PUT fails after the replaced content was kept (an edit, an overwrite, a restore):
/// no version is recorded for the change that did not happen, the current file is
/// unchanged, its content is in history (shown once, as the current version), and the next
/// change goes on from there.
#[tokio::test]
async fn a_put_failing_after_the_copy_records_nothing() {
    let objects = Arc::new(FailingPuts::default());
    let store = ObjectStoreStorage::new(objects.clone(), "t").unwrap();
    let path = p("/memories/a.md");
    store
        .write(&path, b"one".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    edit(&store, &path, b"two").await;
    let before = store.history(&path).await.unwrap();
    assert_eq!(before.len(), 2);

    objects.failing.store(true, Ordering::SeqCst);
    let version = store.read(&path).await.unwrap().version;
    let e = store
        .write(&path, b"lost".to_vec(), WriteMode::Update(version))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Backend { .. }), "{e:?}");
    assert!(
        store
            .write(&path, b"lost".to_vec(), WriteMode::Overwrite)
            .await
            .is_err()
    );
    assert!(
        memory_core::history::restore(&store, &path, 1)
            .await
            .is_err()
    );
    objects.failing.store(false, Ordering::SeqCst);

    // The copy kept before the failed PUTs is there, numbered as the current file.
    let kept = objects
        .inner
        .get(&Path::from("t/.memory-history/a.md/2"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&kept[..], b"two");
    assert_eq!(
        store.history(&path).await.unwrap(),
        before,
        "nothing recorded"
    );
    assert_eq!(store.read(&path).await.unwrap().contents, b"two");
    assert_eq!(store.read_revision(&path, 2).await.unwrap(), b"two");

    edit(&store, &path, b"three").await;
    let after = store.history(&path).await.unwrap();
    let numbers: Vec<(u64, Change)> = after.iter().map(|r| (r.number, r.change)).collect();
    assert_eq!(
        numbers,
        [
            (3, Change::Modified),
            (2, Change::Modified),
            (1, Change::Created)
        ]
    );
    assert_eq!(store.read_revision(&path, 2).await.unwrap(), b"two");
    assert_eq!(store.read_revision(&path, 3).await.unwrap(), b"three");
}

/// A rename whose PUT at the new path fails changes nothing: the file and its history stay
/// at the old path, nothing is left at the new one.
#[tokio::test]
async fn a_rename_failing_at_the_new_path_changes_nothing() {
    let objects = Arc::new(FailingPuts::default());
    let store = ObjectStoreStorage::new(objects.clone(), "t").unwrap();
    let (a, b) = (p("/memories/a.md"), p("/memories/b.md"));
    store
        .write(&a, b"one".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    edit(&store, &a, b"two").await;
    let before = store.history(&a).await.unwrap();
    objects.failing.store(true, Ordering::SeqCst);
    assert!(store.rename(&a, &b).await.is_err());
    objects.failing.store(false, Ordering::SeqCst);
    assert_eq!(store.history(&a).await.unwrap(), before);
    assert!(store.history(&b).await.unwrap().is_empty());
    assert_eq!(store.read(&a).await.unwrap().contents, b"two");
    assert!(store.stat(&b).await.unwrap().is_none());
}

/// A delete that stopped after its DELETE, before the deletion's marker (the state a crash
/// there leaves, made by removing the marker): the log still ends with the deletion, the
/// content before it is kept, and a new create goes on from there.
#[tokio::test]
async fn a_delete_stopped_before_its_marker_still_shows_the_deletion() {
    let objects = Arc::new(InMemory::new());
    let store = ObjectStoreStorage::new(objects.clone(), "t").unwrap();
    let path = p("/memories/a.md");
    store
        .write(&path, b"one".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    edit(&store, &path, b"two").await;
    store.delete(&path).await.unwrap();
    objects
        .delete(&Path::from("t/.memory-history/a.md/3"))
        .await
        .unwrap();
    let revisions = store.history(&path).await.unwrap();
    let changes: Vec<(u64, Change)> = revisions.iter().map(|r| (r.number, r.change)).collect();
    assert_eq!(
        changes,
        [
            (3, Change::Deleted),
            (2, Change::Modified),
            (1, Change::Created)
        ]
    );
    assert!(matches!(
        store.read_revision(&path, 3).await,
        Err(Error::RevisionWithoutContent {
            redacted: false,
            ..
        })
    ));
    assert_eq!(store.read_revision(&path, 2).await.unwrap(), b"two");
    assert_eq!(
        store
            .redact_revisions(&path, Redaction::AllPast)
            .await
            .unwrap(),
        2
    );
    store
        .write(&path, b"again".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let revisions = store.history(&path).await.unwrap();
    assert_eq!(
        (revisions[0].number, revisions[0].change),
        (3, Change::Created)
    );
}
