//! The side index: one SQLite database (a file, or in memory) with an FTS5 table.
//!
//! It is a cache of the store: every row names the listing entry (size, modification time) and
//! the version its text was read at, so [`crate::Indexed`] can tell what changed behind its
//! back. Anything unreadable, or written by another schema version, is dropped and rebuilt.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

use memory_core::search::folded_words;

use crate::error::{IndexError, LinkedIndex};

mod files;
use files::{COMPANIONS, is_link_refusal, make_private, unlinked_path, with_suffix};

/// The schema this build writes; an index with another is rebuilt.
pub(crate) const SCHEMA: &str = "memory-search 1";

/// How long a statement waits for another process's transaction on the index.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the side index lives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexLocation {
    /// An SQLite file (with its `-wal` and `-shm` companions beside it). Its folder is created
    /// (mode 0700) if missing; the file is made 0600: it holds the text of the memories.
    File(PathBuf),
    /// In memory only, gone when the program exits: nothing is written to disk.
    Memory,
}

impl IndexLocation {
    /// The index of a folder store whose base (the folder holding `memories/`) is `base`:
    /// `base/.memory-search/index.sqlite3`, beside `memories/` and never inside it, so no
    /// memory path reaches it.
    pub fn beside(base: &Path) -> Self {
        IndexLocation::File(base.join(INDEX_DIR).join(INDEX_FILE))
    }

    /// A cache file for a remote store named `identity` (e.g. its endpoint, bucket and
    /// prefix) under the cache folder `cache_root`:
    /// `cache_root/memory/search/<first 32 hex digits of the identity's SHA-256>.sqlite3`.
    /// Give the same identity to [`IndexOptions::identity`](crate::IndexOptions::identity),
    /// so that a file shared by two identities (a hash collision, a copied cache) is rebuilt
    /// rather than trusted.
    ///
    /// ```
    /// use std::path::Path;
    /// use memory_search::IndexLocation;
    /// let a = IndexLocation::in_cache(Path::new("/home/u/.cache"), "http://s3.local|bucket|team");
    /// let IndexLocation::File(path) = &a else { unreachable!() };
    /// assert!(path.starts_with("/home/u/.cache/memory/search"));
    /// assert_ne!(a, IndexLocation::in_cache(Path::new("/home/u/.cache"), "http://s3.local|bucket|other"));
    /// ```
    pub fn in_cache(cache_root: &Path, identity: &str) -> Self {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(identity.as_bytes());
        let name = format!("{}.sqlite3", &hex::encode(digest)[..32]);
        IndexLocation::File(cache_root.join("memory").join("search").join(name))
    }
}

impl IndexLocation {
    /// Deletes the index at this location: the file and its `-wal`, `-shm` and `-journal`
    /// companions (a link among them is removed, never followed); nothing for
    /// [`IndexLocation::Memory`] or an index that does not exist. For when the store's words
    /// must leave the disk, e.g. once the store is encrypted (`memory rekey
    /// --encrypt-plaintext`): an encrypted store keeps no index, and the next search of the
    /// store unencrypted builds a new one.
    ///
    /// # Errors
    /// [`memory_core::Error::Backend`] when a file cannot be removed (its permissions, a
    /// read-only file system).
    pub fn discard(&self) -> memory_core::Result<()> {
        Index::discard(self).map_err(Into::into)
    }
}

/// The user's cache folder from the environment: `$XDG_CACHE_HOME` when set to an absolute
/// path, else `$HOME/.cache`; `None` when neither is usable. Reads the environment: call it
/// only where the program asked for the environment to be read.
pub fn user_cache_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")))
}

/// The folder of the index beside a folder store's `memories/`.
pub const INDEX_DIR: &str = ".memory-search";
/// The index file's name in its folder.
pub const INDEX_FILE: &str = "index.sqlite3";

/// What the index knows of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) size: u64,
    /// The listing's modification time (ns since the epoch), `None` when it had none.
    pub(crate) mtime: Option<i64>,
    /// The version the indexed text was read at.
    pub(crate) version: String,
    /// The local time (ns since the epoch) just before the listing that last confirmed the
    /// row: a file modified so close to it may have changed again within the same tick.
    pub(crate) checked: i64,
}

/// One change of the index.
#[derive(Debug)]
pub(crate) enum Change {
    /// The file's text (or `None`: not UTF-8, kept so it is not read again) at this row.
    Put {
        path: String,
        row: Row,
        text: Option<String>,
    },
    /// Only the row's listing data (the text is unchanged).
    Confirm { path: String, row: Row },
    /// The file is gone.
    Remove { path: String },
}

