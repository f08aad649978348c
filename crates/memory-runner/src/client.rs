//! [`Client`]: `POST /v1/messages`, with retries, timeouts and typed errors.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use memory_core::messages::{MessageAccumulator, StreamError, StreamEvent};

use crate::{BoxError, MessageResponse, MessagesRequest, MessagesTransport};

/// Where the API is unless `ANTHROPIC_BASE_URL` or [`ClientBuilder::base_url`] says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header sent with every request unless
/// [`ClientBuilder::anthropic_version`] sets another: the version the official SDKs send.
///
/// This version refuses the sampling parameters `temperature`, `top_p` and `top_k`; the client
/// sends none of them unless the request sets them ([`MessagesRequest::temperature`],
/// [`MessagesRequest::param`]). To send them, pick an older version, e.g. `2023-06-01`.
pub const API_VERSION: &str = "2026-10-21";

/// The statuses worth another try: rate limited, server errors, overloaded.
const RETRY_STATUSES: [u16; 6] = [429, 500, 502, 503, 504, 529];

/// How much of an undecodable body an error keeps, in bytes.
const BODY_SNIPPET: usize = 512;

/// Why a request to the Messages API failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// No credential: neither an API key (`ANTHROPIC_API_KEY`, [`ClientBuilder::api_key`])
    /// nor a bearer token (`ANTHROPIC_AUTH_TOKEN`, [`ClientBuilder::auth_token`]).
    #[error(
        "ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN): export your Anthropic API \
         key (from the Anthropic Console) as ANTHROPIC_API_KEY, or a bearer token as \
         ANTHROPIC_AUTH_TOKEN"
    )]
    MissingApiKey,
    /// The client could not be set up (a bad base URL, header value or TLS setup).
    #[error("invalid Messages API client configuration: {0}")]
    Config(String),
    /// The API answered with an error.
    #[error(
        "the Messages API answered {status} ({error_type}): {message}{}",
        request_id_note(request_id.as_deref())
    )]
    Api {
        /// The HTTP status.
        status: u16,
        /// The API's error type (`rate_limit_error`, `overloaded_error`,
        /// `invalid_request_error`...), or `http_error` when the body had none.
        error_type: String,
        /// The API's message, or the start of the body when it was not the API's error shape.
        message: String,
        /// The `request-id` header, for support requests.
        request_id: Option<String>,
    },
    /// The API could not be reached, or the connection broke.
    #[error("could not reach the Messages API: {source}")]
    Connection {
        /// The transport's error.
        #[source]
        source: BoxError,
    },
    /// No answer within the request timeout.
    #[error("the Messages API did not answer in time: {source}")]
    Timeout {
        /// The transport's error.
        #[source]
        source: BoxError,
    },
    /// A streamed reply did not complete: the stream was cut before `message_stop`, the API
    /// sent an `error` event, or the events do not make a message. Never retried (its events
    /// were already given to the caller); no partial message is returned.
    #[error(
        "the streamed reply from the Messages API did not complete{}",
        request_id_note(request_id.as_deref())
    )]
    Stream {
        /// What went wrong ([`StreamError::Incomplete`] for a cut stream,
        /// [`StreamError::Api`] for an `error` event, with its type and message).
        #[source]
        source: StreamError,
        /// The `request-id` header of the streamed answer.
        request_id: Option<String>,
    },
    /// A streamed request ([`Client::stream`]) answered with a success status but a body
    /// that is not an event stream (its `content-type` is not `text/event-stream`): a proxy
    /// or gateway that ignored `"stream": true`, or answered with an error of its own. The
    /// body was read whole; when it holds the API's error shape, its type and message are
    /// here. Not retried.
    #[error(
        "the Messages API answered a streamed request with status {status} and {}, not an \
         event stream: {}{}",
        content_type.as_deref().map_or_else(|| "no content-type".to_owned(), |t| format!("content-type {t}")),
        not_a_stream_detail(error_type.as_deref(), message),
        request_id_note(request_id.as_deref())
    )]
    NotAStream {
        /// The HTTP status (a success).
        status: u16,
        /// The answer's `content-type`, when it had one.
        content_type: Option<String>,
        /// The API's error type, when the body is the API's error shape.
        error_type: Option<String>,
        /// The API's error message when the body is the API's error shape, else the start of
        /// the body.
        message: String,
        /// The `request-id` header.
        request_id: Option<String>,
    },
    /// A successful status whose body is not a message.
    #[error("the Messages API sent a body that is not a message (status {status}): {source}")]
    Decode {
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
        /// What did not parse.
        #[source]
        source: serde_json::Error,
    },
}

