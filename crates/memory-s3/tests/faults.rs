//! Failures, offline: a server that cannot be reached, one that never answers, one that
//! throttles, and a directory rename that fails part-way.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::stream::BoxStream;
use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode};
use memory_s3::{ObjectStoreStorage, S3Options};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

fn options(endpoint: &str) -> S3Options {
    let mut o = S3Options::new("bucket", "prefix");
    o.endpoint = Some(endpoint.to_owned());
    o.allow_http = true;
    o.access_key_id = Some("testing".into());
    o.secret_access_key = Some("testing".into());
    o.connect_timeout = Duration::from_millis(500);
    o.request_timeout = Duration::from_secs(1);
    o.max_retries = 2;
    o.retry_timeout = Duration::from_secs(3);
    o.initial_backoff = Duration::from_millis(20);
    o.max_backoff = Duration::from_millis(100);
    o
}

/// Nothing listens on the port: a clear error naming the endpoint, after the retries, in
/// bounded time; the model sees only the generic text.
#[tokio::test]
async fn unreachable_server_is_a_clear_error_naming_the_endpoint() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let endpoint = format!("http://127.0.0.1:{port}");
    let storage = options(&endpoint).build().unwrap();
    let started = Instant::now();
    let e = storage.read(&p("/memories/a.md")).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let text = e.to_string();
    assert!(
        text.contains(&endpoint),
        "the error names the endpoint: {text}"
    );
    assert!(text.contains("bucket"), "{text}");
    assert!(e.is_retryable(), "a network failure is temporary: {e:?}");
    let e = storage.check().await.unwrap_err();
    assert!(
        e.to_string().contains(&endpoint),
        "check names the endpoint: {e}"
    );

    let tool = MemoryTool::new(storage);
    let out = tool
        .execute(&serde_json::json!({"command": "view", "path": "/memories/a.md"}))
        .await;
    assert!(out.is_error);
    let shown = out.text().unwrap();
    assert!(
        !shown.contains("127.0.0.1"),
        "no endpoint shown to the model: {shown}"
    );
    assert!(shown.contains("Try again in a moment"), "{shown}");
}

/// A server that accepts connections and never answers: the request timeout ends it, never a
/// hang.
#[tokio::test]
async fn silent_server_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket); // keep it open, say nothing
        }
    });
    let storage = options(&endpoint).build().unwrap();
    let started = Instant::now();
    let e = storage.stat(&p("/memories/a.md")).await.unwrap_err();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(
        elapsed >= Duration::from_secs(1),
        "the timeout was waited for: {elapsed:?}"
    );
    assert!(e.to_string().contains(&endpoint), "{e}");
    assert!(e.is_retryable(), "{e:?}");
    held.abort();
}

/// Answers the first `failures` requests with `503 SlowDown`, then a small object.
async fn throttling_server(failures: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let count = Arc::clone(&count);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let n = count.fetch_add(1, Ordering::SeqCst);
                let answer = if n < failures {
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\n\
                     Content-Length: 54\r\nConnection: close\r\n\r\n\
                     <Error><Code>SlowDown</Code><Message/></Error>\n\n\n\n\n\n"
                        .to_owned()
                } else {
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nETag: \"abc\"\r\n\
                     Last-Modified: Wed, 21 Oct 2015 07:28:00 GMT\r\nConnection: close\r\n\r\nhi"
                        .to_owned()
                };
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (endpoint, seen)
}

/// Throttling (503 SlowDown) is retried with backoff; past `max_retries` it is a retryable
/// error.
#[tokio::test]
async fn throttling_is_retried() {
    let (endpoint, seen) = throttling_server(2).await;
    let storage = options(&endpoint).build().unwrap();
    let file = storage.read(&p("/memories/a.md")).await.unwrap();
    assert_eq!(file.contents, b"hi");
    assert_eq!(file.version.as_str(), "\"abc\"");
    assert_eq!(seen.load(Ordering::SeqCst), 3, "two 503s, then the answer");

    let (endpoint, seen) = throttling_server(usize::MAX).await;
    let storage = options(&endpoint).build().unwrap();
    let e = storage.read(&p("/memories/a.md")).await.unwrap_err();
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "the first try and max_retries = 2"
    );
    assert!(e.is_retryable(), "throttling is temporary: {e:?}");
    assert!(e.to_string().contains(&endpoint), "{e}");
}

/// An `InMemory` store whose copies fail after `copies_allowed`, and whose deletes can fail.
#[derive(Debug)]
struct Failing {
    inner: InMemory,
    copies_allowed: usize,
    copies: AtomicUsize,
    fail_deletes: bool,
}

impl fmt::Display for Failing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Failing")
    }
}

fn injected(what: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "Failing",
        source: format!("injected {what} failure").into(),
    }
}

#[async_trait]
impl ObjectStore for Failing {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
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
        if self.fail_deletes {
            return Box::pin(futures_util::stream::once(async {
                Err(injected("delete"))
            }));
        }
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
        if self.copies.fetch_add(1, Ordering::SeqCst) >= self.copies_allowed {
            return Err(injected("copy"));
        }
        self.inner.copy_opts(from, to, options).await
    }
}

async fn store_with_dir(copies_allowed: usize, fail_deletes: bool) -> ObjectStoreStorage {
    let storage = ObjectStoreStorage::new(
        Arc::new(Failing {
            inner: InMemory::new(),
            copies_allowed,
            copies: AtomicUsize::new(0),
            fail_deletes,
        }),
        "",
    )
    .unwrap()
    // With history off a rename is server-side copies (the path these tests fail part-way);
    // with history on it is GETs and PUTs, checked in tests/history.rs.
    .with_history(memory_core::history::HistoryOptions::off());
    for i in 0..6 {
        storage
            .write(
                &p(&format!("/memories/dir/f{i}.md")),
                format!("file {i}").into_bytes(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    storage
}

async fn paths(storage: &ObjectStoreStorage) -> Vec<String> {
    storage
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect()
}

/// A copy fails part-way through a directory rename: the rename fails, every source is in
/// place and the copies made are taken back.
#[tokio::test]
async fn directory_rename_failing_part_way_changes_nothing() {
    let storage = store_with_dir(3, false).await;
    let before = paths(&storage).await;
    let e = storage
        .rename(&p("/memories/dir"), &p("/memories/moved"))
        .await
        .unwrap_err();
    assert!(matches!(e, memory_core::Error::Backend { .. }), "{e:?}");
    assert_eq!(
        paths(&storage).await,
        before,
        "sources kept, copies taken back"
    );
}

/// The deletes fail after every copy was made (as if the process died between the copies and
/// the deletes): every file is present, twice, none lost.
#[tokio::test]
async fn directory_rename_interrupted_before_deletes_loses_nothing() {
    let storage = store_with_dir(usize::MAX, true).await;
    storage
        .rename(&p("/memories/dir"), &p("/memories/moved"))
        .await
        .unwrap_err();
    for i in 0..6 {
        for dir in ["dir", "moved"] {
            let file = storage
                .read(&p(&format!("/memories/{dir}/f{i}.md")))
                .await
                .unwrap();
            assert_eq!(file.contents, format!("file {i}").into_bytes());
        }
    }
}
