//! [`S3Options`]: an [`ObjectStoreStorage`] on Amazon S3 or an S3-compatible server, configured
//! from an `s3://BUCKET[/PREFIX]` URL and the standard `AWS_*` variables.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use memory_core::Result;
use memory_core::history::HistoryOptions;
use memory_core::options::{OptionsError, StoreOptions};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, S3ConditionalPut, S3CopyIfNotExists};
use object_store::client::{HttpClient, HttpConnector, ReqwestConnector};
use object_store::{BackoffConfig, ClientOptions, RetryConfig};

use crate::ObjectStoreStorage;
use crate::error::S3Error;
use crate::foreign::{ForeignKeyFilter, Skipped};
use crate::storage::normalize_prefix;

/// How to reach an S3 bucket, and how patiently.
///
/// [`S3Options::from_url`] reads the bucket and prefix from `s3://BUCKET[/PREFIX]`;
/// [`S3Options::with_env`] fills in what is not set yet from the standard variables:
///
/// | variable | field |
/// |---|---|
/// | `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`, else `AWS_ENDPOINT` | `endpoint` |
/// | `AWS_REGION`, else `AWS_DEFAULT_REGION` | `region` |
/// | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` | the credentials |
/// | `AWS_ALLOW_HTTP` (`true` or `1`) | `allow_http` |
/// | any other `AWS_*` variable object_store knows (`AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`, ...) | passed on as is |
///
/// `Debug` never shows the secret key or the session token.
///
/// ```no_run
/// # async fn demo() -> memory_core::Result<()> {
/// use std::time::Duration;
/// use memory_s3::S3Options;
///
/// let mut options = S3Options::from_url("s3://agent-memory/team-a")?.with_env();
/// options.request_timeout = Duration::from_secs(10);
/// let storage = options.build()?;
/// assert_eq!(storage.to_string(), "S3(s3://agent-memory/team-a)");
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct S3Options {
    /// The bucket.
    pub bucket: String,
    /// The key prefix inside the bucket (slashes at either end are ignored; empty for the
    /// bucket's root). `/memories/x` is the object `PREFIX/memories/x`.
    pub prefix: String,
    /// The server, e.g. `http://127.0.0.1:9000`; `None` for Amazon S3 in `region`.
    pub endpoint: Option<String>,
    /// The region; `None` means `us-east-1`.
    pub region: Option<String>,
    /// Allow `http://` endpoints (default `false`: TLS only).
    pub allow_http: bool,
    /// The access key id; `None` lets object_store look elsewhere (web identity, ECS or
    /// instance metadata).
    pub access_key_id: Option<String>,
    /// The secret access key.
    pub secret_access_key: Option<String>,
    /// A session token for temporary credentials.
    pub session_token: Option<String>,
    /// How long to wait for a connection (default 5 s).
    pub connect_timeout: Duration,
    /// How long one request may take, answer included (default 30 s).
    pub request_timeout: Duration,
    /// How often a request is retried after a network error, a timeout, throttling (429,
    /// `SlowDown`) or a 5xx answer (default 5).
    pub max_retries: usize,
    /// No retry starts later than this after the first attempt (default 30 s).
    pub retry_timeout: Duration,
    /// The first pause between retries; it doubles each time, with jitter (default 100 ms).
    pub initial_backoff: Duration,
    /// The longest pause between retries (default 5 s).
    pub max_backoff: Duration,
    /// Whether and how long each file's earlier versions are kept (the store options
    /// `history`, `history_days`, `history_max`, `history_session`; default: on, 30 days).
    pub history: HistoryOptions,
    /// Other `AWS_*` settings found by [`S3Options::with_env`], passed to object_store.
    extra: Vec<(AmazonS3ConfigKey, String)>,
}

