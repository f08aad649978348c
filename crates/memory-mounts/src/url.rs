//! [`VersionedStoreUrl`]: the `store+` URLs that name one versioned memory store, parsed here
//! only (memory-runner reads their scheme and hands them over).

use std::path::PathBuf;

use memory_core::options::{OptionsError, StoreOptions};

/// One versioned memory store a `store+` URL names: where its engine is, and the store's id.
///
/// | URL | location |
/// |---|---|
/// | `store+sqlite:PATH#STORE_ID` (`store+sqlite:///ABS`) | the engine's SQLite database file |
/// | `store+http://HOST[:PORT][/BASE]#STORE_ID`, `store+https://…` | a `memory serve` (or any server with the memory-stores API) |
/// | `store+postgres://USER@HOST[:PORT]/DATABASE[?schema=NAME]#STORE_ID` | the engine's tables in a PostgreSQL database (opened by memory-postgres) |
///
/// The scheme is read in any case. The id is what follows the last `#`: one or more of
/// `[0-9A-Za-z_]`. Options follow a `?` before the `#`; only `store+postgres:` takes any
/// (PostgreSQL's own, which memory-postgres checks).
///
/// ```
/// use memory_core::options::StoreOptions;
/// use memory_mounts::{StoreLocation, VersionedStoreUrl, VersionedStoreUrlError};
///
/// let url = VersionedStoreUrl::from_url("store+sqlite:./s.db#memstore_1", StoreOptions::new())
///     .unwrap();
/// assert_eq!(url.store_id(), "memstore_1");
/// assert_eq!(url.location(), &StoreLocation::Sqlite { path: "./s.db".into() });
///
/// let url = VersionedStoreUrl::from_url("STORE+HTTPS://h:8080/api#memstore_2", StoreOptions::new())
///     .unwrap();
/// assert_eq!(url.location(), &StoreLocation::Http { base_url: "https://h:8080/api".into() });
///
/// let err = VersionedStoreUrl::from_url("store+http://h#", StoreOptions::new()).unwrap_err();
/// assert_eq!(err, VersionedStoreUrlError::NoStoreId);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedStoreUrl {
    location: StoreLocation,
    store_id: String,
}

/// Where a versioned store's engine is. (Exhaustive: memory-runner opens each.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// The engine's SQLite database file (`store+sqlite:PATH`).
    Sqlite {
        /// The database file.
        path: PathBuf,
    },
    /// A server with the memory-stores API (`store+http(s)://HOST…`).
    Http {
        /// The server's base URL, `http://HOST[:PORT][/BASE]` or `https://…`.
        base_url: String,
    },
    /// The engine's tables in a PostgreSQL database (`store+postgres://…`).
    Postgres {
        /// The database's `postgres:` URL, without options.
        url: String,
        /// The URL's options and the program's, for memory-postgres to check.
        options: StoreOptions,
    },
}

/// Why a string is not a `store+` URL. The text says how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VersionedStoreUrlError {
    /// The scheme is none of `store+sqlite:`, `store+http(s):`, `store+postgres:`.
    #[error(
        "this needs one versioned memory store: store+sqlite:PATH#ID, \
         store+http(s)://HOST#ID or store+postgres://...#ID"
    )]
    NotAStoreUrl,
    /// No `#STORE_ID` (or one with other characters than `[0-9A-Za-z_]`).
    #[error(
        "the URL needs the store's id after `#`, e.g. \
         store+sqlite:./memory-stores.db#memstore_... or \
         store+http://127.0.0.1:8080#memstore_..."
    )]
    NoStoreId,
    /// `store+sqlite:` without a path.
    #[error("the URL names no path; write it as store+sqlite:PATH#STORE_ID")]
    NoPath,
    /// `store+http(s):` without `//HOST`.
    #[error("the URL names no server; write it as store+http://HOST:PORT#STORE_ID")]
    NoServer,
    /// An option that is unknown, given twice or unusable.
    #[error(transparent)]
    Options(#[from] OptionsError),
}

/// The kinds of `store+` scheme.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sqlite,
    Http { secure: bool },
    Postgres,
}

impl Kind {
    /// The kind a scheme word (without its `:`) names, in any case.
    fn named(word: &str) -> Option<Kind> {
        Some(match word.to_ascii_lowercase().as_str() {
            "store+sqlite" => Kind::Sqlite,
            "store+http" => Kind::Http { secure: false },
            "store+https" => Kind::Http { secure: true },
            "store+postgres" | "store+postgresql" => Kind::Postgres,
            _ => return None,
        })
    }
}

