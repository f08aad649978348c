//! Store URLs: which backend `memory` runs on, parsed from `--store` / `MEMORY_STORE`.
//!
//! | URL | store |
//! |---|---|
//! | `PATH`, `file:PATH`, `file:///abs/path` | a directory; `/memories/x` is `PATH/memories/x` (feature `fs`) |
//! | `mem:` | in memory, gone when the program exits |
//! | `sqlite:PATH` | one SQLite database file (feature `sqlite`) |
//! | `s3://BUCKET[/PREFIX]` | an S3 bucket (feature `s3`); endpoint, region and credentials from the `AWS_*` variables (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP=true`) |
//! | `store+sqlite:PATH#ID`, `store+http://HOST#ID` | one versioned memory store (a `memory serve` database or server) |
//!
//! A store's options follow a `?` (`sqlite:m.db?sync=data`); each backend documents the ones it
//! accepts, and an unknown one is refused with the list. A word of two or more letters
//! followed by `:` is read as a scheme, so a directory whose name looks like one
//! (`notes:2024`) is written `./notes:2024` or `file:notes:2024`.
//!
//! A path that starts with `~/` (or is `~`), bare or after `file:`, `sqlite:` or
//! `store+sqlite:`, is in the user's home directory: `HOME` on Unix, `USERPROFILE` on Windows
//! ([`expand_home`]). The program does this itself because a store URL often reaches it
//! with no shell in between (an MCP client's JSON configuration, `MEMORY_STORE` in a service
//! file); a folder literally named `~` is written `./~`. `~user/` is not expanded.
//!
//! Parsing and opening are memory-runner's ([`memory_runner::store`]), the one implementation
//! Rust applications use too; this module re-exports them and adds the program's own policy
//! on top: an `s3://` store is checked with one request when it is opened, so a wrong
//! endpoint, bucket or credentials stop the program at start (exit status 2, naming the
//! endpoint) instead of failing every command.
//!
//! ```
//! use memory_cli::store_url::{Scheme, StoreUrl, local_path};
//!
//! assert_eq!("mem:".parse::<StoreUrl>().unwrap().scheme(), Scheme::Memory);
//! let dir: StoreUrl = "file:./memory".parse().unwrap();
//! assert_eq!(local_path(&dir), Some("./memory".into()));
//! assert!("ftp://example/x".parse::<StoreUrl>().is_err());
//! ```

use std::sync::Arc;

use std::path::PathBuf;

use memory_core::{MemoryPath, Storage};
pub use memory_runner::store::{
    OpenError, OpenOptions, Scheme, StoreUrl, StoreUrlError, compiled_schemes, discard_search_index,
};

/// `raw` with a leading `~` of its path replaced by the home directory, for every store URL
/// the program is given (`--store`, `MEMORY_STORE`, `--mount`, `copy`'s and `dream`'s stores,
/// `--db`): a bare path or the path after `file:`, `sqlite:` or `store+sqlite:` that is `~`
/// or starts with `~/` (also `~\` on Windows). The home directory is `HOME` on Unix and
/// `USERPROFILE` on Windows; anything else is returned unchanged.
///
/// # Errors
/// The path starts with `~` but the variable is not set (or is empty, or is not Unicode).
pub fn expand_home(raw: &str) -> Result<String, String> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    let home = std::env::var_os(var)
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    expand_home_with(raw, home.as_deref()).ok_or_else(|| {
        format!(
            "the store `{raw}` is in the home directory, but {var} is not set: give the \
             store's full path"
        )
    })
}