impl S3Options {
    /// Options for `bucket` and `prefix`, with no endpoint, region or credentials yet and the
    /// default timeouts and retries.
    pub fn new(bucket: impl Into<String>, prefix: impl Into<String>) -> Self {
        S3Options {
            bucket: bucket.into(),
            prefix: prefix.into(),
            endpoint: None,
            region: None,
            allow_http: false,
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            max_retries: 5,
            retry_timeout: Duration::from_secs(30),
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            history: HistoryOptions::default(),
            extra: Vec::new(),
        }
    }

    /// Reads `s3://BUCKET[/PREFIX]` (nothing from the environment yet); options in the URL's
    /// query are read as [`S3Options::parse`] reads them.
    ///
    /// # Errors
    /// [`memory_core::Error::Backend`] when the URL is not of that form or an option is
    /// refused ([`S3Options::parse`] says which, as a typed error).
    ///
    /// ```
    /// use memory_s3::S3Options;
    /// let o = S3Options::from_url("s3://bucket/a/b/").unwrap();
    /// assert_eq!((o.bucket.as_str(), o.prefix.as_str()), ("bucket", "a/b"));
    /// assert!(S3Options::from_url("s3://").is_err());
    /// assert!(S3Options::from_url("https://bucket/x").is_err());
    /// ```
    pub fn from_url(url: &str) -> Result<Self> {
        Self::parse(url, StoreOptions::new())
            .map_err(|e| memory_core::Error::backend(crate::error::BACKEND, e))
    }

