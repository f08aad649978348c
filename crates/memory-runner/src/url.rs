//! [`StoreUrl`] and [`Scheme`]: which backend a store URL names. Only the scheme is read here;
//! the rest of the URL and its `?key=value` options are the backend's to parse.

use std::fmt;
use std::str::FromStr;

/// A kind of store URL: the scheme, the backend that owns it and the feature that compiles it.
///
/// ```
/// use memory_runner::store::Scheme;
///
/// assert_eq!(Scheme::Sqlite.feature(), Some("sqlite"));
/// assert_eq!(Scheme::Sqlite.form(), "sqlite:PATH");
/// assert_eq!(Scheme::Memory.feature(), None); // always there
/// assert!(Scheme::Memory.is_compiled());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scheme {
    /// A directory: `PATH`, `file:PATH`, `file:///abs/path` (memory-fs).
    Dir,
    /// In memory, gone at exit: `mem:`.
    Memory,
    /// One SQLite database file: `sqlite:PATH` (memory-sqlite).
    Sqlite,
    /// An S3 bucket and key prefix: `s3://BUCKET[/PREFIX]` (memory-s3).
    S3,
    /// A PostgreSQL database: `postgres://USER@HOST[:PORT]/DATABASE` (memory-postgres).
    Postgres,
    /// One versioned memory store of an engine's database file: `store+sqlite:PATH#STORE_ID`
    /// (memory-mounts).
    StoreSqlite,
    /// One versioned memory store on a server: `store+http(s)://HOST[:PORT][/BASE]#STORE_ID`
    /// (memory-mounts).
    StoreHttp,
    /// One versioned memory store of the engine's tables in a PostgreSQL database (the one
    /// `memory serve --db postgres://...` uses):
    /// `store+postgres://USER@HOST[:PORT]/DATABASE[?schema=NAME]#STORE_ID` (memory-mounts over
    /// memory-postgres; features `stores` and `postgres`).
    StorePostgres,
}

impl Scheme {
    /// Every scheme this crate knows, compiled in or not.
    pub const ALL: [Scheme; 8] = [
        Scheme::Dir,
        Scheme::Memory,
        Scheme::Sqlite,
        Scheme::S3,
        Scheme::Postgres,
        Scheme::StoreSqlite,
        Scheme::StoreHttp,
        Scheme::StorePostgres,
    ];

    /// The URL form, for help texts and errors (`sqlite:PATH`).
    pub fn form(self) -> &'static str {
        match self {
            Scheme::Dir => "PATH or file:PATH",
            Scheme::Memory => "mem:",
            Scheme::Sqlite => "sqlite:PATH",
            Scheme::S3 => "s3://BUCKET[/PREFIX]",
            Scheme::Postgres => "postgres://USER@HOST[:PORT]/DATABASE",
            Scheme::StoreSqlite => "store+sqlite:PATH#STORE_ID",
            Scheme::StoreHttp => "store+http(s)://HOST[:PORT][/BASE]#STORE_ID",
            Scheme::StorePostgres => "store+postgres://USER@HOST[:PORT]/DATABASE#STORE_ID",
        }
    }

    /// What the store is, in a few words.
    pub fn about(self) -> &'static str {
        match self {
            Scheme::Dir => "a directory",
            Scheme::Memory => "in memory, gone at exit",
            Scheme::Sqlite => "one SQLite database file",
            Scheme::S3 => "an S3 bucket",
            Scheme::Postgres => "a PostgreSQL database",
            Scheme::StoreSqlite => "a versioned memory store in an engine's database file",
            Scheme::StoreHttp => "a versioned memory store on a memory-stores server",
            Scheme::StorePostgres => "a versioned memory store in a PostgreSQL database",
        }
    }

    /// The cargo feature of memory-runner that compiles it (`None`: always compiled).
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Scheme::Dir => Some("fs"),
            Scheme::Memory => None,
            Scheme::Sqlite => Some("sqlite"),
            Scheme::S3 => Some("s3"),
            Scheme::Postgres => Some("postgres"),
            Scheme::StoreSqlite | Scheme::StoreHttp => Some("stores"),
            // Both are needed; `stores` first when neither is there.
            Scheme::StorePostgres if cfg!(feature = "stores") => Some("postgres"),
            Scheme::StorePostgres => Some("stores"),
        }
    }

    /// Whether this build opens it.
    pub fn is_compiled(self) -> bool {
        match self {
            Scheme::Memory => true,
            Scheme::Dir => cfg!(feature = "fs"),
            Scheme::Sqlite => cfg!(feature = "sqlite"),
            Scheme::S3 => cfg!(feature = "s3"),
            Scheme::Postgres => cfg!(feature = "postgres"),
            Scheme::StoreSqlite | Scheme::StoreHttp => cfg!(feature = "stores"),
            Scheme::StorePostgres => cfg!(all(feature = "stores", feature = "postgres")),
        }
    }

    /// The scheme a URL's scheme word names (case-insensitive), if any.
    fn named(word: &str) -> Option<Scheme> {
        Some(match word.to_ascii_lowercase().as_str() {
            "file" => Scheme::Dir,
            "mem" | "memory" => Scheme::Memory,
            "sqlite" => Scheme::Sqlite,
            "s3" => Scheme::S3,
            "postgres" | "postgresql" => Scheme::Postgres,
            "store+sqlite" => Scheme::StoreSqlite,
            "store+http" | "store+https" => Scheme::StoreHttp,
            "store+postgres" | "store+postgresql" => Scheme::StorePostgres,
            _ => return None,
        })
    }
}

