//! Tests of [`PostgresStorage`] that need its private parts: a read-only store's sessions.

use super::*;

/// The server refuses a write on a read-only store's sessions, whatever the code above
/// sends (a statement on its own, and one in a transaction begun without `READ WRITE`).
/// Needs the test PostgreSQL (`scripts/pg-test-server.sh run -- ...`).
#[tokio::test]
async fn read_only_sessions_refuse_writes_on_the_server() {
    let url = std::env::var("MEMORY_TEST_POSTGRES_URL").expect(
        "MEMORY_TEST_POSTGRES_URL is not set: run `scripts/pg-test-server.sh run -- cargo test -p memory-layer-postgres`",
    );
    let sep = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{sep}schema=memory_tests&root=read_only_sessions");
    // The read-write open makes the schema and the root; the read-only one then opens.
    PostgresStorage::from_url(&url, StoreOptions::new())
        .await
        .unwrap();
    let store = PostgresStorage::from_url_read_only(&url, StoreOptions::new())
        .await
        .unwrap();
    let mut client = store.client().await.unwrap();
    let insert = "INSERT INTO memory_tests.roots (root) VALUES ('read_only_sessions_x')";
    let e = client.execute(insert, &[]).await.unwrap_err();
    assert_eq!(
        e.code(),
        Some(&tokio_postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION),
        "{e:?}"
    );
    let tx = client.transaction().await.unwrap();
    let e = tx.execute(insert, &[]).await.unwrap_err();
    assert_eq!(
        e.code(),
        Some(&tokio_postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION),
        "{e:?}"
    );
}
