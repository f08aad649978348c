//! [`Client`]: `POST /v1/messages`, with retries, timeouts and typed errors.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use memory_core::messages::StreamEvent;

use crate::{BoxError, MessageResponse, MessagesRequest, MessagesTransport};

mod error;
mod retry;
mod stream;
#[cfg(test)]
mod tests;

pub use error::ApiError;
use error::{api_error, error_shape, snippet};
pub use retry::RetryPolicy;
use retry::retry_after;
pub use stream::MessageStream;

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
            return Ok(MessageStream::new(response, request_id));
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
