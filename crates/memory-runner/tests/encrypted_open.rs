//! Opening an encrypted store without its key (or with a wrong one) is an error in the
//! library, on a real folder and a real SQLite file: nothing reads its ciphertext as text and
//! no plaintext file is written beside its encrypted ones, unless the caller asks for the
//! plaintext files only (`OpenOptions::with_plaintext_only`).
#![cfg(all(feature = "fs", feature = "sqlite", feature = "encrypted"))]

use std::path::Path;

use memory_core::{MemoryHandler as _, MemoryPath, MemoryTool, Storage};
use memory_runner::encrypted::{Key, KeyCheckError, Keyring};
use memory_runner::{OpenError, OpenOptions, open_with};
use serde_json::json;

/// Every file of the store as its raw bytes, read past any envelope (a raw, read-only open).
async fn raw_files(url: &str) -> Vec<(String, Vec<u8>)> {
    let raw = open_with(
        url,
        &OpenOptions::new().with_plaintext_only().with_read_only(),
    )
    .await
    .expect("a raw read-only open");
    let mut files = Vec::new();
    for meta in raw.list(&MemoryPath::root()).await.unwrap() {
        let bytes = raw.read(&meta.path).await.unwrap().contents;
        files.push((meta.path.to_string(), bytes));
    }
    files
}

async fn scenario(url: &str, key_file: &Path) {
    // Encrypted with its key: the first write leaves a key-check record and an envelope.
    let keyed = OpenOptions::new().with_encryption_key_file(key_file);
    let store = open_with(url, &keyed).await.unwrap();
    let out = MemoryTool::new(store)
        .execute(&json!({"command": "create", "path": "/memories/secret.md", "file_text": "the vault code is 1234\n"}))
        .await;
    assert!(!out.is_error, "{out:?}");
    let before = raw_files(url).await;
    assert_eq!(before.len(), 2, "{url}: the file and the key-check record");
    assert!(
        before
            .iter()
            .any(|(path, _)| path == memory_runner::encrypted::KEY_CHECK_PATH)
    );

    // Without a key, read-write or read-only: refused, naming the key.
    let key_id = Key::from_hex_file(key_file).unwrap().id().to_string();
    for options in [OpenOptions::new(), OpenOptions::new().with_read_only()] {
        let err = open_with(url, &options)
            .await
            .expect_err("opened without a key");
        let OpenError::Encrypted { key_id: named, .. } = &err else {
            panic!("{url}: {err:?}");
        };
        assert_eq!(named.as_deref(), Some(key_id.as_str()), "{url}");
        assert!(err.to_string().contains("the store is encrypted"), "{err}");
    }

    // A wrong key: the key check refuses it.
    let other = Keyring::new(Key::generate().unwrap());
    let err = open_with(url, &OpenOptions::new().with_keyring(other))
        .await
        .expect_err("opened with a wrong key");
    let OpenError::Open { source, .. } = &err else {
        panic!("{url}: {err:?}");
    };
    assert!(
        matches!(
            source.downcast_ref::<KeyCheckError>(),
            Some(KeyCheckError::WrongKey { .. })
        ),
        "{url}: {err:?}"
    );

    // Nothing was written by the refused opens: no plaintext file beside the envelopes.
    assert_eq!(raw_files(url).await, before, "{url}");
    assert!(
        !before
            .iter()
            .any(|(_, bytes)| String::from_utf8_lossy(bytes).contains("vault code")),
        "{url}: plaintext at rest"
    );

    // Asked for explicitly, the store opens as its bytes: the envelope reads as ciphertext.
    let raw = open_with(url, &OpenOptions::new().with_plaintext_only())
        .await
        .unwrap();
    let file = raw
        .read(&MemoryPath::parse("/memories/secret.md").unwrap())
        .await
        .unwrap();
    assert!(!String::from_utf8_lossy(&file.contents).contains("vault code"));
    // With the key, everything is as it was.
    let store = open_with(url, &keyed).await.unwrap();
    let out = MemoryTool::new(store)
        .execute(&json!({"command": "view", "path": "/memories/secret.md"}))
        .await;
    assert!(
        out.text()
            .is_some_and(|t| t.contains("the vault code is 1234")),
        "{out:?}"
    );
}

#[tokio::test]
async fn an_encrypted_folder_does_not_open_without_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    memory_runner::encrypted::generate_key_file(&key).unwrap();
    let url = dir.path().join("store").display().to_string();
    scenario(&url, &key).await;
}

#[tokio::test]
async fn an_encrypted_sqlite_file_does_not_open_without_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    memory_runner::encrypted::generate_key_file(&key).unwrap();
    let url = format!("sqlite:{}", dir.path().join("memory.db").display());
    scenario(&url, &key).await;
}

/// A plaintext store, and an empty one, open without a key as before.
#[tokio::test]
async fn plaintext_and_empty_stores_open_without_a_key() {
    let dir = tempfile::tempdir().unwrap();
    for url in [
        dir.path().join("folder").display().to_string(),
        format!("sqlite:{}", dir.path().join("plain.db").display()),
    ] {
        let store = open_with(&url, &OpenOptions::new()).await.unwrap();
        let out = MemoryTool::new(store)
            .execute(&json!({"command": "create", "path": "/memories/a.md", "file_text": "a\n"}))
            .await;
        assert!(!out.is_error, "{out:?}");
        open_with(&url, &OpenOptions::new()).await.unwrap();
    }
}
