//! Foreign objects: keys under the store's prefix that no memory path names.
//!
//! object_store parses every key of a LIST page with `Path::parse`, which refuses a key with an
//! empty, `.` or `..` segment or an ASCII control character, and then fails the whole listing
//! (and every later page). One such object, written by another tool, would make every listing
//! of the store fail. So the S3 client's HTTP layer ([`ForeignKeyFilter`]) takes those entries
//! out of each LIST answer before object_store reads it, and counts them; keys object_store
//! accepts but that are not memory paths are skipped (and counted) by the storage itself.
//!
//! The same HTTP layer makes a server's temporary refusal typed: an answer `429`, `408` or
//! `5xx` gets a body that fails, when read, with an [`HttpError`] whose source is
//! [`ServerStatus`]. object_store reads the body of such an answer only once it has given up
//! retrying, so the error it returns then carries `ServerStatus` in its chain, and
//! [`crate::error`] tells a temporary failure by that type, never by the message text.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use object_store::ClientOptions;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService,
};

/// What the filter has taken out of LIST answers, shared with the storage that reports it.
#[derive(Debug, Default)]
pub(crate) struct Skipped {
    /// Entries taken out since the store was built.
    count: AtomicU64,
    /// The last key taken out, for the log.
    last: Mutex<Option<String>>,
}

impl Skipped {
    pub(crate) fn total(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    pub(crate) fn last_key(&self) -> Option<String> {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn record(&self, key: String) {
        self.count.fetch_add(1, Ordering::Relaxed);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(key);
    }
}

/// An [`HttpConnector`] that wraps another and removes foreign entries from LIST answers.
#[derive(Debug)]
pub(crate) struct ForeignKeyFilter {
    pub(crate) inner: Box<dyn HttpConnector>,
    pub(crate) skipped: Arc<Skipped>,
}

impl HttpConnector for ForeignKeyFilter {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        Ok(HttpClient::new(FilterService {
            inner: self.inner.connect(options)?,
            skipped: Arc::clone(&self.skipped),
        }))
    }
}

#[derive(Debug)]
struct FilterService {
    inner: HttpClient,
    skipped: Arc<Skipped>,
}

#[async_trait]
impl HttpService for FilterService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let is_list = req.method() == "GET"
            && req
                .uri()
                .query()
                .is_some_and(|q| q.split('&').any(|kv| kv.starts_with("list-type=")));
        let response = self.inner.execute(req).await?;
        let status = response.status();
        if status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408 {
            let (parts, body) = response.into_parts();
            let text = match body.bytes().await {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => e.to_string(),
            };
            let error = HttpError::new(
                HttpErrorKind::Unknown,
                ServerStatus {
                    status: status.as_u16(),
                    body: text,
                },
            );
            return Ok(HttpResponse::from_parts(
                parts,
                HttpResponseBody::new(FailingBody(Some(error))),
            ));
        }
        if !is_list || !status.is_success() {
            return Ok(response);
        }
        let (mut parts, body) = response.into_parts();
        let body = body.bytes().await?;
        let Some(filtered) = filter_listing(&body, &mut |key| self.skipped.record(key)) else {
            return Ok(HttpResponse::from_parts(
                parts,
                HttpResponseBody::from(body),
            ));
        };
        parts.headers.remove("content-length");
        Ok(HttpResponse::from_parts(
            parts,
            HttpResponseBody::from(filtered),
        ))
    }
}

/// A server's answer that asks to try again later (`429`, `408`, `5xx`), with its body, as
/// the source of the error object_store returns once its retries are spent.
#[derive(Debug, thiserror::Error)]
#[error("the server answered {status}: {body}")]
pub(crate) struct ServerStatus {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The answer's body (S3 puts its error code and message there).
    pub(crate) body: String,
}

/// A response body that fails with one error when read.
struct FailingBody(Option<HttpError>);

impl http_body::Body for FailingBody {
    type Data = bytes::Bytes;
    type Error = HttpError;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::task::Poll::Ready(self.get_mut().0.take().map(Err))
    }
}