impl VersionedStoreUrl {
    /// Parses a `store+` URL, with `options` (the program's) joined to the URL's query (an
    /// option in both is refused).
    ///
    /// # Errors
    /// [`VersionedStoreUrlError`]: what is missing or refused, and how to write it.
    pub fn from_url(url: &str, options: StoreOptions) -> Result<Self, VersionedStoreUrlError> {
        let (before_id, store_id) = match url.rsplit_once('#') {
            Some((before, id))
                if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
            {
                (before, id.to_owned())
            }
            _ => return Err(VersionedStoreUrlError::NoStoreId),
        };
        let (base, from_query) = StoreOptions::from_url(before_id)?;
        let options = from_query.joined(options)?;
        let (word, rest) = base
            .split_once(':')
            .ok_or(VersionedStoreUrlError::NotAStoreUrl)?;
        let kind = Kind::named(word).ok_or(VersionedStoreUrlError::NotAStoreUrl)?;
        // PostgreSQL's options (schema, sslmode...) are its own to check; the others take none.
        let options = if kind == Kind::Postgres {
            options
        } else {
            options.finish(&[])?;
            StoreOptions::new()
        };
        let location = match kind {
            Kind::Sqlite => {
                // `store+sqlite:///abs` and `store+sqlite://` + `/abs` give `/abs`.
                let path = match rest.strip_prefix("//") {
                    Some(abs) if abs.starts_with('/') => abs,
                    _ => rest,
                };
                if path.is_empty() {
                    return Err(VersionedStoreUrlError::NoPath);
                }
                StoreLocation::Sqlite {
                    path: PathBuf::from(path),
                }
            }
            Kind::Http { secure } => {
                let host = rest.trim_end_matches('/');
                match host.strip_prefix("//") {
                    Some(server) if !server.is_empty() && !server.starts_with('/') => {
                        StoreLocation::Http {
                            base_url: format!("{}:{host}", if secure { "https" } else { "http" }),
                        }
                    }
                    _ => return Err(VersionedStoreUrlError::NoServer),
                }
            }
            Kind::Postgres => StoreLocation::Postgres {
                url: format!("postgres:{rest}"),
                options,
            },
        };
        Ok(VersionedStoreUrl { location, store_id })
    }

    /// Where the store's engine is.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// The store's id (`memstore_…`).
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    /// The location and the id.
    pub fn into_parts(self) -> (StoreLocation, String) {
        (self.location, self.store_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<VersionedStoreUrl, VersionedStoreUrlError> {
        VersionedStoreUrl::from_url(url, StoreOptions::new())
    }

    #[test]
    fn urls_and_their_refusals() {
        for (url, err) in [
            (
                "store+sqlite:./stores.db",
                VersionedStoreUrlError::NoStoreId,
            ),
            (
                "store+sqlite:./stores.db#",
                VersionedStoreUrlError::NoStoreId,
            ),
            ("store+http://h:1#a/b", VersionedStoreUrlError::NoStoreId),
            ("store+sqlite:#memstore_1", VersionedStoreUrlError::NoPath),
            ("store+http:h#memstore_1", VersionedStoreUrlError::NoServer),
            ("store+http://#memstore_1", VersionedStoreUrlError::NoServer),
            (
                "sqlite:x.db#memstore_1",
                VersionedStoreUrlError::NotAStoreUrl,
            ),
        ] {
            assert_eq!(parse(url), Err(err), "{url}");
        }
        let err = parse("store+sqlite:x.db?bogus=1#memstore_1").unwrap_err();
        assert!(matches!(err, VersionedStoreUrlError::Options(_)), "{err:?}");
        assert!(err.to_string().contains("unknown store option `bogus`"));
        assert_eq!(
            parse("store+sqlite:///abs/s.db#m_1").unwrap().location(),
            &StoreLocation::Sqlite {
                path: "/abs/s.db".into()
            }
        );
        assert_eq!(
            parse("store+http://127.0.0.1:8080/#m_1")
                .unwrap()
                .location(),
            &StoreLocation::Http {
                base_url: "http://127.0.0.1:8080".into()
            }
        );
        let url = VersionedStoreUrl::from_url(
            "store+postgresql://u:pw@h/db?schema=s#memstore_1",
            StoreOptions::from_pairs([("sslmode", "require")]),
        )
        .unwrap();
        let StoreLocation::Postgres { url: db, options } = url.location() else {
            panic!("{url:?}");
        };
        assert_eq!(db, "postgres://u:pw@h/db");
        assert_eq!(options.get("schema"), Some("s"));
        assert_eq!(options.get("sslmode"), Some("require"));
        assert_eq!(url.store_id(), "memstore_1");
    }

    #[test]
    fn an_option_in_the_url_and_from_the_program_is_refused() {
        let err = VersionedStoreUrl::from_url(
            "store+postgres://u@h/db?schema=a#m_1",
            StoreOptions::from_pairs([("schema", "b")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("more than once"), "{err}");
    }
}
