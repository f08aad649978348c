//! The store URL and its options, read into [`Settings`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use memory_core::history::HistoryOptions;
use memory_core::options::{StoreOptions, SyncMode};
use tokio_postgres::config::{Host, SslMode};

use crate::error::PostgresOpenError;
use crate::tls::{self, Roots};

/// The options a `postgres://` memory-tool store accepts, in the order the README lists them.
pub(crate) const ACCEPTED: &[&str] = &[
    "schema",
    "root",
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "pool_size",
    "sync",
    "application_name",
    // memory_core::history::HistoryOptions::KEYS (a test checks they match).
    "history",
    "history_days",
    "history_max",
    "history_session",
];

/// The schema used when the URL names none.
pub(crate) const DEFAULT_SCHEMA: &str = "memory";
/// The root used when the URL names none.
pub(crate) const DEFAULT_ROOT: &str = "default";
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const DEFAULT_POOL_SIZE: usize = 16;
const MAX_POOL_SIZE: usize = 1024;

/// Everything `from_url` read: where to connect and how the store is laid out.
pub(crate) struct Settings {
    pub(crate) pg: tokio_postgres::Config,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) database: String,
    pub(crate) schema: String,
    pub(crate) root: String,
    pub(crate) connect_timeout: Duration,
    pub(crate) pool_size: usize,
    pub(crate) sync: SyncMode,
    /// How the store keeps its files' history (`history`, `history_days`, `history_max`,
    /// `history_session`); off for a parse that does not accept `history`.
    pub(crate) history: HistoryOptions,
    /// Opened read-only ([`Settings::read_only`]): every session starts with
    /// `default_transaction_read_only = on`, and the open checks rather than prepares.
    pub(crate) read_only: bool,
    /// Where the trusted CA certificates come from, when TLS is on.
    pub(crate) tls_roots: Option<Roots>,
    /// The TLS configuration, when TLS is on.
    pub(crate) tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

impl fmt::Debug for Settings {
    /// No password: only the names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("database", &self.database)
            .field("schema", &self.schema)
            .field("root", &self.root)
            .field("connect_timeout", &self.connect_timeout)
            .field("pool_size", &self.pool_size)
            .field("sync", &self.sync)
            .field("history", &self.history)
            .field("read_only", &self.read_only)
            .field("tls_roots", &self.tls_roots)
            .finish()
    }
}