/// [`expand_home`] with the home directory given (`None`: there is none); `None` when the
/// path needs a home directory and `home` is none (or not Unicode).
fn expand_home_with(raw: &str, home: Option<&std::path::Path>) -> Option<String> {
    // memory-runner reads the scheme; a string that is no store URL is refused when parsed.
    let Ok(url) = raw.parse::<StoreUrl>() else {
        return Some(raw.to_owned());
    };
    // Only these hold a local path (`s3:`, `mem:`, `postgres:`... do not).
    if !matches!(
        url.scheme(),
        Scheme::Dir | Scheme::Sqlite | Scheme::StoreSqlite
    ) {
        return Some(raw.to_owned());
    }
    let path = url.after_scheme();
    let head = &raw[..raw.len() - path.len()];
    let Some(after) = path.strip_prefix('~') else {
        return Some(raw.to_owned());
    };
    let separator = |c: char| c == '/' || (cfg!(windows) && c == '\\');
    let ends = match after.chars().next() {
        None => true,
        Some(c) => separator(c) || matches!(c, '?' | '#'),
    };
    if !ends {
        return Some(raw.to_owned());
    }
    let home = home.and_then(std::path::Path::to_str)?;
    // `~/x` under a home of `/home/me/` is `/home/me/x`; `~` alone is the home as it is.
    let home = if after.starts_with(separator) {
        home.trim_end_matches(separator)
    } else {
        home
    };
    Some(format!("{head}{home}{after}"))
}

/// The file or directory a local store (`PATH`, `file:PATH`, `sqlite:PATH`) lives at, for the
/// program's own checks (a read-only command never creates a store); `None` for the others.
/// The path is the backend's reading of the URL (memory-fs's, memory-sqlite's).
pub fn local_path(url: &StoreUrl) -> Option<PathBuf> {
    match url.scheme() {
        #[cfg(feature = "fs")]
        Scheme::Dir => memory_fs::fs_url_path(url.without_options()).ok(),
        #[cfg(feature = "sqlite")]
        Scheme::Sqlite => memory_sqlite::sqlite_url_path(url.without_options()).ok(),
        _ => None,
    }
}

/// Opens the store `url` names, wrapped as `options` say.
///
/// # Errors
/// [`OpenError`] when the backend refuses (a directory that is a file, a database that cannot
/// be created, an S3 endpoint that cannot be reached), when the build lacks the backend's
/// feature, or when the key file is unusable.
pub async fn open(url: &StoreUrl, options: &OpenOptions) -> Result<Arc<dyn Storage>, OpenError> {
    // memory-runner refuses an encrypted store given no key (the library's one check).
    let store = memory_runner::open_url(url, options)
        .await
        .map_err(with_key_hint)?;
    check(url, store.as_ref()).await?;
    check_encryption(url, store.as_ref(), options).await?;
    Ok(store)
}

/// Opens the store `url` names without the encryption checks of [`open`], as its bytes even
/// if it is encrypted (`OpenOptions::with_plaintext_only`): for a program that wraps the
/// store in the envelope itself (`memory rekey`).
///
/// # Errors
/// As [`open`], but for encryption.
pub async fn open_unchecked(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Arc<dyn Storage>, OpenError> {
    let store = memory_runner::open_url(url, &options.clone().with_plaintext_only()).await?;
    check(url, store.as_ref()).await?;
    Ok(store)
}

/// memory-runner's refusal of an encrypted store given no key, in the program's words.
fn with_key_hint(e: OpenError) -> OpenError {
    match e {
        OpenError::Encrypted { url, key_id } => OpenError::Unavailable {
            url,
            source: Box::new(KeyNeeded { key_id }),
        },
        other => other,
    }
}

/// An encrypted store given no key: the program's options that pass it (the source of the
/// [`OpenError::Unavailable`] [`open`] gives for it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the store is encrypted{}: pass its key with --encryption-key-file (or \
     MEMORY_ENCRYPTION_KEY_FILE)",
    key_id.as_deref().map(|id| format!(" under key {id}")).unwrap_or_default()
)]
pub struct KeyNeeded {
    /// The key the store names, when it could be read.
    pub key_id: Option<String>,
}

/// An encrypted store is opened with its key or not at all: with a key, the envelope's key
/// check runs now (a wrong key, or a plaintext store, stops the program at start rather than
/// failing each command); without one, memory-runner's open has refused an encrypted store
/// already, so that no plaintext is ever written into it.
async fn check_encryption(
    url: &StoreUrl,
    store: &dyn Storage,
    options: &OpenOptions,
) -> Result<(), OpenError> {
    if options.encryption_key_file.is_some() {
        // Any operation runs the key check first; counting is the cheapest.
        store
            .file_count()
            .await
            .map_err(|source| OpenError::Backend {
                url: url.to_string(),
                source,
            })?;
    }
    Ok(())
}

