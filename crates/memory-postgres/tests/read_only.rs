//! Read-only opens (`from_url_read_only`): a missing, older, newer or foreign schema and a
//! missing root refused with what to do, creating nothing; reads as usual; every change
//! refused with core's read-only refusal, the database byte for byte as it was; the sessions
//! read-only on the server's side.

mod common;

use memory_core::options::StoreOptions;
use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_postgres::{PostgresOpenError, PostgresStorage, SCHEMA_VERSION};

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

/// Everything in the database a read-only open could change: whether `schema` exists, its
/// `schema`, every row of its tables in order (as JSON text, bytea as hex) and its sequences'
/// values.
async fn dump(schema: &str) -> Vec<String> {
    memory_postgres::testing::dump_schema(&common::admin().await, schema).await
}

async fn open_read_only(options: &str) -> Result<PostgresStorage, PostgresOpenError> {
    PostgresStorage::from_url_read_only(&common::url_with(options), StoreOptions::new()).await
}

#[tokio::test]
async fn a_missing_schema_is_refused_and_not_created() {
    let schema = common::unique("ro_missing");
    let before = dump(&schema).await;
    let e = open_read_only(&format!("schema={schema}"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::SchemaMissing { schema: s, .. } if *s == schema),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains(&schema) && text.contains("without read-only"),
        "{text}"
    );
    assert!(!text.contains(&common::password()), "{text}");
    assert_eq!(dump(&schema).await, before, "the open created something");
}