/// An open side index.
#[derive(Debug)]
pub(crate) struct Index {
    conn: Connection,
    location: IndexLocation,
    /// Every row of `files`, as this connection last knew them, kept between searches so a
    /// reconciliation compares the listing with a sorted map in memory instead of reading
    /// (and allocating) every row from SQLite each time. See [`Index::rows_under`] for why
    /// it is never stale.
    cache: Option<RowCache>,
}

/// The rows of `files` and the `PRAGMA data_version` read just before they were loaded.
#[derive(Debug)]
struct RowCache {
    rows: BTreeMap<String, Row>,
    data_version: i64,
}

impl Index {
    /// Opens (creating, or rebuilding when unreadable or of another schema) the index.
    /// `identity` names the store; an index of another store is rebuilt.
    pub(crate) fn open(location: &IndexLocation, identity: &str) -> Result<Index, IndexError> {
        match Self::open_waiting(location, identity) {
            Ok(index) => Ok(index),
            Err(e) if e.is_damage() => {
                tracing::warn!(error = %e, "memory-search: the side index is unreadable; rebuilding it");
                Self::remove_files(location)?;
                Self::open_waiting(location, identity)
            }
            Err(e) => Err(e),
        }
    }

    /// [`try_open`](Self::try_open), again while another process holds the new file: SQLite
    /// does not wait for the busy timeout on a journal-mode switch or a first read racing a
    /// schema's creation, so those are retried here, for as long as the busy timeout.
    fn open_waiting(location: &IndexLocation, identity: &str) -> Result<Index, IndexError> {
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match Self::try_open(location, identity) {
                Err(e) if e.is_busy() && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => return other,
            }
        }
    }

    fn try_open(location: &IndexLocation, identity: &str) -> Result<Index, IndexError> {
        let conn = match location {
            IndexLocation::Memory => {
                Connection::open_in_memory().map_err(IndexError::sql("open"))?
            }
            IndexLocation::File(path) => {
                let real = unlinked_path(path)?;
                // NOFOLLOW: SQLite refuses a link anywhere in the path (the folders above the
                // index folder are resolved by `unlinked_path`), so a link put at the folder
                // or the file after the checks is refused too.
                let conn =
                    memory_sqlite_conn::open_read_write(&real, memory_sqlite_conn::Links::Refuse)
                        .map_err(|source| {
                        if is_link_refusal(&source) {
                            IndexError::Link(LinkedIndex::new(path.clone()))
                        } else {
                            IndexError::Sql {
                                operation: "open",
                                source,
                            }
                        }
                    })?;
                make_private(&real)?;
                conn
            }
        };
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(IndexError::sql("busy_timeout"))?;
        // Temporary tables and sorts stay in memory, so an in-memory index writes nothing.
        conn.execute_batch("PRAGMA temp_store = MEMORY;")
            .map_err(IndexError::sql("pragma"))?;
        if matches!(location, IndexLocation::File(_)) {
            // WAL: readers and one writer at once across processes. The index is a cache that
            // any search reconciles, so a commit need not survive a power loss (NORMAL).
            let _mode: String = conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
                .map_err(IndexError::sql("journal_mode"))?;
            conn.execute_batch("PRAGMA synchronous = NORMAL;")
                .map_err(IndexError::sql("pragma"))?;
        }
        let mut index = Index {
            conn,
            location: location.clone(),
            cache: None,
        };
        index.ensure_schema(identity)?;
        Ok(index)
    }

    /// Removes a damaged index's files (nothing for an index in memory).
    pub(crate) fn discard(location: &IndexLocation) -> Result<(), IndexError> {
        Self::remove_files(location)
    }

    fn remove_files(location: &IndexLocation) -> Result<(), IndexError> {
        let IndexLocation::File(path) = location else {
            return Ok(());
        };
        for suffix in COMPANIONS {
            // Removes a link itself, never what it points to.
            match std::fs::remove_file(with_suffix(path, suffix)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(IndexError::Io {
                        operation: "remove the index files",
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// Creates the tables, or drops and recreates them when they are of another schema
    /// version or of another store.
    fn ensure_schema(&mut self, identity: &str) -> Result<(), IndexError> {
        let current = self.meta("schema")?;
        let store = self.meta("store")?;
        if current.as_deref() == Some(SCHEMA) && store.as_deref() == Some(identity) {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(IndexError::sql("begin"))?;
        // Another process may have built it meanwhile.
        let again: Option<String> = read_meta(&tx, "schema")?;
        let store_again: Option<String> = read_meta(&tx, "store")?;
        if again.as_deref() == Some(SCHEMA) && store_again.as_deref() == Some(identity) {
            return tx.commit().map_err(IndexError::sql("commit"));
        }
        if again.is_some() {
            tracing::info!(
                found = again.as_deref().unwrap_or(""),
                "memory-search: the side index is of another schema or store; rebuilding it"
            );
        }
        tx.execute_batch(
            "DROP TABLE IF EXISTS fts;
             DROP TABLE IF EXISTS files;
             DROP TABLE IF EXISTS vectors;
             DROP TABLE IF EXISTS meta;
             CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
             CREATE TABLE files (
                 id INTEGER PRIMARY KEY,
                 path TEXT NOT NULL UNIQUE,
                 size INTEGER NOT NULL,
                 mtime INTEGER,
                 version TEXT NOT NULL,
                 checked INTEGER NOT NULL,
                 text INTEGER NOT NULL
             );
             CREATE VIRTUAL TABLE fts USING fts5(words, body UNINDEXED, tokenize = 'ascii');
             CREATE TABLE vectors (
                 id INTEGER PRIMARY KEY,
                 model TEXT NOT NULL,
                 vector BLOB NOT NULL
             );",
        )
        .map_err(IndexError::sql("create the schema"))?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema', ?1), ('store', ?2)",
            params![SCHEMA, identity],
        )
        .map_err(IndexError::sql("create the schema"))?;
        tx.commit().map_err(IndexError::sql("commit"))
    }

    fn meta(&self, key: &str) -> Result<Option<String>, IndexError> {
        read_meta(&self.conn, key)
    }

    /// SQLite's count of commits by *other* connections to this database (another process,
    /// or another `Indexed` in this one): it changes whenever one of them commits, and never
    /// for this connection's own commits.
    fn data_version(&self) -> Result<i64, IndexError> {
        self.conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(IndexError::sql("read the index"))
    }

    /// Every row at or below `under` (a `/memories...` path), sorted by path (byte order):
    /// the row of `under` itself first, if any, then those strictly below it.
    ///
    /// The rows come from a copy kept in memory, which equals the table whenever this is
    /// called, for two reasons:
    /// - this connection's own changes go through [`apply`](Self::apply), which changes the
    ///   copy exactly as it changed the table, after the commit succeeded;
    /// - any other connection's commit changes `PRAGMA data_version`, read here first: the
    ///   copy is then loaded again, whole. (`data_version` is read *before* the load, so a
    ///   commit racing the load is at worst loaded twice, never missed.)
    pub(crate) fn rows_under(
        &mut self,
        under: &str,
    ) -> Result<impl Iterator<Item = (&String, &Row)>, IndexError> {
        let now = self.data_version()?;
        if self.cache.as_ref().is_none_or(|c| c.data_version != now) {
            self.cache = None;
            let rows = self.load_rows()?;
            self.cache = Some(RowCache {
                rows,
                data_version: now,
            });
        }
        let rows = &self.cache.as_ref().expect("just loaded").rows;
        let (lo, hi) = prefix_range(under);
        let own = rows.get_key_value(under);
        let below =
            rows.range::<str, _>((Bound::Excluded(lo.as_str()), Bound::Excluded(hi.as_str())));
        Ok(own.into_iter().chain(below))
    }

    /// Every row of `files`, by path.
    fn load_rows(&self) -> Result<BTreeMap<String, Row>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, size, mtime, version, checked FROM files")
            .map_err(IndexError::sql("read the index"))?;
        let rows = stmt
            .query_map([], |r| {
                let path: String = r.get(0)?;
                let size: i64 = r.get(1)?;
                let mtime: Option<i64> = r.get(2)?;
                let version: String = r.get(3)?;
                let checked: i64 = r.get(4)?;
                Ok((path, size, mtime, version, checked))
            })
            .map_err(IndexError::sql("read the index"))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (path, size, mtime, version, checked) =
                row.map_err(IndexError::sql("read the index"))?;
            // A row this build cannot read is treated as unknown: it is read again.
            let Ok(size) = u64::try_from(size) else {
                continue;
            };
            out.insert(
                path,
                Row {
                    size,
                    mtime,
                    version,
                    checked,
                },
            );
        }
        Ok(out)
    }

    /// Applies changes in one transaction; `vectors` holds embeddings of put texts (feature
    /// `semantic`), by path.
    pub(crate) fn apply(
        &mut self,
        changes: Vec<Change>,
        vectors: &HashMap<String, (String, Vec<u8>)>,
    ) -> Result<(), IndexError> {
        if changes.is_empty() {
            return Ok(());
        }
        // The copy of the rows follows the table only if nothing but this connection wrote
        // since it was last checked; otherwise (or on any failure) it is dropped and the next
        // reconciliation loads the table again.
        let cached = self.cache.take();
        self.write_changes(&changes, vectors)?;
        if let Some(mut cache) = cached
            && self.data_version()? == cache.data_version
        {
            for change in changes {
                match change {
                    Change::Put { path, row, .. } | Change::Confirm { path, row } => {
                        cache.rows.insert(path, row);
                    }
                    Change::Remove { path } => {
                        cache.rows.remove(&path);
                    }
                }
            }
            self.cache = Some(cache);
        }
        Ok(())
    }

    fn write_changes(
        &mut self,
        changes: &[Change],
        vectors: &HashMap<String, (String, Vec<u8>)>,
    ) -> Result<(), IndexError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(IndexError::sql("begin"))?;
        {
            let mut find = tx
                .prepare_cached("SELECT id FROM files WHERE path = ?1")
                .map_err(IndexError::sql("update the index"))?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO files (path, size, mtime, version, checked, text)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(IndexError::sql("update the index"))?;
            let mut update = tx
                .prepare_cached(
                    "UPDATE files SET size = ?2, mtime = ?3, version = ?4, checked = ?5, text = ?6
                     WHERE id = ?1",
                )
                .map_err(IndexError::sql("update the index"))?;
            let mut confirm = tx
                .prepare_cached(
                    "UPDATE files SET size = ?2, mtime = ?3, version = ?4, checked = ?5
                     WHERE path = ?1",
                )
                .map_err(IndexError::sql("update the index"))?;
            let mut unfts = tx
                .prepare_cached("DELETE FROM fts WHERE rowid = ?1")
                .map_err(IndexError::sql("update the index"))?;
            let mut fts = tx
                .prepare_cached("INSERT INTO fts (rowid, words, body) VALUES (?1, ?2, ?3)")
                .map_err(IndexError::sql("update the index"))?;
            let mut unvec = tx
                .prepare_cached("DELETE FROM vectors WHERE id = ?1")
                .map_err(IndexError::sql("update the index"))?;
            let mut vec = tx
                .prepare_cached("INSERT INTO vectors (id, model, vector) VALUES (?1, ?2, ?3)")
                .map_err(IndexError::sql("update the index"))?;
            let mut remove = tx
                .prepare_cached("DELETE FROM files WHERE id = ?1")
                .map_err(IndexError::sql("update the index"))?;
            let e = IndexError::sql("update the index");
            for change in changes {
                match change {
                    Change::Put { path, row, text } => {
                        let mtime = row.mtime;
                        let checked = row.checked;
                        let size = i64::try_from(row.size).unwrap_or(i64::MAX);
                        let id: Option<i64> =
                            find.query_row([path], |r| r.get(0)).optional().map_err(e)?;
                        let id = match id {
                            Some(id) => {
                                update
                                    .execute(params![
                                        id,
                                        size,
                                        mtime,
                                        row.version,
                                        checked,
                                        text.is_some()
                                    ])
                                    .map_err(e)?;
                                unfts.execute([id]).map_err(e)?;
                                unvec.execute([id]).map_err(e)?;
                                id
                            }
                            None => {
                                insert
                                    .execute(params![
                                        path,
                                        size,
                                        mtime,
                                        row.version,
                                        checked,
                                        text.is_some()
                                    ])
                                    .map_err(e)?;
                                tx.last_insert_rowid()
                            }
                        };
                        if let Some(text) = text {
                            fts.execute(params![id, folded_words(text), text])
                                .map_err(e)?;
                            if let Some((model, vector)) = vectors.get(path) {
                                vec.execute(params![id, model, vector]).map_err(e)?;
                            }
                        }
                    }
                    Change::Confirm { path, row } => {
                        confirm
                            .execute(params![
                                path,
                                i64::try_from(row.size).unwrap_or(i64::MAX),
                                row.mtime,
                                row.version,
                                row.checked
                            ])
                            .map_err(e)?;
                    }
                    Change::Remove { path } => {
                        let id: Option<i64> =
                            find.query_row([path], |r| r.get(0)).optional().map_err(e)?;
                        if let Some(id) = id {
                            unfts.execute([id]).map_err(e)?;
                            unvec.execute([id]).map_err(e)?;
                            remove.execute([id]).map_err(e)?;
                        }
                    }
                }
            }
        }
        tx.commit().map_err(IndexError::sql("commit"))
    }

    /// Runs an FTS5 `MATCH` over the texts at or below `under`, handing each matching file's
    /// `(path, text)` to `take` (in no particular order: memory-core's `Ranker` ranks them).
    pub(crate) fn keyword(
        &self,
        expression: &str,
        under: &str,
        mut take: impl FnMut(String, String),
    ) -> Result<(), IndexError> {
        let (lo, hi) = prefix_range(under);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.path, fts.body FROM fts JOIN files f ON f.id = fts.rowid
                 WHERE fts MATCH ?1 AND (f.path = ?2 OR (f.path > ?3 AND f.path < ?4))",
            )
            .map_err(IndexError::sql("search the index"))?;
        let mut rows = stmt
            .query(params![expression, under, lo, hi])
            .map_err(IndexError::sql("search the index"))?;
        while let Some(row) = rows.next().map_err(IndexError::sql("search the index"))? {
            let path: String = row.get(0).map_err(IndexError::sql("search the index"))?;
            let body: String = row.get(1).map_err(IndexError::sql("search the index"))?;
            take(path, body);
        }
        Ok(())
    }

    /// Every stored embedding of `model` at or below `under`, with its file's path.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn vectors(
        &self,
        model: &str,
        under: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, IndexError> {
        let (lo, hi) = prefix_range(under);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.path, v.vector FROM vectors v JOIN files f ON f.id = v.id
                 WHERE v.model = ?1 AND (f.path = ?2 OR (f.path > ?3 AND f.path < ?4))",
            )
            .map_err(IndexError::sql("read the embeddings"))?;
        let rows = stmt
            .query_map(params![model, under, lo, hi], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(IndexError::sql("read the embeddings"))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(IndexError::sql("read the embeddings"))
    }

    /// The text of one indexed file.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn text(&self, path: &str) -> Result<Option<String>, IndexError> {
        self.conn
            .prepare_cached(
                "SELECT fts.body FROM fts JOIN files f ON f.id = fts.rowid WHERE f.path = ?1",
            )
            .and_then(|mut s| s.query_row([path], |r| r.get(0)).optional())
            .map_err(IndexError::sql("read the index"))
    }

    /// Paths of indexed text files at or below `under` that have no embedding of `model`.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn missing_vectors(
        &self,
        model: &str,
        under: &str,
    ) -> Result<Vec<(String, String)>, IndexError> {
        let (lo, hi) = prefix_range(under);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.path, fts.body FROM files f JOIN fts ON fts.rowid = f.id
                 WHERE f.text = 1 AND (f.path = ?2 OR (f.path > ?3 AND f.path < ?4))
                   AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.id = f.id AND v.model = ?1)",
            )
            .map_err(IndexError::sql("read the index"))?;
        let rows = stmt
            .query_map(params![model, under, lo, hi], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(IndexError::sql("read the index"))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(IndexError::sql("read the index"))
    }

    /// Stores embeddings of files already indexed (by path).
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn put_vectors(
        &mut self,
        model: &str,
        vectors: &[(String, Vec<u8>)],
    ) -> Result<(), IndexError> {
        if vectors.is_empty() {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(IndexError::sql("begin"))?;
        {
            let mut put = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO vectors (id, model, vector)
                     SELECT id, ?2, ?3 FROM files WHERE path = ?1",
                )
                .map_err(IndexError::sql("store the embeddings"))?;
            for (path, vector) in vectors {
                put.execute(params![path, model, vector])
                    .map_err(IndexError::sql("store the embeddings"))?;
            }
        }
        tx.commit().map_err(IndexError::sql("commit"))
    }

    /// Where this index is.
    pub(crate) fn location(&self) -> &IndexLocation {
        &self.location
    }
}

fn read_meta(conn: &Connection, key: &str) -> Result<Option<String>, IndexError> {
    let exists: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta')",
            [],
            |r| r.get(0),
        )
        .map_err(IndexError::sql("read the index"))?;
    if !exists {
        return Ok(None);
    }
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
        .map_err(IndexError::sql("read the index"))
}

/// The exclusive bounds of the paths strictly below `dir` in byte order: `dir/` < p < `dir0`
/// (`0` follows `/`).
fn prefix_range(dir: &str) -> (String, String) {
    (format!("{dir}/"), format!("{dir}0"))
}

/// Whether a SQLite error means the file is not a usable index (rebuild it).
pub(crate) fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}
