//! The store arguments every command shares, declared once: `--store` (or `MEMORY_STORE`),
//! `--encryption-key-file` (or `MEMORY_ENCRYPTION_KEY_FILE`) and `--old-key-file`; and
//! `--db` (or `MEMORY_STORES_DB`) of `memory serve` and `memory store`, and the one place that
//! opens the versioned-store engine it names (SQLite or PostgreSQL).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memory_cli::store_url::{self, OpenOptions, Scheme, StoreUrl};
use memory_core::Storage;

use crate::exit::Exit;
use crate::failure::{Failure, error_chain};

/// The store of every command but `memory mcp` when neither `--store` nor `MEMORY_STORE` is
/// given.
pub(crate) const DEFAULT_STORE: &str = "./memory";

/// The store forms this build opens, `(form, meaning)`, from memory-runner's list of the
/// schemes compiled in, so that `--help` never offers a store the program cannot open.
pub(crate) fn store_forms() -> Vec<(&'static str, &'static str)> {
    store_url::compiled_schemes()
        .into_iter()
        .map(|scheme| (scheme.form(), scheme.about()))
        .collect()
}

/// The store forms as an indented table for a long help text.
pub(crate) fn store_forms_help() -> String {
    let forms = store_forms();
    let width = forms.iter().map(|(form, _)| form.len()).max().unwrap_or(0);
    let mut text = String::from("Store URLs (--store or MEMORY_STORE):\n");
    for (form, meaning) in forms {
        text.push_str(&format!("  {form:width$}  {meaning}\n"));
    }
    text.push_str(
        "A path starting with ~/ (bare, or after file:, sqlite: or store+sqlite:) is in the\n\
         home directory (HOME; USERPROFILE on Windows), with or without a shell to expand it.\n",
    );
    if !cfg!(feature = "encrypted") {
        text.push_str("(This build has no encryption: --encryption-key-file is refused.)\n");
    }
    text
}

/// Every store URL argument of the program (`--store`, `MEMORY_STORE`, `copy`'s and
/// `dream`'s stores, each `--mount`): a path starting with `~/` is in the home directory
/// ([`store_url::expand_home`]), since a store URL often reaches the program with no shell to
/// expand it (an MCP client's JSON configuration).
pub(crate) fn store_url_arg(raw: &str) -> Result<String, String> {
    store_url::expand_home(raw)
}

/// `--db`: a path starting with `~/` is in the home directory, as for every store URL.
fn db_arg(raw: &str) -> Result<PathBuf, String> {
    store_url::expand_home(raw).map(PathBuf::from)
}

/// The one-line help of `--store`.
fn store_help() -> String {
    let forms: Vec<&str> = store_forms()
        .iter()
        .flat_map(|(form, _)| form.split(" or "))
        .collect();
    format!(
        "The store: {} (a path starting with ~/ is in the home directory) [default: \
         {DEFAULT_STORE}; for `memory mcp`, the user's data directory]",
        forms.join(", ")
    )
}

/// Where a command's store is, and how to read it.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct StoreArgs {
    #[arg(long, env = "MEMORY_STORE", value_name = "URL", help = store_help(), value_parser = store_url_arg)]
    pub(crate) store: Option<String>,

    /// Decrypt and encrypt with the 32-byte key in FILE (64 hex characters; see `memory keygen`).
    #[arg(long, env = "MEMORY_ENCRYPTION_KEY_FILE", value_name = "FILE")]
    pub(crate) encryption_key_file: Option<PathBuf>,

    /// Also read files encrypted under this older key (key rotation, see `memory rekey`);
    /// repeat for several. New writes always use --encryption-key-file.
    #[arg(
        long = "old-key-file",
        value_name = "FILE",
        requires = "encryption_key_file"
    )]
    pub(crate) old_key_files: Vec<PathBuf>,

    /// A store option, as if it were in the URL's `?key=value` query (repeat for several;
    /// each backend's README lists the ones it accepts, e.g. sync=data for SQLite).
    #[arg(long = "store-option", value_name = "KEY=VALUE", value_parser = parse_store_option)]
    pub(crate) store_options: Vec<(String, String)>,
}

