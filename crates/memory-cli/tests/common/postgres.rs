//! The test PostgreSQL (`MEMORY_TEST_POSTGRES_URL`, from scripts/pg-test-server.sh) for the
//! tests of `postgres://` and `store+postgres://` stores.

use std::time::{SystemTime, UNIX_EPOCH};

/// `MEMORY_TEST_POSTGRES_URL`; panics, saying how to start a server, when it is unset.
pub fn pg_base() -> String {
    match std::env::var("MEMORY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: these tests need a real PostgreSQL. Run \
             `scripts/pg-test-server.sh run -- cargo test -p memory-layer-cli --all-features`"
        ),
    }
}

/// A schema name no other test uses.
pub fn unique_schema(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}_{}_{}", std::process::id(), nanos % 1_000_000_000)
}

/// The test URL with `options` added to its query.
pub fn pg_url(options: &str) -> String {
    let url = pg_base();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{options}")
}

/// A client on the test database, for what a test does or checks behind `memory`'s back.
pub async fn admin() -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&pg_base(), tokio_postgres::NoTls)
        .await
        .expect("connect to the test PostgreSQL");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}
