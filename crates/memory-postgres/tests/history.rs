//! memory-core's history suite on `PostgresStorage` against a real server, each open in a
//! schema of its own, and what the history table holds: nothing with `history=off`, and no
//! content left in a redacted row.

mod common;

use std::sync::Arc;

use memory_core::conformance::history::{self, OpenHistory};
use memory_core::history::{HistoryOptions, Redaction};
use memory_core::options::StoreOptions;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_postgres::PostgresStorage;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

/// A fresh schema per open, history set from Rust.
struct FreshSchema;

#[memory_core::async_trait]
impl OpenHistory for FreshSchema {
    async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
        let schema = common::unique("history");
        Arc::new(
            common::open(&format!("schema={schema}&pool_size=8"))
                .await
                .with_history(options),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conforms() {
    history::run_all(&FreshSchema).await;
}

/// A fresh root of the shared schema per open, history set by store options.
struct FreshRoot;

#[memory_core::async_trait]
impl OpenHistory for FreshRoot {
    async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
        let mut query = format!(
            "schema={}&root={}",
            common::SHARED_SCHEMA,
            common::unique("h")
        );
        if !options.enabled {
            query.push_str("&history=off");
        }
        if let Some(max) = options.max_per_file {
            query.push_str(&format!("&history_max={max}"));
        }
        if let Some(session) = &options.session {
            query.push_str(&format!("&history_session={session}"));
        }
        let store = common::open(&query).await;
        assert_eq!(store.history_options(), &options, "{query}");
        Arc::new(store)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_conforms_in_roots_from_store_options() {
    history::run_all(&FreshRoot).await;
}

async fn history_rows(schema: &str) -> i64 {
    common::admin()
        .await
        .query_one(&format!("SELECT count(*) FROM \"{schema}\".history"), &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn history_off_keeps_no_rows() {
    let schema = common::unique("history_off");
    let store = common::open(&format!("schema={schema}&history=off")).await;
    let (a, b) = (p("/memories/a.md"), p("/memories/b.md"));
    store
        .write(&a, b"1".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .write(&a, b"2".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let v = store.read(&a).await.unwrap().version;
    store
        .write(&a, b"3".to_vec(), WriteMode::Update(v))
        .await
        .unwrap();
    store.rename(&a, &b).await.unwrap();
    store.create_within(&a, b"4".to_vec(), 10).await.unwrap();
    store.delete(&b).await.unwrap();
    store.delete(&MemoryPath::root()).await.unwrap();
    assert_eq!(history_rows(&schema).await, 0);
}

/// Redacted rows hold no content and no digest; the row of the current file holds no copy of
/// it (the file's row is its content); a read-only open reads history and writes nothing.
/// The bytes themselves are checked in `redacted_bytes_leave_the_tables_files`.
#[tokio::test]
async fn rows_hold_what_they_should() {
    let schema = common::unique("history_rows");
    let store = common::open(&format!("schema={schema}&root=r")).await;
    let a = p("/memories/secret.md");
    store
        .write(&a, b"sk-secret-1".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    store
        .write(&a, b"clean".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let admin = common::admin().await;
    let rows = admin
        .query(
            &format!("SELECT number, contents FROM \"{schema}\".history ORDER BY number"),
            &[],
        )
        .await
        .unwrap();
    let contents: Vec<Option<Vec<u8>>> = rows.iter().map(|r| r.get(1)).collect();
    assert_eq!(contents, [Some(b"sk-secret-1".to_vec()), None]);
    assert_eq!(
        store
            .redact_revisions(&a, Redaction::AllPast)
            .await
            .unwrap(),
        1
    );
    let row = admin
        .query_one(
            &format!(
                "SELECT contents IS NULL, sha256 IS NULL, redacted FROM \"{schema}\".history WHERE number = 1"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (
            row.get::<_, bool>(0),
            row.get::<_, bool>(1),
            row.get::<_, bool>(2)
        ),
        (true, true, true)
    );
    let url = common::url_with(&format!("schema={schema}&root=r"));
    let before = memory_postgres::testing::dump_schema(&admin, &schema).await;
    let read_only = PostgresStorage::from_url_read_only(&url, StoreOptions::new())
        .await
        .unwrap();
    assert_eq!(read_only.history(&a).await.unwrap().len(), 2);
    assert_eq!(read_only.read_revision(&a, 2).await.unwrap(), b"clean");
    assert!(
        read_only
            .write_restored(&a, 2, b"x".to_vec())
            .await
            .is_err()
    );
    assert!(
        read_only
            .redact_revisions(&a, Redaction::AllPast)
            .await
            .is_err()
    );
    assert_eq!(
        memory_postgres::testing::dump_schema(&admin, &schema).await,
        before
    );
}

/// Two stores (two pools, as two processes would have) editing one file by compare-and-swap
/// and overwrite keep every replaced content.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_handles_keep_every_replaced_content() {
    let schema = common::unique("history_two");
    let one = common::open(&format!("schema={schema}")).await;
    let two = common::open(&format!("schema={schema}")).await;
    let path = p("/memories/shared.md");
    one.write(&path, Vec::new(), WriteMode::Create)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for (n, store) in [one.clone(), two.clone(), one.clone(), two.clone()]
        .into_iter()
        .enumerate()
    {
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..10 {
                loop {
                    let file = store.read(&path).await.unwrap();
                    let mut next = file.contents;
                    next.extend(format!("{n}.{i}\n").bytes());
                    match store
                        .write(&path, next, WriteMode::Update(file.version))
                        .await
                    {
                        Ok(_) => break,
                        Err(memory_core::Error::Conflict { .. }) => {}
                        Err(e) => panic!("{e:?}"),
                    }
                }
                // Overwrites race too: each keeps what it replaced.
                let file = store.read(&path).await.unwrap();
                store
                    .write(&path, file.contents, WriteMode::Overwrite)
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let revisions = one.history(&path).await.unwrap();
    assert_eq!(revisions.len(), 1 + 4 * 10 * 2);
    for revision in &revisions {
        let content = one.read_revision(&path, revision.number).await.unwrap();
        assert_eq!(
            revision.sha256.as_deref(),
            Some(memory_core::history::sha256_hex(&content).as_str()),
            "revision {} holds the content it records",
            revision.number
        );
    }
}

/// A change made through a handle with `history=off` is no revision and keeps nothing of what
/// it replaced (history is off for it); the next change through a handle with history keeps
/// the content it replaces all the same, as a revision of its own.
#[tokio::test]
async fn a_change_made_with_history_off_loses_no_content() {
    let schema = common::unique("history_mixed");
    let on = common::open(&format!("schema={schema}")).await;
    let off = on.clone().with_history(HistoryOptions::off());
    let a = p("/memories/a.md");
    on.write(&a, b"one".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    off.write(&a, b"two".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    on.write(&a, b"three".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    let revisions = on.history(&a).await.unwrap();
    let numbers: Vec<u64> = revisions.iter().map(|r| r.number).collect();
    assert_eq!(numbers, [3, 2, 1]);
    assert!(matches!(
        on.read_revision(&a, 1).await,
        Err(memory_core::Error::RevisionWithoutContent { number: 1, .. })
    ));
    for (number, content) in [(2, "two"), (3, "three")] {
        assert_eq!(
            on.read_revision(&a, number).await.unwrap(),
            content.as_bytes()
        );
    }
    assert_eq!(
        revisions[1].sha256.as_deref(),
        Some(memory_core::history::sha256_hex(b"two").as_str())
    );
    assert_eq!(revisions[1].size, 3);
}

/// Every page of the history and files tables, their TOAST tables and their indexes, read raw
/// (the `pageinspect` extension): how many hold `needle`.
async fn pages_holding(admin: &tokio_postgres::Client, schema: &str, needle: &[u8]) -> i64 {
    admin
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        .await
        .unwrap_or_else(|e| {
            panic!("the test PostgreSQL needs the pageinspect extension (contrib): {e}")
        });
    let relations: Vec<String> = admin
        .query(
            "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relname IN ('history', 'files')
             UNION SELECT t.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_class t ON t.oid = c.reltoastrelid WHERE n.nspname = $1 AND c.relname IN ('history', 'files')
             UNION SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relname IN ('history', 'files')",
            &[&schema],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(relations.len() >= 6, "{relations:?}");
    let mut found = 0;
    for relation in relations {
        let n: i64 = admin
            .query_one(
                "SELECT count(*) FROM generate_series(0, pg_relation_size($1::text::regclass) / 8192 - 1) AS b
                 WHERE position($2::bytea IN get_raw_page($1::text, b::int)) > 0",
                &[&relation, &needle],
            )
            .await
            .unwrap()
            .get(0);
        found += n;
    }
    found
}

/// After a redaction, no page of the store's tables, their TOAST tables or their indexes
/// holds the redacted bytes, not in a dead row version either (the `VACUUM (FULL)`): neither
/// the content (short, kept inline; long, in TOAST) nor its words.
#[tokio::test]
async fn redacted_bytes_leave_the_tables_files() {
    let schema = common::unique("history_bytes");
    let store = common::open(&format!("schema={schema}")).await;
    let admin = common::admin().await;
    let (short, long) = (p("/memories/short.md"), p("/memories/long.md"));
    let secret = b"zq7xkw3secretvalue";
    store
        .write(&short, secret.to_vec(), WriteMode::Create)
        .await
        .unwrap();
    // Long enough for TOAST, and random-looking so that compression leaves the secret whole.
    let mut big: Vec<u8> = (0..20_000u32)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz"[(i.wrapping_mul(2_654_435_761) >> 27) as usize % 26])
        .collect();
    big.extend_from_slice(b" longsecretmarker9q ");
    let marker = b"longsecretmarker9q";
    store.write(&long, big, WriteMode::Create).await.unwrap();
    for path in [&short, &long] {
        store
            .write(path, b"clean".to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
    }
    assert!(
        pages_holding(&admin, &schema, secret).await > 0,
        "the check finds the secret before"
    );
    assert!(
        pages_holding(&admin, &schema, marker).await > 0,
        "and the long one"
    );
    for path in [&short, &long] {
        assert_eq!(
            store
                .redact_revisions(path, Redaction::AllPast)
                .await
                .unwrap(),
            1
        );
    }
    assert_eq!(
        pages_holding(&admin, &schema, secret).await,
        0,
        "the short secret's bytes"
    );
    assert_eq!(
        pages_holding(&admin, &schema, marker).await,
        0,
        "the long secret's bytes"
    );
    assert_eq!(store.read(&short).await.unwrap().contents, b"clean");
}

/// `history_days`: a change drops the file's revisions older than the days (their content
/// too), never the current one; a file's old current revision goes once a change replaces it.
#[tokio::test]
async fn history_days_drop_old_revisions_as_the_file_changes() {
    let schema = common::unique("history_days");
    let store = common::open(&format!("schema={schema}&history_days=30")).await;
    let admin = common::admin().await;
    let a = p("/memories/a.md");
    store
        .write(&a, b"0".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    for n in 1..4 {
        store
            .write(&a, n.to_string().into_bytes(), WriteMode::Overwrite)
            .await
            .unwrap();
    }
    let age = |numbers: &'static str| {
        format!(
            "UPDATE \"{schema}\".history SET time = now() - interval '40 days' WHERE number IN ({numbers})"
        )
    };
    admin.batch_execute(&age("1, 2")).await.unwrap();
    let numbers = |revisions: Vec<memory_core::history::Revision>| -> Vec<u64> {
        revisions.iter().map(|r| r.number).collect()
    };
    assert_eq!(
        numbers(store.history(&a).await.unwrap()),
        [4, 3, 2, 1],
        "no change, no pruning"
    );
    store
        .write(&a, b"4".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_eq!(numbers(store.history(&a).await.unwrap()), [5, 4, 3]);
    assert_eq!(store.read_revision(&a, 3).await.unwrap(), b"2");
    admin.batch_execute(&age("3, 4, 5")).await.unwrap();
    store
        .write(&a, b"5".to_vec(), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_eq!(numbers(store.history(&a).await.unwrap()), [6]);
    let rows: i64 = admin
        .query_one(&format!("SELECT count(*) FROM \"{schema}\".history"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 1, "the dropped revisions' rows are gone");
}