/// `KEY=VALUE` of `--store-option`.
fn parse_store_option(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("`{raw}` is not KEY=VALUE")),
    }
}

/// Whether opening a store may create it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenMode {
    /// The command may change the store but not create it: a directory or database file that
    /// is not there is "not found" (exit 3) rather than created empty.
    Existing,
    /// The command only reads: as [`OpenMode::Existing`], and the store is opened read-only
    /// (memory-runner's `OpenOptions::with_read_only`), so that nothing on disk changes, not
    /// even a lock file (a folder or database the user may read but not write can be read).
    ReadOnly,
    /// The command writes: the store is created if needed.
    CreateIfMissing,
}

impl StoreArgs {
    /// The store URL: `--store`, `MEMORY_STORE`, or [`DEFAULT_STORE`].
    pub(crate) fn url(&self) -> &str {
        self.store.as_deref().unwrap_or(DEFAULT_STORE)
    }

    /// The options every store of this command opens with (also its `--mount` stores): the
    /// key files, and the session id of versioned-store writes.
    pub(crate) fn options(&self, session_id: Option<String>) -> OpenOptions {
        // The program reads the backends' variables (AWS_*, MEMORY_STORE_API_KEY).
        let mut options = with_key_files(
            OpenOptions::new().with_environment(),
            self.encryption_key_file.as_deref(),
            &self.old_key_files,
        );
        if let Some(id) = session_id {
            options = options.with_session_id(id);
        }
        for (key, value) in &self.store_options {
            options = options.with_store_option(key, value);
        }
        options
    }

    /// Opens this command's store.
    pub(crate) async fn open(&self, access: OpenMode) -> Result<Arc<dyn Storage>, Failure> {
        open_url(self.url(), &self.options(None), access).await
    }

    /// Opens this command's store, its changes recorded as the session `session_id`'s (in
    /// its history, or as a versioned store's session actor) when one is given.
    pub(crate) async fn open_as(
        &self,
        session_id: Option<&str>,
        access: OpenMode,
    ) -> Result<Arc<dyn Storage>, Failure> {
        open_url(
            self.url(),
            &self.options(session_id.map(str::to_owned)),
            access,
        )
        .await
    }

    /// Opens this command's store with `options` (from [`StoreArgs::options`]).
    pub(crate) async fn open_with(
        &self,
        options: &OpenOptions,
        access: OpenMode,
    ) -> Result<Arc<dyn Storage>, Failure> {
        open_url(self.url(), options, access).await
    }
}

/// `options` decrypting and encrypting with the key in `key_file` (also reading files under
/// the `old_key_files`), as `--encryption-key-file` and `--old-key-file` ask: the one place
/// the program turns key-file arguments into store options (`memory dream` gives its source
/// and its output each their own).
pub(crate) fn with_key_files(
    mut options: OpenOptions,
    key_file: Option<&Path>,
    old_key_files: &[PathBuf],
) -> OpenOptions {
    if let Some(file) = key_file {
        options = options.with_encryption_key_file(file);
    }
    for old in old_key_files {
        options = options.with_old_key_file(old);
    }
    options
}

/// Opens the store `url` names, with key files but no other option (for commands with several
/// stores, like `memory copy`), its changes recorded as the session `session_id`'s when one
/// is given.
pub(crate) async fn open_store(
    url: &str,
    key_file: Option<&Path>,
    old_key_files: &[PathBuf],
    session_id: Option<&str>,
    access: OpenMode,
) -> Result<Arc<dyn Storage>, Failure> {
    let args = StoreArgs {
        store: Some(url.to_owned()),
        encryption_key_file: key_file.map(Path::to_path_buf),
        old_key_files: old_key_files.to_vec(),
        store_options: Vec::new(),
    };
    args.open_as(session_id, access).await
}

