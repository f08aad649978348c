//! `FsStorage::from_url`: every folder URL form the store URLs of `memory` accept, options from
//! the query and from the caller, and refusals that name what to change and create nothing.

use std::time::Duration;

use memory_core::options::{OptionsError, StoreOptions, SyncMode};
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_fs::{Blocking, FsOpenError, FsStorage};

#[tokio::test]
async fn every_folder_url_form_opens_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("store");
    let first = FsStorage::from_url(base.to_str().unwrap(), StoreOptions::new()).unwrap();
    let path = MemoryPath::parse("/memories/a.md").unwrap();
    first
        .write(&path, b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let abs = base.display();
    for url in [
        format!("{abs}"),
        format!("file:{abs}"),
        format!("FILE:{abs}"),
        format!("file://{abs}"),
        format!("file:{abs}?sync=data"),
    ] {
        let store = FsStorage::from_url(&url, StoreOptions::new()).unwrap();
        assert_eq!(store.base(), base, "{url}");
        assert_eq!(store.read(&path).await.unwrap().contents, b"a", "{url}");
    }
}

#[test]
fn options_come_from_the_query_and_from_the_caller_who_wins() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "file:{}?sync=data&blocking=spawn&stale_temp_age=2m",
        dir.path().display()
    );
    let store = FsStorage::from_url(&url, StoreOptions::new()).unwrap();
    assert_eq!(store.options().sync, SyncMode::Data);
    assert_eq!(store.options().blocking, Blocking::Spawn);
    assert_eq!(store.options().stale_temp_age, Duration::from_secs(120));

    let store = FsStorage::from_url(&url, StoreOptions::from_pairs([("sync", "none")])).unwrap();
    assert_eq!(store.options().sync, SyncMode::None);
    assert_eq!(store.options().blocking, Blocking::Spawn);

    let store = FsStorage::from_url(
        dir.path().to_str().unwrap(),
        StoreOptions::from_pairs([("blocking", "inline")]),
    )
    .unwrap();
    assert_eq!(store.options().sync, SyncMode::Full, "the default");
    assert_eq!(store.options().blocking, Blocking::Inline);
}

#[test]
fn refusals_name_what_to_change_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("never");
    let at = |query: &str| format!("file:{}?{query}", base.display());

    let e = FsStorage::from_url(&at("bogus=1"), StoreOptions::new()).unwrap_err();
    match &e {
        FsOpenError::Options(OptionsError::UnknownOption { key, accepted }) => {
            assert_eq!(key, "bogus");
            assert_eq!(
                accepted,
                &[
                    "sync",
                    "blocking",
                    "stale_temp_age",
                    "portable",
                    "history",
                    "history_days",
                    "history_max",
                    "history_session"
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        e.to_string(),
        "unknown store option `bogus`: remove it, or use one of the options this store accepts: sync, blocking, stale_temp_age, portable, history, history_days, history_max, history_session"
    );
    let e = FsStorage::from_url(
        base.to_str().unwrap(),
        StoreOptions::from_pairs([("fsync", "no")]),
    )
    .unwrap_err();
    assert!(
        matches!(&e, FsOpenError::Options(OptionsError::UnknownOption { key, .. }) if key == "fsync"),
        "{e:?}"
    );
    for (query, key) in [
        ("sync=fast", "sync"),
        ("blocking=never", "blocking"),
        ("stale_temp_age=10", "stale_temp_age"),
    ] {
        let e = FsStorage::from_url(&at(query), StoreOptions::new()).unwrap_err();
        assert!(
            matches!(&e, FsOpenError::Options(OptionsError::InvalidValue { key: k, .. }) if k == key),
            "{query}: {e:?}"
        );
    }
    let e = FsStorage::from_url(&at("sync"), StoreOptions::new()).unwrap_err();
    assert!(
        matches!(e, FsOpenError::Options(OptionsError::MissingValue { .. })),
        "{e:?}"
    );
    for url in [
        "",
        "file:",
        "sqlite:m.db",
        "mem:",
        "s3://bucket/x",
        "notes:2024",
    ] {
        let e = FsStorage::from_url(url, StoreOptions::new()).unwrap_err();
        assert!(matches!(e, FsOpenError::Url { .. }), "{url}: {e:?}");
    }
    assert!(!base.exists(), "a refused URL or option creates nothing");
}

#[test]
fn a_folder_that_cannot_be_opened_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let e = FsStorage::from_url(file.to_str().unwrap(), StoreOptions::new()).unwrap_err();
    assert!(
        matches!(e, FsOpenError::Open(memory_core::Error::Backend { .. })),
        "{e:?}"
    );
}