/// The LIST answer without the `<Contents>` and `<CommonPrefixes>` entries whose key
/// object_store would refuse, or `None` when there is none (the answer is used as it came).
/// `skip` is told each key taken out.
pub(crate) fn filter_listing(body: &[u8], skip: &mut dyn FnMut(String)) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    loop {
        let next = [
            ("<Contents>", "</Contents>", "Key"),
            ("<CommonPrefixes>", "</CommonPrefixes>", "Prefix"),
        ]
        .into_iter()
        .filter_map(|(open, close, field)| rest.find(open).map(|at| (at, open, close, field)))
        .min_by_key(|(at, ..)| *at);
        let Some((at, _open, close, field)) = next else {
            out.push_str(rest);
            break;
        };
        let Some(end) = rest[at..].find(close).map(|e| at + e + close.len()) else {
            out.push_str(rest);
            break;
        };
        let block = &rest[at..end];
        out.push_str(&rest[..at]);
        match element(block, field).map(unescape) {
            Some(key) if is_foreign(&key, field == "Key") => {
                changed = true;
                skip(key);
            }
            _ => out.push_str(block),
        }
        rest = &rest[end..];
    }
    changed.then(|| out.into_bytes())
}

/// The text of the first `<field>...</field>` in `block`.
fn element<'a>(block: &'a str, field: &str) -> Option<&'a str> {
    let open = format!("<{field}>");
    let close = format!("</{field}>");
    let start = block.find(&open)? + open.len();
    let len = block[start..].find(&close)?;
    Some(&block[start..start + len])
}

/// XML text with its entities (`&amp;`, `&#x1;`, ...) replaced.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let Some(semi) = after.find(';') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let entity = &after[..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether object_store would refuse `key` (and so fail the whole listing), or, for an
/// object's key, would read it as another key (it drops a `/` at either end, so the folder
/// marker `a/b/` would pass for the object `a/b`, which does not exist).
fn is_foreign(key: &str, object: bool) -> bool {
    (object && (key.starts_with('/') || key.ends_with('/')))
        || object_store::path::Path::parse(key).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str) -> String {
        format!("<Contents><Key>{key}</Key><Size>1</Size></Contents>")
    }

    #[test]
    fn takes_out_only_the_keys_object_store_refuses() {
        let body = format!(
            "<ListBucketResult><IsTruncated>false</IsTruncated>{}{}{}{}{}{}<CommonPrefixes><Prefix>p/a/../</Prefix></CommonPrefixes><KeyCount>6</KeyCount></ListBucketResult>",
            entry("p/memories/./i"),
            entry("p/memories/c/../d"),
            entry("p/memories/ok.md"),
            entry("p/memories/e//f"),
            entry("p/memories/g\u{1}h"),
            entry("p/memories/tom &amp; jerry &#x1;.md"),
        );
        let body = body.replace(
            "</ListBucketResult>",
            &format!("{}</ListBucketResult>", entry("p/memories/folder/")),
        );
        let mut skipped = Vec::new();
        let out = filter_listing(body.as_bytes(), &mut |k| skipped.push(k)).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            skipped,
            [
                "p/memories/./i",
                "p/memories/c/../d",
                "p/memories/e//f",
                "p/memories/g\u{1}h",
                "p/memories/tom & jerry \u{1}.md",
                "p/a/../",
                "p/memories/folder/",
            ]
        );
        assert_eq!(
            out,
            format!(
                "<ListBucketResult><IsTruncated>false</IsTruncated>{}<KeyCount>6</KeyCount></ListBucketResult>",
                entry("p/memories/ok.md")
            )
        );
    }

    #[test]
    fn a_clean_answer_is_left_alone() {
        let body = format!(
            "<ListBucketResult>{}</ListBucketResult>",
            entry("a/b &amp; c")
        );
        assert!(filter_listing(body.as_bytes(), &mut |_| panic!("nothing to skip")).is_none());
    }
}
