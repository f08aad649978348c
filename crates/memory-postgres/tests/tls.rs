//! TLS to the server: verified against the test CA, refused against another CA, and plain text
//! unless asked for.

mod common;

use memory_core::options::StoreOptions;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_postgres::{PostgresOpenError, PostgresStorage};

/// Whether the store's connections (named by `application_name`) use TLS, and how many there
/// are.
async fn ssl_of(application_name: &str) -> (Option<bool>, i64) {
    let row = common::admin()
        .await
        .query_one(
            "SELECT bool_and(s.ssl), count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
             WHERE a.application_name = $1",
            &[&application_name],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test]
async fn verify_full_with_the_servers_ca_connects_over_tls() {
    let ca = common::script_var("MEMORY_TEST_POSTGRES_CA");
    let app = common::unique("tls");
    for mode in ["verify-full", "require"] {
        let store = common::open(&format!(
            "schema={}&root={app}&sslmode={mode}&sslrootcert={ca}&application_name={app}",
            common::SHARED_SCHEMA
        ))
        .await;
        store
            .write(
                &MemoryPath::parse("/memories/tls.md").unwrap(),
                mode.as_bytes().to_vec(),
                WriteMode::Overwrite,
            )
            .await
            .unwrap();
        let (ssl, connections) = ssl_of(&app).await;
        assert!(connections >= 1, "{mode}: the store's connections are open");
        assert_eq!(ssl, Some(true), "{mode}: every connection uses TLS");
    }
}

#[tokio::test]
async fn connections_are_plain_unless_tls_is_asked_for() {
    let app = common::unique("plain");
    let store = common::open(&format!(
        "schema={}&root={app}&application_name={app}",
        common::SHARED_SCHEMA
    ))
    .await;
    assert_eq!(store.file_count().await.unwrap(), 0);
    let (ssl, connections) = ssl_of(&app).await;
    assert!(connections >= 1);
    assert_eq!(ssl, Some(false));
}

#[tokio::test]
async fn a_certificate_from_another_ca_is_refused_without_the_password() {
    let other = common::script_var("MEMORY_TEST_POSTGRES_OTHER_CA");
    let url = common::url_with(&format!("sslmode=verify-full&sslrootcert={other}"));
    let e = PostgresStorage::from_url(&url, StoreOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, PostgresOpenError::Tls { host, .. } if host == "127.0.0.1"),
        "{e:?}"
    );
    let texts = format!("{e} {e:?}");
    assert!(!texts.contains(&common::password()), "{texts}");
}

#[tokio::test]
async fn tls_without_trusted_roots_or_with_a_bad_file_is_a_clear_error() {
    let e = PostgresStorage::from_url(&common::url_with("sslmode=require"), StoreOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(e, PostgresOpenError::TlsNeedsRoots { .. }),
        "{e:?}"
    );
    let url = common::url();
    let not_pem = std::env::current_exe().unwrap();
    let e = PostgresStorage::from_url(
        &format!(
            "{url}?sslmode=verify-full&sslrootcert={}",
            not_pem.display()
        ),
        StoreOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(e, PostgresOpenError::TlsRoots { .. }), "{e:?}");
    // The system's trust store does not know the test CA (or holds nothing usable).
    let e = PostgresStorage::from_url(
        &format!("{url}?sslmode=verify-full&sslrootcert=system"),
        StoreOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            e,
            PostgresOpenError::Tls { .. } | PostgresOpenError::TlsRoots { .. }
        ),
        "{e:?}"
    );
}