impl ApiError {
    /// The HTTP status, for errors the API answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Api { status, .. }
            | ApiError::Decode { status, .. }
            | ApiError::NotAStream { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The API's error type (`overloaded_error`...), for errors the API answered, an `error`
    /// event of a stream included.
    pub fn error_type(&self) -> Option<&str> {
        match self {
            ApiError::Api { error_type, .. } => Some(error_type),
            ApiError::NotAStream { error_type, .. } => error_type.as_deref(),
            ApiError::Stream {
                source: StreamError::Api { error_type, .. },
                ..
            } => Some(error_type),
            _ => None,
        }
    }

    /// The `request-id` header of the answer, for support requests.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            ApiError::Api { request_id, .. }
            | ApiError::Stream { request_id, .. }
            | ApiError::NotAStream { request_id, .. } => request_id.as_deref(),
            _ => None,
        }
    }
}

/// What a body that is not an event stream held: the API's error, or the body's start.
fn not_a_stream_detail(error_type: Option<&str>, message: &str) -> String {
    match error_type {
        Some(error_type) => format!("the API's error {error_type}: {message}"),
        None if message.is_empty() => "an empty body".to_owned(),
        None => format!("the body begins `{message}`"),
    }
}

fn request_id_note(request_id: Option<&str>) -> String {
    request_id
        .map(|id| format!(" (request-id {id})"))
        .unwrap_or_default()
}

/// When and how often a failed request is tried again.
///
/// Retried: statuses 429, 500, 502, 503, 504 and 529, connection errors and timeouts (and any
/// answer carrying `x-should-retry: true`; `x-should-retry: false` stops retries). The wait
/// before retry `n` (0-based) is `initial_backoff * 2^n`, at most `max_backoff`, less a random
/// jitter of up to a quarter; a `retry-after-ms` or `retry-after` header (in seconds or as an
/// HTTP date) of more than zero and at most `max_retry_after` is used instead. A header of
/// zero, or a date already past, uses the backoff, as in the official SDKs (a retry at once
/// would meet the same overload). A retry whose wait would bring the request's waits past
/// `max_total_wait` is not made: the last error is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a request is tried again after the first try (default 2).
    pub max_retries: u32,
    /// The first wait (default 500 ms).
    pub initial_backoff: Duration,
    /// The longest computed wait (default 8 s).
    pub max_backoff: Duration,
    /// The longest server-asked wait honoured (default 60 s); longer ones use the backoff, and
    /// so do waits of zero (`retry-after: 0`, a date already past).
    pub max_retry_after: Duration,
    /// The most one request waits between its tries, in all (default 2 minutes).
    pub max_total_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            max_total_wait: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The computed wait before retry `retry` (0-based), jitter included.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(31));
        let base = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        base.mul_f64(1.0 - 0.25 * fastrand::f64())
    }
}

/// A client of the Messages API (`POST /v1/messages`). Cheap to clone.
///
/// ```no_run
/// use memory_runner::{Client, Message, MessagesRequest};
///
/// # async fn demo() -> Result<(), memory_runner::ApiError> {
/// let client = Client::from_env()?; // ANTHROPIC_API_KEY or _AUTH_TOKEN, ANTHROPIC_BASE_URL
/// let reply = client
///     .create_message(&MessagesRequest::new("claude-sonnet-4-5", 256).message(Message::user("Hi")))
///     .await?;
/// println!("{}", reply.text());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    messages_url: String,
    /// `x-api-key`, when an API key was given.
    api_key: Option<HeaderValue>,
    /// `Authorization: Bearer …`, when a bearer token was given.
    bearer: Option<HeaderValue>,
    betas: Vec<String>,
    retry: RetryPolicy,
    /// The `anthropic-version` header.
    api_version: HeaderValue,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("messages_url", &self.inner.messages_url)
            .field(
                "api_key",
                &self.inner.api_key.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "auth_token",
                &self.inner.bearer.as_ref().map(|_| "<redacted>"),
            )
            .field("betas", &self.inner.betas)
            .field("retry", &self.inner.retry)
            .field("anthropic_version", &self.inner.api_version)
            .finish()
    }
}

