//! Writes through the wrapper, then reads and damages the *inner* store directly.

use std::error::Error as _;

use memory_core::{Entry, Error, InMemoryStorage, MemoryPath, Storage, WriteMode};
use memory_encrypted::{
    Encrypted, EncryptionError, EnvelopePart, FORMAT_VERSION, Key, Keyring, MAGIC, OVERHEAD,
};

const SECRET: &str = "The user's bank PIN is 4921 and she hates cilantro.\n";

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

fn store(key: &Key) -> Encrypted<InMemoryStorage> {
    Encrypted::new(InMemoryStorage::new(), Keyring::new(key.clone()))
}

/// Over an inner store without history, where a rename re-encrypts each file.
fn store_without_history(key: &Key) -> Encrypted<InMemoryStorage> {
    let inner = InMemoryStorage::with_history(memory_core::history::HistoryOptions::off());
    Encrypted::new(inner, Keyring::new(key.clone()))
}

/// The `EncryptionError` inside a wrapper error, or a panic naming what came instead.
fn encryption_error(err: &Error) -> &EncryptionError {
    match err {
        Error::Backend {
            backend: "encrypted",
            retryable: false,
            ..
        } => err
            .source()
            .and_then(|s| s.downcast_ref::<EncryptionError>())
            .expect("the source is an EncryptionError"),
        other => panic!("expected an encrypted backend error, got {other:?}"),
    }
}

async fn raw(store: &Encrypted<InMemoryStorage>, path: &MemoryPath) -> Vec<u8> {
    store.inner().read(path).await.unwrap().contents
}

/// Replaces the inner file's bytes and reads it back through the wrapper.
async fn read_damaged(
    store: &Encrypted<InMemoryStorage>,
    path: &MemoryPath,
    bytes: Vec<u8>,
) -> Result<Vec<u8>, Error> {
    store
        .inner()
        .write(path, bytes, WriteMode::Overwrite)
        .await
        .unwrap();
    store.read(path).await.map(|f| f.contents)
}

#[tokio::test]
async fn roundtrip_versions_and_cas_pass_through() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    let path = p("/memories/notes/user.md");
    let v1 = store
        .write(&path, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let read = store.read(&path).await.unwrap();
    assert_eq!(read.contents, SECRET.as_bytes());
    assert_eq!(read.version, v1);
    assert_eq!(store.inner().read(&path).await.unwrap().version, v1);

    let v2 = store
        .write(&path, b"edited\n".to_vec(), WriteMode::Update(v1.clone()))
        .await
        .unwrap();
    assert_ne!(v1, v2);
    let stale = store
        .write(&path, b"lost?\n".to_vec(), WriteMode::Update(v1))
        .await
        .unwrap_err();
    assert!(matches!(stale, Error::Conflict { .. }), "{stale:?}");
    assert_eq!(store.read(&path).await.unwrap().contents, b"edited\n");
    assert!(matches!(
        store.write(&path, Vec::new(), WriteMode::Create).await,
        Err(Error::AlreadyExists { .. })
    ));
    assert_eq!(store.to_string(), "Encrypted(InMemory)");
}

#[tokio::test]
async fn inner_bytes_are_envelopes_without_plaintext() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    let files = [
        ("/memories/a.md", SECRET.repeat(3)),
        ("/memories/dir/b.md", "short".to_owned()),
        ("/memories/dir/deep/empty.md", String::new()),
    ];
    for (path, text) in &files {
        store
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    for (path, text) in &files {
        let bytes = raw(&store, &p(path)).await;
        assert_eq!(&bytes[..4], &MAGIC);
        assert_eq!(bytes[4], FORMAT_VERSION);
        assert_eq!(&bytes[5..13], key.id().as_bytes(), "key id at bytes 5..13");
        assert_eq!(bytes.len() as u64, text.len() as u64 + OVERHEAD);
        let declared = u64::from_be_bytes(bytes[21..29].try_into().unwrap());
        assert_eq!(
            declared,
            text.len() as u64,
            "plaintext length at bytes 21..29"
        );
        for needle in ["bank PIN", "4921", "cilantro", "short"] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{needle:?} visible in the inner store at {path}"
            );
        }
    }
    // The same plaintext written twice never gives the same bytes.
    let again = p("/memories/again.md");
    store
        .write(&again, SECRET.repeat(3).into_bytes(), WriteMode::Create)
        .await
        .unwrap();
    assert_ne!(
        raw(&store, &again).await[13..],
        raw(&store, &p("/memories/a.md")).await[13..]
    );
}

