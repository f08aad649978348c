//! Holds the request costs the README documents: a file view is one GET, `str_replace` and
//! `insert` one GET and one conditional PUT, a create one conditional PUT of the file and one
//! of the file counter beside the directory check (never a listing of the store).
//!
//! - `storage_method_calls` and `command_calls`: a recording `ObjectStore` wrapper over
//!   object_store's `InMemory` sees exactly the object-store calls the README lists for each
//!   `Storage` method and each memory-tool command (offline, always).
//! - `command_http_requests_on_s3`: against moto, an HTTP connector that counts what goes on
//!   the wire sees exactly the S3 requests the README lists (when `MEMORY_TEST_S3_ENDPOINT` is
//!   set).
//!
//! These count the store with history off (`history=off`); `history_calls` holds what
//! history adds to each change.

use memory_s3::testing as common;

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use memory_core::history::HistoryOptions;
use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode};
use memory_s3::ObjectStoreStorage;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    ClientOptions, CopyMode, CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use serde_json::json;

type Log = Arc<Mutex<Vec<String>>>;

fn take(log: &Log) -> Vec<String> {
    let mut calls = std::mem::take(&mut *log.lock().unwrap());
    // Calls sent at once (a HEAD per ancestor next to a LIST) finish in any order.
    calls.sort();
    calls
}

fn calls(list: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
    out.sort();
    out
}

/// Forwards to an inner store and logs every call: `GET`, `HEAD`, `PUT create`,
/// `PUT overwrite`, `PUT update`, `LIST` (one per listing), `COPY create`, and one `DELETE`
/// per key handed to `delete_stream`.
#[derive(Debug)]
struct Recorder {
    inner: InMemory,
    log: Log,
    /// GETs answered `304 Not Modified` (an `If-None-Match` that matched).
    not_modified: Arc<AtomicUsize>,
}

impl fmt::Display for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Recorder({})", self.inner)
    }
}

impl Recorder {
    fn record(&self, call: &str) {
        self.log.lock().unwrap().push(call.to_owned());
    }
}

#[async_trait]
impl ObjectStore for Recorder {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.record(match opts.mode {
            PutMode::Overwrite => "PUT overwrite",
            PutMode::Create => "PUT create",
            PutMode::Update(_) => "PUT update",
        });
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.record("MULTIPART");
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.record(if options.head { "HEAD" } else { "GET" });
        let result = self.inner.get_opts(location, options).await;
        if matches!(result, Err(object_store::Error::NotModified { .. })) {
            self.not_modified.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.record("GET ranges");
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let log = Arc::clone(&self.log);
        let counted = locations
            .inspect(move |_| log.lock().unwrap().push("DELETE".to_owned()))
            .boxed();
        self.inner.delete_stream(counted)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.record("LIST");
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.record("LIST offset");
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.record("LIST delimiter");
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.record(match options.mode {
            CopyMode::Create => "COPY create",
            CopyMode::Overwrite => "COPY overwrite",
        });
        self.inner.copy_opts(from, to, options).await
    }
}

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

fn recorded_store() -> (ObjectStoreStorage, Log) {
    let (storage, log, _) = recorded_store_and_304s();
    (storage, log)
}

fn recorded_store_and_304s() -> (ObjectStoreStorage, Log, Arc<AtomicUsize>) {
    let log: Log = Arc::default();
    let not_modified = Arc::new(AtomicUsize::new(0));
    let recorder = Recorder {
        inner: InMemory::new(),
        log: Arc::clone(&log),
        not_modified: Arc::clone(&not_modified),
    };
    (
        ObjectStoreStorage::new(Arc::new(recorder), "counted")
            .unwrap()
            .with_history(HistoryOptions::off()),
        log,
        not_modified,
    )
}

