//! The S3 server real-protocol tests run against (feature `testing`): moto's `moto_server`,
//! started by `scripts/s3-test-server.sh`, found through `MEMORY_TEST_S3_ENDPOINT`. Each test
//! gets a bucket of its own. Used by this crate's tests and by the crates whose tests put
//! their stores on S3; a test that needs the server fails, saying how to start it, when the
//! variable is unset.

use std::io::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{ObjectStoreStorage, S3Options};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The variable naming the S3 endpoint, e.g. `http://127.0.0.1:5123`.
pub const ENDPOINT_VAR: &str = "MEMORY_TEST_S3_ENDPOINT";

/// A bucket of this run on the test server.
#[derive(Debug, Clone)]
pub struct S3Server {
    /// The server's base URL, e.g. `http://127.0.0.1:5123`.
    pub endpoint: String,
    /// The bucket made for this test.
    pub bucket: String,
}

/// Prints straight to the terminal: the test harness captures `println!`, and a figure a
/// test reports (a fill's duration) must be visible.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

impl S3Server {
    /// The server from `MEMORY_TEST_S3_ENDPOINT` with a new bucket.
    ///
    /// # Panics
    /// When the variable is unset (the test `test` needs a real S3 API: it fails loudly, never
    /// skips), or the server cannot create the bucket.
    pub async fn from_env(test: &str) -> S3Server {
        let Ok(endpoint) = std::env::var(ENDPOINT_VAR) else {
            panic!(
                "{test} needs a real S3 API and {ENDPOINT_VAR} is not set: run it under \
                 `scripts/s3-test-server.sh run -- cargo test ...` (scripts/test.sh does)"
            );
        };
        let endpoint = endpoint.trim_end_matches('/').to_owned();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let bucket = format!(
            "memory-test-{}-{}",
            std::process::id(),
            nanos % 1_000_000_000_000
        );
        create_bucket(&endpoint, &bucket).await;
        S3Server { endpoint, bucket }
    }

    /// Options for a store under `prefix` in this run's bucket.
    pub fn options(&self, prefix: &str) -> S3Options {
        let mut options = S3Options::new(&self.bucket, prefix);
        options.endpoint = Some(self.endpoint.clone());
        options.region = Some("us-east-1".into());
        options.allow_http = true;
        options.access_key_id = Some("testing".into());
        options.secret_access_key = Some("testing".into());
        options.request_timeout = Duration::from_secs(20);
        options.retry_timeout = Duration::from_secs(20);
        options.max_retries = 3;
        options
    }

    /// A store under `prefix` in this run's bucket.
    pub fn storage(&self, prefix: &str) -> ObjectStoreStorage {
        self.options(prefix).build().expect("S3 options build")
    }

    /// `AWS_*` variables that make `s3://BUCKET/PREFIX` reach this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
        ]
    }
}

/// `PUT /BUCKET` with a bare HTTP/1.1 request (moto does not check signatures), because
/// object_store has no create-bucket call.
pub async fn create_bucket(endpoint: &str, bucket: &str) {
    let host = endpoint
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("{ENDPOINT_VAR} must be an http:// URL, got {endpoint}"));
    let host = host.split('/').next().unwrap_or(host);
    let mut stream = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect(host),
    )
    .await
    .unwrap_or_else(|_| panic!("connecting to the S3 test server at {endpoint} timed out"))
    .unwrap_or_else(|e| panic!("cannot reach the S3 test server at {endpoint}: {e}"));
    let request = format!(
        "PUT /{bucket} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the S3 test server answers a bucket creation")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
        "creating bucket {bucket} at {endpoint} failed: {}",
        answer.lines().next().unwrap_or("")
    );
}
