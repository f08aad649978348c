//! Shared by the tests: the server's URL (from scripts/pg-test-server.sh), fresh roots and
//! schemas, and a plain client for looking at the database directly.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use memory_core::options::StoreOptions;
use memory_postgres::PostgresStorage;

/// The schema the tests that need no schema of their own share (each in its own root).
pub const SHARED_SCHEMA: &str = "memory_tests";

/// `MEMORY_TEST_POSTGRES_URL`; panics, saying how to start a server, when it is unset.
pub fn url() -> String {
    match std::env::var("MEMORY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: the memory-postgres tests need a real PostgreSQL. \
             Start one with `eval \"$(scripts/pg-test-server.sh start)\"` (stop it with \
             `scripts/pg-test-server.sh stop`), or run \
             `scripts/pg-test-server.sh run -- cargo test -p memory-layer-postgres`"
        ),
    }
}

/// A name no other test (in this process or another) uses: `prefix_PID_N_NANOS`.
pub fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// `url()` with options appended to its query.
pub fn url_with(options: &str) -> String {
    let url = url();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{options}")
}

/// Opens a store at `url_with(options)`.
pub async fn open(options: &str) -> PostgresStorage {
    PostgresStorage::from_url(&url_with(options), StoreOptions::new())
        .await
        .unwrap_or_else(|e| panic!("cannot open the test store ({options}): {e}"))
}

/// A new, empty root in the shared test schema.
pub async fn fresh_root() -> PostgresStorage {
    let root = unique("root");
    open(&format!("schema={SHARED_SCHEMA}&root={root}")).await
}

/// A plain client on the test database, for checks and set-ups the store does not offer.
pub async fn admin() -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test PostgreSQL: {e}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// The password in `url()`, to check that no text shows it.
pub fn password() -> String {
    let url = url();
    let rest = url.split_once("://").map_or("", |(_, r)| r);
    let userinfo = rest.split_once('@').map_or("", |(u, _)| u);
    let password = userinfo.split_once(':').map_or("", |(_, p)| p);
    assert!(
        password.len() >= 8,
        "the test URL should carry a password (scripts/pg-test-server.sh sets one)"
    );
    password.to_owned()
}

/// A variable scripts/pg-test-server.sh exports; panics, saying how to start the server, when
/// it is unset.
pub fn script_var(name: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!(
            "{name} is not set: start the test PostgreSQL with `eval \"$(scripts/pg-test-server.sh start)\"` \
             (or run `scripts/pg-test-server.sh run -- cargo test -p memory-layer-postgres`)"
        ),
    }
}