#[tokio::test]
async fn sizes_in_stat_and_list_are_plaintext_sizes() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    store
        .write(&p("/memories/d/a.md"), vec![b'x'; 1000], WriteMode::Create)
        .await
        .unwrap();
    store
        .write(&p("/memories/d/b.md"), Vec::new(), WriteMode::Create)
        .await
        .unwrap();
    match store.stat(&p("/memories/d/a.md")).await.unwrap() {
        Some(Entry::File(meta)) => assert_eq!(meta.size, 1000),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store.stat(&p("/memories/d")).await.unwrap(),
        Some(Entry::Directory)
    );
    assert_eq!(store.stat(&p("/memories/nope")).await.unwrap(), None);
    let sizes: Vec<(String, u64)> = store
        .list(&p("/memories/d"))
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.path.to_string(), m.size))
        .collect();
    assert_eq!(
        sizes,
        [
            ("/memories/d/a.md".to_owned(), 1000),
            ("/memories/d/b.md".to_owned(), 0)
        ]
    );
    let inner: Vec<u64> = store
        .inner()
        .list(&p("/memories/d"))
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.size)
        .collect();
    assert_eq!(inner, [1000 + OVERHEAD, OVERHEAD]);
}

#[tokio::test]
async fn every_flipped_byte_is_detected_with_the_error_of_its_region() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    let path = p("/memories/tamper.md");
    store
        .write(&path, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let good = raw(&store, &path).await;
    for i in 0..good.len() {
        for bit in [0x01u8, 0x80] {
            let mut bad = good.clone();
            bad[i] ^= bit;
            let err = read_damaged(&store, &path, bad).await.unwrap_err();
            let err = encryption_error(&err);
            match i {
                0..=3 => assert!(
                    matches!(err, EncryptionError::NotEncrypted { .. }),
                    "byte {i}: {err:?}"
                ),
                4 => assert!(
                    matches!(err, EncryptionError::UnsupportedVersion { .. }),
                    "byte {i}: {err:?}"
                ),
                5..=12 => assert!(
                    matches!(err, EncryptionError::WrongKey { .. }),
                    "byte {i}: {err:?}"
                ),
                // Path tag, length, wrap nonce, wrapped data key, wrap tag.
                13..=88 => assert!(
                    matches!(
                        err,
                        EncryptionError::Tampered {
                            part: EnvelopePart::Header,
                            ..
                        }
                    ),
                    "byte {i}: {err:?}"
                ),
                // Content nonce, ciphertext, tag.
                _ => assert!(
                    matches!(
                        err,
                        EncryptionError::Tampered {
                            part: EnvelopePart::Body,
                            ..
                        }
                    ),
                    "byte {i}: {err:?}"
                ),
            }
        }
    }
    // The untouched file still reads.
    assert_eq!(
        read_damaged(&store, &path, good).await.unwrap(),
        SECRET.as_bytes()
    );
}

#[tokio::test]
async fn truncated_and_extended_files_are_refused() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    let path = p("/memories/cut.md");
    store
        .write(&path, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let good = raw(&store, &path).await;
    for len in 1..good.len() {
        let err = read_damaged(&store, &path, good[..len].to_vec())
            .await
            .unwrap_err();
        match encryption_error(&err) {
            EncryptionError::Truncated {
                actual, expected, ..
            } => {
                assert_eq!(*actual, len as u64);
                assert!(*expected > *actual);
            }
            other => panic!("cut to {len} bytes: {other:?}"),
        }
    }
    let mut longer = good.clone();
    longer.push(0);
    let err = read_damaged(&store, &path, longer).await.unwrap_err();
    assert!(matches!(
        encryption_error(&err),
        EncryptionError::Tampered {
            part: EnvelopePart::Body,
            ..
        }
    ));
}

