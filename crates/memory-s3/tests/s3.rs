//! Against a real S3 API (moto's server, when `MEMORY_TEST_S3_ENDPOINT` is set): the server
//! honours the conditional requests this crate relies on, listings are followed past the
//! 1,000-key page, objects land where the README says, and `s3://` URLs configured from
//! `AWS_*` variables work.

use memory_s3::testing as common;

use std::sync::Arc;

use futures_util::StreamExt;
use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode};
use memory_s3::S3Options;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

/// The server must answer `If-None-Match: *` on PutObject and on CompleteMultipartUpload
/// (copy-if-absent) and `If-Match` on PutObject with 412; otherwise creates and edits would
/// race. (moto 5.2.5, pinned by the script, does.)
#[tokio::test]
async fn server_honours_conditional_requests() {
    let server = common::S3Server::from_env("server_honours_conditional_requests").await;
    let store = server.options("").object_store().unwrap();
    let key = Path::from("conditional/a");
    let first = store
        .put_opts(
            &key,
            PutPayload::from_static(b"one"),
            PutMode::Create.into(),
        )
        .await
        .expect("PUT If-None-Match: * of a new key");
    let again = store
        .put_opts(
            &key,
            PutPayload::from_static(b"two"),
            PutMode::Create.into(),
        )
        .await;
    assert!(
        matches!(again, Err(object_store::Error::AlreadyExists { .. })),
        "the server must refuse PUT If-None-Match: * over an existing key (pin a moto \
         version that supports conditional writes), got {again:?}"
    );
    let update = |e_tag: Option<String>| PutOptions {
        mode: PutMode::Update(UpdateVersion {
            e_tag,
            version: None,
        }),
        ..PutOptions::default()
    };
    let second = store
        .put_opts(
            &key,
            PutPayload::from_static(b"three"),
            update(first.e_tag.clone()),
        )
        .await
        .expect("PUT If-Match: <current etag>");
    let stale = store
        .put_opts(
            &key,
            PutPayload::from_static(b"four"),
            update(first.e_tag.clone()),
        )
        .await;
    assert!(
        matches!(stale, Err(object_store::Error::Precondition { .. })),
        "the server must refuse PUT If-Match: <stale etag>, got {stale:?}"
    );
    assert_ne!(first.e_tag, second.e_tag);
    let body = store.get(&key).await.unwrap().bytes().await.unwrap();
    assert_eq!(&body[..], b"three", "refused writes changed nothing");

    let other = Path::from("conditional/b");
    store
        .put(&other, PutPayload::from_static(b"b"))
        .await
        .unwrap();
    let copy = store.copy_if_not_exists(&key, &other).await;
    assert!(
        matches!(copy, Err(object_store::Error::AlreadyExists { .. })),
        "copy-if-absent (a multipart upload completed with If-None-Match: *) must refuse an \
         existing destination, got {copy:?}"
    );
    let body = store.get(&other).await.unwrap().bytes().await.unwrap();
    assert_eq!(
        &body[..],
        b"b",
        "a refused copy leaves the destination alone"
    );
    store
        .copy_if_not_exists(&key, &Path::from("conditional/c"))
        .await
        .expect("copy-if-absent to a free key");
}

