//! The store's rows as the database holds them: byte-order listings whatever the database's
//! collation, a root whose row was removed coming back empty, a missing database refused.

mod common;

use memory_core::options::StoreOptions;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_postgres::{PostgresOpenError, PostgresStorage};

fn p(path: &str) -> MemoryPath {
    MemoryPath::parse(path).unwrap()
}

#[tokio::test]
async fn listings_are_in_byte_order_and_match_whole_segments() {
    let admin = common::admin().await;
    let row = admin
        .query_one(
            "SELECT 'B' < 'a', '/memories/a-b' < '/memories/a/x' FROM pg_database WHERE datname = current_database()",
            &[],
        )
        .await
        .unwrap();
    let (b_first, dash_first): (bool, bool) = (row.get(0), row.get(1));
    if b_first && dash_first {
        eprintln!(
            "note: the test database sorts like C; scripts/pg-test-server.sh makes one with an ICU collation that does not"
        );
    }
    // A schema of its own: its tables are made by this build's migrations.
    let store = common::open(&format!("schema={}", common::unique("order"))).await;
    let names = [
        "/memories/a.md",
        "/memories/B.md",
        "/memories/a-b/one.md",
        "/memories/a/x.md",
        "/memories/a/y/z.md",
        "/memories/ab.md",
        "/memories/a_c.md",
        "/memories/a%d.md",
        "/memories/é.md",
        "/memories/Z.md",
    ];
    for name in names {
        store
            .write(&p(name), name.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    let listed: Vec<String> = store
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect();
    let mut expected: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
    expected.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    assert_eq!(listed, expected, "byte order");
    let below_a: Vec<String> = store
        .list(&p("/memories/a"))
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect();
    assert_eq!(below_a, ["/memories/a/x.md", "/memories/a/y/z.md"]);
    assert!(store.list(&p("/memories/a_")).await.unwrap().is_empty());
    assert!(store.list(&p("/memories/a%")).await.unwrap().is_empty());
    store.delete(&p("/memories/a")).await.unwrap();
    assert_eq!(store.file_count().await.unwrap(), names.len() - 2);
    assert!(store.stat(&p("/memories/a-b")).await.unwrap().is_some());
}

#[tokio::test]
async fn a_root_whose_row_was_removed_comes_back_empty() {
    let store = common::fresh_root().await;
    store
        .write(&p("/memories/a.md"), b"a".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    common::admin()
        .await
        .execute(
            &format!(
                "DELETE FROM \"{}\".roots WHERE root = $1",
                common::SHARED_SCHEMA
            ),
            &[&store.root()],
        )
        .await
        .unwrap();
    assert_eq!(
        store.file_count().await.unwrap(),
        0,
        "its files went with it"
    );
    store
        .write(&p("/memories/b.md"), b"b".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .rename(&p("/memories/b.md"), &p("/memories/c.md"))
        .await
        .unwrap();
    assert_eq!(
        store.read(&p("/memories/c.md")).await.unwrap().contents,
        b"b"
    );
}

#[tokio::test]
async fn a_missing_database_is_rejected_naming_it() {
    let url = common::url();
    let (base, _) = url.rsplit_once('/').unwrap();
    let missing = format!("{base}/no_such_database_here");
    let e = PostgresStorage::from_url(&missing, StoreOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::Rejected { database, .. } if database == "no_such_database_here"),
        "{e:?}"
    );
    assert!(!format!("{e} {e:?}").contains(&common::password()));
}
