//! [`PostgresStorage`]: the [`Storage`] implementation.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Pool};
use memory_core::history::{Redaction, Revision};
use memory_core::options::{StoreOptions, SyncMode};
use memory_core::search::{Ranker, SearchHit, SearchQuery, is_searchable, searchable_text};
use memory_core::{
    Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version, WriteMode,
};

use crate::config::Settings;
use crate::error::{self, BadRow, PostgresOpenError, RenameTooLong, backend};

mod history;
mod history_sql;
mod lookups;
mod sql;
#[cfg(test)]
mod tests;
mod unindexed;
mod words;

use sql::Sql;
use words::{tsquery, tsvector};

/// A memory store in a PostgreSQL database: one row per file in the table `files` of a
/// schema (`?schema=`, default `memory`), keyed by the store's root name (`?root=`, default
/// `default`) and the file's path.
///
/// Several roots share one schema, each an empty store of its own when first opened; several
/// schemas share one database; any number of processes on any number of hosts share a root.
/// Every operation is one statement or one transaction: writes that create or move paths hold
/// a row lock on the root's row in `roots` for their transaction, so the rules that span rows
/// (a file and a directory never share a path, [`Storage::create_within`]'s limit) hold across
/// processes; compare-and-swap updates and reads take no lock beyond the file's own row.
/// Versions come from a database sequence, so a version is never repeated, not even for a path
/// deleted and created again.
///
/// Every change also records a revision of each file it changes in the table `history`, in
/// the same statement or transaction (see the crate's README, "History"), unless the store
/// was opened with `history=off`; [`with_history`](Self::with_history) sets the options from
/// Rust.
///
/// Cloning is cheap: clones share the connection pool. `Display` is
/// `Postgres(HOST:PORT/DATABASE schema=S root=R)` and neither it nor `Debug` ever shows the
/// password.
#[derive(Clone)]
pub struct PostgresStorage {
    inner: Arc<Inner>,
    history: Arc<history::History>,
}

struct Inner {
    pool: Pool,
    settings: Settings,
    sql: Sql,
}

impl fmt::Debug for PostgresStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.inner.settings;
        let status = self.inner.pool.status();
        f.debug_struct("PostgresStorage")
            .field("host", &s.host)
            .field("port", &s.port)
            .field("user", &s.user)
            .field("database", &s.database)
            .field("schema", &s.schema)
            .field("root", &s.root)
            .field("sync", &s.sync)
            .field("history", &self.history.options)
            .field("read_only", &s.read_only)
            .field("pool_size", &status.max_size)
            .field("pool_open", &status.size)
            .finish()
    }
}

impl fmt::Display for PostgresStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.inner.settings;
        write!(
            f,
            "Postgres({}:{}/{} schema={} root={})",
            s.host, s.port, s.database, s.schema, s.root
        )
    }
}

/// Bounds of the rows strictly below `dir`: `dir/ < path < dir0` in byte order (`'0'` follows
/// `'/'`), a range on the primary key that matches whole segments and needs no `LIKE` escaping.
/// The columns' `COLLATE "C"` makes the comparison byte order whatever the database's collation.
fn below(dir: &MemoryPath) -> (String, String) {
    (format!("{dir}/"), format!("{dir}0"))
}

fn size_of(contents: &[u8]) -> i64 {
    i64::try_from(contents.len()).unwrap_or(i64::MAX)
}

fn version(v: i64) -> Version {
    Version::new(v.to_string())
}

impl PostgresStorage {
    /// Opens the store at `url`, `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or
    /// `postgresql://`), with options from the URL's query (`?schema=memory&root=tenant-42`)
    /// and from `options` (an option given in both is an error).
    ///
    /// Connects once (so an unreachable server or a refused login is an error here, naming
    /// host and port), checks that the database is UTF-8, creates or migrates the schema under
    /// an advisory lock (refusing a schema of another application or of a newer release) and
    /// creates the root's row if it has none.
    ///
    /// # Errors
    /// A [`PostgresOpenError`] saying what to change; none contains the password.
    pub async fn from_url(
        url: &str,
        options: StoreOptions,
    ) -> std::result::Result<Self, PostgresOpenError> {
        Self::open(Settings::parse(url, options)?).await
    }

