//! The client against the fake Messages API: headers, retries and their limits, errors.

use std::time::{Duration, Instant};

use memory_runner::testing::{FakeApi, Reply, end_turn};
use memory_runner::{ApiError, Client, Message, MessagesRequest, RetryPolicy};
use serde_json::json;

/// Retries in milliseconds, so the suite stays fast.
fn tiny_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
        max_retry_after: Duration::from_secs(1),
        max_total_wait: Duration::from_secs(10),
    }
}

fn client(api: &FakeApi, max_retries: u32) -> Client {
    Client::builder()
        .api_key("sk-test-key")
        .base_url(api.url())
        .retry(tiny_retries(max_retries))
        .build()
        .unwrap()
}

fn request() -> MessagesRequest {
    MessagesRequest::new("claude-test", 64).message(Message::user("Hi"))
}

#[tokio::test]
async fn sends_the_documented_headers_and_body() {
    let api = FakeApi::start([Reply::message(end_turn("Hello"))]).await;
    let client = Client::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/", api.url()))
        .beta("some-beta-2025-01-01")
        .build()
        .unwrap();
    let reply = client
        .create_message(&request().beta("other-beta").param("top_k", json!(3)))
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello");
    let requests = api.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-test-key"));
    assert_eq!(sent.header("anthropic-version"), Some("2026-10-21"));
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("some-beta-2025-01-01,other-beta")
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "top_k": 3
        })
    );
}

/// `anthropic-version` is the official SDKs' `2026-10-21` unless the builder sets another;
/// that version refuses `temperature`, `top_p` and `top_k`, so a request that sets none of
/// them sends none, streamed or not, through the runner too.
#[tokio::test]
async fn the_api_version_is_the_sdks_unless_set_and_no_sampling_parameter_is_sent_unasked() {
    assert_eq!(memory_runner::API_VERSION, "2026-10-21");
    let api = FakeApi::start([
        Reply::message(end_turn("a")),
        Reply::message(end_turn("b")),
        Reply::message(end_turn("c")),
        Reply::message(end_turn("d")),
    ])
    .await;
    let default = client(&api, 0);
    assert_eq!(default.anthropic_version(), "2026-10-21");
    default.create_message(&request()).await.unwrap();
    default
        .stream(&request())
        .await
        .unwrap()
        .final_message()
        .await
        .unwrap();
    memory_runner::ToolRunner::new(default.clone(), request())
        .tool(memory_runner::memory_core::MemoryTool::new(
            memory_runner::memory_core::InMemoryStorage::new(),
        ))
        .run_until_done()
        .await
        .unwrap();
    let older = Client::builder()
        .api_key("sk-test-key")
        .base_url(api.url())
        .anthropic_version(" 2023-06-01 ")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    assert_eq!(older.anthropic_version(), "2023-06-01");
    older
        .create_message(&request().temperature(0.2))
        .await
        .unwrap();
    let sent = api.requests();
    assert_eq!(sent.len(), 4);
    for (i, want) in ["2026-10-21", "2026-10-21", "2026-10-21", "2023-06-01"]
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            sent[i].header("anthropic-version"),
            Some(want),
            "request {i}"
        );
    }
    for request in &sent[..3] {
        let body = request.json();
        for refused in ["temperature", "top_p", "top_k"] {
            assert!(body.get(refused).is_none(), "{refused} in {body}");
        }
    }
    assert_eq!(sent[3].json()["temperature"], json!(0.2));
    for bad in ["", " ", "2026-10\n-21", "2026 10 21", "2026-10-21\u{e9}"] {
        let err = Client::builder()
            .api_key("k")
            .anthropic_version(bad)
            .build()
            .unwrap_err();
        assert!(matches!(err, ApiError::Config(_)), "{bad:?}: {err:?}");
    }
}