/// Whether `root` is a root name: 1 to 63 ASCII letters, digits, `-` or `_`.
pub(crate) fn valid_root(root: &str) -> bool {
    (1..=63).contains(&root.len())
        && root
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `schema` is a schema name this crate uses as it is (no quoting surprises, no
/// case folding, no system schema): lowercase ASCII letters, digits and `_`, starting with a
/// letter or `_`, at most 63 bytes, not `pg_...`.
pub(crate) fn valid_schema(schema: &str) -> bool {
    (1..=63).contains(&schema.len())
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !schema.as_bytes()[0].is_ascii_digit()
        && !schema.starts_with("pg_")
        && schema != "information_schema"
}

fn invalid(reason: impl Into<String>) -> PostgresOpenError {
    PostgresOpenError::InvalidUrl {
        reason: reason.into(),
    }
}

impl Settings {
    /// Reads `url` (whose query holds options) and the caller's `options`, for a memory-tool
    /// store ([`ACCEPTED`]).
    pub(crate) fn parse(url: &str, options: StoreOptions) -> Result<Self, PostgresOpenError> {
        Self::parse_accepting(url, options, ACCEPTED)
    }

    /// [`parse`](Self::parse) accepting the options `accepted` (a subset of [`ACCEPTED`]);
    /// without `root` among them, `root` is an unknown option.
    pub(crate) fn parse_accepting(
        url: &str,
        options: StoreOptions,
        accepted: &[&str],
    ) -> Result<Self, PostgresOpenError> {
        let (base, from_query) = StoreOptions::from_url(url)?;
        let mut opts = from_query.joined(options)?;
        let rest = base
            .strip_prefix("postgres://")
            .or_else(|| base.strip_prefix("postgresql://"))
            .ok_or_else(|| invalid("it does not start with postgres:// or postgresql://"))?;
        let (authority, _) = rest.split_once('/').unwrap_or((rest, ""));
        if !authority.contains('@') {
            return Err(invalid("it names no user (USER@ before the host)"));
        }
        // The client's own parser reads user, password, hosts and database (and decodes `%XX`);
        // none of its errors repeats the password.
        let mut pg = tokio_postgres::Config::from_str(&base)
            .map_err(|e| invalid(format!("the client cannot read it ({e})")))?;
        let host = match pg.get_hosts() {
            [] => return Err(invalid("it names no host")),
            [Host::Tcp(host)] if host.is_empty() => return Err(invalid("it names no host")),
            [Host::Tcp(host)] => host.clone(),
            #[cfg(unix)]
            [Host::Unix(path)] => path.display().to_string(),
            _ => return Err(invalid("it names more than one host; name one")),
        };
        let port = match pg.get_ports() {
            [] => 5432,
            [port] => *port,
            _ => return Err(invalid("it names more than one port; name one")),
        };
        let user = pg
            .get_user()
            .filter(|u| !u.is_empty())
            .ok_or_else(|| invalid("it names no user (USER@ before the host)"))?
            .to_owned();
        let database = pg
            .get_dbname()
            .filter(|d| !d.is_empty())
            .ok_or_else(|| invalid("it names no database (/DATABASE after the host)"))?
            .to_owned();

        let schema = opts
            .take("schema")
            .unwrap_or_else(|| DEFAULT_SCHEMA.to_owned());
        if !valid_schema(&schema) {
            return Err(PostgresOpenError::InvalidSchema { schema });
        }
        let root = if accepted.contains(&"root") {
            opts.take("root").unwrap_or_else(|| DEFAULT_ROOT.to_owned())
        } else {
            DEFAULT_ROOT.to_owned()
        };
        if !valid_root(&root) {
            return Err(PostgresOpenError::InvalidRoot { root });
        }
        let tls_mode = match opts.take("sslmode").as_deref() {
            // No TLS; `prefer` and `allow` do not try it either (libpq would try TLS without
            // checking the certificate, which this crate does not do).
            None | Some("disable") | Some("allow") | Some("prefer") => None,
            Some(mode @ ("require" | "verify-ca" | "verify-full")) => Some(mode.to_owned()),
            Some(other) => {
                return Err(memory_core::options::OptionsError::InvalidValue {
                    key: "sslmode".to_owned(),
                    value: other.to_owned(),
                    expected: "disable, allow, prefer, require, verify-ca or verify-full",
                }
                .into());
            }
        };
        let roots = opts.take("sslrootcert");
        let (tls_roots, tls) = match (&tls_mode, roots) {
            (None, None) => {
                pg.ssl_mode(SslMode::Disable);
                (None, None)
            }
            (None, Some(value)) => {
                return Err(memory_core::options::OptionsError::InvalidValue {
                    key: "sslrootcert".to_owned(),
                    value,
                    expected: "it only with sslmode=require, verify-ca or verify-full",
                }
                .into());
            }
            (Some(mode), None) => {
                return Err(PostgresOpenError::TlsNeedsRoots { mode: mode.clone() });
            }
            (Some(_), Some(value)) => {
                let roots = Roots::parse(&value);
                let config = tls::client_config(&roots)?;
                pg.ssl_mode(SslMode::Require);
                (Some(roots), Some(config))
            }
        };
        let connect_timeout = opts
            .take_duration("connect_timeout")?
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT);
        if connect_timeout.is_zero() {
            return Err(memory_core::options::OptionsError::InvalidValue {
                key: "connect_timeout".to_owned(),
                value: "0".to_owned(),
                expected: "a duration above zero, such as 250ms or 5s",
            }
            .into());
        }
        let pool_size = match opts.take("pool_size") {
            None => DEFAULT_POOL_SIZE,
            Some(value) => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_POOL_SIZE).contains(&n) => n,
                _ => {
                    return Err(memory_core::options::OptionsError::InvalidValue {
                        key: "pool_size".to_owned(),
                        value,
                        expected: "a whole number from 1 to 1024",
                    }
                    .into());
                }
            },
        };
        let sync = opts.take_sync()?.unwrap_or_default();
        let history = if accepted.contains(&"history") {
            HistoryOptions::take_from(&mut opts)?
        } else {
            HistoryOptions::off()
        };
        let application_name = opts
            .take("application_name")
            .unwrap_or_else(|| "memory-postgres".to_owned());
        opts.finish(accepted)?;

        pg.connect_timeout(connect_timeout);
        pg.application_name(&application_name);
        pg.keepalives(true);
        pg.keepalives_idle(Duration::from_secs(30));
        // `synchronous_commit` per connection: `on` waits for the WAL flush (and synchronous
        // replicas), `local` for the local flush only, `off` for nothing (a crash may lose the
        // last commits, never half of one).
        let commit = match sync {
            SyncMode::Full => "on",
            SyncMode::Data => "local",
            SyncMode::None => "off",
        };
        pg.options(format!("-c synchronous_commit={commit}"));
        Ok(Settings {
            read_only: false,
            pg,
            host,
            port,
            user,
            database,
            schema,
            root,
            connect_timeout,
            pool_size,
            sync,
            history,
            tls_roots,
            tls,
        })
    }
}

