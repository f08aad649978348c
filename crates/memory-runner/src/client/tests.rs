//! Tests of the client's parts that need no server: backoff, `retry-after`, HTTP dates, API
//! errors and the builder's checks.

use super::retry::http_date;
use super::*;

#[test]
fn backoff_grows_and_is_capped_with_jitter() {
    let policy = RetryPolicy {
        max_retries: 10,
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(1000),
        max_retry_after: Duration::from_secs(1),
        max_total_wait: Duration::from_secs(60),
    };
    for _ in 0..50 {
        let first = policy.backoff(0);
        assert!(first <= Duration::from_millis(100) && first >= Duration::from_millis(75));
        let third = policy.backoff(2);
        assert!(third <= Duration::from_millis(400) && third >= Duration::from_millis(300));
        let capped = policy.backoff(30);
        assert!(capped <= Duration::from_millis(1000) && capped >= Duration::from_millis(750));
    }
}

#[test]
fn retry_after_headers() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 07:27:50
    let mut headers = HeaderMap::new();
    assert_eq!(retry_after(&headers, now), None);
    headers.insert("retry-after", HeaderValue::from_static("2"));
    assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(2)));
    headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
    assert_eq!(
        retry_after(&headers, now),
        Some(Duration::from_millis(1500))
    );
    let mut date = HeaderMap::new();
    date.insert(
        "retry-after",
        HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
    );
    assert_eq!(retry_after(&date, now), Some(Duration::from_secs(10)));
    // A date already past: a wait of zero, which the retry loop replaces by the backoff.
    let later = now + Duration::from_secs(60);
    assert_eq!(retry_after(&date, later), Some(Duration::ZERO));
    for bad in [
        "Wed, 21 Oct 2015 07:28:00 PST",
        "Wednesday, 21-Oct-15 07:28:00 GMT",
        "Wed, 32 Oct 2015 07:28:00 GMT",
        "Wed, 21 Foo 2015 07:28:00 GMT",
        "Wed, 21 Oct 2015 7:28 GMT",
        "soon",
    ] {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_str(bad).unwrap());
        assert_eq!(retry_after(&headers, now), None, "{bad}");
    }
}

#[test]
fn http_dates_are_seconds_since_the_epoch() {
    let at = |text| {
        http_date(text)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_secs())
    };
    assert_eq!(at("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    assert_eq!(at("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
    assert_eq!(at("Tue, 29 Feb 2000 12:00:00 GMT"), Some(951_825_600));
    assert_eq!(at("Tue, 01 Dec 2026 10:00:00 GMT"), Some(1_796_119_200));
}

#[test]
fn api_errors_carry_type_and_message() {
    let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let mut headers = HeaderMap::new();
    headers.insert("request-id", HeaderValue::from_static("req_1"));
    let err = api_error(StatusCode::from_u16(529).unwrap(), &headers, body);
    assert_eq!(err.status(), Some(529));
    assert_eq!(err.error_type(), Some("overloaded_error"));
    assert_eq!(
        err.to_string(),
        "the Messages API answered 529 (overloaded_error): Overloaded (request-id req_1)"
    );
    assert_eq!(err.request_id(), Some("req_1"));
    let html = api_error(
        StatusCode::BAD_GATEWAY,
        &HeaderMap::new(),
        b"<html>bad</html>",
    );
    assert_eq!(html.error_type(), Some("http_error"));
    assert!(html.to_string().contains("<html>bad</html>"));
}

#[test]
fn building_needs_a_key_and_an_http_url() {
    assert!(matches!(
        ClientBuilder::new().build(),
        Err(ApiError::MissingApiKey)
    ));
    assert!(matches!(
        ClientBuilder::new()
            .api_key("k")
            .base_url("ftp://x")
            .build(),
        Err(ApiError::Config(_))
    ));
    let client = ClientBuilder::new()
        .api_key("sk-secret")
        .base_url("http://127.0.0.1:9/")
        .build()
        .unwrap();
    assert_eq!(client.messages_url(), "http://127.0.0.1:9/v1/messages");
    assert!(!format!("{client:?}").contains("sk-secret"));
    // A bearer token alone is enough; neither it nor a key shows in Debug or errors.
    let builder = ClientBuilder::new()
        .auth_token("tok-secret")
        .base_url("http://127.0.0.1:9");
    assert!(!format!("{builder:?}").contains("tok-secret"));
    let client = builder.build().unwrap();
    assert!(!format!("{client:?}").contains("tok-secret"));
    for (key, token) in [(Some("sk-se\ncret"), None), (None, Some("tok-se\ncret"))] {
        let mut builder = ClientBuilder::new();
        if let Some(key) = key {
            builder = builder.api_key(key);
        }
        if let Some(token) = token {
            builder = builder.auth_token(token);
        }
        let err = builder.build().unwrap_err();
        assert!(matches!(err, ApiError::Config(_)), "{err:?}");
        let text = format!("{err} {err:?}");
        assert!(
            !text.contains("se\ncret") && !text.contains("cret"),
            "{text}"
        );
    }
}