/// `--session-id` of the commands that change a store (put, rm, mv, import, copy, expire,
/// restore, rekey): the session each change is recorded as, in the store's history (or as a
/// versioned store's session actor).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct SessionArgs {
    /// Record this command's changes as the session ID's (shown by `memory log`): 1 to 64
    /// characters from [0-9A-Za-z_-].
    #[arg(long, env = "MEMORY_SESSION_ID", value_name = "ID", value_parser = crate::mounts::parse_session_id)]
    pub(crate) session_id: Option<String>,
}

impl SessionArgs {
    /// The session id given, if any.
    pub(crate) fn id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
}

/// Opens the store `url` names as it is, without the envelope and without refusing an
/// encrypted one: for `memory rekey`, which wraps it with the whole keyring itself.
#[cfg(feature = "encrypted")]
pub(crate) async fn open_inner_store(
    url: &str,
    session_id: Option<&str>,
) -> Result<Arc<dyn Storage>, Failure> {
    let parsed: StoreUrl = url
        .parse()
        .map_err(|e| Failure::new(Exit::Usage, format!("invalid store URL `{url}`: {e}")))?;
    if let Some(path) = store_url::local_path(&parsed)
        && !path.exists()
    {
        return Err(Failure::new(
            Exit::NotFound,
            format!("the store `{url}` does not exist"),
        ));
    }
    let mut options = OpenOptions::new().with_environment();
    if let Some(id) = session_id {
        options = options.with_session_id(id);
    }
    store_url::open_unchecked(&parsed, &options)
        .await
        .map_err(|e| Failure::new(Exit::Usage, error_chain(&e)))
}

async fn open_url(
    url: &str,
    options: &OpenOptions,
    access: OpenMode,
) -> Result<Arc<dyn Storage>, Failure> {
    let parsed: StoreUrl = url
        .parse()
        .map_err(|e| Failure::new(Exit::Usage, format!("invalid store URL `{url}`: {e}")))?;
    if access != OpenMode::CreateIfMissing
        && let Some(path) = store_url::local_path(&parsed)
        && !path.exists()
    {
        return Err(Failure::new(
            Exit::NotFound,
            format!("the store `{url}` does not exist"),
        ));
    }
    let read_only;
    let options = if access == OpenMode::ReadOnly {
        read_only = options.clone().with_read_only();
        &read_only
    } else {
        options
    };
    let store = store_url::open(&parsed, options)
        .await
        .map_err(|e| Failure::new(Exit::Usage, error_chain(&e)))?;
    tracing::debug!(store = %store, "store opened");
    Ok(store)
}

/// Whether two store URLs name the same persistent store (`mem:` stores never are).
pub(crate) fn same_store(a: &str, b: &str) -> bool {
    let (Ok(a), Ok(b)) = (a.parse::<StoreUrl>(), b.parse::<StoreUrl>()) else {
        return false;
    };
    if a.scheme() == Scheme::Memory || a.scheme() != b.scheme() {
        return false;
    }
    match (store_url::local_path(&a), store_url::local_path(&b)) {
        (Some(a), Some(b)) => {
            a == b
                || a.canonicalize()
                    .ok()
                    .is_some_and(|a| Some(a) == b.canonicalize().ok())
        }
        _ => a.without_options() == b.without_options(),
    }
}

/// The store `memory mcp` uses without `--store`: `memory` in the user's data directory
/// (`$XDG_DATA_HOME`, else `~/.local/share`; `~/Library/Application Support` on macOS;
/// `%APPDATA%` on Windows), the rule of the `dirs` crate. A desktop client starts the server
/// in a folder of its own choosing, so the working directory is no place for memories.
///
/// # Errors
/// Neither variable is set (no home directory to find).
pub(crate) fn user_data_store() -> Result<PathBuf, String> {
    data_dir(|name| std::env::var_os(name))
        .map(|dir| dir.join("memory"))
        .ok_or_else(|| {
            "no --store given, and no home directory to keep memories in (HOME is not set): \
             pass --store"
                .to_owned()
        })
}