    /// Opens the existing store at `url` (as [`from_url`](Self::from_url) reads it) so that
    /// nothing in the database changes: no advisory lock, no `CREATE`, no migration, no row
    /// written. The open checks that the database is UTF-8, that the schema is at exactly
    /// this build's [`SCHEMA_VERSION`](crate::SCHEMA_VERSION) and that the root has its row;
    /// every session runs with `default_transaction_read_only = on`, so the server itself
    /// refuses a write. Every change ([`Storage::write`], `delete`, `rename`,
    /// `create_within`) is refused before it is sent, with
    /// [`memory_core::read_only_refusal`] (`Error::Refused`, "/memories is read-only"), the
    /// refusal of every read-only store; a search over rows another program left unindexed
    /// reads the files instead of indexing them.
    ///
    /// # Errors
    /// As [`from_url`](Self::from_url), and [`PostgresOpenError::SchemaMissing`],
    /// [`PostgresOpenError::SchemaNeedsUpgrade`], [`PostgresOpenError::SchemaTooNew`],
    /// [`PostgresOpenError::ForeignSchema`] or [`PostgresOpenError::RootMissing`], each
    /// saying what to do.
    pub async fn from_url_read_only(
        url: &str,
        options: StoreOptions,
    ) -> std::result::Result<Self, PostgresOpenError> {
        Self::open(Settings::parse(url, options)?.read_only()).await
    }

    async fn open(settings: Settings) -> std::result::Result<Self, PostgresOpenError> {
        let pool = crate::pool::connect(&settings, Some(&settings.root)).await?;
        tracing::debug!(
            host = %settings.host,
            port = settings.port,
            database = %settings.database,
            schema = %settings.schema,
            root = %settings.root,
            read_only = settings.read_only,
            "opened the PostgreSQL memory store"
        );
        let sql = Sql::new(&settings.schema);
        let history = history::History::new(&settings.schema, settings.history.clone());
        Ok(PostgresStorage {
            history,
            inner: Arc::new(Inner {
                pool,
                settings,
                sql,
            }),
        })
    }

    /// The schema holding the store's tables.
    pub fn schema(&self) -> &str {
        &self.inner.settings.schema
    }

    /// The store's root name: the key of its rows in the schema's tables.
    pub fn root(&self) -> &str {
        &self.inner.settings.root
    }

    /// How hard a commit waits for the disk (the `sync` option, PostgreSQL's
    /// `synchronous_commit`).
    pub fn sync_mode(&self) -> SyncMode {
        self.inner.settings.sync
    }

    /// Whether the store was opened with [`from_url_read_only`](Self::from_url_read_only).
    pub fn is_read_only(&self) -> bool {
        self.inner.settings.read_only
    }

    /// Refuses a change of a store opened read-only.
    fn refuse_if_read_only(&self, path: &MemoryPath) -> Result<()> {
        if self.inner.settings.read_only {
            return Err(memory_core::read_only_refusal(&MemoryPath::root(), path));
        }
        Ok(())
    }

    async fn client(&self) -> Result<deadpool_postgres::Object> {
        self.inner.pool.get().await.map_err(error::pool)
    }

    fn root_param(&self) -> &str {
        &self.inner.settings.root
    }

    fn stored_path(&self, raw: String) -> Result<MemoryPath> {
        MemoryPath::parse(&raw).map_err(|_| {
            Error::backend(
                error::BACKEND,
                BadRow {
                    schema: self.inner.settings.schema.clone(),
                    root: self.inner.settings.root.clone(),
                    stored: raw,
                },
            )
        })
    }

    /// Takes the root's row lock for the rest of `tx`: the writers that create or move paths
    /// of one root run one at a time. A root whose row was removed by hand gets it back.
    async fn lock_root(&self, tx: &deadpool_postgres::Transaction<'_>) -> Result<()> {
        let sql = &self.inner.sql;
        let root = self.root_param();
        let lock = tx.prepare_cached(&sql.lock_root).await.map_err(backend)?;
        if tx
            .query_opt(&lock, &[&root])
            .await
            .map_err(backend)?
            .is_some()
        {
            return Ok(());
        }
        let insert = tx.prepare_cached(&sql.insert_root).await.map_err(backend)?;
        tx.execute(&insert, &[&root]).await.map_err(backend)?;
        tx.query_one(&lock, &[&root]).await.map_err(backend)?;
        Ok(())
    }