/// A repeated view of an unchanged file is still one GET, answered `304 Not Modified` from
/// the small cache of files lately read or written; a file changed by another store is read
/// again in full, never served stale.
#[tokio::test]
async fn repeated_views_revalidate() {
    let (s, log, not_modified) = recorded_store_and_304s();
    let tool = MemoryTool::new(s);
    seed(tool.storage(), &log).await;
    let view = json!({"command": "view", "path": "/memories/notes.md"});
    for round in 0..3 {
        let out = tool.execute(&view).await;
        assert!(!out.is_error, "{out:?}");
        assert!(out.text().unwrap_or_default().contains("two"), "{out:?}");
        assert_eq!(take(&log), calls(&["GET"]), "view {round}");
    }
    // The seed's write was remembered, so even the first view was a 304.
    assert_eq!(not_modified.load(Ordering::Relaxed), 3);
    // Another store (another host) changes the file: the next view reads the new bytes.
    let other = ObjectStoreStorage::new(Arc::clone(tool.storage().object_store()), "counted")
        .unwrap()
        .with_history(HistoryOptions::off());
    let v = other.read(&p("/memories/notes.md")).await.unwrap().version;
    other
        .write(
            &p("/memories/notes.md"),
            b"changed\n".to_vec(),
            WriteMode::Update(v),
        )
        .await
        .unwrap();
    take(&log);
    let out = tool.execute(&view).await;
    assert!(
        out.text().unwrap_or_default().contains("changed"),
        "{out:?}"
    );
    assert_eq!(take(&log), calls(&["GET"]));
    assert_eq!(
        not_modified.load(Ordering::Relaxed),
        3,
        "read in full, not a 304"
    );
    // A deleted file is not served from the cache either.
    other.delete(&p("/memories/notes.md")).await.unwrap();
    let out = tool.execute(&view).await;
    assert!(out.is_error, "{out:?}");
}