    /// The one parser of S3 store URLs: `s3://BUCKET[/PREFIX]` (also `s3:BUCKET[/PREFIX]`,
    /// the scheme in any case), with options from the URL's query and from `options` (which
    /// win over the URL's). Nothing is read from the environment: see
    /// [`S3Options::from_env`].
    ///
    /// | option | field | value |
    /// |---|---|---|
    /// | `region` | `region` | e.g. `eu-west-1` |
    /// | `endpoint` | `endpoint` | e.g. `http://127.0.0.1:9000` |
    /// | `allow_http` | `allow_http` | `true` or `false` |
    /// | `connect_timeout`, `request_timeout`, `retry_timeout` | the same | a duration: `250ms`, `5s`, `2m` |
    /// | `initial_backoff`, `max_backoff` | the same | a duration |
    /// | `max_retries` | `max_retries` | a whole number |
    /// | `history`, `history_days`, `history_max`, `history_session` | `history` | see [`HistoryOptions`] |
    ///
    /// Credentials are never options (a URL ends up in logs): they come from
    /// [`S3Options::from_env`], the fields, or object_store's chain.
    ///
    /// ```
    /// use std::time::Duration;
    /// use memory_core::options::{OptionsError, StoreOptions};
    /// use memory_s3::{S3OpenError, S3Options};
    ///
    /// let o = S3Options::parse(
    ///     "s3://agent-memory/team-a?region=eu-west-1&request_timeout=10s",
    ///     StoreOptions::from_pairs([("max_retries", "2")]),
    /// )?;
    /// assert_eq!((o.bucket.as_str(), o.prefix.as_str()), ("agent-memory", "team-a"));
    /// assert_eq!(o.region.as_deref(), Some("eu-west-1"));
    /// assert_eq!(o.request_timeout, Duration::from_secs(10));
    /// assert_eq!(o.max_retries, 2);
    ///
    /// let err = S3Options::parse("s3://b?regoin=x", StoreOptions::new()).unwrap_err();
    /// assert!(matches!(err, S3OpenError::Options(OptionsError::UnknownOption { .. })));
    /// # Ok::<(), S3OpenError>(())
    /// ```
    ///
    /// # Errors
    /// [`S3OpenError::Url`] for a URL not of that form, [`S3OpenError::Options`] for an
    /// unknown option (named, with the accepted ones) or a value that cannot be used.
    pub fn parse(url: &str, options: StoreOptions) -> std::result::Result<Self, S3OpenError> {
        let (base, from_query) = StoreOptions::from_url(url)?;
        let mut merged = from_query.overridden_by(options);
        let bad = |reason: &'static str| S3OpenError::Url {
            url: base.clone(),
            reason,
        };
        let rest = match base.split_once(':') {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("s3") => rest,
            _ => return Err(bad("it must start with s3://, e.g. s3://BUCKET/PREFIX")),
        };
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket: use s3://BUCKET[/PREFIX]"));
        }
        if bucket.contains(|c: char| c.is_whitespace() || c.is_control() || c == '#') {
            return Err(bad(
                "the bucket name holds characters a bucket name cannot have",
            ));
        }
        let prefix = normalize_prefix(prefix).map_err(|_| {
            bad("the prefix has an empty, `.` or `..` segment or a control character")
        })?;
        let mut out = S3Options::new(bucket, prefix);
        out.region = merged.take("region").or(out.region);
        out.endpoint = merged.take("endpoint").or(out.endpoint);
        if let Some(allow) = merged.take_bool("allow_http")? {
            out.allow_http = allow;
        }
        for (key, field) in [
            ("connect_timeout", &mut out.connect_timeout),
            ("request_timeout", &mut out.request_timeout),
            ("retry_timeout", &mut out.retry_timeout),
            ("initial_backoff", &mut out.initial_backoff),
            ("max_backoff", &mut out.max_backoff),
        ] {
            if let Some(duration) = merged.take_duration(key)? {
                *field = duration;
            }
        }
        if let Some(retries) = merged.take_parsed::<usize>("max_retries", "a whole number")? {
            out.max_retries = retries;
        }
        out.history = HistoryOptions::take_from(&mut merged)?;
        merged.finish(URL_OPTIONS)?;
        Ok(out)
    }

    /// [`S3Options::parse`], then every field still unset filled from the standard `AWS_*`
    /// variables ([`S3Options::with_env`]): the URL's and the caller's options win over the
    /// environment. The one place an S3 store URL reads the environment.
    ///
    /// # Errors
    /// As [`S3Options::parse`].
    pub fn from_env(url: &str, options: StoreOptions) -> std::result::Result<Self, S3OpenError> {
        Ok(Self::parse(url, options)?.with_env())
    }

    /// Fills every field still unset from the standard `AWS_*` variables (see the table
    /// above), and keeps the other `AWS_*` settings object_store knows.
    pub fn with_env(self) -> Self {
        self.with_vars(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// [`S3Options::with_env`] over the given variables instead of the process environment.
    pub fn with_vars(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let vars: Vec<(String, String)> = vars
            .into_iter()
            .filter(|(k, v)| k.starts_with("AWS_") && !v.is_empty())
            .collect();
        let get = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        if self.endpoint.is_none() {
            self.endpoint = get("AWS_ENDPOINT_URL_S3")
                .or_else(|| get("AWS_ENDPOINT_URL"))
                .or_else(|| get("AWS_ENDPOINT"));
        }
        if self.region.is_none() {
            self.region = get("AWS_REGION").or_else(|| get("AWS_DEFAULT_REGION"));
        }
        if self.access_key_id.is_none() {
            self.access_key_id = get("AWS_ACCESS_KEY_ID");
        }
        if self.secret_access_key.is_none() {
            self.secret_access_key = get("AWS_SECRET_ACCESS_KEY");
        }
        if self.session_token.is_none() {
            self.session_token = get("AWS_SESSION_TOKEN");
        }
        if let Some(allow) = get("AWS_ALLOW_HTTP") {
            self.allow_http =
                self.allow_http || matches!(allow.trim(), "true" | "1" | "TRUE" | "True");
        }
        const HANDLED: [&str; 9] = [
            "AWS_ENDPOINT_URL_S3",
            "AWS_ENDPOINT_URL",
            "AWS_ENDPOINT",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_ALLOW_HTTP",
        ];
        for (name, value) in &vars {
            if HANDLED.contains(&name.as_str()) {
                continue;
            }
            // Settings that would break this crate's guarantees are ours to choose.
            let Ok(key) = name.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() else {
                continue;
            };
            if matches!(
                key,
                AmazonS3ConfigKey::Bucket
                    | AmazonS3ConfigKey::CopyIfNotExists
                    | AmazonS3ConfigKey::ConditionalPut
                    | AmazonS3ConfigKey::Client(_)
            ) {
                continue;
            }
            self.extra.push((key, value.clone()));
        }
        self
    }

    /// The endpoint requests go to.
    pub fn endpoint_url(&self) -> String {
        match &self.endpoint {
            Some(endpoint) => endpoint.trim_end_matches('/').to_owned(),
            None => format!("https://s3.{}.amazonaws.com", self.region()),
        }
    }

    fn region(&self) -> &str {
        self.region.as_deref().unwrap_or("us-east-1")
    }

    /// `s3://BUCKET[/PREFIX]`.
    pub fn url(&self) -> String {
        let prefix = self.prefix.trim_matches('/');
        if prefix.is_empty() {
            format!("s3://{}", self.bucket)
        } else {
            format!("s3://{}/{prefix}", self.bucket)
        }
    }

    /// The S3 client, as an object store: conditional puts by ETag, copy-if-absent through a
    /// conditional multipart upload, the timeouts and retries of these options.
    ///
    /// # Errors
    /// [`memory_core::Error::Backend`] when object_store refuses the configuration (an
    /// endpoint that is not a URL, an `http://` endpoint without `allow_http`...).
    pub fn object_store(&self) -> Result<Arc<dyn object_store::ObjectStore>> {
        self.object_store_with(None)
    }

    fn object_store_with(
        &self,
        connector: Option<Box<dyn HttpConnector>>,
    ) -> Result<Arc<dyn object_store::ObjectStore>> {
        install_crypto_provider();
        let client = ClientOptions::new()
            .with_connect_timeout(self.connect_timeout)
            .with_timeout(self.request_timeout)
            .with_allow_http(self.allow_http);
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: self.initial_backoff,
                max_backoff: self.max_backoff,
                base: 2.0,
            },
            max_retries: self.max_retries,
            retry_timeout: self.retry_timeout,
        };
        let mut builder = AmazonS3Builder::new();
        for (key, value) in &self.extra {
            builder = builder.with_config(*key, value);
        }
        builder = builder
            .with_bucket_name(&self.bucket)
            .with_region(self.region())
            .with_client_options(client)
            .with_retry(retry)
            .with_conditional_put(S3ConditionalPut::ETagMatch)
            .with_copy_if_not_exists(S3CopyIfNotExists::Multipart);
        if let Some(endpoint) = &self.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        if let Some(id) = &self.access_key_id {
            builder = builder.with_access_key_id(id);
        }
        if let Some(secret) = &self.secret_access_key {
            builder = builder.with_secret_access_key(secret);
        }
        if let Some(token) = &self.session_token {
            builder = builder.with_token(token);
        }
        if let Some(connector) = connector {
            builder = builder.with_http_connector(DynConnector(connector));
        }
        let store = builder.build().map_err(|source| S3Error::Configure {
            location: self.location(),
            source,
        })?;
        Ok(Arc::new(store))
    }

    fn location(&self) -> String {
        format!("{} (bucket {})", self.endpoint_url(), self.bucket)
    }

    /// The memory store these options describe. Nothing is sent yet: a wrong endpoint or
    /// missing bucket shows on the first request, as an error naming the endpoint.
    ///
    /// # Errors
    /// As [`S3Options::object_store`], and for a prefix that is not a valid key prefix.
    pub fn build(&self) -> Result<ObjectStoreStorage> {
        self.build_store(Box::new(ReqwestConnector::default()))
    }

    /// [`S3Options::build`] with the HTTP requests sent through `connector` instead of
    /// object_store's default reqwest client: to add a proxy, custom TLS roots, request
    /// logging or counting (this crate's tests count requests that way).
    ///
    /// # Errors
    /// As [`S3Options::build`].
    pub fn build_with_connector(
        &self,
        connector: impl HttpConnector,
    ) -> Result<ObjectStoreStorage> {
        self.build_store(Box::new(connector))
    }

    fn build_store(&self, connector: Box<dyn HttpConnector>) -> Result<ObjectStoreStorage> {
        let prefix = normalize_prefix(&self.prefix)?;
        // Every LIST answer goes through the foreign-key filter first (see `foreign`).
        let skipped = Arc::new(Skipped::default());
        let filter = ForeignKeyFilter {
            inner: connector,
            skipped: Arc::clone(&skipped),
        };
        let store = self.object_store_with(Some(Box::new(filter)))?;
        Ok(ObjectStoreStorage::with_names(
            store,
            prefix,
            format!("S3({})", self.url()),
            self.location(),
            skipped,
        )?
        .with_history(self.history.clone()))
    }
}