/// More files than one LIST page (1,000 keys): list, view and delete of a directory follow
/// the pages to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn listings_follow_every_page() {
    const FILES: usize = 1_005;
    let server = common::S3Server::from_env("listings_follow_every_page").await;
    let storage = Arc::new(server.storage("paged"));
    // Seed straight through object_store (one PUT each), many at once.
    let store = Arc::clone(storage.object_store());
    futures_util::stream::iter(0..FILES)
        .map(|i| {
            let store = Arc::clone(&store);
            async move {
                let key = Path::from(format!("paged/memories/big/f{i:04}.md"));
                store
                    .put(&key, PutPayload::from_static(b"x"))
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
    let listed = storage.list(&p("/memories/big")).await.unwrap();
    assert_eq!(listed.len(), FILES, "list follows the pages to the end");
    assert_eq!(listed[0].path.as_str(), "/memories/big/f0000.md");
    assert_eq!(listed[FILES - 1].path.as_str(), "/memories/big/f1004.md");
    let tool = MemoryTool::new(Arc::clone(&storage));
    let out = tool
        .execute(&serde_json::json!({"command": "view", "path": "/memories"}))
        .await;
    assert!(
        out.text().unwrap().starts_with(&format!(
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n{FILES}B\t/memories\n{FILES}B\t/memories/big/"
        )),
        "{out:?}"
    );
    // (A rename lists its sources with the same paged listing; it is not repeated here, as
    // 1,005 copy-if-absent multipart uploads would make the test slow.)
    storage.delete(&p("/memories/big")).await.unwrap();
    assert!(
        storage.list(&p("/memories")).await.unwrap().is_empty(),
        "delete removes all pages (two DeleteObjects batches)"
    );
}

/// `/memories/x` is the object `PREFIX/memories/x`, names kept as they are; the file counter
/// is `PREFIX/.memory-count`, outside `memories/`.
#[tokio::test]
async fn object_layout() {
    let server = common::S3Server::from_env("object_layout").await;
    let storage = server.storage("/tenant/one/");
    assert_eq!(storage.prefix(), "tenant/one");
    for path in [
        "/memories/notes/a b.md",
        "/memories/100%.md",
        "/memories/日本語.md",
    ] {
        storage
            .write(&p(path), path.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    let store = storage.object_store();
    let mut keys: Vec<String> = store
        .list(Some(&Path::from("tenant")))
        .map(|m| m.unwrap().location.to_string())
        .collect()
        .await;
    keys.sort();
    assert_eq!(
        keys,
        [
            "tenant/one/.memory-count",
            "tenant/one/memories/100%.md",
            "tenant/one/memories/notes/a b.md",
            "tenant/one/memories/日本語.md"
        ]
    );
}

/// `S3Options::from_url(..).with_vars(AWS_* ...)`, what `from_s3_url` does with the process
/// environment, reaches the server; two stores on one bucket with different prefixes do not
/// see each other.
#[tokio::test]
async fn url_and_aws_variables() {
    let server = common::S3Server::from_env("url_and_aws_variables").await;
    let vars = || server.env().into_iter().map(|(k, v)| (k.to_owned(), v));
    let a = S3Options::from_url(&format!("s3://{}/tenant-a", server.bucket))
        .unwrap()
        .with_vars(vars())
        .build()
        .unwrap();
    let b = S3Options::from_url(&format!("s3://{}/tenant-b", server.bucket))
        .unwrap()
        .with_vars(vars())
        .build()
        .unwrap();
    assert_eq!(
        a.to_string(),
        format!("S3(s3://{}/tenant-a)", server.bucket)
    );
    a.write(&p("/memories/a.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert!(b.list(&p("/memories")).await.unwrap().is_empty());
    assert_eq!(a.list(&p("/memories")).await.unwrap().len(), 1);
}

/// A bucket that does not exist is a clear, non-retryable error naming the endpoint and the
/// bucket; the model sees only the generic text.
#[tokio::test]
async fn missing_bucket_is_a_clear_error() {
    let server = common::S3Server::from_env("missing_bucket_is_a_clear_error").await;
    let mut options = server.options("x");
    options.bucket = "no-such-bucket-for-memory".into();
    let storage = options.build().unwrap();
    let e = storage.check().await.unwrap_err();
    assert!(e.to_string().contains(&server.endpoint), "{e}");
    let e = storage.list(&p("/memories")).await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains(&server.endpoint), "{text}");
    assert!(text.contains("no-such-bucket-for-memory"), "{text}");
    let tool = MemoryTool::new(storage);
    let out = tool
        .execute(&serde_json::json!({"command": "view", "path": "/memories"}))
        .await;
    assert!(out.is_error);
    let shown = out.text().unwrap();
    assert!(!shown.contains(&server.endpoint), "{shown}");
    assert!(!shown.contains("no-such-bucket"), "{shown}");
}
