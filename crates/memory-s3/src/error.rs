//! The crate's private error enum and its mapping into [`memory_core::Error`].
//!
//! Messages here name the endpoint, the bucket and the object key: they are for the
//! application's log and for an operator, never for the model (memory-core renders every
//! tool-facing text and never shows a backend's message).

use object_store::client::{HttpError, HttpErrorKind};

use crate::foreign::ServerStatus;

/// The name this backend gives in [`memory_core::Error::Backend`].
pub(crate) const BACKEND: &str = "S3";

/// What went wrong inside this backend.
#[derive(Debug, thiserror::Error)]
pub(crate) enum S3Error {
    /// A request to the object store failed (after object_store's own retries).
    #[error("{operation} of `{key}` on {location} failed: {source}")]
    Request {
        /// What was asked (`GET`, `HEAD`, `PUT`, `LIST`, `COPY`, `DELETE`).
        operation: &'static str,
        /// The object key or prefix.
        key: String,
        /// Where the store is: the endpoint and bucket for S3, the store's name otherwise.
        location: String,
        #[source]
        source: object_store::Error,
    },
    /// A write succeeded but the store returned neither an ETag nor a version id, so the file
    /// cannot take part in compare-and-swap.
    #[error("the store at {location} returned neither an ETag nor a version for `{key}`")]
    NoVersion { key: String, location: String },
    /// A memory path that the store's path rules refuse (should not happen: memory paths are a
    /// subset of object_store paths).
    #[error("`{key}` is not a valid object key: {source}")]
    Key {
        key: String,
        #[source]
        source: object_store::path::Error,
    },
    /// Other writers changed the file counter every time this one tried to.
    #[error("the file counter `{key}` on {location} kept changing under this writer; try again")]
    CounterContended { key: String, location: String },
    /// A rename whose destination would break a path rule.
    #[error("cannot move {source_path} below {to}: the path would be too long or too deep")]
    RenameTooLong { source_path: String, to: String },
    /// A prefix that is not a valid object key prefix.
    #[error("invalid key prefix {prefix:?}: {reason}")]
    Prefix { prefix: String, reason: String },
    /// The S3 client could not be configured (bad endpoint, region, credentials...).
    #[error("cannot configure the S3 client for {location}: {source}")]
    Configure {
        location: String,
        #[source]
        source: object_store::Error,
    },
}

impl S3Error {
    /// Whether trying again later may succeed: network failures, timeouts, throttling and
    /// server errors that outlasted object_store's own retries.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            S3Error::Request { source, .. } => is_temporary(source),
            S3Error::CounterContended { .. } => true,
            _ => false,
        }
    }
}

/// Looks through an object_store error for a network failure or a 429/408/5xx answer: the
/// types in its chain ([`HttpError`]'s kind, [`ServerStatus`] from this crate's HTTP layer),
/// never its text.
fn is_temporary(error: &object_store::Error) -> bool {
    let object_store::Error::Generic { source, .. } = error else {
        return false;
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(source.as_ref());
    while let Some(e) = cause {
        if e.downcast_ref::<ServerStatus>().is_some() {
            return true;
        }
        if let Some(http) = e.downcast_ref::<HttpError>()
            && matches!(
                http.kind(),
                HttpErrorKind::Connect
                    | HttpErrorKind::Request
                    | HttpErrorKind::Timeout
                    | HttpErrorKind::Interrupted
            )
        {
            return true;
        }
        cause = e.source();
    }
    false
}

impl From<S3Error> for memory_core::Error {
    fn from(e: S3Error) -> Self {
        if e.is_retryable() {
            memory_core::Error::retryable(BACKEND, e)
        } else {
            memory_core::Error::backend(BACKEND, e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semantic_errors_are_not_retryable() {
        let e = S3Error::Request {
            operation: "GET",
            key: "k".into(),
            location: "InMemory".into(),
            source: object_store::Error::NotImplemented {
                operation: "x".into(),
                implementer: "y".into(),
            },
        };
        assert!(!e.is_retryable());
        let core: memory_core::Error = e.into();
        assert!(!core.is_retryable());
    }

    #[test]
    fn server_errors_are_retryable() {
        // The chain object_store returns once its retries are spent: its own error around the
        // HttpError that this crate's HTTP layer put in the answer's body.
        let http = HttpError::new(
            HttpErrorKind::Unknown,
            ServerStatus {
                status: 503,
                body: "<Error><Code>SlowDown</Code></Error>".into(),
            },
        );
        let e = S3Error::Request {
            operation: "PUT",
            key: "k".into(),
            location: "http://127.0.0.1:1 (bucket b)".into(),
            source: object_store::Error::Generic {
                store: "S3",
                source: Box::new(http),
            },
        };
        assert!(e.is_retryable());
        let text = e.to_string();
        assert!(text.contains("http://127.0.0.1:1"), "{text}");
        let core: memory_core::Error = e.into();
        assert!(core.is_retryable());
    }

    #[test]
    fn the_text_of_an_error_decides_nothing() {
        let e = S3Error::Request {
            operation: "PUT",
            key: "k".into(),
            location: "x".into(),
            source: object_store::Error::Generic {
                store: "S3",
                source: "Server returned non-2xx status code: 503 Service Unavailable".into(),
            },
        };
        assert!(!e.is_retryable());
    }

    #[test]
    fn client_errors_are_not_retryable() {
        let e = S3Error::Request {
            operation: "PUT",
            key: "k".into(),
            location: "x".into(),
            source: object_store::Error::Generic {
                store: "S3",
                source: "Server returned non-2xx status code: 400 Bad Request".into(),
            },
        };
        assert!(!e.is_retryable());
    }
}