impl Settings {
    /// These settings for a read-only open: every connection's session starts with
    /// `default_transaction_read_only = on`, so that the server refuses any write made
    /// through it (a statement, or a transaction begun without `READ WRITE`), whatever the
    /// code above it does.
    pub(crate) fn read_only(mut self) -> Self {
        let options = self.pg.get_options().unwrap_or_default().to_owned();
        self.pg
            .options(format!("{options} -c default_transaction_read_only=on").trim_start());
        self.read_only = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<Settings, PostgresOpenError> {
        Settings::parse(url, StoreOptions::new())
    }

    #[test]
    fn full_url() {
        let s = parse("postgres://alice:pw%2Fx@db.local:6543/mem?schema=team_a&root=tenant-42&sync=none&pool_size=4&connect_timeout=2s").unwrap();
        assert_eq!(s.host, "db.local");
        assert_eq!(s.port, 6543);
        assert_eq!(s.user, "alice");
        assert_eq!(s.database, "mem");
        assert_eq!(s.schema, "team_a");
        assert_eq!(s.root, "tenant-42");
        assert_eq!(s.sync, SyncMode::None);
        assert_eq!(s.pool_size, 4);
        assert_eq!(s.connect_timeout, Duration::from_secs(2));
        assert_eq!(s.pg.get_password(), Some(&b"pw/x"[..]));
        assert_eq!(s.pg.get_options(), Some("-c synchronous_commit=off"));
        let debug = format!("{s:?}");
        assert!(!debug.contains("pw"), "{debug}");
    }

    #[test]
    fn read_only_sessions_start_read_only() {
        let s = parse("postgres://u@h/d?sync=data").unwrap().read_only();
        assert!(s.read_only);
        assert_eq!(
            s.pg.get_options(),
            Some("-c synchronous_commit=local -c default_transaction_read_only=on")
        );
    }

    #[test]
    fn defaults() {
        let s = parse("postgresql://bob@127.0.0.1/m").unwrap();
        assert_eq!(
            (s.port, s.schema.as_str(), s.root.as_str()),
            (5432, "memory", "default")
        );
        assert_eq!(s.sync, SyncMode::Full);
        assert_eq!(s.pool_size, DEFAULT_POOL_SIZE);
    }

    #[test]
    fn caller_options_combine_with_the_query() {
        let s = Settings::parse(
            "postgres://u@h/d?schema=s1",
            StoreOptions::from_pairs([("root", "r1")]),
        )
        .unwrap();
        assert_eq!((s.schema.as_str(), s.root.as_str()), ("s1", "r1"));
        let e = Settings::parse(
            "postgres://u@h/d?root=a",
            StoreOptions::from_pairs([("root", "b")]),
        )
        .unwrap_err();
        assert!(
            matches!(&e, PostgresOpenError::Options(memory_core::options::OptionsError::DuplicateOption { key }) if key == "root"),
            "{e:?}"
        );
    }

    #[test]
    fn unknown_option_names_it_and_the_accepted_ones() {
        let e = parse("postgres://u@h/d?roots=a").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown store option `roots`: remove it, or use one of the options this store accepts: schema, root, sslmode, sslrootcert, connect_timeout, pool_size, sync, application_name, history, history_days, history_max, history_session"
        );
        assert!(matches!(
            e,
            PostgresOpenError::Options(memory_core::options::OptionsError::UnknownOption { .. })
        ));
    }

