use super::*;

async fn open_err(url: &str) -> OpenError {
    match open(url).await {
        Ok(store) => panic!("{url} opened as {store}"),
        Err(err) => err,
    }
}

#[tokio::test]
async fn memory_store_opens() {
    for url in ["mem:", "mem://", "MEMORY:"] {
        let store = open(url).await.unwrap();
        let root = memory_core::MemoryPath::parse("/memories").unwrap();
        assert!(store.list(&root).await.unwrap().is_empty());
    }
    let err = open_err("mem:x").await;
    assert!(err.to_string().contains("`mem:` takes nothing"), "{err}");
}

#[tokio::test]
async fn invalid_urls_are_refused_with_the_schemes_of_this_build() {
    let err = open_err("ftp://host/x?password=secret").await;
    let OpenError::InvalidUrl { url, source } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(url, "ftp://host/x");
    assert!(matches!(source, StoreUrlError::UnknownScheme { .. }));
    let text = err.to_string();
    assert!(text.contains("unknown store scheme `ftp:`"), "{text}");
    assert!(!text.contains("secret"), "{text}");
    for scheme in compiled_schemes() {
        assert!(text.contains(scheme.form()), "{text}");
    }
    assert!(matches!(open_err("").await, OpenError::InvalidUrl { .. }));
}

#[tokio::test]
async fn unknown_options_are_named_with_the_accepted_ones() {
    let err = open_err("mem:?bogus=1").await;
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "cannot open store `mem:`: unknown store option `bogus`: remove it, or use one of the \
         options this store accepts: history, history_days, history_max, history_session"
    );
    // An option given both in the URL and by the program is refused.
    let options = OpenOptions::new().with_store_option("sync", "full");
    let err = open_with("mem:?sync=none", &options).await.unwrap_err();
    assert!(err.to_string().contains("more than once"), "{err}");
    // The program's options are checked like the URL's.
    let err = open_with("mem:", &options).await.unwrap_err();
    assert!(
        err.to_string().contains("unknown store option `sync`"),
        "{err}"
    );
}

/// Every scheme this build lacks says which feature to enable.
#[tokio::test]
async fn compiled_out_schemes_name_their_feature() {
    let examples = [
        (Scheme::Dir, "./memory"),
        (Scheme::Sqlite, "sqlite:m.db"),
        (Scheme::S3, "s3://bucket"),
        (Scheme::Postgres, "postgres://u@127.0.0.1:1/db"),
        (Scheme::StoreSqlite, "store+sqlite:x.db#memstore_1"),
        (Scheme::StoreHttp, "store+http://127.0.0.1:1#memstore_1"),
    ];
    for (scheme, url) in examples {
        if scheme.is_compiled() {
            continue;
        }
        let err = open_err(url).await;
        let feature = scheme.feature().unwrap();
        assert!(
            matches!(err, OpenError::NotCompiled { feature: f, .. } if f == feature),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains(&format!("compiled without feature `{feature}`")),
            "{text}"
        );
        assert!(text.contains("this build opens: "), "{text}");
        assert!(text.contains("mem:"), "{text}");
    }
}

#[cfg(feature = "fs")]
#[tokio::test]
async fn folder_store_opens() {
    use memory_core::{MemoryHandler, MemoryTool};
    let dir = tempfile::tempdir().unwrap();
    for url in [
        dir.path().join("a").display().to_string(),
        format!("file:{}", dir.path().join("b").display()),
        format!("file://{}", dir.path().join("c").display()),
    ] {
        let tool = MemoryTool::new(open(&url).await.unwrap());
        let out = tool
            .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
            .await;
        assert!(!out.is_error, "{out:?}");
    }
    for sub in ["a", "b", "c"] {
        let file = dir.path().join(sub).join("memories/a.md");
        assert_eq!(std::fs::read_to_string(file).unwrap(), "x");
    }
    let err = open_err("file:").await;
    let OpenError::Open { source, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(
        source.downcast_ref::<memory_fs::FsOpenError>().is_some(),
        "{err:?}"
    );
    // memory-fs's options, from the URL or from the program.
    let url = format!("file:{}?sync=none", dir.path().join("d").display());
    open(&url).await.unwrap();
    let bogus = format!("{}?bogus=1", dir.path().join("e").display());
    let err = open_err(&bogus).await;
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
    assert!(err.to_string().contains("`bogus`"), "{err}");
    assert!(err.to_string().contains("sync"), "{err}");
    assert!(
        !dir.path().join("e").exists(),
        "nothing is created for a refused option"
    );
    let options = OpenOptions::new().with_store_option("sync", "fast");
    let err = open_with(&dir.path().join("f").display().to_string(), &options)
        .await
        .unwrap_err();
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("m.db").display());
    let store = open(&url).await.unwrap();
    assert!(
        store.to_string().to_lowercase().contains("sqlite"),
        "{store}"
    );
    assert!(dir.path().join("m.db").exists());
    assert!(
        open_err("sqlite:")
            .await
            .to_string()
            .contains("sqlite:PATH")
    );
}

