//! [`ApiError`], and the errors read from an answer's status, headers and body.

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use memory_core::messages::StreamError;

use super::header;
use crate::BoxError;

/// How much of an undecodable body an error keeps, in bytes.
const BODY_SNIPPET: usize = 512;

/// Why a request to the Messages API failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// No credential: neither an API key (`ANTHROPIC_API_KEY`,
    /// [`ClientBuilder::api_key`](super::ClientBuilder::api_key)) nor a bearer token
    /// (`ANTHROPIC_AUTH_TOKEN`, [`ClientBuilder::auth_token`](super::ClientBuilder::auth_token)).
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
    /// A streamed request ([`Client::stream`](super::Client::stream)) answered with a success
    /// status but a body that is not an event stream (its `content-type` is not
    /// `text/event-stream`): a proxy or gateway that ignored `"stream": true`, or answered
    /// with an error of its own. The
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

/// The type and message of the API's error shape (`{"error": {"type", "message"}}`), where
/// the body has them.
pub(super) fn error_shape(body: &[u8]) -> (Option<String>, Option<String>) {
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

pub(super) fn api_error(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> ApiError {
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

pub(super) fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(BODY_SNIPPET)]);
    text.trim().to_owned()
}