/// Sets up a [`Client`].
///
/// | setting | default | environment ([`ClientBuilder::from_env`]) |
/// |---|---|---|
/// | API key (`x-api-key`) | none | `ANTHROPIC_API_KEY` |
/// | bearer token (`Authorization: Bearer`) | none | `ANTHROPIC_AUTH_TOKEN` |
/// | base URL | `https://api.anthropic.com` | `ANTHROPIC_BASE_URL` |
/// | request timeout | 10 minutes | |
/// | connect timeout | 30 seconds | |
/// | retries | [`RetryPolicy::default`] | |
/// | betas | none | |
/// | `anthropic-version` | [`API_VERSION`] (`2026-10-21`) | |
///
/// One of the API key and the bearer token is required. As in the official SDKs, each one
/// given is sent: both headers when both are set (the API decides which it honours).
#[derive(Clone)]
pub struct ClientBuilder {
    api_key: Option<String>,
    auth_token: Option<String>,
    base_url: String,
    timeout: Duration,
    connect_timeout: Duration,
    retry: RetryPolicy,
    betas: Vec<String>,
    api_version: String,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "auth_token",
                &self.auth_token.as_ref().map(|_| "<redacted>"),
            )
            .field("base_url", &self.base_url)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("retry", &self.retry)
            .field("betas", &self.betas)
            .field("anthropic_version", &self.api_version)
            .finish()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            api_key: None,
            auth_token: None,
            base_url: DEFAULT_BASE_URL.to_owned(),
            timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            betas: Vec::new(),
            api_version: API_VERSION.to_owned(),
        }
    }
}

impl ClientBuilder {
    /// A builder with the defaults and no API key.
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder with the API key from `ANTHROPIC_API_KEY`, the bearer token from
    /// `ANTHROPIC_AUTH_TOKEN` and the base URL from `ANTHROPIC_BASE_URL`, where they are set
    /// and not empty (the variables of the official SDKs).
    pub fn from_env() -> Self {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        ClientBuilder {
            api_key: var("ANTHROPIC_API_KEY"),
            auth_token: var("ANTHROPIC_AUTH_TOKEN"),
            base_url: var("ANTHROPIC_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
            ..Self::default()
        }
    }

    /// Sets the API key (sent as `x-api-key`).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sets a bearer token (sent as `Authorization: Bearer TOKEN`), for gateways and
    /// credentials that are not API keys.
    pub fn auth_token(mut self, token: impl Into<String>) -> Self {
        self.auth_token = Some(token.into());
        self
    }

    /// Sets the base URL (`https://api.anthropic.com`, a proxy, a test server).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// Sets the time one attempt may take, from connecting to the end of the body.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the time connecting may take.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Turns on a beta feature for every request (the `anthropic-beta` header).
    pub fn beta(mut self, beta: impl Into<String>) -> Self {
        let beta = beta.into();
        if !self.betas.contains(&beta) {
            self.betas.push(beta);
        }
        self
    }

    /// Sets the `anthropic-version` header of every request (default [`API_VERSION`],
    /// `2026-10-21`, what the official SDKs send). An older version such as `2023-06-01` still
    /// accepts `temperature`, `top_p` and `top_k`, which `2026-10-21` refuses.
    ///
    /// ```
    /// use memory_runner::Client;
    ///
    /// let client = Client::builder()
    ///     .api_key("sk-...")
    ///     .anthropic_version("2023-06-01")
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(client.anthropic_version(), "2023-06-01");
    /// ```
    pub fn anthropic_version(mut self, version: impl Into<String>) -> Self {
        self.api_version = version.into();
        self
    }

    /// Builds the client.
    ///
    /// # Errors
    /// [`ApiError::MissingApiKey`] without a key or token; [`ApiError::Config`] for a key or
    /// token that cannot be a header, an `anthropic-version` that is empty or not printable
    /// ASCII, a base URL that is not `http(s)://`, or a TLS setup failure. No error holds the
    /// key or the token.
    pub fn build(self) -> Result<Client, ApiError> {
        if self.api_key.is_none() && self.auth_token.is_none() {
            return Err(ApiError::MissingApiKey);
        }
        let sensitive = |value: String, what: &str| {
            let mut header = HeaderValue::from_str(value.trim()).map_err(|_| {
                ApiError::Config(format!("the {what} holds characters a header cannot"))
            })?;
            header.set_sensitive(true);
            Ok::<_, ApiError>(header)
        };
        let api_key = self
            .api_key
            .map(|key| sensitive(key, "API key"))
            .transpose()?;
        let bearer = self
            .auth_token
            .map(|token| sensitive(format!("Bearer {}", token.trim()), "auth token"))
            .transpose()?;
        let version = self.api_version.trim();
        let api_version = Some(version)
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic()))
            .and_then(|v| HeaderValue::from_str(v).ok())
            .ok_or_else(|| {
                ApiError::Config(format!(
                    "the anthropic-version `{}` cannot be a header (an API version is a date such as {API_VERSION})",
                    self.api_version.escape_debug()
                ))
            })?;
        let base = self.base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ApiError::Config(format!(
                "the base URL `{base}` must start with http:// or https://"
            )));
        }
        // The workspace's one TLS setup: ring, the platform's verifier, ALPN http/1.1.
        let http = memory_tls::reqwest_builder()
            .map_err(|e| ApiError::Config(e.to_string()))?
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .user_agent(concat!("memory-runner/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ApiError::Config(e.to_string()))?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                messages_url: format!("{base}/v1/messages"),
                api_key,
                bearer,
                betas: self.betas,
                retry: self.retry,
                api_version,
            }),
        })
    }
}