#[tokio::test]
async fn a_ciphertext_copied_or_moved_to_another_path_is_refused() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    let a = p("/memories/a.md");
    let b = p("/memories/b.md");
    store
        .write(&a, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let bytes = raw(&store, &a).await;
    store
        .inner()
        .write(&b, bytes.clone(), WriteMode::Create)
        .await
        .unwrap();
    let err = store.read(&b).await.unwrap_err();
    assert!(
        matches!(encryption_error(&err), EncryptionError::WrongPath { path } if *path == b),
        "{err:?}"
    );
    // Changing the path tag (to forge one for the new path) breaks the header's
    // authentication instead.
    let mut forged = bytes;
    forged[13] ^= 1;
    let err = read_damaged(&store, &b, forged).await.unwrap_err();
    assert!(matches!(
        encryption_error(&err),
        EncryptionError::Tampered { .. }
    ));
    // A rename done behind the wrapper's back (on an inner store without history, which has
    // no record of it) is refused too.
    let key = Key::generate().unwrap();
    let store = store_without_history(&key);
    store
        .write(&a, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let c = p("/memories/moved/c.md");
    store.inner().rename(&a, &c).await.unwrap();
    let err = store.read(&c).await.unwrap_err();
    assert!(matches!(
        encryption_error(&err),
        EncryptionError::WrongPath { .. }
    ));
}

#[tokio::test]
async fn plaintext_files_and_wrong_keys_have_their_own_errors() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    // First change: the key check record is written; a plaintext file planted afterwards is
    // refused on its own read.
    store
        .write(&p("/memories/first.md"), b"1".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let old = p("/memories/from-before.md");
    store
        .inner()
        .write(&old, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let err = store.read(&old).await.unwrap_err();
    assert!(matches!(
        encryption_error(&err),
        EncryptionError::NotEncrypted { .. }
    ));
    // The application sees the cause; the Display of the wrapper error names the backend.
    assert!(err.to_string().starts_with("encrypted failed: "), "{err}");

    let path = p("/memories/secret.md");
    store
        .write(&path, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    // A file under a key the ring lacks, in a store whose key check the ring passes: the
    // file's own WrongKey.
    let newer = Key::generate().unwrap();
    let rotating = Encrypted::new(
        store.into_inner(),
        Keyring::new(newer.clone()).with_decryption_key(key.clone()),
    );
    let newer_file = p("/memories/newer.md");
    rotating
        .write(&newer_file, SECRET.as_bytes().to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let old_only = Encrypted::new(rotating.into_inner(), Keyring::new(key.clone()));
    let err = old_only.read(&newer_file).await.unwrap_err();
    match encryption_error(&err) {
        EncryptionError::WrongKey { key_id, .. } => assert_eq!(*key_id, newer.id()),
        other => panic!("{other:?}"),
    }
    // The message names the key id, never key material.
    assert!(
        err.source()
            .unwrap()
            .to_string()
            .contains(&newer.id().to_string())
    );
}

#[tokio::test]
async fn rename_reencrypts_files_and_directories_for_their_new_paths() {
    let key = Key::generate().unwrap();
    let store = store(&key);
    for (path, text) in [
        ("/memories/proj/a.md", "alpha\n"),
        ("/memories/proj/sub/b.md", "beta\n"),
        ("/memories/other.md", "other\n"),
    ] {
        store
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    store
        .rename(&p("/memories/proj"), &p("/memories/archive/2024"))
        .await
        .unwrap();
    assert_eq!(
        store
            .read(&p("/memories/archive/2024/a.md"))
            .await
            .unwrap()
            .contents,
        b"alpha\n"
    );
    assert_eq!(
        store
            .read(&p("/memories/archive/2024/sub/b.md"))
            .await
            .unwrap()
            .contents,
        b"beta\n"
    );
    assert_eq!(store.stat(&p("/memories/proj")).await.unwrap(), None);
    store
        .rename(&p("/memories/other.md"), &p("/memories/renamed.md"))
        .await
        .unwrap();
    assert_eq!(
        store
            .read(&p("/memories/renamed.md"))
            .await
            .unwrap()
            .contents,
        b"other\n"
    );
    let paths: Vec<String> = store
        .inner()
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect();
    assert_eq!(
        paths,
        [
            memory_encrypted::KEY_CHECK_PATH,
            "/memories/archive/2024/a.md",
            "/memories/archive/2024/sub/b.md",
            "/memories/renamed.md"
        ]
    );

    // The contract's errors, in the contract's order.
    assert!(matches!(
        store.rename(&p("/memories/nope"), &p("/memories/x")).await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        store
            .rename(&p("/memories/archive"), &p("/memories/archive/x"))
            .await,
        Err(Error::RenameIntoItself { .. })
    ));
    assert!(matches!(
        store
            .rename(&p("/memories/renamed.md"), &p("/memories/archive"))
            .await,
        Err(Error::AlreadyExists { .. })
    ));
    assert!(matches!(
        store
            .rename(&p("/memories/archive"), &p("/memories/renamed.md/x"))
            .await,
        Err(Error::ParentIsFile { .. })
    ));
}

#[tokio::test]
async fn a_rename_that_cannot_decrypt_a_file_changes_nothing() {
    // Without history a rename re-encrypts each file (with history it is the inner store's
    // rename, which decrypts nothing).
    let key = Key::generate().unwrap();
    let store = store_without_history(&key);
    store
        .write(&p("/memories/d/a.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .inner()
        .write(
            &p("/memories/d/b.md"),
            b"plaintext".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    store
        .write(&p("/memories/d/c.md"), b"c".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let err = store
        .rename(&p("/memories/d"), &p("/memories/e"))
        .await
        .unwrap_err();
    assert!(matches!(
        encryption_error(&err),
        EncryptionError::NotEncrypted { .. }
    ));
    assert_eq!(store.stat(&p("/memories/e")).await.unwrap(), None);
    assert_eq!(store.list(&p("/memories/d")).await.unwrap().len(), 3);
    assert_eq!(
        store.read(&p("/memories/d/a.md")).await.unwrap().contents,
        b"a"
    );
}