#[tokio::test]
async fn an_older_newer_empty_or_foreign_schema_is_refused_and_left_as_it_was() {
    let admin = common::admin().await;
    // Older: the newest migration's record removed (as if written by an older release).
    let older = common::unique("ro_older");
    common::open(&format!("schema={older}&root=r")).await;
    admin
        .execute(
            &format!("DELETE FROM \"{older}\".schema_migrations WHERE version = $1"),
            &[&SCHEMA_VERSION],
        )
        .await
        .unwrap();
    let before = dump(&older).await;
    let e = open_read_only(&format!("schema={older}&root=r"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::SchemaNeedsUpgrade { found, supported, .. }
            if *found == SCHEMA_VERSION - 1 && *supported == SCHEMA_VERSION),
        "{e:?}"
    );
    assert!(e.to_string().contains("without read-only"), "{e}");
    assert_eq!(dump(&older).await, before, "the open migrated something");

    // Newer.
    let newer = common::unique("ro_newer");
    common::open(&format!("schema={newer}&root=r")).await;
    admin
        .execute(
            &format!("INSERT INTO \"{newer}\".schema_migrations (version) VALUES ($1)"),
            &[&(SCHEMA_VERSION + 1)],
        )
        .await
        .unwrap();
    let before = dump(&newer).await;
    let e = open_read_only(&format!("schema={newer}&root=r"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::SchemaTooNew { found, .. } if *found == SCHEMA_VERSION + 1),
        "{e:?}"
    );
    assert_eq!(dump(&newer).await, before);

    // Empty (made by an operator): version 0, and no migration table is made for it.
    let empty = common::unique("ro_empty");
    admin
        .batch_execute(&format!("CREATE SCHEMA \"{empty}\""))
        .await
        .unwrap();
    let before = dump(&empty).await;
    let e = open_read_only(&format!("schema={empty}"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::SchemaNeedsUpgrade { found: 0, .. }),
        "{e:?}"
    );
    assert_eq!(dump(&empty).await, before);

    // Another application's.
    let foreign = common::unique("ro_foreign");
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA \"{foreign}\"; CREATE TABLE \"{foreign}\".orders (id int)"
        ))
        .await
        .unwrap();
    let e = open_read_only(&format!("schema={foreign}"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::ForeignSchema { .. }),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_missing_root_is_refused_and_no_row_is_written() {
    let schema = common::unique("ro_root");
    let store = common::open(&format!("schema={schema}&root=there")).await;
    store
        .write(&p("/memories/a.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let before = dump(&schema).await;
    let e = open_read_only(&format!("schema={schema}&root=elsewhere"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::RootMissing { root, .. } if root == "elsewhere"),
        "{e:?}"
    );
    assert!(e.to_string().contains("?root="), "{e}");
    assert_eq!(dump(&schema).await, before, "the open wrote a root row");
}

/// Reads, search included, over a row another program rewrote (its words cleared, so a
/// read-write search would index it: a write): the read-only one reads instead, and every
/// change is refused, the database as it was. (A store this library made alone is the
/// conformance suite's `reopen` check: tests/conformance.rs.)
#[tokio::test]
async fn reads_work_and_every_change_is_refused_changing_nothing() {
    let schema = common::unique("ro_store");
    let writer = common::open(&format!("schema={schema}&root=r")).await;
    for (path, text) in [
        ("/memories/a.md", "alpha notes"),
        ("/memories/dir/b.md", "beta notes"),
    ] {
        writer
            .write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    // A row another program rewrote: its words are cleared, so a read-write search would
    // index it (a write); the read-only one must read instead.
    common::admin()
        .await
        .execute(
            &format!(
                "UPDATE \"{schema}\".files SET contents = 'gamma notes' WHERE root = 'r' AND path = '/memories/dir/b.md'"
            ),
            &[],
        )
        .await
        .unwrap();
    let before = dump(&schema).await;

    let store = open_read_only(&format!("schema={schema}&root=r"))
        .await
        .unwrap();
    assert!(store.is_read_only());
    assert_eq!(
        store.read(&p("/memories/a.md")).await.unwrap().contents,
        b"alpha notes"
    );
    assert_eq!(store.list(&MemoryPath::root()).await.unwrap().len(), 2);
    assert_eq!(store.file_count().await.unwrap(), 2);
    let hits = store
        .search(&SearchQuery::new("gamma").unwrap())
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].path, p("/memories/dir/b.md"));

    memory_core::conformance::storage::refuses_every_change(&store, &p("/memories/a.md")).await;
    assert_eq!(
        dump(&schema).await,
        before,
        "a read-only store changed the database"
    );
}

/// The engine's tables read-only: the schema checked the same way, reads as usual, a write job
/// refused with [`memory_postgres::ReadOnlyEngine`] before anything is sent.
#[cfg(feature = "stores")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stores_engine_opens_read_only() {
    use memory_postgres::{PostgresPersistence, ReadOnlyEngine};
    use memory_store::{CreateStore, ListStores, MemoryStores, StoreError};

    let missing = common::unique("ro_engine_missing");
    let before = dump(&missing).await;
    let e = PostgresPersistence::from_url_read_only(
        &common::url_with(&format!("schema={missing}")),
        StoreOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, PostgresOpenError::SchemaMissing { .. }),
        "{e:?}"
    );
    assert_eq!(dump(&missing).await, before);

    let schema = common::unique("ro_engine");
    let url = common::url_with(&format!("schema={schema}"));
    let engine: MemoryStores = MemoryStores::new(
        PostgresPersistence::from_url(&url, StoreOptions::new())
            .await
            .unwrap(),
    );
    let made = engine
        .create_store(CreateStore {
            name: "Notes".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let before = dump(&schema).await;
    let p = PostgresPersistence::from_url_read_only(&url, StoreOptions::new())
        .await
        .unwrap();
    assert!(p.is_read_only());
    let read_only: MemoryStores = MemoryStores::new(p);
    assert_eq!(
        read_only.retrieve_store(&made.id).await.unwrap().name,
        "Notes"
    );
    assert_eq!(
        read_only
            .list_stores(ListStores::default())
            .await
            .unwrap()
            .data
            .len(),
        1
    );
    let e = read_only
        .create_store(CreateStore {
            name: "Other".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    let StoreError::Backend { retryable, source } = &e else {
        panic!("{e:?}");
    };
    assert!(!retryable);
    assert!(source.downcast_ref::<ReadOnlyEngine>().is_some(), "{e:?}");
    assert_eq!(
        dump(&schema).await,
        before,
        "a read-only engine changed the database"
    );
}