/// One failed attempt: the error, and whether and when to try again.
struct Failure {
    error: ApiError,
    retry: bool,
    retry_after: Option<Duration>,
}

impl Client {
    /// A client set up from `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN` and
    /// `ANTHROPIC_BASE_URL` ([`ClientBuilder::from_env`]).
    ///
    /// # Errors
    /// [`ApiError::MissingApiKey`] when both `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN`
    /// are unset or empty.
    pub fn from_env() -> Result<Self, ApiError> {
        ClientBuilder::from_env().build()
    }

    /// A builder, to set the key, base URL, timeouts, retries or betas.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// The URL requests go to (`{base}/v1/messages`).
    pub fn messages_url(&self) -> &str {
        &self.inner.messages_url
    }

    /// The retry policy in force.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The `anthropic-version` header every request carries ([`API_VERSION`] unless
    /// [`ClientBuilder::anthropic_version`] set another).
    pub fn anthropic_version(&self) -> &str {
        self.inner.api_version.to_str().unwrap_or(API_VERSION)
    }

    /// Sends one request and returns Claude's reply, retrying as the [`RetryPolicy`] says.
    ///
    /// # Errors
    /// The last attempt's [`ApiError`] once retries are spent, or at once for an error that
    /// retrying cannot fix (a 400, a body that is not a message...).
    pub async fn create_message(
        &self,
        request: &MessagesRequest,
    ) -> Result<MessageResponse, ApiError> {
        let body = serde_json::to_vec(request).map_err(|e| ApiError::Config(e.to_string()))?;
        let betas = self.betas_for(request);
        self.retrying(|| self.attempt(&body, &betas)).await
    }

    /// Sends `request` streamed (`"stream": true`) and returns the stream of its events once
    /// the API answered with a success status (retrying until then as the [`RetryPolicy`]
    /// says); [`MessageStream::next_event`] gives each event as it arrives and
    /// [`MessageStream::final_message`] the whole reply, the same message
    /// [`create_message`](Self::create_message) returns.
    ///
    /// ```no_run
    /// use memory_runner::{Client, Message, MessagesRequest};
    ///
    /// # async fn demo() -> Result<(), memory_runner::ApiError> {
    /// let client = Client::from_env()?;
    /// let request = MessagesRequest::new("claude-sonnet-4-5", 256).message(Message::user("Hi"));
    /// let mut stream = client.stream(&request).await?;
    /// while let Some(event) = stream.next_event().await {
    ///     if let Some(text) = event?.text_delta() {
    ///         print!("{text}");
    ///     }
    /// }
    /// let reply = stream.final_message().await?;
    /// # let _ = reply;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`create_message`](Self::create_message), for the answer's status;
    /// [`ApiError::NotAStream`] when a success status comes with a body that is not an event
    /// stream (a `content-type` other than `text/event-stream`), with the API's error from
    /// that body when it holds one.
    pub async fn stream(&self, request: &MessagesRequest) -> Result<MessageStream, ApiError> {
        let mut body =
            serde_json::to_value(request).map_err(|e| ApiError::Config(e.to_string()))?;
        if let Value::Object(fields) = &mut body {
            fields.insert("stream".to_owned(), Value::Bool(true));
        }
        let body = serde_json::to_vec(&body).map_err(|e| ApiError::Config(e.to_string()))?;
        let betas = self.betas_for(request);
        self.retrying(|| self.open_stream(&body, &betas)).await
    }

