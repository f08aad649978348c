//! Key rotation and `rekey`: old files stay readable, new writes use the new key, rekey moves
//! everything, resumes after an interruption and never loses a concurrent edit.

use std::error::Error as _;
use std::sync::{Arc, Mutex};

use memory_core::conformance::faults::Faulty;
use memory_core::{Error, InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_encrypted::{
    Encrypted, EncryptionError, Key, KeyCheckError, KeyId, Keyring, RekeyOptions, RekeyOutcome,
};

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

fn paths(n: usize) -> Vec<MemoryPath> {
    (0..n)
        .map(|i| p(&format!("/memories/dir{}/note-{i:02}.md", i % 3)))
        .collect()
}

fn text(i: usize) -> Vec<u8> {
    format!("note {i}: remember this\n").into_bytes()
}

/// The key id stored at bytes 5..13 of an envelope (see the README's layout).
async fn stored_key_id<S: Storage + ?Sized>(inner: &S, path: &MemoryPath) -> KeyId {
    let bytes = inner.read(path).await.unwrap().contents;
    KeyId::from_bytes(bytes[5..13].try_into().unwrap())
}

/// Writes `n` files under `old`, returning the inner store they live in.
async fn store_under(old: &Key, n: usize) -> Arc<InMemoryStorage> {
    let inner = Arc::new(InMemoryStorage::new());
    let writer = Encrypted::new(Arc::clone(&inner), Keyring::new(old.clone()));
    for (i, path) in paths(n).iter().enumerate() {
        writer
            .write(path, text(i), WriteMode::Create)
            .await
            .unwrap();
    }
    inner
}

#[tokio::test]
async fn rotation_reads_old_files_and_writes_under_the_new_key() {
    let old = Key::generate().unwrap();
    let new = Key::generate().unwrap();
    let inner = store_under(&old, 2).await;
    let store = Encrypted::new(
        Arc::clone(&inner),
        Keyring::new(new.clone()).with_decryption_key(old.clone()),
    );
    let [a, b] = [paths(2)[0].clone(), paths(2)[1].clone()];
    assert_eq!(store.read(&a).await.unwrap().contents, text(0));
    let version = store.read(&b).await.unwrap().version;
    store
        .write(&b, b"edited\n".to_vec(), WriteMode::Update(version))
        .await
        .unwrap();
    assert_eq!(stored_key_id(&*inner, &a).await, old.id());
    assert_eq!(stored_key_id(&*inner, &b).await, new.id());
    // Until a rekey completes, the store's key check is under the old key: a reader holding
    // only the new key is refused at open, before it reads or writes anything.
    let err = Encrypted::open(Arc::clone(&inner), Keyring::new(new.clone()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, KeyCheckError::WrongKey { found, keyring } if *found == old.id() && *keyring == [new.id()]),
        "{err:?}"
    );
    let new_only = Encrypted::new(Arc::clone(&inner), Keyring::new(new.clone()));
    let err = new_only.read(&b).await.unwrap_err();
    let cause = err.source().unwrap().downcast_ref::<KeyCheckError>();
    assert!(
        matches!(cause, Some(KeyCheckError::WrongKey { found, .. }) if *found == old.id()),
        "{err:?}"
    );
    // With the old key as a decryption key it opens.
    Encrypted::open(
        Arc::clone(&inner),
        Keyring::new(new.clone()).with_decryption_key(old.clone()),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn rekey_moves_every_file_to_the_active_key_with_progress() {
    let old = Key::generate().unwrap();
    let new = Key::generate().unwrap();
    let inner = store_under(&old, 7).await;
    let store = Encrypted::new(
        Arc::clone(&inner),
        Keyring::new(new.clone()).with_decryption_key(old),
    );
    let mut seen = Vec::new();
    let report = store
        .rekey(|progress| seen.push((progress.done, progress.total, progress.outcome)))
        .await
        .unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(
        (report.total, report.rekeyed, report.already_current),
        (7, 7, 0)
    );
    assert_eq!(
        seen,
        (1..=7)
            .map(|done| (done, 7, RekeyOutcome::Rekeyed))
            .collect::<Vec<_>>()
    );
    // Everything now opens with the new key alone, content unchanged.
    let new_only = Encrypted::new(Arc::clone(&inner), Keyring::new(new.clone()));
    for (i, path) in paths(7).iter().enumerate() {
        assert_eq!(stored_key_id(&*inner, path).await, new.id());
        assert_eq!(new_only.read(path).await.unwrap().contents, text(i));
    }
    // A second run has nothing to do.
    let again = store.rekey(|_| {}).await.unwrap();
    assert_eq!((again.rekeyed, again.already_current), (0, 7));
}

#[tokio::test]
async fn rekey_resumes_after_an_interruption() {
    let old = Key::generate().unwrap();
    let new = Key::generate().unwrap();
    let inner = Arc::new(Faulty::new(InMemoryStorage::new()));
    let writer = Encrypted::new(Arc::clone(&inner), Keyring::new(old.clone()));
    for (i, path) in paths(10).iter().enumerate() {
        writer
            .write(path, text(i), WriteMode::Create)
            .await
            .unwrap();
    }
    let store = Encrypted::new(
        Arc::clone(&inner),
        Keyring::new(new.clone()).with_decryption_key(old),
    );
    // The store goes down part-way: 1 list, then 2 calls (read + write) per file for 4 files.
    inner.fail_after(1 + 2 * 4);
    let first = store.rekey(|_| {}).await.unwrap();
    assert_eq!(first.rekeyed, 4, "{first:?}");
    assert_eq!(first.failed.len(), 6);
    assert!(!first.is_complete());
    assert!(
        first
            .failed
            .iter()
            .all(|(_, e)| matches!(e, Error::Backend { .. }))
    );

    inner.heal();
    let mut outcomes = Vec::new();
    let second = store.rekey(|pr| outcomes.push(pr.outcome)).await.unwrap();
    assert!(second.is_complete(), "{second:?}");
    assert_eq!((second.already_current, second.rekeyed), (4, 6));
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == RekeyOutcome::AlreadyCurrent)
            .count(),
        4
    );
    for path in paths(10) {
        assert_eq!(stored_key_id(inner.inner(), &path).await, new.id());
    }
}

#[tokio::test]
async fn rekey_retries_conflicts() {
    let old = Key::generate().unwrap();
    let inner = Arc::new(Faulty::new(InMemoryStorage::new()));
    let writer = Encrypted::new(Arc::clone(&inner), Keyring::new(old.clone()));
    writer
        .write(&p("/memories/a.md"), text(0), WriteMode::Create)
        .await
        .unwrap();
    let store = Encrypted::new(
        Arc::clone(&inner),
        Keyring::new(Key::generate().unwrap()).with_decryption_key(old),
    );
    inner.inject_conflicts(3);
    let report = store.rekey(|_| {}).await.unwrap();
    assert_eq!(report.rekeyed, 1, "{report:?}");
    assert_eq!(inner.pending_conflicts(), 0);
    assert_eq!(
        store.read(&p("/memories/a.md")).await.unwrap().contents,
        text(0)
    );
}

/// Before the first compare-and-swap write it sees, another writer (with the old key only)
/// replaces `edited` with `bytes`: exactly what a concurrent `str_replace` in another process
/// would do.
fn edits_first(
    inner: Arc<InMemoryStorage>,
    edited: MemoryPath,
    bytes: Vec<u8>,
) -> Faulty<Arc<InMemoryStorage>> {
    let pending = Mutex::new(Some((edited, bytes)));
    Faulty::new(inner).on_write(move |inner, path, contents, mode| {
        let edit = matches!(mode, WriteMode::Update(_))
            .then(|| pending.lock().unwrap().take())
            .flatten();
        Box::pin(async move {
            if let Some((edited, bytes)) = edit {
                inner.write(&edited, bytes, WriteMode::Overwrite).await?;
            }
            inner.write(path, contents, mode).await
        })
    })
}

#[tokio::test]
async fn rekey_never_loses_a_concurrent_edit() {
    let old = Key::generate().unwrap();
    let new = Key::generate().unwrap();
    let inner = store_under(&old, 1).await;
    let path = paths(1)[0].clone();
    // The concurrent writer's envelope: the edit, sealed under the old key for this path.
    let scratch = Arc::new(InMemoryStorage::new());
    Encrypted::new(Arc::clone(&scratch), Keyring::new(old.clone()))
        .write(&path, b"edited concurrently\n".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let edit = scratch.read(&path).await.unwrap().contents;

    let racing = edits_first(Arc::clone(&inner), path.clone(), edit);
    let store = Encrypted::new(racing, Keyring::new(new.clone()).with_decryption_key(old));
    let report = store.rekey(|_| {}).await.unwrap();
    assert!(report.is_complete() && report.rekeyed == 1, "{report:?}");
    assert_eq!(
        store.read(&path).await.unwrap().contents,
        b"edited concurrently\n"
    );
    assert_eq!(stored_key_id(&*inner, &path).await, new.id());
}

#[tokio::test]
async fn rekey_reports_unreadable_files_and_can_adopt_plaintext() {
    let old = Key::generate().unwrap();
    let new = Key::generate().unwrap();
    let inner = store_under(&old, 2).await;
    let lost = Key::generate().unwrap();
    Encrypted::new(
        Arc::clone(&inner),
        Keyring::new(lost).with_decryption_key(old.clone()),
    )
    .write(
        &p("/memories/lost-key.md"),
        b"?".to_vec(),
        WriteMode::Create,
    )
    .await
    .unwrap();
    inner
        .write(
            &p("/memories/legacy.md"),
            b"plain\n".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let store = Encrypted::new(
        Arc::clone(&inner),
        Keyring::new(new.clone()).with_decryption_key(old),
    );

    let report = store.rekey(|_| {}).await.unwrap();
    assert_eq!(report.rekeyed, 2);
    let failed: Vec<(String, &EncryptionError)> = report
        .failed
        .iter()
        .map(|(path, e)| {
            let cause = e
                .source()
                .unwrap()
                .downcast_ref::<EncryptionError>()
                .unwrap();
            (path.to_string(), cause)
        })
        .collect();
    assert_eq!(failed.len(), 2);
    assert_eq!(failed[0].0, "/memories/legacy.md");
    assert!(matches!(failed[0].1, EncryptionError::NotEncrypted { .. }));
    assert_eq!(failed[1].0, "/memories/lost-key.md");
    assert!(matches!(failed[1].1, EncryptionError::WrongKey { .. }));
    // Left exactly as they were.
    assert_eq!(
        inner
            .read(&p("/memories/legacy.md"))
            .await
            .unwrap()
            .contents,
        b"plain\n"
    );

    let adopt = store
        .rekey_with(&RekeyOptions::new().encrypt_plaintext(true), |_| {})
        .await
        .unwrap();
    assert_eq!(
        (
            adopt.encrypted_plaintext,
            adopt.already_current,
            adopt.failed.len()
        ),
        (1, 2, 1)
    );
    assert_eq!(
        store
            .read(&p("/memories/legacy.md"))
            .await
            .unwrap()
            .contents,
        b"plain\n"
    );
    assert_eq!(
        stored_key_id(&*inner, &p("/memories/legacy.md")).await,
        new.id()
    );
}

/// Right after the first create-if-absent write it sees (a rename's copy), another writer
/// replaces `edited` with `bytes`: the edit a concurrent `str_replace` would make to the
/// rename's source.
fn edits_after_copy(
    inner: Arc<InMemoryStorage>,
    edited: MemoryPath,
    bytes: Vec<u8>,
) -> Faulty<Arc<InMemoryStorage>> {
    let pending = Arc::new(Mutex::new(Some((edited, bytes))));
    Faulty::new(inner).on_write(move |inner, path, contents, mode| {
        let create = matches!(mode, WriteMode::Create);
        let pending = Arc::clone(&pending);
        Box::pin(async move {
            let version = inner.write(path, contents, mode).await?;
            if create {
                let edit = pending.lock().unwrap().take();
                if let Some((edited, bytes)) = edit {
                    inner.write(&edited, bytes, WriteMode::Overwrite).await?;
                }
            }
            Ok(version)
        })
    })
}

#[tokio::test]
async fn rename_never_loses_an_edit_made_to_the_source_while_it_copies() {
    // The re-encrypting rename, over an inner store without history (with history a rename
    // is the inner store's own, which copies nothing).
    let key = Key::generate().unwrap();
    let inner = Arc::new(InMemoryStorage::with_history(
        memory_core::history::HistoryOptions::off(),
    ));
    let from = p("/memories/drafts/plan.md");
    let to = p("/memories/final/plan.md");
    Encrypted::new(Arc::clone(&inner), Keyring::new(key.clone()))
        .write(&from, b"v1\n".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let scratch = Arc::new(InMemoryStorage::new());
    Encrypted::new(Arc::clone(&scratch), Keyring::new(key.clone()))
        .write(
            &from,
            b"v2, edited during the rename\n".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let edit = scratch.read(&from).await.unwrap().contents;

    let store = Encrypted::new(
        edits_after_copy(Arc::clone(&inner), from.clone(), edit),
        Keyring::new(key),
    );
    store
        .rename(&p("/memories/drafts"), &p("/memories/final"))
        .await
        .unwrap();
    assert_eq!(
        store.read(&to).await.unwrap().contents,
        b"v2, edited during the rename\n"
    );
    assert_eq!(store.stat(&p("/memories/drafts")).await.unwrap(), None);
}