#[cfg(feature = "s3")]
#[tokio::test]
async fn s3_store_opens_without_sending_anything() {
    // Building an S3 store sends nothing, so no server is needed. (Without a key an open
    // asks the store whether it is encrypted, one GET of the key-check record; opened as
    // its plaintext bytes, nothing is asked.)
    let plain = OpenOptions::new().with_plaintext_only();
    let store = open_with("s3://agent-memory/team-a", &plain).await.unwrap();
    // With `search-index`, wrapped in its (in-memory, not yet opened) side index.
    let shown = if cfg!(feature = "search-index") {
        "Indexed(S3(s3://agent-memory/team-a))"
    } else {
        "S3(s3://agent-memory/team-a)"
    };
    assert_eq!(store.to_string(), shown);
    // memory-s3's parser and options, not ours: its typed error, kept behind the box.
    let err = open_err("s3://").await;
    let OpenError::Open { source, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(
        source.downcast_ref::<memory_s3::S3OpenError>().is_some(),
        "{err:?}"
    );
    let err = open_err("s3://b?bogus=1").await;
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
    assert!(err.to_string().contains("`bogus`"), "{err}");
    let store = open_with("s3://b/p?region=eu-west-1", &plain)
        .await
        .unwrap();
    let shown = if cfg!(feature = "search-index") {
        "Indexed(S3(s3://b/p))"
    } else {
        "S3(s3://b/p)"
    };
    assert_eq!(store.to_string(), shown);
}

#[cfg(feature = "stores")]
#[tokio::test]
async fn store_urls_open_existing_stores_only() {
    use memory_core::{MemoryHandler, MemoryTool};
    use memory_mounts::memory_store::{CreateStore, ListVersions, MemoryStores};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let missing = format!("store+sqlite:{}#memstore_1", db.display());
    let err = open_err(&missing).await;
    assert!(
        err.to_string().contains("no memory-stores database"),
        "{err}"
    );
    for (url, text) in [
        ("store+sqlite:./stores.db", "the store's id after `#`"),
        ("store+sqlite:./stores.db#", "the store's id after `#`"),
        ("store+http://h:1#a/b", "the store's id after `#`"),
        ("store+sqlite:#memstore_1", "store+sqlite:PATH#STORE_ID"),
        ("store+http:h#memstore_1", "names no server"),
        ("store+http://#memstore_1", "names no server"),
        (
            "store+sqlite:x.db?bogus=1#memstore_1",
            "unknown store option `bogus`",
        ),
    ] {
        let err = open_err(url).await;
        assert!(err.to_string().contains(text), "{url}: {err}");
    }
    let engine = MemoryStores::open(&db).await.unwrap();
    let store = engine
        .create_store(CreateStore {
            name: "Notes".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let err = open_err(&format!("store+sqlite:{}#memstore_nope", db.display())).await;
    assert!(err.to_string().contains("not found"), "{err}");
    let url: StoreUrl = format!("store+sqlite:{}#{}", db.display(), store.id)
        .parse()
        .unwrap();
    let options = OpenOptions::new().with_session_id("sesn_test");
    let tool = MemoryTool::new(open_url(&url, &options).await.unwrap());
    let out = tool
        .execute(
            &serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}),
        )
        .await;
    assert!(!out.is_error, "{out:?}");
    let versions = engine
        .list_versions(&store.id, ListVersions::default())
        .await
        .unwrap();
    assert_eq!(
        versions.data[0].created_by,
        Some(memory_mounts::memory_store::Actor::session("sesn_test"))
    );
    let encrypted = options.with_encryption_key_file(dir.path().join("key"));
    let err = open_url(&url, &encrypted).await.expect_err("no envelope");
    assert!(err.to_string().contains("cannot be encrypted"), "{err}");
}

#[cfg(feature = "stores")]
#[tokio::test]
async fn mounts_of_plain_stores_need_a_name() {
    let named: memory_mounts::MountSpec = "notes=mem:".parse().unwrap();
    open_mount(&named, &OpenOptions::new()).await.unwrap();
    let unnamed: memory_mounts::MountSpec = "mem:".parse().unwrap();
    let err = open_mount(&unnamed, &OpenOptions::new()).await.unwrap_err();
    assert!(err.to_string().contains("NAME=URL"), "{err}");
}

#[cfg(feature = "encrypted")]
#[tokio::test]
async fn encryption_wraps_any_store_from_a_key_file_or_a_keyring() {
    use memory_core::{MemoryHandler, MemoryTool};
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("key");
    let key = memory_encrypted::generate_key_file(&key_file).unwrap();
    let by_file = OpenOptions::new().with_encryption_key_file(&key_file);
    let by_ring = OpenOptions::new().with_keyring(memory_encrypted::Keyring::new(key));
    for options in [by_file, by_ring] {
        let store = open_with("mem:", &options).await.unwrap();
        assert!(store.to_string().contains("Encrypted"), "{store}");
        let tool = MemoryTool::new(store);
        let out = tool
            .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
            .await;
        assert!(!out.is_error, "{out:?}");
    }
    let missing = OpenOptions::new().with_encryption_key_file(dir.path().join("nope"));
    let err = open_with("mem:", &missing).await.expect_err("no key");
    assert!(matches!(err, OpenError::KeyFile { .. }), "{err}");
    // The key check runs at open: a store holding files under another key is refused.
    #[cfg(feature = "fs")]
    {
        let folder = dir.path().join("folder").display().to_string();
        let store = open_with(
            &folder,
            &OpenOptions::new().with_encryption_key_file(&key_file),
        )
        .await
        .unwrap();
        let out = MemoryTool::new(store)
            .execute(&serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "x"}))
            .await;
        assert!(!out.is_error, "{out:?}");
        let other = memory_encrypted::Keyring::new(memory_encrypted::Key::generate().unwrap());
        let err = open_with(&folder, &OpenOptions::new().with_keyring(other))
            .await
            .expect_err("wrong key");
        let OpenError::Open { source, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            matches!(
                source.downcast_ref::<memory_encrypted::KeyCheckError>(),
                Some(memory_encrypted::KeyCheckError::WrongKey { .. })
            ),
            "{err:?}"
        );
    }
}