    /// A create or overwrite that may bring a new path into being: under the root's lock.
    /// With history, `restored` records the change as a restore.
    async fn write_locked(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        overwrite: bool,
        max_files: Option<usize>,
        restored: bool,
    ) -> Result<Version> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        self.lock_root(&tx).await?;
        if max_files.is_some()
            && (self.is_dir(&tx, path).await? || self.file_exists(&tx, path).await?)
        {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        if let Some(parent) = self.file_ancestor(&tx, path).await? {
            return Err(Error::ParentIsFile {
                path: path.clone(),
                parent,
            });
        }
        if self.is_dir(&tx, path).await? {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        if let Some(max_files) = max_files
            && self.count(&tx).await? >= max_files
        {
            return Err(Error::StoreFull { max_files });
        }
        if self.recording() {
            let v = self
                .create_or_replace_recorded(&tx, path, &contents, overwrite, restored)
                .await?
                .ok_or_else(|| Error::AlreadyExists { path: path.clone() })?;
            tx.commit().await.map_err(backend)?;
            return Ok(version(v));
        }
        let sql = if overwrite {
            &self.inner.sql.upsert
        } else {
            &self.inner.sql.create
        };
        let stmt = tx.prepare_cached(sql).await.map_err(backend)?;
        let size = size_of(&contents);
        let words = tsvector(&contents);
        let row = tx
            .query_opt(
                &stmt,
                &[&self.root_param(), &path.as_str(), &contents, &size, &words],
            )
            .await
            .map_err(backend)?;
        let Some(row) = row else {
            return Err(Error::AlreadyExists { path: path.clone() });
        };
        let v: i64 = row.get(0);
        tx.commit().await.map_err(backend)?;
        Ok(version(v))
    }
}

#[async_trait]
impl Storage for PostgresStorage {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&self.inner.sql.read)
            .await
            .map_err(backend)?;
        let row = client
            .query_opt(&stmt, &[&self.root_param(), &path.as_str()])
            .await
            .map_err(backend)?;
        match row {
            Some(row) => Ok(StoredFile {
                contents: row.get(0),
                version: version(row.get(1)),
            }),
            None => Err(Error::NotFound { path: path.clone() }),
        }
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&self.inner.sql.stat)
            .await
            .map_err(backend)?;
        let (lo, hi) = below(path);
        let row = client
            .query_one(&stmt, &[&self.root_param(), &path.as_str(), &lo, &hi])
            .await
            .map_err(backend)?;
        let size: Option<i64> = row.get(0);
        let modified: Option<SystemTime> = row.get(1);
        let has_below: bool = row.get(2);
        Ok(match size {
            Some(size) => Some(Entry::File(FileMeta {
                path: path.clone(),
                size: u64::try_from(size).unwrap_or(0),
                modified,
            })),
            None if path.is_root() || has_below => Some(Entry::Directory),
            None => None,
        })
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        match mode {
            WriteMode::Create => self.write_locked(path, contents, false, None, false).await,
            WriteMode::Overwrite => {
                if path.is_root() {
                    return Err(Error::AlreadyExists { path: path.clone() });
                }
                // Replacing an existing file changes no path: one statement, no root lock.
                let client = self.client().await?;
                if self.recording() {
                    let replaced = self
                        .replace_recorded(
                            &client,
                            path,
                            &contents,
                            memory_core::history::Change::Modified,
                        )
                        .await?;
                    drop(client);
                    return match replaced {
                        Some(v) => Ok(version(v)),
                        None => self.write_locked(path, contents, true, None, false).await,
                    };
                }
                let stmt = client
                    .prepare_cached(&self.inner.sql.replace)
                    .await
                    .map_err(backend)?;
                let size = size_of(&contents);
                let words = tsvector(&contents);
                let row = client
                    .query_opt(
                        &stmt,
                        &[&self.root_param(), &path.as_str(), &contents, &size, &words],
                    )
                    .await
                    .map_err(backend)?;
                drop(client);
                match row {
                    Some(row) => Ok(version(row.get(0))),
                    None => self.write_locked(path, contents, true, None, false).await,
                }
            }
            WriteMode::Update(expected) => {
                // Compare-and-swap on the version column, in one statement. A token this
                // backend never issued matches no row.
                let client = self.client().await?;
                let row = match expected.as_str().parse::<i64>() {
                    Ok(expected) if self.recording() => {
                        if let Some(v) = self
                            .compare_and_swap_recorded(&client, path, &contents, expected)
                            .await?
                        {
                            return Ok(version(v));
                        }
                        None
                    }
                    Ok(expected) => {
                        let stmt = client
                            .prepare_cached(&self.inner.sql.compare_and_swap)
                            .await
                            .map_err(backend)?;
                        let size = size_of(&contents);
                        let words = tsvector(&contents);
                        client
                            .query_opt(
                                &stmt,
                                &[
                                    &self.root_param(),
                                    &path.as_str(),
                                    &contents,
                                    &size,
                                    &expected,
                                    &words,
                                ],
                            )
                            .await
                            .map_err(backend)?
                    }
                    Err(_) => None,
                };
                if let Some(row) = row {
                    return Ok(version(row.get(0)));
                }
                if self.file_exists(&client, path).await? {
                    return Err(Error::Conflict { path: path.clone() });
                }
                if let Some(parent) = self.file_ancestor(&client, path).await? {
                    return Err(Error::ParentIsFile {
                        path: path.clone(),
                        parent,
                    });
                }
                Err(Error::NotFound { path: path.clone() })
            }
        }
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(path)?;
        if self.recording() {
            let mut client = self.client().await?;
            if !path.is_root() && self.delete_file_recorded(&client, path).await? {
                return Ok(());
            }
            let removed = self.delete_below_recorded(&mut client, path).await?;
            if removed == 0 && !path.is_root() {
                return Err(Error::NotFound { path: path.clone() });
            }
            return Ok(());
        }
        let client = self.client().await?;
        let root = self.root_param();
        if !path.is_root() {
            let stmt = client
                .prepare_cached(&self.inner.sql.delete_file)
                .await
                .map_err(backend)?;
            if client
                .execute(&stmt, &[&root, &path.as_str()])
                .await
                .map_err(backend)?
                > 0
            {
                return Ok(());
            }
        }
        let (lo, hi) = below(path);
        let stmt = client
            .prepare_cached(&self.inner.sql.delete_below)
            .await
            .map_err(backend)?;
        let removed = client
            .execute(&stmt, &[&root, &lo, &hi])
            .await
            .map_err(backend)?;
        if removed == 0 && !path.is_root() {
            return Err(Error::NotFound { path: path.clone() });
        }
        Ok(())
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&self.inner.sql.list)
            .await
            .map_err(backend)?;
        let (lo, hi) = below(dir);
        let rows = client
            .query(&stmt, &[&self.root_param(), &lo, &hi])
            .await
            .map_err(backend)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let size: i64 = row.get(1);
            out.push(FileMeta {
                path: self.stored_path(row.get(0))?,
                size: u64::try_from(size).unwrap_or(0),
                modified: Some(row.get(2)),
            });
        }
        Ok(out)
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(from)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        self.lock_root(&tx).await?;
        let (lo, hi) = below(from);
        let stmt = tx
            .prepare_cached(&self.inner.sql.sources)
            .await
            .map_err(backend)?;
        let rows = tx
            .query(&stmt, &[&self.root_param(), &from.as_str(), &lo, &hi])
            .await
            .map_err(backend)?;
        // `from` itself is a file, or `from` is a directory with these files below it (never
        // both: a file and a directory never share a path). `/memories` has no row of its own.
        let sources = rows
            .into_iter()
            .map(|r| self.stored_path(r.get(0)))
            .collect::<Result<Vec<_>>>()?;
        if sources.is_empty() {
            return Err(Error::NotFound { path: from.clone() });
        }
        if to.starts_with(from) {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        }
        if self.file_exists(&tx, to).await? || self.is_dir(&tx, to).await? {
            return Err(Error::AlreadyExists { path: to.clone() });
        }
        if let Some(parent) = self.file_ancestor(&tx, to).await? {
            return Err(Error::ParentIsFile {
                path: to.clone(),
                parent,
            });
        }
        let mut from_paths = Vec::with_capacity(sources.len());
        let mut to_paths = Vec::with_capacity(sources.len());
        for source in &sources {
            let target = source.rebase(from, to).ok_or_else(|| {
                Error::backend(
                    error::BACKEND,
                    RenameTooLong {
                        source_path: source.to_string(),
                        to: to.to_string(),
                    },
                )
            })?;
            from_paths.push(source.as_str().to_owned());
            to_paths.push(target.as_str().to_owned());
        }
        if self.recording() {
            self.keep_before_move(&tx, &from_paths).await?;
        }
        // Moved files get new versions: a compare-and-swap prepared before the move must not
        // succeed on a file that has since been moved away and back.
        let stmt = tx
            .prepare_cached(&self.inner.sql.move_files)
            .await
            .map_err(backend)?;
        let moved = tx
            .execute(&stmt, &[&self.root_param(), &from_paths, &to_paths])
            .await
            .map_err(backend)?;
        if moved != sources.len() as u64 {
            // Cannot happen under the root's lock; roll back rather than move part of a tree.
            return Err(Error::retryable(
                error::BACKEND,
                format!(
                    "rename moved {moved} of {} files; rolled back",
                    sources.len()
                ),
            ));
        }
        if self.recording() {
            self.record_moves(&tx, &from_paths, &to_paths).await?;
        }
        tx.commit().await.map_err(backend)?;
        Ok(())
    }

    async fn file_count(&self) -> Result<usize> {
        let client = self.client().await?;
        self.count(&client).await
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        self.write_locked(path, contents, false, Some(max_files), false)
            .await
    }

    /// The `words` column under its GIN index: first indexes the rows another program
    /// changed (or that predate search), then counts the files below the query's folder and
    /// reads the rows whose words hold any of the query's index terms, in pages, into
    /// memory-core's `Ranker`, as every store ranks.
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        /// Candidates fetched per round trip.
        const PAGE: i32 = 64;
        let mut client = self.client().await?;
        if self.inner.settings.read_only {
            if self.has_unindexed(&client).await? {
                // A read-only store cannot index the rows changed behind its back: the scan
                // over its reads answers instead, exact at the cost of reading every file.
                drop(client);
                return memory_core::search::scan(self, query).await;
            }
        } else {
            self.index_unindexed(&client).await?;
        }
        let under = query.under();
        let (lo, hi) = if under.is_root() {
            ("/memories/".to_owned(), "/memories0".to_owned())
        } else {
            below(under)
        };
        let root = self.root_param();
        // One snapshot for the count and the candidates.
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(backend)?;
        let scope = tx
            .prepare_cached(&self.inner.sql.search_scope)
            .await
            .map_err(backend)?;
        let searched = tx
            .query(&scope, &[&root, &lo, &hi])
            .await
            .map_err(backend)?
            .iter()
            .filter(|row| {
                self.stored_path(row.get(0))
                    .is_ok_and(|path| is_searchable(&path, under))
            })
            .count();
        let mut ranker = Ranker::new(query, searched);
        let stmt = tx
            .prepare_cached(&self.inner.sql.search)
            .await
            .map_err(backend)?;
        let tsq = tsquery(query.parsed());
        let portal = tx
            .bind(&stmt, &[&root, &lo, &hi, &tsq])
            .await
            .map_err(backend)?;
        loop {
            let rows = tx.query_portal(&portal, PAGE).await.map_err(backend)?;
            let last_page = rows.len() < PAGE as usize;
            for row in rows {
                let Ok(path) = self.stored_path(row.get(0)) else {
                    continue;
                };
                let contents: Vec<u8> = row.get(1);
                if let Some(text) = searchable_text(&contents) {
                    ranker.add(path, text);
                }
            }
            if last_page {
                break;
            }
        }
        tx.commit().await.map_err(backend)?;
        Ok(ranker.finish())
    }

    /// One `UPDATE` of the row's `modified` (content and version unchanged).
    async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        self.refuse_if_read_only(path)?;
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&self.inner.sql.set_modified)
            .await
            .map_err(backend)?;
        let changed = client
            .execute(&stmt, &[&self.root_param(), &path.as_str(), &modified])
            .await
            .map_err(backend)?;
        if changed == 0 {
            return Err(Error::NotFound { path: path.clone() });
        }
        Ok(true)
    }

    /// One path's rows of `history`, or those of every path below it.
    async fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.history_of(path).await
    }

    /// The revision's own content, or for the newest of a live file the file's row.
    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.revision_content(path, number).await
    }

    /// Written as an overwrite under the root's lock, recorded as `restored`.
    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.restore_content(path, number, contents).await
    }

    /// The rows' content and digest set to NULL, then `VACUUM (FULL)` (see the README).
    async fn redact_revisions(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.redact(path, which).await
    }
}
