//! Opening a store: migrations (once, under a lock, never backwards), roots and schemas kept
//! apart, bad options, an unreachable or refusing server, and no password in any text.

mod common;

use std::sync::Arc;
use std::time::Duration;

use memory_core::history::Change;
use memory_core::options::{OptionsError, StoreOptions};
use memory_core::{Error, MemoryPath, Storage, WriteMode};
use memory_postgres::{PostgresOpenError, PostgresStorage, SCHEMA_VERSION};

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

async fn migrations(schema: &str) -> Vec<i32> {
    common::admin()
        .await
        .query(
            &format!("SELECT version FROM \"{schema}\".schema_migrations ORDER BY version"),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_opens_of_a_new_schema_migrate_it_once() {
    let schema = common::unique("race");
    let mut opens = Vec::new();
    for i in 0..8 {
        let url = common::url_with(&format!("schema={schema}&root=r{i}"));
        opens.push(tokio::spawn(async move {
            PostgresStorage::from_url(&url, StoreOptions::new()).await
        }));
    }
    let mut stores = Vec::new();
    for open in opens {
        stores.push(open.await.unwrap().expect("every concurrent open succeeds"));
    }
    assert_eq!(
        migrations(&schema).await,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>()
    );
    for store in &stores {
        assert_eq!(store.file_count().await.unwrap(), 0);
    }
    // Opening again changes nothing.
    let again = common::open(&format!("schema={schema}&root=r0")).await;
    assert_eq!(again.schema(), schema);
    assert_eq!(
        migrations(&schema).await,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn an_older_schema_is_migrated_forward_keeping_its_files() {
    let schema = common::unique("older");
    let store = common::open(&format!("schema={schema}&root=r")).await;
    store
        .write(&p("/memories/keep.md"), b"kept".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    // Take the schema back to version 1, as the first release left it.
    common::admin()
        .await
        .batch_execute(&format!(
            "DROP TABLE \"{schema}\".stores, \"{schema}\".memories, \"{schema}\".memory_versions,
                 \"{schema}\".history;
             DROP TRIGGER files_words_stale ON \"{schema}\".files;
             DROP FUNCTION \"{schema}\".files_words_stale();
             ALTER TABLE \"{schema}\".files DROP COLUMN words;
             DELETE FROM \"{schema}\".schema_migrations WHERE version > 1"
        ))
        .await
        .unwrap();
    assert_eq!(migrations(&schema).await, [1]);
    let reopened = common::open(&format!("schema={schema}&root=r")).await;
    assert_eq!(
        migrations(&schema).await,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>()
    );
    assert_eq!(
        reopened
            .read(&p("/memories/keep.md"))
            .await
            .unwrap()
            .contents,
        b"kept"
    );
    let tables: i64 = common::admin()
        .await
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'memory_versions'",
            &[&schema],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "migration 2 ran");
    // Migration 3 (search): the file from before is found by the first search.
    let hits = reopened
        .search(&memory_core::search::SearchQuery::new("kept").unwrap())
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, p("/memories/keep.md"));
    // Migration 5 (history): the first change of a file from before history keeps what it
    // replaced, as a revision of its own.
    let keep = p("/memories/keep.md");
    reopened
        .write(&keep, b"changed".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let revisions = reopened.history(&keep).await.unwrap();
    let changes: Vec<(u64, Change)> = revisions.iter().map(|r| (r.number, r.change)).collect();
    assert_eq!(changes, [(2, Change::Modified), (1, Change::Created)]);
    assert_eq!(reopened.read_revision(&keep, 1).await.unwrap(), b"kept");
    assert_eq!(reopened.read_revision(&keep, 2).await.unwrap(), b"changed");
}

#[tokio::test]
async fn a_schema_newer_than_this_build_is_refused_naming_both_versions() {
    let schema = common::unique("newer");
    let store = common::open(&format!("schema={schema}")).await;
    store
        .write(&p("/memories/keep.md"), b"kept".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let newer = SCHEMA_VERSION + 1;
    common::admin()
        .await
        .execute(
            &format!("INSERT INTO \"{schema}\".schema_migrations (version) VALUES ($1)"),
            &[&newer],
        )
        .await
        .unwrap();
    let e = PostgresStorage::from_url(
        &common::url_with(&format!("schema={schema}")),
        StoreOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::SchemaTooNew { found, supported, .. }
            if *found == newer && *supported == SCHEMA_VERSION),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains(&format!("version {newer}"))
            && text.contains(&format!("version {SCHEMA_VERSION}")),
        "{text}"
    );
    // Refusing touched nothing: the file is still there for the newer build.
    assert_eq!(
        store.read(&p("/memories/keep.md")).await.unwrap().contents,
        b"kept"
    );
}

#[tokio::test]
async fn another_applications_schema_is_left_alone() {
    let schema = common::unique("foreign");
    let admin = common::admin().await;
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA \"{schema}\"; CREATE TABLE \"{schema}\".invoices (id int)"
        ))
        .await
        .unwrap();
    let e = PostgresStorage::from_url(
        &common::url_with(&format!("schema={schema}")),
        StoreOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::ForeignSchema { tables, .. } if tables == "invoices"),
        "{e:?}"
    );
    let tables: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1",
            &[&schema],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing was created in the foreign schema");

    // An empty schema an operator made for the store is fine.
    let empty = common::unique("empty");
    admin
        .batch_execute(&format!("CREATE SCHEMA \"{empty}\""))
        .await
        .unwrap();
    let store = common::open(&format!("schema={empty}")).await;
    assert_eq!(store.file_count().await.unwrap(), 0);
}

#[tokio::test]
async fn roots_and_schemas_are_separate_stores() {
    let schema = common::unique("sep");
    let a = common::open(&format!("schema={schema}&root=tenant-a")).await;
    let b = common::open(&format!("schema={schema}&root=tenant_b")).await;
    let other = common::open(&format!("schema={}&root=tenant-a", common::unique("sep2"))).await;
    a.write(&p("/memories/x/one.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(a.file_count().await.unwrap(), 1);
    assert_eq!(b.file_count().await.unwrap(), 0);
    assert_eq!(other.file_count().await.unwrap(), 0);
    assert!(b.stat(&p("/memories/x")).await.unwrap().is_none());
    // The same path in another root is a different file.
    b.write(&p("/memories/x/one.md"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    b.delete(&p("/memories")).await.unwrap();
    assert_eq!(
        a.read(&p("/memories/x/one.md")).await.unwrap().contents,
        b"a"
    );
    assert!(a.to_string().contains("root=tenant-a"), "{a}");
}

#[tokio::test]
async fn unknown_and_bad_options_are_typed_errors() {
    let e = PostgresStorage::from_url(
        &common::url_with("schema=memory_tests&colour=red"),
        StoreOptions::new(),
    )
    .await
    .unwrap_err();
    match &e {
        PostgresOpenError::Options(OptionsError::UnknownOption { key, accepted }) => {
            assert_eq!(key, "colour");
            assert!(accepted.iter().any(|a| a == "root"), "{accepted:?}");
        }
        other => panic!("unknown option: {other:?}"),
    }
    let e = PostgresStorage::from_url(&common::url_with("root=a%2Fb"), StoreOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(e, PostgresOpenError::InvalidRoot { .. }), "{e:?}");
    let e = PostgresStorage::from_url(
        &common::url(),
        StoreOptions::from_pairs([("schema", "Bad-Name")]),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, PostgresOpenError::InvalidSchema { .. }),
        "{e:?}"
    );
}

/// The URL with its password replaced.
fn with_password(url: &str, password: &str) -> String {
    url.replacen(
        &format!(":{}@", common::password()),
        &format!(":{password}@"),
        1,
    )
}

/// The URL with its host and port replaced.
fn with_address(url: &str, address: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (userinfo, rest) = rest.split_once('@').unwrap();
    let (_, path) = rest.split_once('/').unwrap();
    format!("{scheme}://{userinfo}@{address}/{path}")
}

fn all_texts(e: &PostgresOpenError) -> String {
    let mut out = format!("{e} | {e:?}");
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(&format!(" | {s} | {s:?}"));
        source = s.source();
    }
    out
}

#[tokio::test]
async fn an_unreachable_server_names_host_and_port_never_the_password() {
    // A port nothing listens on: bound, then released.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = with_address(&common::url(), &format!("127.0.0.1:{port}"));
    let e = PostgresStorage::from_url(&url, StoreOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::Unreachable { host, port: got, .. } if host == "127.0.0.1" && *got == port),
        "{e:?}"
    );
    assert!(e.is_retryable());
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
    let texts = all_texts(&e);
    assert!(!texts.contains(&common::password()), "{texts}");

    // A server that accepts the connection and never answers: the connect timeout runs out.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let url = with_address(&common::url(), &format!("127.0.0.1:{port}"));
    let started = std::time::Instant::now();
    let e = PostgresStorage::from_url(&format!("{url}?connect_timeout=300ms"), StoreOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::Unreachable { port: got, .. } if *got == port),
        "{e:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the timeout bounds the wait"
    );
    assert!(!all_texts(&e).contains(&common::password()));
    hold.abort();
}

#[tokio::test]
async fn a_wrong_password_is_rejected_without_showing_either_password() {
    let wrong = "not-the-Pa55word";
    let url = with_password(&common::url(), wrong);
    let e = PostgresStorage::from_url(&url, StoreOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::Rejected { user, .. } if user == "memory"),
        "{e:?}"
    );
    assert!(!e.is_retryable());
    let texts = all_texts(&e);
    assert!(!texts.contains(wrong), "{texts}");
    assert!(!texts.contains(&common::password()), "{texts}");
}