/// The user's data directory, from the environment `var` reads.
fn data_dir(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if cfg!(windows) {
        return absolute("APPDATA");
    }
    if cfg!(target_os = "macos") {
        return absolute("HOME").map(|home| home.join("Library/Application Support"));
    }
    absolute("XDG_DATA_HOME").or_else(|| absolute("HOME").map(|home| home.join(".local/share")))
}

/// `--db` of `memory serve` and `memory store`: the database of the versioned memory stores.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DbArgs {
    /// The database of the stores: a SQLite file (created if missing), or a PostgreSQL
    /// database as `postgres://USER@HOST:PORT/DB` (its tables created or migrated).
    #[arg(
        long = "db",
        global = true,
        env = "MEMORY_STORES_DB",
        default_value = "./memory-stores.db",
        value_name = "PATH|URL",
        value_parser = db_arg
    )]
    pub(crate) path: PathBuf,
}

impl DbArgs {
    /// Opens the engine of `--db`: memory-store's tables in a PostgreSQL database for a
    /// `postgres://` URL, else the SQLite file at that path. The error says what could not be
    /// opened; it never holds a password.
    pub(crate) async fn open(
        &self,
        options: memory_store::EngineOptions,
    ) -> Result<memory_store::MemoryStores, String> {
        if let Some(url) = self.path.to_str().filter(|d| is_postgres_url(d)) {
            return open_postgres(url, options).await;
        }
        let path = self.path.clone();
        match tokio::task::spawn_blocking(move || memory_store::SqlitePersistence::open(path)).await
        {
            Ok(Ok(p)) => Ok(memory_store::MemoryStores::with_options(p, options)),
            Ok(Err(e)) => Err(format!("cannot open {}: {e}", self.path.display())),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Whether `--db` names a PostgreSQL database rather than a SQLite file.
fn is_postgres_url(db: &str) -> bool {
    ["postgres://", "postgresql://"].iter().any(|scheme| {
        db.get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    })
}

#[cfg(feature = "postgres")]
async fn open_postgres(
    url: &str,
    options: memory_store::EngineOptions,
) -> Result<memory_store::MemoryStores, String> {
    use memory_runner::postgres::PostgresPersistence;
    let p = PostgresPersistence::from_url(url, memory_core::options::StoreOptions::new())
        .await
        .map_err(|e| format!("cannot open the PostgreSQL database: {e}"))?;
    Ok(memory_store::MemoryStores::with_options(p, options))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(
    _url: &str,
    _options: memory_store::EngineOptions,
) -> Result<memory_store::MemoryStores, String> {
    Err(
        "this build of memory has no PostgreSQL support: build it with the `postgres` feature"
            .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn the_data_directory_follows_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            data_dir(env(&[("XDG_DATA_HOME", "/x/data"), ("HOME", "/home/me")])),
            Some(PathBuf::from("/x/data"))
        );
        assert_eq!(
            data_dir(env(&[("HOME", "/home/me")])),
            Some(PathBuf::from("/home/me/.local/share"))
        );
        // A relative XDG_DATA_HOME is ignored, as the XDG rules say.
        assert_eq!(
            data_dir(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/home/me")])),
            Some(PathBuf::from("/home/me/.local/share"))
        );
        assert_eq!(data_dir(env(&[])), None);
    }

    #[test]
    fn the_help_lists_only_what_the_build_opens() {
        let help = store_forms_help();
        assert!(!help.contains("not available"), "{help}");
        assert_eq!(help.contains("s3://"), cfg!(feature = "s3"), "{help}");
        assert_eq!(
            help.contains("sqlite:PATH "),
            cfg!(feature = "sqlite"),
            "{help}"
        );
        assert_eq!(help.contains("file:PATH"), cfg!(feature = "fs"), "{help}");
        assert!(help.contains("mem:"), "{help}");
    }
}
