//! The key check (issue 15 item 2): an encrypted store never opens with a key it was not
//! encrypted under, never takes plaintext into it, and a plaintext program can tell it is
//! encrypted; encryption over a text-only store is refused when composed.

use std::error::Error as _;
use std::sync::Arc;

use memory_core::conformance::faults::Faulty;
use memory_core::{
    Capabilities, Error, InMemoryStorage, MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode,
};
use memory_encrypted::{
    Encrypted, EncryptionState, KEY_CHECK_PATH, Key, KeyCheckError, Keyring, RekeyOptions, probe,
};
use memory_fs::FsStorage;
use memory_sqlite::SqliteStorage;
use serde_json::json;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

fn ring(key: &Key) -> Keyring {
    Keyring::new(key.clone())
}

/// Every path and its bytes in a store, to show that a refused open changed nothing.
async fn snapshot(store: &dyn Storage) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for meta in store.list(&MemoryPath::root()).await.unwrap() {
        let bytes = store.read(&meta.path).await.unwrap().contents;
        out.push((meta.path.to_string(), bytes));
    }
    out
}

fn open_error(e: &Error) -> &KeyCheckError {
    e.source()
        .and_then(|s| s.downcast_ref::<KeyCheckError>())
        .unwrap_or_else(|| panic!("not an KeyCheckError: {e:?}"))
}

/// The scenario of the issue, over one inner store: first use marks the store; a wrong key,
/// no key (a plaintext program probing), and a plaintext store are each told apart.
async fn key_check_scenario(inner: Arc<dyn Storage>) {
    let name = inner.to_string();
    assert_eq!(
        probe(&*inner).await.unwrap(),
        EncryptionState::Empty,
        "{name}"
    );
    let key = Key::generate().unwrap();
    let store = Encrypted::open(inner.clone(), ring(&key)).await.unwrap();
    // Opening and reading never write: a read-only stack stays read-only.
    assert!(store.list(&MemoryPath::root()).await.unwrap().is_empty());
    assert_eq!(store.file_count().await.unwrap(), 0);
    assert_eq!(
        probe(&*inner).await.unwrap(),
        EncryptionState::Empty,
        "{name}"
    );
    let tool = MemoryTool::new(store);
    let out = tool
        .execute(&json!({"command": "create", "path": "/memories/a.md", "file_text": "secret\n"}))
        .await;
    assert!(!out.is_error, "{name}: {out:?}");
    assert_eq!(
        probe(&*inner).await.unwrap(),
        EncryptionState::Encrypted {
            key_id: Some(key.id())
        },
        "{name}: the first change writes the key check"
    );
    // The record is not part of what the model sees or counts.
    let out = tool
        .execute(&json!({"command": "view", "path": KEY_CHECK_PATH}))
        .await;
    assert!(out.is_error, "{name}");
    assert_eq!(tool.storage().file_count().await.unwrap(), 1, "{name}");
    assert_eq!(
        tool.storage()
            .list(&MemoryPath::root())
            .await
            .unwrap()
            .len(),
        1
    );
    let before = snapshot(&*inner).await;
    assert_eq!(before.len(), 2, "{name}: the file and the record");

    // A wrong key: refused at open, and through `new` every operation fails and writes nothing.
    let wrong = Key::generate().unwrap();
    let e = Encrypted::open(inner.clone(), ring(&wrong))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, KeyCheckError::WrongKey { found, keyring } if *found == key.id() && *keyring == [wrong.id()]),
        "{name}: {e:?}"
    );
    assert!(e.to_string().contains(&key.id().to_string()), "{e}");
    let wrong_tool = MemoryTool::new(Encrypted::new(inner.clone(), ring(&wrong)));
    for input in [
        json!({"command": "create", "path": "/memories/b.md", "file_text": "x"}),
        json!({"command": "delete", "path": "/memories/a.md"}),
        json!({"command": "view", "path": "/memories"}),
    ] {
        let out = wrong_tool.execute(&input).await;
        assert!(out.is_error, "{name}: {input}");
    }
    let e = wrong_tool
        .storage()
        .write(&p("/memories/b.md"), b"x".to_vec(), WriteMode::Create)
        .await
        .unwrap_err();
    assert!(matches!(open_error(&e), KeyCheckError::WrongKey { .. }));
    assert_eq!(
        snapshot(&*inner).await,
        before,
        "{name}: a wrong key changed nothing"
    );

    // The right key still opens it.
    Encrypted::open(inner.clone(), ring(&key)).await.unwrap();
    assert_eq!(snapshot(&*inner).await, before);
}