async fn seed(storage: &dyn Storage, log: &Log) {
    for path in [
        "/memories/notes.md",
        "/memories/dir/a.md",
        "/memories/dir/b.md",
        "/memories/dir/sub/c.md",
    ] {
        storage
            .write(&p(path), b"one\ntwo\n".to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
    }
    take(log);
}

/// Each `Storage` method's calls, as the README's first table lists them.
#[tokio::test]
async fn storage_method_calls() {
    let (s, log) = recorded_store();
    seed(&s, &log).await;

    s.read(&p("/memories/notes.md")).await.unwrap();
    assert_eq!(take(&log), calls(&["GET"]), "read");

    s.stat(&p("/memories/notes.md")).await.unwrap();
    assert_eq!(take(&log), calls(&["HEAD"]), "stat of a file");
    s.stat(&p("/memories/dir")).await.unwrap();
    assert_eq!(take(&log), calls(&["HEAD", "LIST"]), "stat of a directory");
    s.stat(&p("/memories/missing")).await.unwrap();
    assert_eq!(take(&log), calls(&["HEAD", "LIST"]), "stat of nothing");
    s.stat(&p("/memories")).await.unwrap();
    assert_eq!(take(&log), calls(&[]), "stat of /memories");

    let v = s.read(&p("/memories/notes.md")).await.unwrap().version;
    take(&log);
    s.write(
        &p("/memories/notes.md"),
        b"x".to_vec(),
        WriteMode::Update(v.clone()),
    )
    .await
    .unwrap();
    assert_eq!(take(&log), calls(&["PUT update"]), "write(Update)");
    let e = s
        .write(
            &p("/memories/notes.md"),
            b"y".to_vec(),
            WriteMode::Update(v),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, memory_core::Error::Conflict { .. }), "{e:?}");
    assert_eq!(
        take(&log),
        calls(&["PUT update", "HEAD"]),
        "a conflicted write(Update) looks once more, to tell Conflict from NotFound"
    );

    s.write(&p("/memories/new.md"), b"x".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        calls(&["LIST delimiter", "PUT update", "PUT create"]),
        "write(Create) at depth 0: the directory check (the subfolders of /memories), the \
         counter raised, the file"
    );
    s.write(
        &p("/memories/dir/sub/new.md"),
        b"x".to_vec(),
        WriteMode::Create,
    )
    .await
    .unwrap();
    assert_eq!(
        take(&log),
        calls(&["HEAD", "HEAD", "LIST delimiter", "PUT update", "PUT create"]),
        "write(Create) with two directories above: a HEAD each"
    );
    for path in ["/memories/dir/sub/new2.md", "/memories/new2.md"] {
        s.write(&p(path), b"x".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        assert_eq!(
            take(&log),
            calls(&["PUT update", "PUT create"]),
            "write(Create) of {path} into a folder just checked: the counter and the file"
        );
    }
    // Another process adds a file: the counter's conditional PUT finds its change, so the
    // checks are sent after all (and the folder learned again on the next create).
    let other = ObjectStoreStorage::new(Arc::clone(s.object_store()), "counted")
        .unwrap()
        .with_history(HistoryOptions::off());
    other
        .write(&p("/memories/dir/sub"), b"x".to_vec(), WriteMode::Create)
        .await
        .unwrap_err();
    other
        .write(
            &p("/memories/dir/other.md"),
            b"x".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    take(&log);
    s.write(
        &p("/memories/dir/sub/new3.md"),
        b"x".to_vec(),
        WriteMode::Create,
    )
    .await
    .unwrap();
    assert_eq!(
        take(&log),
        calls(&[
            "PUT update",
            "GET",
            "PUT update",
            "HEAD",
            "HEAD",
            "LIST",
            "PUT create"
        ]),
        "write(Create) after another process's: the counter refused, read, raised; the checks"
    );
    let e = s
        .write(&p("/memories/dir"), b"x".to_vec(), WriteMode::Create)
        .await
        .unwrap_err();
    assert!(
        matches!(e, memory_core::Error::AlreadyExists { .. }),
        "{e:?}"
    );
    let e = s
        .write(
            &p("/memories/new2.md/x.md"),
            b"x".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(e, memory_core::Error::ParentIsFile { .. }),
        "{e:?}"
    );
    for path in [
        "/memories/dir/sub/new3.md",
        "/memories/dir/sub/new2.md",
        "/memories/dir/sub/new.md",
        "/memories/dir/other.md",
        "/memories/new2.md",
    ] {
        s.delete(&p(path)).await.unwrap();
    }
    s.write(
        &p("/memories/dir/sub/new.md"),
        b"x".to_vec(),
        WriteMode::Create,
    )
    .await
    .unwrap();
    take(&log);
    s.write(
        &p("/memories/dir/a.md"),
        b"x".to_vec(),
        WriteMode::Overwrite,
    )
    .await
    .unwrap();
    assert_eq!(
        take(&log),
        calls(&["HEAD", "HEAD", "LIST", "PUT overwrite"]),
        "write(Overwrite) of a file that exists: its parent, itself, the directory check"
    );

    s.list(&p("/memories/dir")).await.unwrap();
    assert_eq!(take(&log), calls(&["LIST"]), "list");

    s.delete(&p("/memories/new.md")).await.unwrap();
    assert_eq!(
        take(&log),
        calls(&["HEAD", "DELETE", "PUT update"]),
        "delete of a file, then the counter lowered"
    );

    s.file_count().await.unwrap();
    assert_eq!(
        take(&log),
        calls(&["GET"]),
        "file_count: the counter object"
    );

    s.rename(&p("/memories/notes.md"), &p("/memories/dir/notes.md"))
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        calls(&[
            "HEAD",
            "HEAD",
            "LIST",
            "PUT update",
            "COPY create",
            "DELETE"
        ]),
        "rename of a file (source HEAD; destination's parent HEAD and LIST; the counter \
         touched; copy; delete)"
    );

    // /memories/dir now holds a.md, b.md, notes.md, sub/c.md, sub/new.md.
    s.rename(&p("/memories/dir"), &p("/memories/moved"))
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        calls(&[
            "HEAD",
            "LIST",
            "HEAD",
            "LIST",
            "PUT update",
            "COPY create",
            "COPY create",
            "COPY create",
            "COPY create",
            "COPY create",
            "DELETE",
            "DELETE",
            "DELETE",
            "DELETE",
            "DELETE",
        ]),
        "rename of a directory of 5 files"
    );

    s.delete(&p("/memories/moved")).await.unwrap();
    assert_eq!(
        take(&log),
        calls(&[
            "HEAD",
            "LIST",
            "DELETE",
            "DELETE",
            "DELETE",
            "DELETE",
            "DELETE",
            "PUT update"
        ]),
        "delete of a directory of 5 files, then the counter lowered once"
    );
}