/// A boxed connector, as the S3 builder wants a sized one.
#[derive(Debug)]
struct DynConnector(Box<dyn HttpConnector>);

impl HttpConnector for DynConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        self.0.connect(options)
    }
}

impl fmt::Debug for S3Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |v: &Option<String>| v.as_ref().map(|_| "<redacted>");
        f.debug_struct("S3Options")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("allow_http", &self.allow_http)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &redacted(&self.secret_access_key))
            .field("session_token", &redacted(&self.session_token))
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_timeout", &self.retry_timeout)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("history", &self.history)
            .field(
                "extra",
                &self
                    .extra
                    .iter()
                    .map(|(k, _)| k.as_ref())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// reqwest is built with rustls but no bundled crypto provider (to keep aws-lc-rs out of the
/// tree): make the workspace's one provider (memory-tls: ring) the process default unless the
/// application already chose one.
fn install_crypto_provider() {
    memory_tls::install_default_provider();
}

/// The options an `s3://` store URL accepts (see [`S3Options::parse`]).
pub const URL_OPTIONS: &[&str] = &[
    "region",
    "endpoint",
    "allow_http",
    "connect_timeout",
    "request_timeout",
    "retry_timeout",
    "initial_backoff",
    "max_backoff",
    "max_retries",
    // HistoryOptions::KEYS
    "history",
    "history_days",
    "history_max",
    "history_session",
];

/// Why an S3 store could not be opened from its URL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum S3OpenError {
    /// The URL is not `s3://BUCKET[/PREFIX]`.
    #[error("`{url}` is not an S3 store URL: {reason}")]
    Url {
        /// The URL given (without its options).
        url: String,
        /// What is wrong, and the form to use.
        reason: &'static str,
    },
    /// An option that is unknown or has a value that cannot be used.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// The S3 client could not be configured (see [`S3Options::build`]).
    #[error(transparent)]
    Build(#[from] memory_core::Error),
}

impl ObjectStoreStorage {
    /// The store named by `s3://BUCKET[/PREFIX]` with its options ([`S3Options::parse`]),
    /// nothing read from the environment (see [`ObjectStoreStorage::from_url_and_env`]).
    /// Sends nothing yet.
    ///
    /// # Errors
    /// As [`S3Options::parse`], and [`S3OpenError::Build`] for a configuration object_store
    /// refuses.
    pub fn from_url(url: &str, options: StoreOptions) -> std::result::Result<Self, S3OpenError> {
        Ok(S3Options::parse(url, options)?.build()?)
    }

    /// [`ObjectStoreStorage::from_url`] with what the URL and options leave unset taken from
    /// the `AWS_*` variables ([`S3Options::from_env`]).
    ///
    /// # Errors
    /// As [`ObjectStoreStorage::from_url`].
    pub fn from_url_and_env(
        url: &str,
        options: StoreOptions,
    ) -> std::result::Result<Self, S3OpenError> {
        Ok(S3Options::from_env(url, options)?.build()?)
    }

    /// An S3 store from `s3://BUCKET[/PREFIX]`, configured from the standard `AWS_*`
    /// variables (see [`S3Options`]). Sends nothing yet.
    ///
    /// # Errors
    /// [`memory_core::Error::Backend`] for a malformed URL or a configuration object_store
    /// refuses.
    ///
    /// ```no_run
    /// # fn demo() -> memory_core::Result<()> {
    /// // AWS_ENDPOINT_URL=http://127.0.0.1:9000 AWS_ALLOW_HTTP=true AWS_REGION=us-east-1 ...
    /// let storage = memory_s3::ObjectStoreStorage::from_s3_url("s3://agent-memory/team-a")?;
    /// assert_eq!(storage.to_string(), "S3(s3://agent-memory/team-a)");
    /// # Ok(()) }
    /// ```
    pub fn from_s3_url(url: &str) -> Result<Self> {
        S3Options::from_url(url)?.with_env().build()
    }
}

#[cfg(test)]
mod url_tests {
    use super::*;

    #[test]
    fn every_option_and_the_url_forms() {
        let o = S3Options::parse(
            "S3://b/p/q/?endpoint=http://127.0.0.1:9&allow_http=true&connect_timeout=1s\
             &request_timeout=2s&retry_timeout=3s&initial_backoff=4ms&max_backoff=5s&max_retries=6&region=r",
            StoreOptions::new(),
        )
        .unwrap();
        assert_eq!((o.bucket.as_str(), o.prefix.as_str()), ("b", "p/q"));
        assert_eq!(o.endpoint.as_deref(), Some("http://127.0.0.1:9"));
        assert!(o.allow_http);
        assert_eq!(o.connect_timeout, Duration::from_secs(1));
        assert_eq!(o.request_timeout, Duration::from_secs(2));
        assert_eq!(o.retry_timeout, Duration::from_secs(3));
        assert_eq!(o.initial_backoff, Duration::from_millis(4));
        assert_eq!(o.max_backoff, Duration::from_secs(5));
        assert_eq!(o.max_retries, 6);
        assert_eq!(o.region.as_deref(), Some("r"));
        // The form memory-runner accepted too.
        let o = S3Options::parse("s3:bucket/x", StoreOptions::new()).unwrap();
        assert_eq!((o.bucket.as_str(), o.prefix.as_str()), ("bucket", "x"));
        // The caller's options win over the URL's.
        let o = S3Options::parse(
            "s3://b?region=url",
            StoreOptions::from_pairs([("region", "caller")]),
        )
        .unwrap();
        assert_eq!(o.region.as_deref(), Some("caller"));
        // History options, as every store takes them.
        let o = S3Options::parse("s3://b?history=off&history_max=3", StoreOptions::new()).unwrap();
        assert!(!o.history.enabled);
        assert_eq!(o.history.max_per_file, Some(3));
        for key in HistoryOptions::KEYS {
            assert!(URL_OPTIONS.contains(&key), "{key}");
        }
        assert!(S3Options::parse("s3://b?history=maybe", StoreOptions::new()).is_err());
    }

    #[test]
    fn refusals_are_typed_and_name_the_option() {
        let err = S3Options::parse("s3://b?secret=x", StoreOptions::new()).unwrap_err();
        let S3OpenError::Options(OptionsError::UnknownOption { key, accepted }) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(key, "secret");
        assert_eq!(accepted, URL_OPTIONS);
        assert!(
            err.to_string().contains("region, endpoint, allow_http"),
            "{err}"
        );
        for bad in ["allow_http=maybe", "request_timeout=10", "max_retries=-1"] {
            let err = S3Options::parse(&format!("s3://b?{bad}"), StoreOptions::new()).unwrap_err();
            assert!(
                matches!(err, S3OpenError::Options(OptionsError::InvalidValue { .. })),
                "{bad}: {err:?}"
            );
        }
        for bad in ["", "s3://", "s3:", "file:/x", "s3://b/a//c", "s3://b/../x"] {
            assert!(
                matches!(
                    S3Options::parse(bad, StoreOptions::new()),
                    Err(S3OpenError::Url { .. })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn only_from_env_reads_the_environment() {
        // from_url and parse never look at AWS_*; with_vars stands in for the environment.
        let o = S3Options::parse("s3://b?region=url", StoreOptions::new())
            .unwrap()
            .with_vars([
                ("AWS_REGION".to_owned(), "env".to_owned()),
                ("AWS_ENDPOINT_URL".to_owned(), "http://e".to_owned()),
            ]);
        assert_eq!(o.region.as_deref(), Some("url"), "the URL's option wins");
        assert_eq!(
            o.endpoint.as_deref(),
            Some("http://e"),
            "the environment fills the rest"
        );
        let storage = ObjectStoreStorage::from_url("s3://b/p", StoreOptions::new()).unwrap();
        assert_eq!(storage.to_string(), "S3(s3://b/p)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn env_fills_unset_fields() {
        let o = S3Options::from_url("s3://b/p").unwrap().with_vars(vars(&[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ACCESS_KEY_ID", "id"),
            ("AWS_SECRET_ACCESS_KEY", "very-secret"),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_COPY_IF_NOT_EXISTS", "header: x: y"),
            ("HOME", "/root"),
        ]));
        assert_eq!(o.endpoint.as_deref(), Some("http://127.0.0.1:9"));
        assert_eq!(o.region.as_deref(), Some("eu-west-1"));
        assert!(o.allow_http);
        assert!(o.extra.is_empty(), "copy-if-not-exists is ours to choose");
        let debug = format!("{o:?}");
        assert!(!debug.contains("very-secret"), "{debug}");
        assert_eq!(o.url(), "s3://b/p");
    }

    #[test]
    fn s3_endpoint_variable_wins_and_explicit_fields_win_over_env() {
        let o = S3Options::new("b", "").with_vars(vars(&[
            ("AWS_ENDPOINT_URL", "http://a"),
            ("AWS_ENDPOINT_URL_S3", "http://s3-only"),
        ]));
        assert_eq!(o.endpoint_url(), "http://s3-only");
        let mut o = S3Options::new("b", "");
        o.endpoint = Some("http://mine/".into());
        let o = o.with_vars(vars(&[("AWS_ENDPOINT_URL", "http://env")]));
        assert_eq!(o.endpoint_url(), "http://mine");
        assert_eq!(
            S3Options::new("b", "").endpoint_url(),
            "https://s3.us-east-1.amazonaws.com"
        );
    }

    #[test]
    fn urls() {
        for bad in [
            "",
            "s3://",
            "s3:///x",
            "file:/x",
            "s3://bad bucket/x",
            "s3://b/a//c",
            "s3://b/../x",
        ] {
            assert!(S3Options::from_url(bad).is_err(), "{bad:?} must be refused");
        }
        let o = S3Options::from_url("s3://bucket").unwrap();
        assert_eq!((o.bucket.as_str(), o.prefix.as_str()), ("bucket", ""));
        assert_eq!(o.url(), "s3://bucket");
    }

    #[test]
    fn http_endpoint_needs_allow_http() {
        let mut o = S3Options::new("b", "p");
        o.endpoint = Some("http://127.0.0.1:9".into());
        o.access_key_id = Some("x".into());
        o.secret_access_key = Some("y".into());
        // object_store accepts the configuration and refuses plain HTTP on the first request;
        // building must not panic either way (the TLS provider is installed).
        let storage = o.build().unwrap();
        assert_eq!(storage.to_string(), "S3(s3://b/p)");
    }
}
