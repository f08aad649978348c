//! History through the envelope: what the inner store keeps is ciphertext only, sizes and
//! digests shown are the plaintext's, and renamed files (moved without re-sealing) read back.

use std::sync::Arc;

use memory_core::history::{self, Change, HistoryOptions, Redaction, sha256_hex};
use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_encrypted::{Encrypted, KEY_CHECK_PATH, Key, Keyring};

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

fn store() -> (Arc<InMemoryStorage>, Encrypted<Arc<InMemoryStorage>>) {
    let inner = Arc::new(InMemoryStorage::with_history(HistoryOptions::default()));
    let keyring = Keyring::new(Key::generate().unwrap());
    (inner.clone(), Encrypted::new(inner, keyring))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn the_inner_history_holds_no_plaintext() {
    let (inner, store) = store();
    let path = p("/memories/secrets.md");
    store
        .write(
            &path,
            b"token ghp-PLAINTEXT-ONE".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    store
        .write(
            &path,
            b"token ghp-PLAINTEXT-TWO".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    store.rename(&path, &p("/memories/moved.md")).await.unwrap();
    store.delete(&p("/memories/moved.md")).await.unwrap();
    for file in ["/memories/moved.md", "/memories/secrets.md"] {
        for revision in inner.history(&p(file)).await.unwrap() {
            if !revision.has_content() {
                continue;
            }
            let stored = inner
                .read_revision(&p(file), revision.number)
                .await
                .unwrap();
            assert!(
                !contains(&stored, b"PLAINTEXT"),
                "version {} of {file}",
                revision.number
            );
            assert_ne!(
                revision.sha256,
                Some(sha256_hex(b"token ghp-PLAINTEXT-ONE"))
            );
        }
    }
    // Through the wrapper: the plaintext's digests and sizes.
    let revisions = store.history(&p("/memories/moved.md")).await.unwrap();
    let changes: Vec<Change> = revisions.iter().map(|r| r.change).collect();
    assert_eq!(
        changes,
        [
            Change::Deleted,
            Change::Renamed,
            Change::Modified,
            Change::Created
        ]
    );
    assert_eq!(revisions[3].size, 23);
    assert_eq!(
        revisions[3].sha256,
        Some(sha256_hex(b"token ghp-PLAINTEXT-ONE"))
    );
    let first = store
        .read_revision(&p("/memories/moved.md"), 1)
        .await
        .unwrap();
    assert_eq!(first, b"token ghp-PLAINTEXT-ONE");
    // Redaction removes the envelopes from the inner store.
    history::restore(&store, &p("/memories/moved.md"), 3)
        .await
        .unwrap();
    let redacted = store
        .redact_revisions(&p("/memories/moved.md"), Redaction::AllPast)
        .await
        .unwrap();
    assert_eq!(redacted, 3, "created, modified, renamed");
    let e = inner
        .read_revision(&p("/memories/moved.md"), 1)
        .await
        .unwrap_err();
    assert!(matches!(
        e,
        memory_core::Error::RevisionWithoutContent { redacted: true, .. }
    ));
}

#[tokio::test]
async fn a_renamed_file_reads_back_and_its_next_write_seals_it_for_its_path() {
    let (inner, store) = store();
    let (a, b) = (p("/memories/dir/a.md"), p("/memories/other/b.md"));
    store
        .write(&a, b"alpha".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .rename(&p("/memories/dir"), &p("/memories/moved"))
        .await
        .unwrap();
    let moved = p("/memories/moved/a.md");
    assert_eq!(store.read(&moved).await.unwrap().contents, b"alpha");
    store.rename(&moved, &b).await.unwrap();
    assert_eq!(
        store.read(&b).await.unwrap().contents,
        b"alpha",
        "two renames"
    );
    let version = store.read(&b).await.unwrap().version;
    store
        .write(&b, b"beta".to_vec(), WriteMode::Update(version))
        .await
        .unwrap();
    assert_eq!(store.read(&b).await.unwrap().contents, b"beta");
    // Every revision opens, each with the path it was sealed for.
    for number in 1..=4 {
        let text = store.read_revision(&b, number).await.unwrap();
        let want: &[u8] = if number == 4 { b"beta" } else { b"alpha" };
        assert_eq!(text, want, "version {number}");
    }
    // The folder log shows the file's versions once, without the key check record.
    let all = store.history(&MemoryPath::root()).await.unwrap();
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(all.iter().all(|r| r.path.as_str() != KEY_CHECK_PATH));
    assert!(inner.history(&p(KEY_CHECK_PATH)).await.unwrap().len() == 1);
}

#[tokio::test]
async fn adopting_a_plaintext_store_redacts_its_plaintext_history() {
    let inner = Arc::new(InMemoryStorage::with_history(HistoryOptions::default()));
    let (a, gone) = (p("/memories/a.md"), p("/memories/gone.md"));
    inner
        .write(&a, b"PLAINTEXT one".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    inner
        .write(&a, b"PLAINTEXT two".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    inner
        .write(&gone, b"PLAINTEXT deleted".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    inner.delete(&gone).await.unwrap();
    let store = Encrypted::new(inner.clone(), Keyring::new(Key::generate().unwrap()));
    let options = memory_encrypted::RekeyOptions::new().encrypt_plaintext(true);
    let report = store.rekey_with(&options, |_| {}).await.unwrap();
    assert_eq!(report.encrypted_plaintext, 1);
    assert_eq!(
        report.redacted_versions, 3,
        "a's two plaintext versions and gone's one"
    );
    for file in [&a, &gone] {
        for revision in inner.history(file).await.unwrap() {
            if let Ok(stored) = inner.read_revision(file, revision.number).await {
                assert!(
                    !contains(&stored, b"PLAINTEXT"),
                    "{file} version {}",
                    revision.number
                );
            }
        }
    }
    assert_eq!(store.read(&a).await.unwrap().contents, b"PLAINTEXT two");
}

#[tokio::test]
async fn a_version_that_cannot_be_opened_does_not_hide_the_others() {
    let inner = Arc::new(InMemoryStorage::with_history(HistoryOptions::default()));
    let a = p("/memories/a.md");
    let store = Encrypted::new(inner.clone(), Keyring::new(Key::generate().unwrap()));
    store
        .write(&p("/memories/b.md"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    // A plaintext version (written behind the wrapper), then replaced through it.
    inner
        .write(&a, b"plaintext".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .write(&a, b"sealed".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let revisions = store.history(&a).await.unwrap();
    assert_eq!(revisions.len(), 2);
    assert_eq!(revisions[0].sha256, Some(sha256_hex(b"sealed")));
    assert_eq!(
        revisions[1].sha256, None,
        "the plaintext version has no digest shown"
    );
    assert!(store.read_revision(&a, 1).await.is_err());
    assert_eq!(store.read_revision(&a, 2).await.unwrap(), b"sealed");
}