/// What each command costs through `MemoryTool`, as the README's second table lists it.
#[tokio::test]
async fn command_calls() {
    let (s, log) = recorded_store();
    let tool = MemoryTool::new(s);
    seed(tool.storage(), &log).await;
    for (input, expected) in command_expectations(false) {
        let out = tool.execute(&input).await;
        assert!(!out.is_error, "{input}: {out:?}");
        assert_eq!(take(&log), calls(&expected), "{input}");
    }
}

/// The commands of the README's table and their object-store calls; with `http`, the S3
/// requests they become on the wire instead (a copy-if-absent is a three-request multipart
/// upload, a delete is one `POST ?delete` per 1,000 keys).
fn command_expectations(http: bool) -> Vec<(serde_json::Value, Vec<&'static str>)> {
    type Calls = &'static [&'static str];
    let (get, head, list, list_dirs, put_create, put_update, copy, delete, counter): (
        Calls,
        Calls,
        Calls,
        Calls,
        Calls,
        Calls,
        Calls,
        Calls,
        Calls,
    ) = if http {
        (
            &["GET"],
            &["HEAD"],
            &["LIST"],
            &["LIST"],
            &["PUT"],
            &["PUT"],
            &["POST uploads", "PUT part-copy", "POST complete"],
            &["POST delete"],
            &["PUT"],
        )
    } else {
        (
            &["GET"],
            &["HEAD"],
            &["LIST"],
            &["LIST delimiter"],
            &["PUT create"],
            &["PUT update"],
            &["COPY create"],
            &["DELETE"],
            &["PUT update"],
        )
    };
    let cat = |parts: &[&[&'static str]]| -> Vec<&'static str> {
        parts.iter().flat_map(|p| p.iter().copied()).collect()
    };
    // Directory deletes: one DELETE call per key offline, one POST per 1,000 keys on S3.
    let delete_n = |n: usize| -> Vec<&'static str> {
        if http {
            delete.to_vec()
        } else {
            vec!["DELETE"; n]
        }
    };
    vec![
        (
            json!({"command": "view", "path": "/memories"}),
            cat(&[list]),
        ),
        (
            json!({"command": "view", "path": "/memories/notes.md"}),
            cat(&[get]),
        ),
        (
            json!({"command": "view", "path": "/memories/dir"}),
            // tool: read (not a file), then the listing
            cat(&[get, list]),
        ),
        (
            json!({"command": "create", "path": "/memories/new.md", "file_text": "x\n"}),
            // create_within: a LIST of the subfolders of /memories (no directory at the path)
            // beside the counter's conditional PUT, then the file's create-if-absent PUT; no
            // listing of the store
            cat(&[list_dirs, counter, put_create]),
        ),
        (
            json!({"command": "create", "path": "/memories/dir/new.md", "file_text": "x\n"}),
            // as above (the subfolders of /memories/dir), plus a HEAD of /memories/dir (is it
            // a file?)
            cat(&[head, list_dirs, counter, put_create]),
        ),
        (
            json!({"command": "create", "path": "/memories/dir/new2.md", "file_text": "x\n"}),
            // the same folder again, with no other writer in between (the counter's
            // conditional PUT proves it): no check, only what the limit needs and the file
            cat(&[counter, put_create]),
        ),
        (
            json!({"command": "str_replace", "path": "/memories/notes.md", "old_str": "two", "new_str": "2"}),
            cat(&[get, put_update]),
        ),
        (
            json!({"command": "insert", "path": "/memories/notes.md", "insert_line": 0, "insert_text": "zero"}),
            cat(&[get, put_update]),
        ),
        (
            json!({"command": "rename", "old_path": "/memories/new.md", "new_path": "/memories/renamed.md"}),
            // tool: stat old (HEAD), stat new (HEAD, LIST); rename: HEAD, LIST, the counter
            // touched (for other processes' folder facts), copy, delete
            cat(&[head, head, list, head, list, counter, copy, delete]),
        ),
        (
            json!({"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/dir2"}),
            // tool: stat old (HEAD, LIST), stat new (HEAD, LIST), list old (LIST);
            // rename: HEAD, LIST (sources), LIST + HEAD (destination), the counter touched,
            // 5 copies (a.md, b.md, new.md, new2.md, sub/c.md), delete
            {
                let mut v = cat(&[
                    head, list, head, list, list, head, list, list, head, counter,
                ]);
                for _ in 0..5 {
                    v.extend_from_slice(copy);
                }
                v.extend(delete_n(5));
                v
            },
        ),
        (
            json!({"command": "delete", "path": "/memories/renamed.md"}),
            cat(&[head, delete, counter]),
        ),
        (json!({"command": "delete", "path": "/memories/dir2"}), {
            let mut v = cat(&[head, list]);
            v.extend(delete_n(5));
            v.extend_from_slice(counter);
            v
        }),
    ]
}

