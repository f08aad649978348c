//! Search on PostgreSQL: a `words` tsvector written in each write's statement, under a GIN
//! index, ranked by memory-core's Ranker; rows another program changes are indexed before the next
//! search. Runs against the real server (scripts/pg-test-server.sh).

mod common;

use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_postgres::PostgresStorage;

fn p(s: &str) -> MemoryPath {
    MemoryPath::parse(s).unwrap()
}

async fn found(store: &PostgresStorage, q: &str) -> Vec<String> {
    store
        .search(&SearchQuery::new(q).unwrap())
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.path.to_string())
        .collect()
}

/// The `words` column of a row, as text (NULL → None), read straight from the database.
async fn words(schema: &str, root: &str, path: &str) -> Option<String> {
    common::admin()
        .await
        .query_one(
            &format!("SELECT words::text FROM \"{schema}\".files WHERE root = $1 AND path = $2"),
            &[&root, &path],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn words_are_written_by_each_write() {
    let schema = common::unique("search");
    let store = common::open(&format!("schema={schema}&root=r")).await;
    store
        .write(
            &p("/memories/a.md"),
            b"Quokka quokka Zoe\xcc\x88".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    // Written with the file, before any search; folded as memory-core folds words.
    assert_eq!(
        words(&schema, "r", "/memories/a.md").await.as_deref(),
        Some("'quokka':1,2 'zoe':3")
    );
    store
        .write(
            &p("/memories/a.md"),
            b"numbat".to_vec(),
            WriteMode::Overwrite,
        )
        .await
        .unwrap();
    assert_eq!(
        words(&schema, "r", "/memories/a.md").await.as_deref(),
        Some("'numbat':1")
    );
    let v = store.read(&p("/memories/a.md")).await.unwrap().version;
    store
        .write(
            &p("/memories/a.md"),
            b"wombat".to_vec(),
            WriteMode::Update(v),
        )
        .await
        .unwrap();
    assert_eq!(
        words(&schema, "r", "/memories/a.md").await.as_deref(),
        Some("'wombat':1")
    );
    store
        .create_within(&p("/memories/b.md"), b"bilby".to_vec(), 10)
        .await
        .unwrap();
    assert_eq!(
        words(&schema, "r", "/memories/b.md").await.as_deref(),
        Some("'bilby':1")
    );
    // Content that is not UTF-8 has no words (an empty tsvector, not "unindexed").
    store
        .write(
            &p("/memories/c.bin"),
            b"\xff secretword".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    assert_eq!(
        words(&schema, "r", "/memories/c.bin").await.as_deref(),
        Some("")
    );
    assert!(found(&store, "secretword").await.is_empty());
}

#[tokio::test]
async fn rows_changed_by_another_program_are_found_on_the_next_search() {
    let schema = common::unique("search");
    let store = common::open(&format!("schema={schema}&root=r")).await;
    store
        .write(
            &p("/memories/a.md"),
            b"original echidna".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    let admin = common::admin().await;
    admin
        .execute(
            &format!(
                "UPDATE \"{schema}\".files SET contents = $1 WHERE root = 'r' AND path = '/memories/a.md'"
            ),
            &[&b"changed by hand: dingo".to_vec()],
        )
        .await
        .unwrap();
    admin
        .execute(
            &format!(
                "INSERT INTO \"{schema}\".files (root, path, contents, size, version, modified)
                 VALUES ('r', '/memories/new.md', $1, 15, 100000, now())"
            ),
            &[&b"a bilby appears".to_vec()],
        )
        .await
        .unwrap();
    assert_eq!(
        words(&schema, "r", "/memories/a.md").await,
        None,
        "the trigger cleared the stale words"
    );
    assert_eq!(found(&store, "dingo").await, ["/memories/a.md"]);
    assert!(found(&store, "echidna").await.is_empty());
    assert_eq!(found(&store, "bilby").await, ["/memories/new.md"]);
    assert!(words(&schema, "r", "/memories/new.md").await.is_some());
}

#[tokio::test]
async fn roots_do_not_see_each_other_and_hits_rank_as_every_store_ranks() {
    let schema = common::unique("search");
    let a = common::open(&format!("schema={schema}&root=a")).await;
    let b = common::open(&format!("schema={schema}&root=b")).await;
    for (path, text) in [
        ("/memories/many.md", "tapir tapir tapir\nzoo"),
        ("/memories/once.md", "one tapir\nat the zoo"),
    ] {
        a.write(&p(path), text.as_bytes().to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    b.write(
        &p("/memories/other.md"),
        b"tapir zoo".to_vec(),
        WriteMode::Create,
    )
    .await
    .unwrap();
    let hits = a
        .search(&SearchQuery::new("tapir zoo").unwrap())
        .await
        .unwrap();
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["/memories/many.md", "/memories/once.md"]);
    assert_eq!(hits[1].lines, [1, 2]);
    assert_eq!(hits[1].snippet, "one tapir");
    assert_eq!(found(&b, "tapir").await, ["/memories/other.md"]);
}

#[tokio::test]
async fn many_candidates_are_read_in_pages_until_the_limit() {
    let store = common::fresh_root().await;
    // 150 files hold both words, but only the last ones hold them as a phrase.
    for i in 0..150 {
        let text = if i >= 140 {
            "red panda"
        } else {
            "panda, then red"
        };
        store
            .write(
                &p(&format!("/memories/f{i:03}.md")),
                text.as_bytes().to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
    }
    let q = SearchQuery::new("\"red panda\"")
        .unwrap()
        .with_limit(100)
        .unwrap();
    let hits = store.search(&q).await.unwrap();
    assert_eq!(
        hits.len(),
        10,
        "every phrase hit, past the first page of candidates"
    );
    let q = SearchQuery::new("panda").unwrap().with_limit(100).unwrap();
    assert_eq!(store.search(&q).await.unwrap().len(), 100);
}