    /// The client's betas, then the request's.
    fn betas_for(&self, request: &MessagesRequest) -> Vec<String> {
        let mut betas = self.inner.betas.clone();
        for beta in &request.betas {
            if !betas.contains(beta) {
                betas.push(beta.clone());
            }
        }
        betas
    }

    /// Runs `attempt` until it succeeds or the [`RetryPolicy`] says to stop.
    async fn retrying<R, F, Fut>(&self, mut attempt: F) -> Result<R, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<R, Failure>>,
    {
        let retry = &self.inner.retry;
        let mut retries = 0;
        let mut waited = Duration::ZERO;
        loop {
            let failure = match attempt().await {
                Ok(reply) => return Ok(reply),
                Err(failure) => failure,
            };
            if !failure.retry || retries >= retry.max_retries {
                return Err(failure.error);
            }
            // A server-asked wait between zero (excluded) and the cap, else the backoff: the
            // official SDKs' rule, so `retry-after: 0` or a past date never retries at once.
            let wait = failure
                .retry_after
                .filter(|wait| !wait.is_zero() && *wait <= retry.max_retry_after)
                .unwrap_or_else(|| retry.backoff(retries));
            if waited.saturating_add(wait) > retry.max_total_wait {
                tracing::warn!(
                    error = %failure.error,
                    waited_ms = waited.as_millis() as u64,
                    wait_ms = wait.as_millis() as u64,
                    "Messages API request failed; the next wait would pass max_total_wait"
                );
                return Err(failure.error);
            }
            waited += wait;
            retries += 1;
            tracing::warn!(
                error = %failure.error,
                retry = retries,
                max_retries = retry.max_retries,
                wait_ms = wait.as_millis() as u64,
                "Messages API request failed; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// Sends one try and returns the answer, whatever its status.
    async fn send(
        &self,
        body: &[u8],
        betas: &[String],
        accept: &'static str,
    ) -> Result<reqwest::Response, Failure> {
        let mut request = self
            .inner
            .http
            .post(&self.inner.messages_url)
            .header("anthropic-version", self.inner.api_version.clone())
            .header("content-type", "application/json")
            .header("accept", accept);
        if let Some(key) = &self.inner.api_key {
            request = request.header("x-api-key", key.clone());
        }
        if let Some(bearer) = &self.inner.bearer {
            request = request.header(reqwest::header::AUTHORIZATION, bearer.clone());
        }
        if !betas.is_empty() {
            request = request.header("anthropic-beta", betas.join(","));
        }
        request
            .body(body.to_vec())
            .send()
            .await
            .map_err(transport_failure)
    }

    /// One try of a streamed request: the stream once the status is a success.
    async fn open_stream(&self, body: &[u8], betas: &[String]) -> Result<MessageStream, Failure> {
        let response = self.send(body, betas, "text/event-stream").await?;
        let status = response.status();
        let content_type = header(response.headers(), "content-type").map(str::to_owned);
        let event_stream = content_type.as_deref().is_none_or(|t| {
            t.split(';')
                .next()
                .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/event-stream"))
        });
        if status.is_success() && !event_stream {
            let headers = response.headers().clone();
            let bytes = response.bytes().await.map_err(transport_failure)?;
            return Err(not_a_stream(status, content_type, &headers, &bytes));
        }
        if status.is_success() {
            let request_id = header(response.headers(), "request-id").map(str::to_owned);
            return Ok(MessageStream {
                response,
                request_id,
                lines: Vec::new(),
                data: Vec::new(),
                pending: VecDeque::new(),
                accumulator: MessageAccumulator::new(),
                finished: false,
            });
        }
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(transport_failure)?;
        Err(status_failure(status, &headers, &bytes))
    }

    async fn attempt(&self, body: &[u8], betas: &[String]) -> Result<MessageResponse, Failure> {
        let response = self.send(body, betas, "application/json").await?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(transport_failure)?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|source| Failure {
                error: ApiError::Decode {
                    status: status.as_u16(),
                    body: snippet(&bytes),
                    source,
                },
                retry: false,
                retry_after: None,
            });
        }
        Err(status_failure(status, &headers, &bytes))
    }
}

/// A success status answering a streamed request with a body that is not an event stream:
/// never retried (the same proxy would answer the same).
fn not_a_stream(
    status: StatusCode,
    content_type: Option<String>,
    headers: &HeaderMap,
    body: &[u8],
) -> Failure {
    let (error_type, message) = match error_shape(body) {
        (Some(error_type), message) => (Some(error_type), message.unwrap_or_default()),
        (None, _) => (None, snippet(body)),
    };
    tracing::debug!(
        status = status.as_u16(),
        ?content_type,
        "a streamed request got no event stream"
    );
    Failure {
        error: ApiError::NotAStream {
            status: status.as_u16(),
            content_type,
            error_type,
            message,
            request_id: header(headers, "request-id").map(str::to_owned),
        },
        retry: false,
        retry_after: None,
    }
}

/// An error status: whether to retry is the `x-should-retry` header's call when present, the
/// status's otherwise.
fn status_failure(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Failure {
    let should_retry = match header(headers, "x-should-retry") {
        Some("true") => true,
        Some("false") => false,
        _ => RETRY_STATUSES.contains(&status.as_u16()),
    };
    Failure {
        error: api_error(status, headers, body),
        retry: should_retry,
        retry_after: retry_after(headers, SystemTime::now()),
    }
}

/// The events of a streamed reply ([`Client::stream`]), read as they arrive.
///
/// Server-sent events are parsed as the SSE format says (`data:` lines joined, a blank line
/// ends an event, comments and unknown fields skipped), each event's data as a
/// [`StreamEvent`], and accumulated into the reply ([`MessageStream::final_message`]).
pub struct MessageStream {
    response: reqwest::Response,
    request_id: Option<String>,
    /// Bytes of a line not ended yet.
    lines: Vec<u8>,
    /// The `data:` lines of the event being read.
    data: Vec<String>,
    pending: VecDeque<StreamEvent>,
    accumulator: MessageAccumulator,
    finished: bool,
}

impl fmt::Debug for MessageStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageStream")
            .field("request_id", &self.request_id)
            .field("events", &self.accumulator.events())
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl MessageStream {
    /// The answer's `request-id` header.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The next event; `None` after `message_stop` (or after an error).
    ///
    /// # Errors
    /// [`ApiError::Stream`] when the stream is cut before `message_stop` (the connection
    /// closed or broke), sends an `error` event, or sends events that do not make a message.
    pub async fn next_event(&mut self) -> Option<Result<StreamEvent, ApiError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                if let Err(source) = self.accumulator.push(&event) {
                    return Some(Err(self.fail(source)));
                }
                if matches!(event, StreamEvent::MessageStop) {
                    self.finished = true;
                    self.pending.clear();
                }
                return Some(Ok(event));
            }
            if self.finished {
                return None;
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => {
                    if let Err(source) = self.feed(&bytes) {
                        return Some(Err(self.fail(source)));
                    }
                }
                Ok(None) => {
                    let events = self.accumulator.events();
                    return Some(Err(self.fail(StreamError::Incomplete {
                        events,
                        cause: None,
                    })));
                }
                Err(e) => {
                    let events = self.accumulator.events();
                    return Some(Err(self.fail(StreamError::Incomplete {
                        events,
                        cause: Some(e.to_string()),
                    })));
                }
            }
        }
    }

    /// Reads the rest of the stream and returns the whole reply.
    ///
    /// # Errors
    /// As [`next_event`](Self::next_event).
    pub async fn final_message(mut self) -> Result<MessageResponse, ApiError> {
        while let Some(event) = self.next_event().await {
            event?;
        }
        let request_id = self.request_id.take();
        self.accumulator
            .finish()
            .map_err(|source| ApiError::Stream { source, request_id })
    }

    fn fail(&mut self, source: StreamError) -> ApiError {
        self.finished = true;
        self.pending.clear();
        tracing::debug!(error = %source, request_id = ?self.request_id, "streamed reply failed");
        ApiError::Stream {
            source,
            request_id: self.request_id.clone(),
        }
    }

    /// Splits `bytes` into lines and the lines into events.
    fn feed(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.lines.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let mut line = std::mem::take(&mut self.lines);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line(&line)?;
        }
        self.lines.extend_from_slice(rest);
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> Result<(), StreamError> {
        let malformed = |reason: String| StreamError::Malformed { reason };
        if line.is_empty() {
            if self.data.is_empty() {
                return Ok(());
            }
            let data = std::mem::take(&mut self.data).join("\n");
            let json: Value = serde_json::from_str(&data)
                .map_err(|e| malformed(format!("event data that is not JSON ({e})")))?;
            self.pending.push_back(StreamEvent::from_json(json)?);
            return Ok(());
        }
        let line = std::str::from_utf8(line)
            .map_err(|_| malformed("a line that is not UTF-8".to_owned()))?;
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        // `event:` repeats the data's `type`; `id:`, `retry:` and comments (`:...`) are unused.
        if field == "data" {
            self.data.push(value.to_owned());
        }
        Ok(())
    }
}