#[tokio::test]
async fn key_check_in_memory() {
    key_check_scenario(Arc::new(InMemoryStorage::new())).await;
}

#[tokio::test]
async fn key_check_over_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    key_check_scenario(Arc::new(FsStorage::new(dir.path()).unwrap())).await;
}

#[tokio::test]
async fn key_check_over_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    key_check_scenario(Arc::new(
        SqliteStorage::open(dir.path().join("memory.db")).unwrap(),
    ))
    .await;
}

#[tokio::test]
async fn a_plaintext_store_is_refused_until_adopted_by_rekey() {
    let inner = Arc::new(InMemoryStorage::new());
    inner
        .write(
            &p("/memories/notes.md"),
            b"plain\n".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    assert_eq!(probe(&*inner).await.unwrap(), EncryptionState::Plaintext);
    let before = snapshot(&*inner).await;
    let key = Key::generate().unwrap();
    let e = Encrypted::open(inner.clone(), ring(&key))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, KeyCheckError::PlaintextStore { example } if example.as_str() == "/memories/notes.md"),
        "{e:?}"
    );
    assert!(e.to_string().contains("--encrypt-plaintext"), "{e}");
    // Through `new`, a create would have mixed an envelope into the plaintext store.
    let lazy = Encrypted::new(inner.clone(), ring(&key));
    let e = lazy
        .write(&p("/memories/new.md"), b"x".to_vec(), WriteMode::Create)
        .await
        .unwrap_err();
    assert!(matches!(
        open_error(&e),
        KeyCheckError::PlaintextStore { .. }
    ));
    assert_eq!(snapshot(&*inner).await, before, "nothing written");

    // Adopting is the explicit rekey; it marks the store as encrypted.
    let report = lazy
        .rekey_with(&RekeyOptions::new().encrypt_plaintext(true), |_| {})
        .await
        .unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.total, 1);
    assert_eq!(
        probe(&*inner).await.unwrap(),
        EncryptionState::Encrypted {
            key_id: Some(key.id())
        }
    );
    let store = Encrypted::open(inner.clone(), ring(&key)).await.unwrap();
    assert_eq!(
        store.read(&p("/memories/notes.md")).await.unwrap().contents,
        b"plain\n"
    );
}