/// Counts the HTTP requests object_store sends, by method and S3 operation.
#[derive(Debug)]
struct CountingConnector {
    log: Log,
}

#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
    log: Log,
}

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        Ok(HttpClient::new(CountingService {
            inner: ReqwestConnector::default().connect(options)?,
            log: Arc::clone(&self.log),
        }))
    }
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let method = req.method().as_str().to_owned();
        let query = req.uri().query().unwrap_or("").to_owned();
        let name = match (method.as_str(), query.as_str()) {
            ("GET", q) if q.contains("list-type") => "LIST".to_owned(),
            ("POST", q) if q.contains("uploads") => "POST uploads".to_owned(),
            ("POST", q) if q.contains("uploadId") => "POST complete".to_owned(),
            ("POST", q) if q.contains("delete") => "POST delete".to_owned(),
            ("PUT", q) if q.contains("partNumber") => "PUT part-copy".to_owned(),
            ("DELETE", q) if q.contains("uploadId") => "DELETE upload".to_owned(),
            (m, _) => m.to_owned(),
        };
        self.log.lock().unwrap().push(name);
        self.inner.execute(req).await
    }
}

#[tokio::test]
async fn command_http_requests_on_s3() {
    let server = common::S3Server::from_env("command_http_requests_on_s3").await;
    let log: Log = Arc::default();
    let mut options = server.options("counted");
    options.history = HistoryOptions::off();
    let storage = options
        .build_with_connector(CountingConnector {
            log: Arc::clone(&log),
        })
        .unwrap();
    let tool = MemoryTool::new(storage);
    seed(tool.storage(), &log).await;
    for (input, expected) in command_expectations(true) {
        let out = tool.execute(&input).await;
        assert!(!out.is_error, "{input}: {out:?}");
        assert_eq!(take(&log), calls(&expected), "S3 requests of {input}");
    }
}

/// What history (on, the default) adds to each change, as the README's "History" section
/// lists it: the replaced content kept (a `PUT create` of a history object) and the file's
/// history folder listed (for the number and pruning), beside the change's own requests.
#[tokio::test]
async fn history_calls() {
    let log: Log = Arc::default();
    let recorder = Recorder {
        inner: InMemory::new(),
        log: Arc::clone(&log),
        not_modified: Arc::default(),
    };
    let s = ObjectStoreStorage::new(Arc::new(recorder), "h").unwrap();
    s.write(&p("/memories/seed.md"), b"s".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    take(&log);
    let path = p("/memories/a.md");
    s.write(&path, b"one".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        calls(&["LIST", "LIST delimiter", "PUT create", "PUT update"]),
        "create: the checks and the counter as without history, and the history folder listed"
    );
    let version = s.read(&path).await.unwrap().version;
    take(&log);
    s.write(&path, b"two".to_vec(), WriteMode::Update(version))
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        calls(&["LIST", "PUT create", "PUT update"]),
        "an edit after a read: the replaced bytes come from the view cache"
    );
    s.write(&path, b"three".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        calls(&["LIST", "GET", "LIST", "PUT create", "PUT update"]),
        "an overwrite: the checks (no ancestors here), a GET of the file, the history folder"
    );
    assert_eq!(s.history(&path).await.unwrap().len(), 3);
    assert_eq!(
        take(&log),
        calls(&["LIST", "HEAD", "HEAD", "HEAD"]),
        "a file's log: one LIST of its history folder, a HEAD per version"
    );
    s.delete(&path).await.unwrap();
    assert_eq!(
        take(&log),
        calls(&[
            "GET",
            "LIST",
            "PUT create",
            "DELETE",
            "PUT update",
            "PUT create"
        ]),
        "delete: the file read and kept, the DELETE, the counter, the deletion's marker"
    );
}