/// The runner's transport: [`Client::create_message`], retries included.
#[async_trait::async_trait]
impl MessagesTransport for Client {
    type Error = ApiError;

    async fn create_message(&self, request: &MessagesRequest) -> Result<MessageResponse, ApiError> {
        Client::create_message(self, request).await
    }

    /// Streams for real ([`Client::stream`]).
    async fn stream_message(
        &self,
        request: &MessagesRequest,
        on_event: &mut (dyn for<'e> FnMut(&'e StreamEvent) + Send),
    ) -> Result<MessageResponse, ApiError> {
        let mut stream = self.stream(request).await?;
        while let Some(event) = stream.next_event().await {
            on_event(&event?);
        }
        stream.final_message().await
    }
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date: the time
/// from `now` until then, zero for a date already past).
fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let parse = |name, scale: f64| {
        header(headers, name)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| Duration::from_secs_f64(v * scale))
    };
    parse("retry-after-ms", 0.001)
        .or_else(|| parse("retry-after", 1.0))
        .or_else(|| {
            let date = http_date(header(headers, "retry-after")?)?;
            Some(date.duration_since(now).unwrap_or(Duration::ZERO))
        })
}

/// An HTTP date in its preferred form (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37
/// GMT`); `None` for anything else.
fn http_date(text: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = text.split_ascii_whitespace().collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    if !weekday.ends_with(',') || day.len() != 2 || year.len() != 4 {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|n| n.parse::<i64>().ok());
    let (Some(Some(h)), Some(Some(m)), Some(Some(sec)), None) =
        (hms.next(), hms.next(), hms.next(), hms.next())
    else {
        return None;
    };
    if !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 || h < 0 || m < 0 || sec < 0 {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + h * 3_600 + m * 60 + sec).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// The type and message of the API's error shape (`{"error": {"type", "message"}}`), where
/// the body has them.
fn error_shape(body: &[u8]) -> (Option<String>, Option<String>) {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let field = |name| {
        error
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    (field("type"), field("message"))
}

fn api_error(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> ApiError {
    let (error_type, message) = error_shape(body);
    ApiError::Api {
        status: status.as_u16(),
        error_type: error_type.unwrap_or_else(|| "http_error".to_owned()),
        message: message.unwrap_or_else(|| {
            let text = snippet(body);
            if text.is_empty() {
                status.canonical_reason().unwrap_or("no body").to_owned()
            } else {
                text
            }
        }),
        request_id: header(headers, "request-id").map(str::to_owned),
    }
}

fn transport_failure(e: reqwest::Error) -> Failure {
    let timeout = e.is_timeout();
    let retry = timeout || e.is_connect() || e.is_request() || e.is_body() || e.is_decode();
    let source: BoxError = Box::new(e);
    Failure {
        error: if timeout {
            ApiError::Timeout { source }
        } else {
            ApiError::Connection { source }
        },
        retry,
        retry_after: None,
    }
}

fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(BODY_SNIPPET)]);
    text.trim().to_owned()
}

#[cfg(test)]
mod tests {
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
        let body =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
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
}