/// The check a store gets when it opens, wherever it is opened (`--store`, each `--mount`):
/// building an S3 store sends nothing, so it is asked once now (a HEAD and one LIST page,
/// through any wrapper), and an unreachable endpoint, a missing bucket or wrong credentials
/// are one clear message at start. Other stores are checked by opening them.
///
/// # Errors
/// [`OpenError::Backend`] with the store's answer.
pub async fn check(url: &StoreUrl, store: &dyn Storage) -> Result<(), OpenError> {
    if url.scheme() == Scheme::S3 {
        let probe =
            MemoryPath::parse("/memories/.memory-open-check").map_err(|e| OpenError::Backend {
                url: url.to_string(),
                source: memory_core::Error::backend("s3", e),
            })?;
        store
            .stat(&probe)
            .await
            .map_err(|source| OpenError::Backend {
                url: url.to_string(),
                source,
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_store_opens() {
        let url: StoreUrl = "mem:".parse().unwrap();
        let store = open(&url, &OpenOptions::new()).await.unwrap();
        let root = memory_core::MemoryPath::parse("/memories").unwrap();
        assert!(store.list(&root).await.unwrap().is_empty());
    }

    #[test]
    fn a_tilde_path_is_in_the_home_directory() {
        let home = Some(std::path::Path::new("/home/me"));
        let expand = |raw: &str| expand_home_with(raw, home).unwrap();
        for (raw, expanded) in [
            ("~/.claude-memory", "/home/me/.claude-memory"),
            ("~", "/home/me"),
            ("~?sync=data", "/home/me?sync=data"),
            ("file:~/notes", "file:/home/me/notes"),
            ("FILE:~", "FILE:/home/me"),
            ("sqlite:~/m.db?sync=data", "sqlite:/home/me/m.db?sync=data"),
            (
                "store+sqlite:~/s.db#memstore_1",
                "store+sqlite:/home/me/s.db#memstore_1",
            ),
            // Not a home path: left as written.
            ("./~/x", "./~/x"),
            ("~other/x", "~other/x"),
            ("~x", "~x"),
            ("a/~/b", "a/~/b"),
            ("mem:", "mem:"),
            ("s3://bucket/~/x", "s3://bucket/~/x"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("file:./~", "file:./~"),
        ] {
            assert_eq!(expand(raw), expanded, "{raw}");
        }
        // A home of `/` or with a trailing separator gives no doubled or missing `/`.
        let root = Some(std::path::Path::new("/"));
        assert_eq!(expand_home_with("~/x", root).unwrap(), "/x");
        assert_eq!(expand_home_with("~", root).unwrap(), "/");
        let slash = Some(std::path::Path::new("/home/me/"));
        assert_eq!(expand_home_with("~/x", slash).unwrap(), "/home/me/x");
        // No home directory: only a path that needs one fails.
        assert_eq!(expand_home_with("~/x", None), None);
        assert_eq!(expand_home_with("sqlite:~", None), None);
        assert_eq!(expand_home_with("./x", None).as_deref(), Some("./x"));
    }

    #[test]
    fn local_paths() {
        let path = |raw: &str| local_path(&raw.parse().unwrap());
        if cfg!(feature = "fs") {
            assert_eq!(path("./memory"), Some("./memory".into()));
            assert_eq!(path("/abs/dir"), Some("/abs/dir".into()));
            assert_eq!(path("file:rel"), Some("rel".into()));
            assert_eq!(path("file:///abs"), Some("/abs".into()));
            assert_eq!(path("./notes:2024"), Some("./notes:2024".into()));
            assert_eq!(path("file:"), None);
        }
        assert_eq!(path("mem:"), None);
        assert_eq!(path("store+sqlite:s.db#memstore_1"), None);
        if cfg!(feature = "sqlite") {
            assert_eq!(path("sqlite:m.db?sync=data"), Some("m.db".into()));
            assert_eq!(path("sqlite:///var/m.db"), Some("/var/m.db".into()));
        }
    }
}
