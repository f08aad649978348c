//! [`HttpStores`]: a small client of the memory-stores API (`memory serve`, or any service
//! with the same endpoints), with just what the memory-tool bridge needs.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use memory_core::BoxError;
use memory_store::{
    Actor, CreateMemory, DeletedMemory, ErrorEnvelope, ListMemories, Memory, MemoryListItem, Page,
    Reason, Store, StoreError, StoresApi, UpdateMemory,
};
use reqwest::header::{HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;

/// The beta header of the memory-stores endpoints (accepted and ignored by `memory serve`).
const BETA: &str = "agent-memory-2026-07-22";

/// A client of a memory-stores server at a base URL (`http://127.0.0.1:8080`).
///
/// Sends `x-api-key` when given a key. Writes are recorded by the server with the actor it
/// derives from the key (`memory serve`: the key's `api_actor`; no actor without keys), or,
/// with [`with_session_id`](HttpStores::with_session_id), with the session actor it names
/// (an extension `memory serve` understands; the hosted API has no such header). Nothing is retried: a busy or unreachable
/// server is a retryable [`StoreError::Backend`], which the memory tool reports as "try again".
///
/// ```no_run
/// use memory_mounts::{HttpStores, StoreStorage};
/// use memory_store::StoresApi;
///
/// # fn demo() -> Result<(), memory_store::StoreError> {
/// let client = HttpStores::new("http://127.0.0.1:8080", Some("sk-local-1".into()))?;
/// let storage = StoreStorage::http(client, "memstore_01AbCDefGhIjKlMnOpQrStUv");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct HttpStores {
    http: reqwest::Client,
    base: Arc<str>,
    session_id: Option<HeaderValue>,
}

impl fmt::Debug for HttpStores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("HttpStores")
            .field("base", &self.base)
            .finish()
    }
}

fn backend(retryable: bool, source: impl Into<BoxError>) -> StoreError {
    StoreError::Backend {
        retryable,
        source: source.into(),
    }
}

/// Percent-encodes a query value (everything but the unreserved characters).
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An id as one URL path segment: ids are `[0-9A-Za-z_]`; anything else cannot name a
/// stored object, so it is refused before sending.
fn segment(id: &str) -> Result<&str, StoreError> {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Ok(id)
    } else {
        Err(StoreError::NotFound {
            message: format!("{id:?} is not an id"),
        })
    }
}