impl fmt::Display for Scheme {
    /// The URL form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.form())
    }
}

/// The schemes this build opens, in [`Scheme::ALL`]'s order (for help texts and errors).
///
/// ```
/// use memory_runner::store::{Scheme, compiled_schemes};
/// assert!(compiled_schemes().contains(&Scheme::Memory));
/// assert_eq!(compiled_schemes().contains(&Scheme::Sqlite), cfg!(feature = "sqlite"));
/// ```
pub fn compiled_schemes() -> Vec<Scheme> {
    Scheme::ALL
        .into_iter()
        .filter(|scheme| scheme.is_compiled())
        .collect()
}

/// The compiled schemes' forms as one phrase: `PATH or file:PATH, mem:, sqlite:PATH`.
pub(crate) fn compiled_forms() -> String {
    compiled_schemes()
        .iter()
        .map(|scheme| scheme.form())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A store URL as written, and the [`Scheme`] it names.
///
/// Parsing checks only that the URL is not empty and that its scheme is one this crate knows
/// (compiled in or not); everything after the scheme is read by the backend when the store is
/// opened ([`open_url`](crate::open_url)).
///
/// A word of two or more letters followed by `:` is read as a scheme, so a directory whose name
/// looks like one (`notes:2024`) is written `./notes:2024` or `file:notes:2024`. A `?` starts
/// the store's options (`sqlite:m.db?sync=data`), so a path holding `?` cannot be written.
///
/// ```
/// use memory_runner::store::{Scheme, StoreUrl};
///
/// let url: StoreUrl = "sqlite:./m.db?sync=data".parse().unwrap();
/// assert_eq!(url.scheme(), Scheme::Sqlite);
/// assert_eq!(url.as_str(), "sqlite:./m.db?sync=data");
/// assert_eq!("./memory".parse::<StoreUrl>().unwrap().scheme(), Scheme::Dir);
/// assert!("ftp://example/x".parse::<StoreUrl>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl {
    url: String,
    scheme: Scheme,
}

impl StoreUrl {
    /// The URL as written, options included.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The kind of store it names.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// What follows the scheme's `:`, options included; the whole URL for a bare path.
    ///
    /// ```
    /// use memory_runner::store::StoreUrl;
    ///
    /// let url: StoreUrl = "store+sqlite:~/s.db#memstore_1".parse().unwrap();
    /// assert_eq!(url.after_scheme(), "~/s.db#memstore_1");
    /// assert_eq!("./a:b".parse::<StoreUrl>().unwrap().after_scheme(), "./a:b");
    /// ```
    pub fn after_scheme(&self) -> &str {
        match scheme_of(&self.url) {
            Some(scheme) => &self.url[scheme.len() + 1..],
            None => &self.url,
        }
    }

    /// The URL without its `?` options, for messages (options may hold secrets).
    pub fn without_options(&self) -> &str {
        self.url.split_once('?').map_or(&self.url, |(base, _)| base)
    }
}

/// Why a string is not a store URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreUrlError {
    /// The URL is empty.
    #[error("the store URL is empty; this build opens: {}", forms(compiled))]
    Empty {
        /// The schemes this build opens.
        compiled: Vec<Scheme>,
    },
    /// A scheme this crate does not know.
    #[error(
        "unknown store scheme `{scheme}:`; this build opens: {} (write ./{scheme}:... for a \
         directory with a colon in its name)",
        forms(compiled)
    )]
    UnknownScheme {
        /// The scheme, without its `:`.
        scheme: String,
        /// The schemes this build opens.
        compiled: Vec<Scheme>,
    },
}

fn forms(schemes: &[Scheme]) -> String {
    schemes
        .iter()
        .map(|scheme| scheme.form())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for StoreUrl {
    type Err = StoreUrlError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        if raw.is_empty() {
            return Err(StoreUrlError::Empty {
                compiled: compiled_schemes(),
            });
        }
        let scheme = match scheme_of(raw) {
            None => Scheme::Dir,
            Some(word) => Scheme::named(word).ok_or_else(|| StoreUrlError::UnknownScheme {
                scheme: word.to_owned(),
                compiled: compiled_schemes(),
            })?,
        };
        Ok(StoreUrl {
            url: raw.to_owned(),
            scheme,
        })
    }
}

