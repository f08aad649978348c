//! The test S3 server (`MEMORY_TEST_S3_ENDPOINT`, from scripts/s3-test-server.sh: moto) for the
//! tests of `s3://` stores.

use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A bucket of this run on the server. Panics, saying how to start one, when
/// `MEMORY_TEST_S3_ENDPOINT` is unset: these tests need a real S3 API and never skip.
pub fn s3_bucket(test: &str) -> (String, String) {
    let Ok(endpoint) = std::env::var("MEMORY_TEST_S3_ENDPOINT") else {
        panic!(
            "{test} needs a real S3 API and MEMORY_TEST_S3_ENDPOINT is not set: run \
             `scripts/s3-test-server.sh run -- cargo test -p memory-layer-cli --all-features` (scripts/test.sh does)"
        );
    };
    let endpoint = endpoint.trim_end_matches('/').to_owned();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let bucket = format!(
        "memory-cli-{}-{}",
        std::process::id(),
        nanos % 1_000_000_000_000
    );
    // PUT /BUCKET, unsigned (moto does not check signatures).
    let host = endpoint
        .strip_prefix("http://")
        .expect("an http:// endpoint");
    let mut stream = std::net::TcpStream::connect(host).expect("reach the S3 test server");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "PUT /{bucket} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(
        // moto answers one request at a time, in HTTP/1.0.
        answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
        "create bucket: {answer}"
    );
    (endpoint, bucket)
}

/// Points `cmd` at the S3 test server at `endpoint`: its address and moto's credentials in the
/// `AWS_*` variables, and none of the caller's own endpoint, session or profile.
pub fn point_at(cmd: &mut Command, endpoint: &str) {
    for key in [
        "AWS_ENDPOINT_URL_S3",
        "AWS_ENDPOINT",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
    ] {
        cmd.env_remove(key);
    }
    cmd.env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing");
}