#[tokio::test]
async fn an_open_store_never_shows_its_password() {
    let store = common::fresh_root().await;
    let password = common::password();
    for text in [
        store.to_string(),
        format!("{store:?}"),
        format!("{store:#?}"),
    ] {
        assert!(!text.contains(&password), "{text}");
        assert!(text.contains("127.0.0.1"), "{text}");
    }
    // Nor does an error a call returns.
    let e = store.read(&p("/memories/none.md")).await.unwrap_err();
    assert!(!format!("{e} {e:?}").contains(&password));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_connections_are_retryable_errors_and_the_pool_recovers() {
    let app = common::unique("killed");
    let store = Arc::new(
        common::open(&format!(
            "schema={}&root={app}&pool_size=2&application_name={app}",
            common::SHARED_SCHEMA
        ))
        .await,
    );
    store
        .write(&p("/memories/a.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let admin = common::admin().await;
    let killed: i64 = admin
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) t",
            &[&app],
        )
        .await
        .unwrap()
        .get(0);
    assert!(killed >= 1, "the store's connections were found");
    let mut errors = Vec::new();
    let mut served = false;
    for _ in 0..20 {
        match store.read(&p("/memories/a.md")).await {
            Ok(file) => {
                assert_eq!(file.contents, b"a");
                served = true;
                break;
            }
            Err(e) => {
                assert!(
                    matches!(
                        &e,
                        Error::Backend {
                            retryable: true,
                            ..
                        }
                    ),
                    "a lost connection is a retryable backend error, got {e:?}"
                );
                errors.push(e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    assert!(served, "the pool serves again; errors: {errors:?}");
    // Writes work again too, and nothing was lost.
    store
        .write(&p("/memories/b.md"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(store.file_count().await.unwrap(), 2);
}