#[tokio::test]
async fn a_rekey_without_adoption_does_not_mark_a_plaintext_store() {
    let inner = Arc::new(InMemoryStorage::new());
    inner
        .write(
            &p("/memories/notes.md"),
            b"plain\n".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let store = Encrypted::new(inner.clone(), ring(&Key::generate().unwrap()));
    let report = store.rekey(|_| {}).await.unwrap();
    assert_eq!(report.failed.len(), 1);
    assert_eq!(probe(&*inner).await.unwrap(), EncryptionState::Plaintext);
}

#[tokio::test]
async fn a_store_encrypted_before_key_checks_gets_its_record_with_the_right_key_only() {
    let key = Key::generate().unwrap();
    let inner = Arc::new(InMemoryStorage::new());
    let store = Encrypted::open(inner.clone(), ring(&key)).await.unwrap();
    store
        .write(&p("/memories/a.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    // As written by an older version: envelopes, no record.
    inner.delete(&p(KEY_CHECK_PATH)).await.unwrap();
    assert_eq!(
        probe(&*inner).await.unwrap(),
        EncryptionState::Encrypted {
            key_id: Some(key.id())
        }
    );
    let wrong = Key::generate().unwrap();
    let e = Encrypted::open(inner.clone(), ring(&wrong))
        .await
        .unwrap_err();
    assert!(
        matches!(e, KeyCheckError::WrongKey { found, .. } if found == key.id()),
        "{e:?}"
    );
    assert!(
        inner.stat(&p(KEY_CHECK_PATH)).await.unwrap().is_none(),
        "no record written"
    );
    let store = Encrypted::open(inner.clone(), ring(&key)).await.unwrap();
    assert_eq!(
        store.read(&p("/memories/a.md")).await.unwrap().contents,
        b"a"
    );
    assert!(
        inner.stat(&p(KEY_CHECK_PATH)).await.unwrap().is_none(),
        "reads write nothing"
    );
    store
        .write(&p("/memories/b.md"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert!(inner.stat(&p(KEY_CHECK_PATH)).await.unwrap().is_some());
    assert_eq!(store.file_count().await.unwrap(), 2);
}

#[tokio::test]
async fn a_damaged_record_is_its_own_error() {
    let key = Key::generate().unwrap();
    let inner = Arc::new(InMemoryStorage::new());
    Encrypted::open(inner.clone(), ring(&key))
        .await
        .unwrap()
        .write(&p("/memories/a.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let record = p(KEY_CHECK_PATH);
    let mut bytes = inner.read(&record).await.unwrap().contents;
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    inner
        .write(&record, bytes, WriteMode::Overwrite)
        .await
        .unwrap();
    let e = Encrypted::open(inner.clone(), ring(&key))
        .await
        .unwrap_err();
    assert!(matches!(e, KeyCheckError::KeyCheckDamaged { .. }), "{e:?}");
    inner
        .write(&record, b"not an envelope".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let e = Encrypted::open(inner.clone(), ring(&key))
        .await
        .unwrap_err();
    assert!(matches!(e, KeyCheckError::KeyCheckDamaged { .. }), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_first_writes_with_different_keys_one_wins() {
    for round in 0..10 {
        let inner = Arc::new(InMemoryStorage::new());
        let keys = [Key::generate().unwrap(), Key::generate().unwrap()];
        let writes: Vec<_> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                let inner = inner.clone();
                let ring = ring(key);
                tokio::spawn(async move {
                    // The other key may have marked the store already: refused at open.
                    let store = match Encrypted::open(inner, ring).await {
                        Ok(store) => store,
                        Err(e) => return Err(Error::backend("test", e)),
                    };
                    let path = p(&format!("/memories/{i}.md"));
                    store.write(&path, b"x".to_vec(), WriteMode::Create).await
                })
            })
            .collect();
        let mut ok = 0;
        for write in writes {
            match write.await.unwrap() {
                Ok(_) => ok += 1,
                Err(e) => assert!(
                    matches!(open_error(&e), KeyCheckError::WrongKey { .. }),
                    "{e:?}"
                ),
            }
        }
        assert_eq!(
            ok, 1,
            "round {round}: exactly one key marks the empty store"
        );
        assert_eq!(
            inner.file_count().await.unwrap(),
            2,
            "the record and one file"
        );
    }
}

#[tokio::test]
async fn the_record_cannot_be_reached_through_the_wrapper() {
    let key = Key::generate().unwrap();
    let inner = Arc::new(InMemoryStorage::new());
    let tool = MemoryTool::new(Encrypted::open(inner.clone(), ring(&key)).await.unwrap());
    tool.execute(&json!({"command": "create", "path": "/memories/first.md", "file_text": "1"}))
        .await;
    let record = inner.read(&p(KEY_CHECK_PATH)).await.unwrap();
    for (input, want) in [
        (
            json!({"command": "create", "path": KEY_CHECK_PATH, "file_text": "x"}),
            format!(
                "Error: Cannot change {KEY_CHECK_PATH}: this name is reserved for the encrypted store's key check"
            ),
        ),
        (
            json!({"command": "create", "path": format!("{KEY_CHECK_PATH}/below.md"), "file_text": "x"}),
            format!(
                "Error: Cannot change {KEY_CHECK_PATH}/below.md: this name is reserved for the encrypted store's key check"
            ),
        ),
        (
            json!({"command": "delete", "path": KEY_CHECK_PATH}),
            format!("Error: The path {KEY_CHECK_PATH} does not exist"),
        ),
        (
            json!({"command": "rename", "old_path": KEY_CHECK_PATH, "new_path": "/memories/x"}),
            format!("Error: The path {KEY_CHECK_PATH} does not exist"),
        ),
    ] {
        let out = tool.execute(&input).await;
        assert_eq!(out.text(), Some(want.as_str()), "{input}");
    }
    tool.execute(&json!({"command": "create", "path": "/memories/a.md", "file_text": "a"}))
        .await;
    let out = tool
        .execute(
            &json!({"command": "rename", "old_path": "/memories/a.md", "new_path": KEY_CHECK_PATH}),
        )
        .await;
    assert_eq!(
        out.text().unwrap(),
        format!(
            "Error: Cannot change {KEY_CHECK_PATH}: this name is reserved for the encrypted store's key check"
        )
    );
    // Deleting everything keeps the store marked.
    tool.storage().delete(&MemoryPath::root()).await.unwrap();
    assert_eq!(tool.storage().file_count().await.unwrap(), 0);
    assert_eq!(inner.read(&p(KEY_CHECK_PATH)).await.unwrap(), record);
    assert_eq!(inner.file_count().await.unwrap(), 1);
}

/// A store that holds UTF-8 text only, as a versioned memory store does.
fn text_only() -> Faulty<InMemoryStorage> {
    Faulty::new(InMemoryStorage::new()).with_capabilities(Capabilities {
        binary_files: false,
        ..Capabilities::FULL
    })
}

#[tokio::test]
async fn encryption_over_a_text_only_store_is_refused_when_composed() {
    let key = Key::generate().unwrap();
    let e = Encrypted::try_new(text_only(), ring(&key)).unwrap_err();
    assert!(
        matches!(&e, KeyCheckError::TextOnlyStore { store } if store == "Faulty(InMemory)"),
        "{e:?}"
    );
    assert!(e.to_string().contains("holds only UTF-8 text"), "{e}");
    let e = Encrypted::open(text_only(), ring(&key)).await.unwrap_err();
    assert!(matches!(e, KeyCheckError::TextOnlyStore { .. }), "{e:?}");
    // Composed with `new` anyway: nothing reaches the inner store.
    let lazy = Encrypted::new(text_only(), ring(&key));
    let e = lazy
        .write(&p("/memories/a.md"), b"x".to_vec(), WriteMode::Create)
        .await
        .unwrap_err();
    assert!(matches!(
        open_error(&e),
        KeyCheckError::TextOnlyStore { .. }
    ));
    assert_eq!(lazy.inner().inner().file_count().await.unwrap(), 0);
}

#[tokio::test]
async fn a_read_only_stack_over_an_empty_encrypted_store_writes_nothing() {
    let inner = Arc::new(memory_core::conformance::faults::Recording::new(
        InMemoryStorage::new(),
    ));
    let store = Encrypted::open(inner.clone(), ring(&Key::generate().unwrap()))
        .await
        .unwrap();
    let tool = MemoryTool::new(memory_core::ReadOnly::new(store));
    let out = tool
        .execute(&json!({"command": "view", "path": "/memories"}))
        .await;
    assert!(!out.is_error, "{out:?}");
    let out = tool
        .execute(&json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
        .await;
    assert!(out.is_error);
    assert!(
        inner.ops().iter().all(|op| !op.is_mutation()),
        "{:?}",
        inner.ops()
    );
}