#[tokio::test]
async fn no_beta_header_without_betas() {
    let api = FakeApi::start([Reply::message(end_turn("ok"))]).await;
    client(&api, 0).create_message(&request()).await.unwrap();
    assert_eq!(api.requests()[0].header("anthropic-beta"), None);
}

#[tokio::test]
async fn overloaded_then_success() {
    let api = FakeApi::start([
        Reply::error(529, "overloaded_error", "Overloaded"),
        Reply::message(end_turn("made it")),
    ])
    .await;
    let reply = client(&api, 2).create_message(&request()).await.unwrap();
    assert_eq!(reply.text(), "made it");
    let requests = api.requests();
    assert_eq!(requests.len(), 2);
    // The retry is the same request.
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn every_retryable_status_is_retried() {
    for status in [429, 500, 502, 503, 504, 529] {
        let api = FakeApi::start([
            Reply::error(status, "api_error", "try again"),
            Reply::message(end_turn("ok")),
        ])
        .await;
        let reply = client(&api, 1).create_message(&request()).await;
        assert!(reply.is_ok(), "{status}: {reply:?}");
        assert_eq!(api.requests().len(), 2, "{status}");
    }
}

#[tokio::test]
async fn rate_limit_honours_retry_after() {
    let api = FakeApi::start([
        Reply::error(429, "rate_limit_error", "Slow down").header("retry-after", "0.3"),
        Reply::message(end_turn("ok")),
    ])
    .await;
    let started = Instant::now();
    client(&api, 2).create_message(&request()).await.unwrap();
    // The backoff alone would be a few milliseconds.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(api.requests().len(), 2);
}

#[tokio::test]
async fn retries_stop_before_the_total_wait_is_passed() {
    let api = FakeApi::start([
        Reply::error(429, "rate_limit_error", "Slow down").header("retry-after", "0.2"),
        Reply::error(429, "rate_limit_error", "Slow down").header("retry-after", "0.2"),
        Reply::message(end_turn("too late")),
    ])
    .await;
    let client = Client::builder()
        .api_key("sk-test-key")
        .base_url(api.url())
        .retry(RetryPolicy {
            max_total_wait: Duration::from_millis(300),
            ..tiny_retries(5)
        })
        .build()
        .unwrap();
    let err = client.create_message(&request()).await.unwrap_err();
    assert_eq!(err.status(), Some(429));
    // The first wait (200 ms) fits, the second would make 400 ms: two tries, not three.
    assert_eq!(api.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_beyond_the_cap_uses_the_backoff() {
    let api = FakeApi::start([
        Reply::error(429, "rate_limit_error", "Slow down").header("retry-after", "30"),
        Reply::message(end_turn("ok")),
    ])
    .await;
    let started = Instant::now();
    client(&api, 2).create_message(&request()).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// `retry-after: 0`, `retry-after-ms: 0` and an HTTP date already past are no wait at all:
/// the official SDKs then use their exponential backoff, and so does the client, rather than
/// retrying at once into the same overload.
#[tokio::test]
async fn a_zero_or_past_retry_after_uses_the_backoff() {
    let past = http_date(std::time::SystemTime::now() - Duration::from_secs(3600));
    for (name, value) in [
        ("retry-after", "0"),
        ("retry-after", "0.0"),
        ("retry-after-ms", "0"),
        ("retry-after", past.as_str()),
    ] {
        let api = FakeApi::start([
            Reply::error(429, "rate_limit_error", "Slow down").header(name, value),
            Reply::message(end_turn("ok")),
        ])
        .await;
        let client = Client::builder()
            .api_key("sk-test-key")
            .base_url(api.url())
            .retry(RetryPolicy {
                initial_backoff: Duration::from_millis(400),
                max_backoff: Duration::from_millis(400),
                ..tiny_retries(1)
            })
            .build()
            .unwrap();
        let started = Instant::now();
        client.create_message(&request()).await.unwrap();
        // The backoff is 400 ms less at most a quarter of jitter.
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "{name}: {value} retried after {:?}",
            started.elapsed()
        );
        assert_eq!(api.requests().len(), 2);
    }
}

#[tokio::test]
async fn retries_stop_at_the_limit_with_the_apis_error() {
    let api =
        FakeApi::start((0..5).map(|_| Reply::error(529, "overloaded_error", "Overloaded"))).await;
    let err = client(&api, 2)
        .create_message(&request())
        .await
        .unwrap_err();
    match &err {
        ApiError::Api {
            status,
            error_type,
            message,
            ..
        } => {
            assert_eq!(*status, 529);
            assert_eq!(error_type, "overloaded_error");
            assert_eq!(message, "Overloaded");
        }
        other => panic!("expected an API error, got {other:?}"),
    }
    assert_eq!(api.requests().len(), 3, "one try and two retries");
    assert_eq!(api.remaining(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let api = FakeApi::start([
        Reply::error(400, "invalid_request_error", "max_tokens: required")
            .header("request-id", "req_123"),
        Reply::message(end_turn("never")),
    ])
    .await;
    let err = client(&api, 3)
        .create_message(&request())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.error_type(), Some("invalid_request_error"));
    assert!(matches!(&err, ApiError::Api { request_id: Some(id), .. } if id == "req_123"));
    assert_eq!(
        err.to_string(),
        "the Messages API answered 400 (invalid_request_error): max_tokens: required (request-id req_123)"
    );
    assert_eq!(err.request_id(), Some("req_123"));
    assert_eq!(api.requests().len(), 1);
}

#[tokio::test]
async fn x_should_retry_is_obeyed() {
    let api = FakeApi::start([
        Reply::error(529, "overloaded_error", "no").header("x-should-retry", "false"),
        Reply::error(409, "conflict", "yes").header("x-should-retry", "true"),
        Reply::message(end_turn("ok")),
    ])
    .await;
    let err = client(&api, 3).create_message(&request()).await;
    assert_eq!(err.unwrap_err().status(), Some(529));
    assert_eq!(api.requests().len(), 1);
    // The next call gets the 409, which says to retry, then succeeds.
    client(&api, 3).create_message(&request()).await.unwrap();
    assert_eq!(api.requests().len(), 3);
}

#[tokio::test]
async fn a_malformed_body_is_a_decode_error_and_not_retried() {
    let api = FakeApi::start([
        Reply::raw(200, "{\"id\": \"msg_1\", \"content\": [oops"),
        Reply::message(end_turn("never")),
    ])
    .await;
    let err = client(&api, 3)
        .create_message(&request())
        .await
        .unwrap_err();
    match &err {
        ApiError::Decode { status, body, .. } => {
            assert_eq!(*status, 200);
            assert!(body.contains("oops"), "{body}");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    assert_eq!(api.requests().len(), 1);
}

#[tokio::test]
async fn an_error_body_that_is_not_json_keeps_its_text() {
    let api = FakeApi::start([Reply::raw(502, "<html>Bad gateway</html>")]).await;
    let err = client(&api, 0)
        .create_message(&request())
        .await
        .unwrap_err();
    assert_eq!(err.error_type(), Some("http_error"));
    assert!(
        err.to_string().contains("<html>Bad gateway</html>"),
        "{err}"
    );
}

#[tokio::test]
async fn a_dropped_connection_is_retried() {
    let api = FakeApi::start([Reply::hang_up(), Reply::message(end_turn("ok"))]).await;
    let reply = client(&api, 2).create_message(&request()).await.unwrap();
    assert_eq!(reply.text(), "ok");
    assert_eq!(api.requests().len(), 2);

    let api = FakeApi::start([Reply::hang_up(), Reply::hang_up()]).await;
    let err = client(&api, 1)
        .create_message(&request())
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Connection { .. }), "{err:?}");
    assert_eq!(api.requests().len(), 2);
}

#[tokio::test]
async fn a_slow_answer_times_out_and_is_retried() {
    let api = FakeApi::start([
        Reply::message(end_turn("late")).delay(Duration::from_secs(2)),
        Reply::message(end_turn("late")).delay(Duration::from_secs(2)),
    ])
    .await;
    let client = Client::builder()
        .api_key("k")
        .base_url(api.url())
        .timeout(Duration::from_millis(100))
        .retry(tiny_retries(1))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.create_message(&request()).await.unwrap_err();
    assert!(matches!(err, ApiError::Timeout { .. }), "{err:?}");
    assert_eq!(api.requests().len(), 2);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_connection_error() {
    // Bind and drop a listener: nothing listens on the port afterwards.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = Client::builder()
        .api_key("k")
        .base_url(format!("http://127.0.0.1:{port}"))
        .retry(tiny_retries(1))
        .build()
        .unwrap();
    let err = client.create_message(&request()).await.unwrap_err();
    assert!(matches!(err, ApiError::Connection { .. }), "{err:?}");
}

// ---------------------------------------------------------------------------------------------
// Streaming

fn memory_call() -> serde_json::Value {
    memory_runner::testing::tool_use(
        Some("Saving that."),
        &[(
            "toolu_1",
            "memory",
            json!({"command": "create", "path": "/memories/prefs.md", "file_text": "Units: metric, \"SI\" only\nTea: green \u{1F375}\n"}),
        )],
    )
}

#[tokio::test]
async fn a_streamed_reply_is_the_message_the_plain_request_returns() {
    let message = memory_call();
    let api = FakeApi::start([
        Reply::message(message.clone()),
        Reply::message(message.clone()),
    ])
    .await;
    let client = client(&api, 0);
    let plain = client.create_message(&request()).await.unwrap();
    let mut stream = client.stream(&request()).await.unwrap();
    let mut text = String::new();
    let mut input_pieces = 0;
    while let Some(event) = stream.next_event().await {
        let event = event.unwrap();
        if let Some(delta) = event.text_delta() {
            text.push_str(delta);
        }
        if matches!(
            event,
            memory_runner::StreamEvent::ContentBlockDelta {
                delta: memory_runner::Delta::InputJson(_),
                ..
            }
        ) {
            input_pieces += 1;
        }
    }
    let streamed = stream.final_message().await.unwrap();
    assert_eq!(streamed, plain);
    assert_eq!(text, "Saving that.");
    assert!(input_pieces > 10, "the input came in {input_pieces} pieces");
    let requests = api.requests();
    assert_eq!(requests[1].json()["stream"], true);
    assert_eq!(requests[1].header("accept"), Some("text/event-stream"));
    assert!(requests[0].json().get("stream").is_none());
}

#[tokio::test]
async fn a_tool_input_split_into_single_characters_is_assembled() {
    let message = memory_call();
    let api = FakeApi::start([Reply::events(memory_runner::testing::stream_events(
        &message, 1,
    ))])
    .await;
    let reply = client(&api, 0)
        .stream(&request())
        .await
        .unwrap()
        .final_message()
        .await
        .unwrap();
    let call = reply.tool_uses().next().unwrap();
    assert_eq!(call.input, message["content"][1]["input"]);
}

#[tokio::test]
async fn a_cut_stream_is_a_typed_error_and_not_retried() {
    let events = memory_runner::testing::stream_events(&memory_call(), 3);
    for (cut, reply) in [
        // The connection breaks mid-body.
        (7, Reply::cut(events[..7].to_vec())),
        // The body ends cleanly, but before message_stop.
        (
            events.len() - 1,
            Reply::events(events[..events.len() - 1].to_vec()),
        ),
    ] {
        let api = FakeApi::start([
            reply.header("request-id", "req_cut"),
            Reply::message(end_turn("never")),
        ])
        .await;
        let client = client(&api, 3);
        let mut seen = 0;
        let mut stream = client.stream(&request()).await.unwrap();
        let err = loop {
            match stream.next_event().await {
                Some(Ok(_)) => seen += 1,
                Some(Err(e)) => break e,
                None => panic!("the stream ended without an error after {seen} events (cut {cut})"),
            }
        };
        assert_eq!(seen, cut);
        let ApiError::Stream {
            source: memory_runner::StreamError::Incomplete { events, .. },
            request_id,
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(*events, cut);
        assert_eq!(request_id.as_deref(), Some("req_cut"));
        assert!(
            memory_runner_error_text(&err).contains("before message_stop"),
            "{err}"
        );
        assert!(stream.next_event().await.is_none());
        // The same through the transport: an error, no partial message, one request.
        let err = memory_runner::MessagesTransport::stream_message(
            &client,
            &request(),
            &mut |_: &memory_runner::StreamEvent| {},
        )
        .await;
        assert!(err.is_ok(), "the second reply is whole: {err:?}");
        assert_eq!(api.requests().len(), 2, "a cut stream is not retried");
    }
}

fn memory_runner_error_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[tokio::test]
async fn an_error_event_is_a_typed_error() {
    let mut events = memory_runner::testing::stream_events(&memory_call(), 3);
    events.truncate(4);
    events.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let api = FakeApi::start([Reply::events(events)]).await;
    let err = client(&api, 0)
        .stream(&request())
        .await
        .unwrap()
        .final_message()
        .await
        .unwrap_err();
    assert_eq!(err.error_type(), Some("overloaded_error"));
    assert!(matches!(
        &err,
        ApiError::Stream {
            source: memory_runner::StreamError::Api { .. },
            ..
        }
    ));
    assert_eq!(
        memory_runner_error_text(&err),
        "the streamed reply from the Messages API did not complete: the reply stream failed with overloaded_error: Overloaded"
    );
}

/// A streamed request answered with a success status and a plain body (a proxy that ignored
/// `"stream": true`, a gateway's own error page) is said to be that, with the status, the
/// content-type and the API's error inside it, never "the stream was cut"; not retried.
#[tokio::test]
async fn a_plain_json_answer_to_a_streamed_request_says_what_came() {
    let cases = [
        (
            Reply::error(200, "overloaded_error", "Overloaded").header("request-id", "req_plain"),
            Some("overloaded_error"),
            "the Messages API answered a streamed request with status 200 and content-type \
             application/json, not an event stream: the API's error overloaded_error: \
             Overloaded (request-id req_plain)",
        ),
        (
            Reply::json(200, &end_turn("whole"))
                .header("content-type", "application/json; charset=utf-8"),
            None,
            "the Messages API answered a streamed request with status 200 and content-type \
             application/json; charset=utf-8, not an event stream: the body begins `{",
        ),
        (
            Reply::raw(200, "<html>Gateway says hi</html>").header("content-type", "text/html"),
            None,
            "the Messages API answered a streamed request with status 200 and content-type \
             text/html, not an event stream: the body begins `<html>Gateway says hi</html>`",
        ),
    ];
    for (reply, error_type, text) in cases {
        let api = FakeApi::start([reply.clone(), reply, Reply::message(end_turn("never"))]).await;
        let client = client(&api, 3);
        let err = client.stream(&request()).await.unwrap_err();
        assert!(matches!(err, ApiError::NotAStream { .. }), "{err:?}");
        let shown = memory_runner_error_text(&err);
        assert!(shown.starts_with(text), "{shown}");
        assert!(!shown.contains("before message_stop"), "{shown}");
        assert_eq!(err.status(), Some(200));
        assert_eq!(err.error_type(), error_type);
        // The same through the runner's transport; neither is retried.
        let err = memory_runner::MessagesTransport::stream_message(
            &client,
            &request(),
            &mut |_: &memory_runner::StreamEvent| {},
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ApiError::NotAStream { .. }), "{err:?}");
        assert_eq!(api.requests().len(), 2, "{shown}");
        assert_eq!(api.remaining(), 1);
    }
    // An event stream whose content-type has parameters is a stream.
    let events = memory_runner::testing::stream_events(&end_turn("Hello"), 2);
    let api = FakeApi::start([
        Reply::events(events).header("content-type", "Text/Event-Stream; charset=utf-8")
    ])
    .await;
    let reply = client(&api, 0)
        .stream(&request())
        .await
        .unwrap()
        .final_message()
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello");
}

#[tokio::test]
async fn a_streamed_request_is_retried_until_the_stream_starts() {
    let api = FakeApi::start([
        Reply::error(529, "overloaded_error", "Overloaded"),
        Reply::message(end_turn("Hello")),
    ])
    .await;
    let reply = client(&api, 2)
        .stream(&request())
        .await
        .unwrap()
        .final_message()
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello");
    assert_eq!(api.requests().len(), 2);
}

/// `t` as an HTTP date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`).
fn http_date(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[(month - 1) as usize],
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[test]
fn the_test_formats_http_dates_right() {
    let at = std::time::UNIX_EPOCH + Duration::from_secs(784_111_777);
    assert_eq!(http_date(at), "Sun, 06 Nov 1994 08:49:37 GMT");
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_waited_for() {
    // Two seconds ahead; the header holds whole seconds, so the retry may go at the second
    // the date names, not before. Checked against the clock, not a measured interval, so a
    // slow start on a loaded machine cannot make it fail.
    let when = std::time::SystemTime::now() + Duration::from_secs(2);
    let whole_seconds = when
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let named = std::time::UNIX_EPOCH + Duration::from_secs(whole_seconds);
    let api = FakeApi::start([
        Reply::error(429, "rate_limit_error", "slow down").header("retry-after", &http_date(when)),
        Reply::message(end_turn("Hello")),
    ])
    .await;
    let client = Client::builder()
        .api_key("sk-test-key")
        .base_url(api.url())
        .retry(RetryPolicy {
            max_retry_after: Duration::from_secs(5),
            ..tiny_retries(1)
        })
        .build()
        .unwrap();
    let started = Instant::now();
    let reply = client.create_message(&request()).await.unwrap();
    assert_eq!(reply.text(), "Hello");
    let answered = std::time::SystemTime::now();
    assert!(
        answered >= named,
        "retried before the date the header names"
    );
    // Bounded: the date is at most two seconds ahead, far under max_retry_after.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(api.requests().len(), 2);
}

/// A bearer token (`ANTHROPIC_AUTH_TOKEN` in the SDKs) goes as `Authorization: Bearer`; with
/// an API key too, both headers go, as the official SDKs send them; neither value shows in an
/// error the API answers.
#[tokio::test]
async fn an_auth_token_is_sent_as_a_bearer_and_never_shown() {
    let api = FakeApi::start([
        Reply::message(end_turn("a")),
        Reply::message(end_turn("b")),
        Reply::error(401, "authentication_error", "invalid credentials"),
    ])
    .await;
    let token_only = Client::builder()
        .auth_token("tok-secret-1")
        .base_url(api.url())
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    token_only.create_message(&request()).await.unwrap();
    let both = Client::builder()
        .api_key("sk-secret-2")
        .auth_token("tok-secret-2")
        .base_url(api.url())
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    both.create_message(&request()).await.unwrap();
    let err = both.create_message(&request()).await.unwrap_err();
    let sent = api.requests();
    assert_eq!(sent[0].header("authorization"), Some("Bearer tok-secret-1"));
    assert_eq!(sent[0].header("x-api-key"), None);
    assert_eq!(sent[1].header("authorization"), Some("Bearer tok-secret-2"));
    assert_eq!(sent[1].header("x-api-key"), Some("sk-secret-2"));
    assert_eq!(err.status(), Some(401));
    let text = format!("{err} {err:?} {both:?} {token_only:?}");
    assert!(!text.contains("secret"), "{text}");
}