impl fmt::Display for StoreUrl {
    /// The URL without its options (they may hold secrets), and with the password of a
    /// `//USER:PASSWORD@HOST` authority shown as `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = self.without_options();
        let Some(i) = url.find("//") else {
            return f.write_str(url);
        };
        let (head, rest) = url.split_at(i + 2);
        let authority = &rest[..rest.find(['/', '#']).unwrap_or(rest.len())];
        match authority.rfind('@').and_then(|at| {
            let user_info = &authority[..at];
            user_info.find(':').map(|colon| (colon, at))
        }) {
            Some((colon, at)) => write!(f, "{head}{}:***{}", &rest[..colon], &rest[at..]),
            None => f.write_str(url),
        }
    }
}

/// The scheme of `raw`, if it starts with one: an ASCII letter, then at least one more letter,
/// digit, `+`, `-` or `.`, then `:`. A single letter (`C:`) is not a scheme.
pub(crate) fn scheme_of(raw: &str) -> Option<&str> {
    let (scheme, _) = raw.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let ok = first.is_ascii_alphabetic()
        && scheme.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then_some(scheme)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheme(raw: &str) -> Result<Scheme, StoreUrlError> {
        raw.parse::<StoreUrl>().map(|url| url.scheme())
    }

    #[test]
    fn plain_paths_are_directories() {
        for raw in [
            "./memory",
            "memory",
            "/var/lib/memory",
            "C:/x",
            "../a:b",
            "dir/x:y",
        ] {
            assert_eq!(scheme(raw), Ok(Scheme::Dir), "{raw}");
        }
    }

    #[test]
    fn a_password_in_the_url_is_never_shown() {
        for (raw, shown) in [
            (
                "postgres://alice:s3cr%2Ft@db:5432/mem?sslmode=require",
                "postgres://alice:***@db:5432/mem",
            ),
            (
                "store+postgres://alice:pw@db/mem#memstore_1",
                "store+postgres://alice:***@db/mem#memstore_1",
            ),
            ("postgres://alice@db/mem", "postgres://alice@db/mem"),
            (
                "store+http://127.0.0.1:8080#memstore_1",
                "store+http://127.0.0.1:8080#memstore_1",
            ),
            ("./a:b@c", "./a:b@c"),
        ] {
            let url: StoreUrl = raw.parse().unwrap();
            assert_eq!(url.to_string(), shown, "{raw}");
        }
    }

    #[test]
    fn schemes_are_read_case_insensitively() {
        for (raw, expected) in [
            ("file:./m", Scheme::Dir),
            ("FILE:m", Scheme::Dir),
            ("mem:", Scheme::Memory),
            ("memory:", Scheme::Memory),
            ("sqlite:m.db?sync=data", Scheme::Sqlite),
            ("s3://bucket/p", Scheme::S3),
            ("postgresql://u@h/db", Scheme::Postgres),
            ("store+sqlite:s.db#memstore_1", Scheme::StoreSqlite),
            ("STORE+HTTPS://h#memstore_1", Scheme::StoreHttp),
            ("store+postgres://u@h/db#memstore_1", Scheme::StorePostgres),
        ] {
            assert_eq!(scheme(raw), Ok(expected), "{raw}");
        }
    }

    #[test]
    fn unknown_schemes_list_what_this_build_opens() {
        let err = scheme("ftp://host/x").unwrap_err();
        assert_eq!(
            err,
            StoreUrlError::UnknownScheme {
                scheme: "ftp".into(),
                compiled: compiled_schemes()
            }
        );
        let text = err.to_string();
        assert!(
            text.starts_with("unknown store scheme `ftp:`; this build opens: "),
            "{text}"
        );
        for compiled in compiled_schemes() {
            assert!(text.contains(compiled.form()), "{text}");
        }
        assert_eq!(
            text.contains("sqlite:PATH"),
            cfg!(feature = "sqlite"),
            "{text}"
        );
        assert!(matches!(
            scheme("notes:2024"),
            Err(StoreUrlError::UnknownScheme { .. })
        ));
        assert!(matches!(scheme(""), Err(StoreUrlError::Empty { .. })));
    }

    #[test]
    fn display_leaves_options_out() {
        let url: StoreUrl = "s3://b/p?secret_access_key=shh".parse().unwrap();
        assert_eq!(url.to_string(), "s3://b/p");
        assert_eq!(url.as_str(), "s3://b/p?secret_access_key=shh");
    }
}