#[cfg(feature = "encrypted")]
#[test]
fn the_key_check_record_is_memory_encrypteds() {
    assert_eq!(KEY_CHECK_PATH, memory_encrypted::KEY_CHECK_PATH);
}

#[cfg(not(feature = "encrypted"))]
#[tokio::test]
async fn encryption_needs_encrypted() {
    let options = OpenOptions::new().with_encryption_key_file("key");
    let err = open_with("mem:", &options)
        .await
        .expect_err("no encryption");
    assert!(
        err.to_string()
            .contains("compiled without feature `encrypted`"),
        "{err}"
    );
}

/// A session id reaches a plain store's history as `history_session`; one the URL or the
/// program's store options give wins; an id the history cannot record is refused.
#[tokio::test]
async fn the_session_id_is_recorded_in_a_plain_stores_history() {
    use memory_core::{MemoryPath, WriteMode};
    let path = MemoryPath::parse("/memories/a.md").unwrap();
    let session_of = |store: Arc<dyn Storage>| {
        let path = path.clone();
        async move {
            store
                .write(&path, b"x".to_vec(), WriteMode::Create)
                .await
                .unwrap();
            store.history(&path).await.unwrap()[0].session.clone()
        }
    };
    let options = OpenOptions::new().with_session_id("sesn_a.1");
    let store = open_with("mem:", &options).await.unwrap();
    assert_eq!(session_of(store).await.as_deref(), Some("sesn_a.1"));
    let store = open_with("mem:?history_session=from-url", &options)
        .await
        .unwrap();
    assert_eq!(session_of(store).await.as_deref(), Some("from-url"));
    let given = options
        .clone()
        .with_store_option("history_session", "given");
    let store = open_with("mem:", &given).await.unwrap();
    assert_eq!(session_of(store).await.as_deref(), Some("given"));
    let store = open("mem:").await.unwrap();
    assert_eq!(session_of(store).await, None);

    let err = open_with("mem:", &OpenOptions::new().with_session_id("a b"))
        .await
        .unwrap_err();
    let OpenError::Unavailable { source, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(
        matches!(
            source.downcast_ref::<Refusal>(),
            Some(Refusal::InvalidHistorySession { session }) if session == "a b"
        ),
        "{err:?}"
    );
}

/// `mem:` takes the history options: `history=off` keeps none.
#[tokio::test]
async fn the_memory_store_takes_the_history_options() {
    let store = open("mem:?history=off").await.unwrap();
    let root = memory_core::MemoryPath::root();
    assert!(matches!(
        store.history(&root).await,
        Err(memory_core::Error::HistoryOff)
    ));
    let err = open_err("mem:?history_max=0").await;
    assert!(matches!(err, OpenError::Options { .. }), "{err:?}");
}