    #[test]
    fn history_options_are_read() {
        for key in HistoryOptions::KEYS {
            assert!(ACCEPTED.contains(&key), "{key}");
        }
        assert_eq!(
            parse("postgres://u@h/d").unwrap().history,
            HistoryOptions::default()
        );
        let s = parse("postgres://u@h/d?history_max=3&history_days=0&history_session=s-1").unwrap();
        assert_eq!(s.history.max_per_file, Some(3));
        assert_eq!(s.history.keep_for, None);
        assert_eq!(s.history.session.as_deref(), Some("s-1"));
        assert!(
            !parse("postgres://u@h/d?history=off")
                .unwrap()
                .history
                .enabled
        );
        assert!(matches!(
            parse("postgres://u@h/d?history_max=0"),
            Err(PostgresOpenError::Options(_))
        ));
    }

    #[test]
    fn bad_names_are_refused() {
        for root in ["", "a b", "a/b", "ü", "a.b", &"x".repeat(64)] {
            let url = format!("postgres://u@h/d?root={root}");
            assert!(
                matches!(
                    parse(&url),
                    Err(PostgresOpenError::InvalidRoot { .. }) | Err(PostgresOpenError::Options(_))
                ),
                "{root:?}"
            );
        }
        for ok in ["tenant-42", "A_b-9", "x"] {
            assert_eq!(
                parse(&format!("postgres://u@h/d?root={ok}")).unwrap().root,
                ok
            );
        }
        for schema in [
            "Memory",
            "1x",
            "pg_catalog",
            "a-b",
            "a\"b",
            "information_schema",
        ] {
            let url = format!("postgres://u@h/d?schema={schema}");
            assert!(
                matches!(parse(&url), Err(PostgresOpenError::InvalidSchema { .. })),
                "{schema:?}"
            );
        }
    }

    #[test]
    fn bad_urls_are_refused_without_the_password() {
        for url in [
            "mysql://u:hunter2@h/d",
            "postgres://hunter2@/d",
            "postgres://h/d",
            "postgres://u:hunter2@h",
            "postgres://u:hunter2@h:notaport/d",
            "postgres://u:hunter2@h1,h2/d",
        ] {
            let e = parse(url).unwrap_err();
            assert!(
                matches!(e, PostgresOpenError::InvalidUrl { .. }),
                "{url}: {e:?}"
            );
            let texts = format!("{e} {e:?}");
            assert!(!texts.contains("hunter2"), "{url}: {texts}");
        }
    }

    #[test]
    fn tls_modes() {
        for mode in ["disable", "allow", "prefer"] {
            let s = parse(&format!("postgres://u@h/d?sslmode={mode}")).unwrap();
            assert_eq!(s.pg.get_ssl_mode(), SslMode::Disable);
            assert!(s.tls.is_none());
        }
        for mode in ["require", "verify-ca", "verify-full"] {
            let e = parse(&format!("postgres://u@h/d?sslmode={mode}")).unwrap_err();
            assert!(
                matches!(e, PostgresOpenError::TlsNeedsRoots { .. }),
                "{e:?}"
            );
        }
        assert!(matches!(
            parse("postgres://u@h/d?sslmode=maybe"),
            Err(PostgresOpenError::Options(_))
        ));
        assert!(matches!(
            parse("postgres://u@h/d?sslrootcert=system"),
            Err(PostgresOpenError::Options(_))
        ));
        let e = parse("postgres://u@h/d?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
            .unwrap_err();
        assert!(matches!(e, PostgresOpenError::TlsRoots { .. }), "{e:?}");
    }

    #[test]
    fn bad_values_are_refused() {
        for url in [
            "postgres://u@h/d?pool_size=0",
            "postgres://u@h/d?pool_size=x",
            "postgres://u@h/d?connect_timeout=5",
            "postgres://u@h/d?connect_timeout=0s",
            "postgres://u@h/d?sync=fast",
        ] {
            assert!(
                matches!(parse(url), Err(PostgresOpenError::Options(_))),
                "{url}"
            );
        }
    }
}
