//! read: bytes and version back, NotFound for what is not a file, never a torn file.

use super::*;

/// read: returns the bytes last written and the version that write returned.
pub async fn read_returns_last_written(storage: &dyn Storage) {
    let path = p("/memories/read.md");
    let v1 = ok(
        storage,
        "write a new file",
        storage
            .write(&path, b"one\n".to_vec(), WriteMode::Create)
            .await,
    );
    let file = ok(storage, "read a file", storage.read(&path).await);
    assert_eq!(
        file.contents, b"one\n",
        "{storage}: read returns the bytes last written"
    );
    assert_eq!(
        file.version, v1,
        "{storage}: read returns the version the last write returned"
    );
    let v2 = ok(
        storage,
        "overwrite a file",
        storage
            .write(&path, b"two\nlines\n".to_vec(), WriteMode::Overwrite)
            .await,
    );
    let file = ok(storage, "read a rewritten file", storage.read(&path).await);
    assert_eq!(
        file.contents, b"two\nlines\n",
        "{storage}: read returns the bytes of the latest write, not an older one"
    );
    assert_eq!(
        file.version, v2,
        "{storage}: read returns the version of the latest write"
    );
}

/// read: a missing path, a directory, `/memories` and a path below a file are NotFound.
pub async fn read_missing_is_not_found(storage: &dyn Storage) {
    put(storage, "/memories/dir/file.md", "x").await;
    for path in [
        "/memories/missing.md",
        "/memories/dir",
        "/memories",
        "/memories/dir/file.md/below",
        "/memories/dir/fil",
    ] {
        let e = err(
            storage,
            &format!("read {path}"),
            storage.read(&p(path)).await,
        );
        assert!(
            matches!(&e, Error::NotFound { path: got } if got.as_str() == path),
            "{storage}: read of a missing path, a directory or /memories is NotFound naming \
             {path}, got {e:?}"
        );
    }
}

/// read: never returns a torn file; concurrent readers see each write whole or not at all.
pub async fn read_never_torn(storage: Arc<dyn Storage>) {
    const SIZE: usize = 48 * 1024;
    let path = p("/memories/torn.bin");
    let contents = [vec![b'a'; SIZE], vec![b'b'; SIZE + 7]];
    ok(
        &*storage,
        "write the first version",
        storage
            .write(&path, contents[0].clone(), WriteMode::Create)
            .await,
    );
    let writer = {
        let storage = Arc::clone(&storage);
        let path = path.clone();
        let contents = contents.clone();
        tokio::spawn(async move {
            for i in 0..24 {
                let body = contents[(i + 1) % 2].clone();
                ok(
                    &*storage,
                    "overwrite while others read",
                    storage.write(&path, body, WriteMode::Overwrite).await,
                );
                tokio::task::yield_now().await;
            }
        })
    };
    let mut readers = Vec::new();
    for _ in 0..3 {
        let storage = Arc::clone(&storage);
        let path = path.clone();
        let contents = contents.clone();
        readers.push(tokio::spawn(async move {
            for _ in 0..24 {
                let got = ok(
                    &*storage,
                    "read while another task writes",
                    storage.read(&path).await,
                );
                assert!(
                    got.contents == contents[0] || got.contents == contents[1],
                    "{storage}: read never returns a torn file: got {} bytes that are \
                     neither version",
                    got.contents.len()
                );
                tokio::task::yield_now().await;
            }
        }));
    }
    if let Err(e) = writer.await {
        std::panic::resume_unwind(e.into_panic());
    }
    for reader in readers {
        if let Err(e) = reader.await {
            std::panic::resume_unwind(e.into_panic());
        }
    }
}