impl HttpStores {
    /// A client of the server at `base_url` (`http://` or `https://`), sending `api_key` as
    /// `x-api-key` when given.
    ///
    /// # Errors
    /// [`StoreError::InvalidRequest`] for a base URL that is not `http(s)://`, or a key that
    /// cannot be a header; [`StoreError::Backend`] when TLS cannot be set up.
    pub fn new(base_url: &str, api_key: Option<String>) -> Result<Self, StoreError> {
        let base = base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(StoreError::refused(
                Reason::InvalidParameter,
                format!("the server URL `{base}` must start with http:// or https://"),
            ));
        }
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-beta", HeaderValue::from_static(BETA));
        headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
        if let Some(key) = api_key {
            let mut value = HeaderValue::from_str(key.trim()).map_err(|_| {
                StoreError::refused(
                    Reason::InvalidParameter,
                    "the API key holds characters a header cannot",
                )
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        // The workspace's one TLS setup (rustls, ring, the platform's verifier).
        let http = memory_tls::reqwest_builder()
            .map_err(|e| backend(false, e))?
            .default_headers(headers)
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("memory-mounts/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| backend(false, e))?;
        Ok(HttpStores {
            http,
            base: base.into(),
            session_id: None,
        })
    }

    /// The same client, naming the agent session it acts for in the `x-memory-session-id`
    /// header, so `memory serve` attributes each version to that `session_actor` instead of
    /// the API key. Servers without this extension ignore the header.
    ///
    /// # Errors
    /// [`StoreError::InvalidRequest`] for an id that is not 1 to 64 characters from
    /// `[0-9A-Za-z_-]`.
    pub fn with_session_id(mut self, session_id: &str) -> Result<Self, StoreError> {
        if !Actor::is_valid_session_id(session_id) {
            return Err(StoreError::refused(
                Reason::InvalidParameter,
                format!(
                    "the session id {session_id:?} must be 1 to 64 characters from [0-9A-Za-z_-]"
                ),
            ));
        }
        self.session_id = HeaderValue::from_str(session_id).ok();
        Ok(self)
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn url(&self, store_id: &str, rest: &str) -> Result<String, StoreError> {
        Ok(format!(
            "{}/v1/memory_stores/{}{rest}",
            self.base,
            segment(store_id)?
        ))
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, StoreError> {
        let request = match &self.session_id {
            Some(session) => request.header("x-memory-session-id", session.clone()),
            None => request,
        };
        let response = request.send().await.map_err(|e| {
            let retryable = e.is_timeout() || e.is_connect() || e.is_request();
            backend(retryable, e)
        })?;
        let status = response.status().as_u16();
        let body = response.bytes().await.map_err(|e| backend(true, e))?;
        if (200..300).contains(&status) {
            return serde_json::from_slice(&body).map_err(|e| {
                backend(
                    false,
                    format!("the server answered {status} with an unexpected body: {e}"),
                )
            });
        }
        Err(ErrorEnvelope::decode(status, &body))
    }

    fn with_query(url: String, query: &[String]) -> String {
        if query.is_empty() {
            url
        } else {
            format!("{url}?{}", query.join("&"))
        }
    }

    fn post(
        &self,
        url: String,
        body: &impl serde::Serialize,
    ) -> Result<reqwest::RequestBuilder, StoreError> {
        let body = serde_json::to_vec(body).map_err(|e| backend(false, e))?;
        Ok(self
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(body))
    }
}

impl fmt::Display for HttpStores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

/// The listing-based lookups (`memory_at_path`, `count_memories`) are the trait's provided
/// ones: the API has no lookup by path and no count.
#[async_trait]
impl StoresApi for HttpStores {
    async fn retrieve_store(&self, store_id: &str) -> Result<Store, StoreError> {
        self.send(self.http.get(self.url(store_id, "")?)).await
    }

    async fn list_memories(
        &self,
        store_id: &str,
        params: ListMemories,
    ) -> Result<Page<MemoryListItem>, StoreError> {
        let query: Vec<String> = params
            .to_query()
            .into_iter()
            .map(|(key, value)| format!("{key}={}", encode(&value)))
            .collect();
        let url = Self::with_query(self.url(store_id, "/memories")?, &query);
        self.send(self.http.get(url)).await
    }

    async fn retrieve_memory(&self, store_id: &str, memory_id: &str) -> Result<Memory, StoreError> {
        let url = self.url(store_id, &format!("/memories/{}", segment(memory_id)?))?;
        self.send(self.http.get(format!("{url}?view=full"))).await
    }

    /// With `max_memories`, sends `memory serve`'s `max_memories` extension (the server
    /// counts and creates in one transaction).
    async fn create_memory(
        &self,
        store_id: &str,
        path: &str,
        content: &str,
        max_memories: Option<u64>,
    ) -> Result<Memory, StoreError> {
        let body = CreateMemory {
            path: path.to_owned(),
            content: Some(content.to_owned()),
        };
        let query: Vec<String> = max_memories
            .map(|n| format!("max_memories={}", n.min(i64::MAX as u64)))
            .into_iter()
            .collect();
        let url = Self::with_query(self.url(store_id, "/memories")?, &query);
        self.send(self.post(url, &body)?).await
    }

    async fn update_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        params: UpdateMemory,
    ) -> Result<Memory, StoreError> {
        let url = self.url(store_id, &format!("/memories/{}", segment(memory_id)?))?;
        self.send(self.post(url, &params)?).await
    }

    async fn delete_memory(
        &self,
        store_id: &str,
        memory_id: &str,
        expected_content_sha256: Option<&str>,
    ) -> Result<DeletedMemory, StoreError> {
        let url = self.url(store_id, &format!("/memories/{}", segment(memory_id)?))?;
        let query: Vec<String> = expected_content_sha256
            .map(|sha| format!("expected_content_sha256={}", encode(sha)))
            .into_iter()
            .collect();
        self.send(self.http.delete(Self::with_query(url, &query)))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(encode("/notes/a b/é"), "%2Fnotes%2Fa%20b%2F%C3%A9");
        assert_eq!(encode("page_x-1.~"), "page_x-1.~");
    }

    #[test]
    fn ids_cannot_leave_their_segment() {
        assert!(segment("memstore_01abc").is_ok());
        for bad in ["", "../x", "a/b", "a?b", "a%2f"] {
            assert!(
                matches!(segment(bad), Err(StoreError::NotFound { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn base_urls_must_be_http() {
        assert!(HttpStores::new("ftp://x", None).is_err());
        let client = HttpStores::new("http://127.0.0.1:9/", Some("sk-secret".into())).unwrap();
        assert_eq!(client.base_url(), "http://127.0.0.1:9");
        assert!(!format!("{client:?}").contains("sk-secret"));
    }
}
