//! [`PostgresPersistence`]: memory-store's versioned-store engine on PostgreSQL (feature
//! `stores`).

use std::collections::BTreeMap;
use std::fmt;

use deadpool_postgres::Pool;
use memory_core::options::StoreOptions;
use memory_store::{
    Actor, Memory, MemoryScan, MemoryVersion, Operation, Persistence, Result, Store, StoreError,
    StoreScan, Timestamp, Tx, VersionScan,
};
use tokio::runtime::Handle;
use tokio_postgres::types::ToSql;
use tokio_postgres::{IsolationLevel, Row};

use crate::config::Settings;
use crate::error::{PostgresOpenError, is_retryable};
use crate::schema::quoted;

/// The options a [`PostgresPersistence`] URL accepts: those of the memory-tool store but
/// `root` (the engine's stores are rows of their own).
pub const STORES_ACCEPTED_OPTIONS: &[&str] = &[
    "schema",
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "pool_size",
    "sync",
    "application_name",
];

/// memory-store's engine data (stores, memories, immutable versions) in a PostgreSQL schema,
/// for `memory_store::MemoryStores::new(persistence)`: several engines (several `memory
/// serve` instances, on several hosts) may share one schema.
///
/// Every write job runs in one `READ COMMITTED` transaction. Its first read of a store
/// ([`Tx::store`]) is `SELECT ... FOR UPDATE` on the store's row, so the writes to one store
/// are serialised across every process sharing the schema, as [`Persistence`] requires, and
/// the engine's rules that span rows of a store (its memory limit, the path-occupancy rule,
/// `content_sha256` preconditions) hold across instances; each statement after the lock sees
/// every write committed before it. Writes to different stores run side by side (and share
/// the server's WAL flushes). A job that fails, panics, or loses its connection commits
/// nothing. Read jobs run in a `REPEATABLE READ READ ONLY` transaction: one snapshot, no lock.
///
/// The [`Persistence`] methods block: the engine calls them on `tokio::task::spawn_blocking`
/// threads, where they drive the database calls on the runtime the persistence was opened on.
/// Do not call them from async code directly.
///
/// `Debug` and `Display` name host, port, database and schema, never the password.
pub struct PostgresPersistence {
    pool: Pool,
    settings: Settings,
    handle: Handle,
    quoted: String,
}

impl fmt::Debug for PostgresPersistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.settings;
        f.debug_struct("PostgresPersistence")
            .field("host", &s.host)
            .field("port", &s.port)
            .field("user", &s.user)
            .field("database", &s.database)
            .field("schema", &s.schema)
            .field("sync", &s.sync)
            .field("read_only", &s.read_only)
            .field("pool_size", &self.pool.status().max_size)
            .finish()
    }
}

impl fmt::Display for PostgresPersistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.settings;
        write!(
            f,
            "postgres://{}@{}:{}/{}?schema={}",
            s.user, s.host, s.port, s.database, s.schema
        )
    }
}

impl PostgresPersistence {
    /// Opens the engine's tables in the database at `url`
    /// (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, options as for
    /// [`PostgresStorage::from_url`](crate::PostgresStorage::from_url) but `root`; see
    /// [`STORES_ACCEPTED_OPTIONS`]), creating or migrating the schema under its advisory lock.
    ///
    /// Call it inside the tokio runtime the engine will run on: the blocking [`Persistence`]
    /// methods drive their database calls on it.
    ///
    /// # Errors
    /// A [`PostgresOpenError`] saying what to change; none contains the password.
    pub async fn from_url(
        url: &str,
        options: StoreOptions,
    ) -> std::result::Result<Self, PostgresOpenError> {
        Self::open(Settings::parse_accepting(
            url,
            options,
            STORES_ACCEPTED_OPTIONS,
        )?)
        .await
    }

    /// Opens the engine's existing tables at `url` (as [`from_url`](Self::from_url) reads
    /// it) so that nothing in the database changes: no advisory lock, no `CREATE`, no
    /// migration. The open checks that the database is UTF-8 and that the schema is at
    /// exactly this build's [`SCHEMA_VERSION`](crate::SCHEMA_VERSION); every session runs with
    /// `default_transaction_read_only = on`. Read jobs run as usual; every write job is
    /// refused before a statement is sent, with a non-retryable [`StoreError::Backend`]
    /// whose source is a [`ReadOnlyEngine`]. Whether a given store exists is the engine's
    /// question (`MemoryStores::retrieve_store`).
    ///
    /// # Errors
    /// As [`from_url`](Self::from_url), and [`PostgresOpenError::SchemaMissing`],
    /// [`PostgresOpenError::SchemaNeedsUpgrade`] or [`PostgresOpenError::SchemaTooNew`],
    /// each saying what to do.
    pub async fn from_url_read_only(
        url: &str,
        options: StoreOptions,
    ) -> std::result::Result<Self, PostgresOpenError> {
        Self::open(Settings::parse_accepting(url, options, STORES_ACCEPTED_OPTIONS)?.read_only())
            .await
    }

    async fn open(settings: Settings) -> std::result::Result<Self, PostgresOpenError> {
        let pool = crate::pool::connect(&settings, None).await?;
        tracing::debug!(
            host = %settings.host,
            port = settings.port,
            database = %settings.database,
            schema = %settings.schema,
            read_only = settings.read_only,
            "opened the PostgreSQL memory-stores engine tables"
        );
        Ok(PostgresPersistence {
            pool,
            handle: Handle::current(),
            quoted: quoted(&settings.schema),
            settings,
        })
    }

    /// The schema holding the tables.
    pub fn schema(&self) -> &str {
        &self.settings.schema
    }

    /// Whether the engine was opened with [`from_url_read_only`](Self::from_url_read_only).
    pub fn is_read_only(&self) -> bool {
        self.settings.read_only
    }

    fn run<T, F>(&self, write: bool, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        if write && self.settings.read_only {
            // Before any statement: a `READ WRITE` transaction would override the session's
            // read-only default.
            return Err(StoreError::Backend {
                retryable: false,
                source: Box::new(ReadOnlyEngine {
                    schema: self.settings.schema.clone(),
                }),
            });
        }
        let handle = &self.handle;
        let mut client = handle.block_on(self.pool.get()).map_err(pool_error)?;
        let tx = handle
            .block_on(
                client
                    .build_transaction()
                    .isolation_level(if write {
                        IsolationLevel::ReadCommitted
                    } else {
                        IsolationLevel::RepeatableRead
                    })
                    .read_only(!write)
                    .start(),
            )
            .map_err(db)?;
        let value = {
            let mut rows = PgTx {
                tx: &tx,
                handle,
                s: &self.quoted,
                schema: &self.settings.schema,
                write,
            };
            job(&mut rows)?
        };
        // A dropped transaction (an `Err` above, a panic) is rolled back.
        handle.block_on(tx.commit()).map_err(db)?;
        Ok(value)
    }
}

impl From<PostgresPersistence> for memory_store::AnyPersistence {
    fn from(p: PostgresPersistence) -> Self {
        memory_store::AnyPersistence::new(p)
    }
}

impl Persistence for PostgresPersistence {
    fn read<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        self.run(false, job)
    }

    fn write<T, F>(&self, job: F) -> Result<T>
    where
        F: FnOnce(&mut dyn Tx) -> Result<T>,
    {
        self.run(true, job)
    }
}

/// A write job asked of an engine opened read-only
/// ([`PostgresPersistence::from_url_read_only`]), refused before any statement is sent: the
/// source of the non-retryable [`StoreError::Backend`] it fails with (find it with
/// `downcast_ref`).
#[derive(Debug, thiserror::Error)]
#[error("the memory stores in schema {schema} were opened read-only: nothing can be changed")]
pub struct ReadOnlyEngine {
    /// The schema.
    pub schema: String,
}

fn db(e: tokio_postgres::Error) -> StoreError {
    StoreError::Backend {
        retryable: is_retryable(&e),
        source: Box::new(e),
    }
}

fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => db(e),
        other => StoreError::Backend {
            retryable: true,
            source: Box::new(other),
        },
    }
}

/// A row that breaks the engine's rules (edited by hand).
#[derive(Debug, thiserror::Error)]
#[error("schema {schema} holds a damaged row: {what}")]
struct BadRow {
    schema: String,
    what: String,
}

type Param = Box<dyn ToSql + Sync + Send>;

fn micros(t: Timestamp) -> i64 {
    t.as_micros()
}

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The discriminator, the id and (for a session) the API key that sent it, as stored.
fn actor_parts(actor: &Actor) -> (&'static str, &str, Option<&str>) {
    match actor {
        Actor::Session {
            session_id,
            api_key_id,
        } => ("session_actor", session_id, api_key_id.as_deref()),
        Actor::Api { api_key_id } => ("api_actor", api_key_id, None),
        Actor::User { user_id } => ("user_actor", user_id, None),
        Actor::ServiceAccount { service_account_id } => {
            ("service_account_actor", service_account_id, None)
        }
    }
}

/// The inverse of [`actor_parts`]; an unknown discriminator reads as no actor.
fn actor_from(kind: Option<String>, id: Option<String>, key: Option<String>) -> Option<Actor> {
    let (kind, id) = (kind?, id?);
    Some(match kind.as_str() {
        "session_actor" => Actor::Session {
            session_id: id,
            api_key_id: key,
        },
        "api_actor" => Actor::Api { api_key_id: id },
        "user_actor" => Actor::User { user_id: id },
        "service_account_actor" => Actor::ServiceAccount {
            service_account_id: id,
        },
        _ => return None,
    })
}

struct PgTx<'a> {
    tx: &'a deadpool_postgres::Transaction<'a>,
    handle: &'a Handle,
    /// The quoted schema name.
    s: &'a str,
    schema: &'a str,
    /// A write job: reading a store locks its row.
    write: bool,
}

const STORE_COLS: &str =
    "id, name, description, metadata, created_at, updated_at, archived_at, workspace_id";
const MEMORY_COLS: &str = "id, store_id, path, content_sha256, content_size_bytes, \
     memory_version_id, created_at, updated_at";
const VERSION_COLS: &str = "id, store_id, memory_id, operation, created_at, created_by_type, \
     created_by_id, path, content_sha256, content_size_bytes, redacted_at, redacted_by_type, \
     redacted_by_id, created_by_key_id, redacted_by_key_id";

impl PgTx<'_> {
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        self.handle
            .block_on(async {
                let stmt = self.tx.prepare_cached(sql).await?;
                self.tx.query(&stmt, params).await
            })
            .map_err(db)
    }

    fn query_boxed(&self, sql: &str, params: &[Param]) -> Result<Vec<Row>> {
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        self.query(sql, &refs)
    }

    fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        self.handle
            .block_on(async {
                let stmt = self.tx.prepare_cached(sql).await?;
                self.tx.execute(&stmt, params).await
            })
            .map_err(db)
    }

    fn bad(&self, what: impl Into<String>) -> StoreError {
        StoreError::Backend {
            retryable: false,
            source: Box::new(BadRow {
                schema: self.schema.to_owned(),
                what: what.into(),
            }),
        }
    }

    fn text(&self, bytes: Vec<u8>, what: &str) -> Result<String> {
        String::from_utf8(bytes).map_err(|_| self.bad(format!("{what} is not UTF-8")))
    }

    fn store_row(&self, r: &Row) -> Result<Store> {
        let id: String = r.get(0);
        let metadata: String = r.get(3);
        let metadata: BTreeMap<String, String> = serde_json::from_str(&metadata)
            .map_err(|_| self.bad(format!("store {id} has unreadable metadata")))?;
        Ok(Store {
            name: r.get(1),
            description: self.text(r.get(2), &format!("store {id}'s description"))?,
            metadata,
            created_at: Timestamp::from_micros(r.get(4)),
            updated_at: Timestamp::from_micros(r.get(5)),
            archived_at: r.get::<_, Option<i64>>(6).map(Timestamp::from_micros),
            workspace_id: Some(r.get::<_, String>(7)).filter(|w| !w.is_empty()),
            id,
        })
    }

    fn memory_row(&self, r: &Row, with_content: bool) -> Result<Memory> {
        let id: String = r.get(0);
        let content = if with_content {
            Some(self.text(r.get(8), &format!("memory {id}'s content"))?)
        } else {
            None
        };
        Ok(Memory {
            memory_store_id: r.get(1),
            path: r.get(2),
            content_sha256: r.get(3),
            content_size_bytes: u64::try_from(r.get::<_, i64>(4)).unwrap_or(0),
            memory_version_id: r.get(5),
            created_at: Timestamp::from_micros(r.get(6)),
            updated_at: Timestamp::from_micros(r.get(7)),
            content,
            id,
        })
    }

    fn version_row(&self, r: &Row, with_content: bool) -> Result<MemoryVersion> {
        let id: String = r.get(0);
        let op: String = r.get(3);
        let Some(operation) = Operation::parse(&op) else {
            return Err(self.bad(format!("version {id} has operation {op:?}")));
        };
        let content = if with_content {
            r.get::<_, Option<Vec<u8>>>(15)
                .map(|c| self.text(c, &format!("version {id}'s content")))
                .transpose()?
        } else {
            None
        };
        Ok(MemoryVersion {
            memory_store_id: r.get(1),
            memory_id: r.get(2),
            operation,
            created_at: Timestamp::from_micros(r.get(4)),
            created_by: actor_from(r.get(5), r.get(6), r.get(13)),
            path: r.get(7),
            content_sha256: r.get(8),
            content_size_bytes: r
                .get::<_, Option<i64>>(9)
                .and_then(|n| u64::try_from(n).ok()),
            redacted_at: r.get::<_, Option<i64>>(10).map(Timestamp::from_micros),
            redacted_by: actor_from(r.get(11), r.get(12), r.get(14)),
            content,
            id,
        })
    }
}

impl Tx for PgTx<'_> {
    fn store(&mut self, id: &str) -> Result<Option<Store>> {
        // In a write job, the writers of this store (in every process) take their turn here;
        // the row lock ends with the commit or the rollback.
        let lock = if self.write { " FOR UPDATE" } else { "" };
        let sql = format!(
            "SELECT {STORE_COLS} FROM {}.stores WHERE id = $1{lock}",
            self.s
        );
        self.query(&sql, &[&id])?
            .first()
            .map(|r| self.store_row(r))
            .transpose()
    }

    fn put_store(&mut self, store: &Store) -> Result<()> {
        let metadata =
            serde_json::to_string(&store.metadata).map_err(|e| self.bad(e.to_string()))?;
        let sql = format!(
            "INSERT INTO {}.stores ({STORE_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name,
                 description = excluded.description, metadata = excluded.metadata,
                 created_at = excluded.created_at, updated_at = excluded.updated_at,
                 archived_at = excluded.archived_at, workspace_id = excluded.workspace_id",
            self.s
        );
        self.execute(
            &sql,
            &[
                &store.id,
                &store.name,
                &store.description.as_bytes(),
                &metadata,
                &micros(store.created_at),
                &micros(store.updated_at),
                &store.archived_at.map(micros),
                &store.workspace_id.as_deref().unwrap_or(""),
            ],
        )?;
        Ok(())
    }

    fn delete_store(&mut self, id: &str) -> Result<bool> {
        let n = self.execute(
            &format!("DELETE FROM {}.stores WHERE id = $1", self.s),
            &[&id],
        )?;
        for table in ["memories", "memory_versions"] {
            self.execute(
                &format!("DELETE FROM {}.{table} WHERE store_id = $1", self.s),
                &[&id],
            )?;
        }
        Ok(n > 0)
    }

    fn stores(&mut self, scan: &StoreScan) -> Result<Vec<Store>> {
        let mut sql = format!(
            "SELECT {STORE_COLS} FROM {}.stores WHERE workspace_id = $1",
            self.s
        );
        let mut params: Vec<Param> = vec![Box::new(scan.workspace.clone().unwrap_or_default())];
        if let Some(t) = scan.created_at_gte {
            params.push(Box::new(micros(t)));
            sql += &format!(" AND created_at >= ${}", params.len());
        }
        if let Some(t) = scan.created_at_lte {
            params.push(Box::new(micros(t)));
            sql += &format!(" AND created_at <= ${}", params.len());
        }
        if !scan.include_archived {
            sql += " AND archived_at IS NULL";
        }
        if let Some((t, id)) = &scan.after {
            params.push(Box::new(micros(*t)));
            params.push(Box::new(id.clone()));
            let (a, b) = (params.len() - 1, params.len());
            sql += &format!(" AND (created_at < ${a} OR (created_at = ${a} AND id < ${b}))");
        }
        params.push(Box::new(limit(scan.limit)));
        sql += &format!(" ORDER BY created_at DESC, id DESC LIMIT ${}", params.len());
        self.query_boxed(&sql, &params)?
            .iter()
            .map(|r| self.store_row(r))
            .collect()
    }

    fn memory(&mut self, store_id: &str, id: &str) -> Result<Option<Memory>> {
        let sql = format!(
            "SELECT {MEMORY_COLS}, content FROM {}.memories WHERE store_id = $1 AND id = $2",
            self.s
        );
        self.query(&sql, &[&store_id, &id])?
            .first()
            .map(|r| self.memory_row(r, true))
            .transpose()
    }

    fn memory_at(&mut self, store_id: &str, path: &str) -> Result<Option<Memory>> {
        let sql = format!(
            "SELECT {MEMORY_COLS}, content FROM {}.memories WHERE store_id = $1 AND path = $2",
            self.s
        );
        self.query(&sql, &[&store_id, &path])?
            .first()
            .map(|r| self.memory_row(r, true))
            .transpose()
    }

    fn memories(&mut self, store_id: &str, scan: &MemoryScan) -> Result<Vec<Memory>> {
        let content = if scan.with_content { ", content" } else { "" };
        let op = if scan.lower_inclusive { ">=" } else { ">" };
        let sql = format!(
            "SELECT {MEMORY_COLS}{content} FROM {}.memories WHERE store_id = $1 AND path {op} $2
             AND path < $3 ORDER BY path LIMIT $4",
            self.s
        );
        self.query(
            &sql,
            &[&store_id, &scan.lower, &scan.upper, &limit(scan.limit)],
        )?
        .iter()
        .map(|r| self.memory_row(r, scan.with_content))
        .collect()
    }

    fn count_memories(&mut self, store_id: &str) -> Result<u64> {
        let sql = format!(
            "SELECT count(*) FROM {}.memories WHERE store_id = $1",
            self.s
        );
        let rows = self.query(&sql, &[&store_id])?;
        let n: i64 = rows.first().map_or(0, |r| r.get(0));
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn put_memory(&mut self, m: &Memory) -> Result<()> {
        let Some(content) = &m.content else {
            return Err(self.bad(format!("memory {} written without content", m.id)));
        };
        let sql = format!(
            "INSERT INTO {}.memories ({MEMORY_COLS}, content)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (store_id, id) DO UPDATE SET path = excluded.path,
                 content_sha256 = excluded.content_sha256,
                 content_size_bytes = excluded.content_size_bytes,
                 memory_version_id = excluded.memory_version_id,
                 created_at = excluded.created_at, updated_at = excluded.updated_at,
                 content = excluded.content",
            self.s
        );
        self.execute(
            &sql,
            &[
                &m.id,
                &m.memory_store_id,
                &m.path,
                &m.content_sha256,
                &count(m.content_size_bytes),
                &m.memory_version_id,
                &micros(m.created_at),
                &micros(m.updated_at),
                &content.as_bytes(),
            ],
        )?;
        Ok(())
    }

    fn delete_memory(&mut self, store_id: &str, id: &str) -> Result<()> {
        let sql = format!(
            "DELETE FROM {}.memories WHERE store_id = $1 AND id = $2",
            self.s
        );
        self.execute(&sql, &[&store_id, &id])?;
        Ok(())
    }

    fn version(&mut self, store_id: &str, id: &str) -> Result<Option<MemoryVersion>> {
        let sql = format!(
            "SELECT {VERSION_COLS}, content FROM {}.memory_versions WHERE store_id = $1 AND id = $2",
            self.s
        );
        self.query(&sql, &[&store_id, &id])?
            .first()
            .map(|r| self.version_row(r, true))
            .transpose()
    }

    fn put_version(&mut self, v: &MemoryVersion) -> Result<()> {
        let by = v.created_by.as_ref().map(actor_parts);
        let red = v.redacted_by.as_ref().map(actor_parts);
        let sql = format!(
            "INSERT INTO {}.memory_versions ({VERSION_COLS}, content) VALUES
                 ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
             ON CONFLICT (store_id, id) DO UPDATE SET memory_id = excluded.memory_id,
                 operation = excluded.operation, created_at = excluded.created_at,
                 created_by_type = excluded.created_by_type,
                 created_by_id = excluded.created_by_id, path = excluded.path,
                 content_sha256 = excluded.content_sha256,
                 content_size_bytes = excluded.content_size_bytes,
                 redacted_at = excluded.redacted_at,
                 redacted_by_type = excluded.redacted_by_type,
                 redacted_by_id = excluded.redacted_by_id,
                 created_by_key_id = excluded.created_by_key_id,
                 redacted_by_key_id = excluded.redacted_by_key_id,
                 content = excluded.content",
            self.s
        );
        self.execute(
            &sql,
            &[
                &v.id,
                &v.memory_store_id,
                &v.memory_id,
                &v.operation.as_str(),
                &micros(v.created_at),
                &by.map(|p| p.0),
                &by.map(|p| p.1),
                &v.path,
                &v.content_sha256,
                &v.content_size_bytes.map(count),
                &v.redacted_at.map(micros),
                &red.map(|p| p.0),
                &red.map(|p| p.1),
                &by.and_then(|p| p.2),
                &red.and_then(|p| p.2),
                &v.content.as_deref().map(str::as_bytes),
            ],
        )?;
        Ok(())
    }

    fn versions(&mut self, store_id: &str, scan: &VersionScan) -> Result<Vec<MemoryVersion>> {
        let content = if scan.with_content { ", content" } else { "" };
        let mut sql = format!(
            "SELECT {VERSION_COLS}{content} FROM {}.memory_versions WHERE store_id = $1",
            self.s
        );
        let mut params: Vec<Param> = vec![Box::new(store_id.to_owned())];
        if let Some(m) = &scan.memory_id {
            params.push(Box::new(m.clone()));
            sql += &format!(" AND memory_id = ${}", params.len());
        }
        if let Some(op) = scan.operation {
            params.push(Box::new(op.as_str()));
            sql += &format!(" AND operation = ${}", params.len());
        }
        for (kind, id) in &scan.created_by {
            params.push(Box::new(*kind));
            params.push(Box::new(id.clone()));
            let (k, i) = (params.len() - 1, params.len());
            if *kind == "api_actor" {
                // A key's writes include the sessions' writes it sent.
                sql += &format!(
                    " AND ((created_by_type = ${k} AND created_by_id = ${i}) OR created_by_key_id = ${i})"
                );
            } else {
                sql += &format!(" AND created_by_type = ${k} AND created_by_id = ${i}");
            }
        }
        if let Some(t) = scan.created_at_gte {
            params.push(Box::new(micros(t)));
            sql += &format!(" AND created_at >= ${}", params.len());
        }
        if let Some(t) = scan.created_at_lte {
            params.push(Box::new(micros(t)));
            sql += &format!(" AND created_at <= ${}", params.len());
        }
        if let Some((t, id)) = &scan.after {
            params.push(Box::new(micros(*t)));
            params.push(Box::new(id.clone()));
            let (a, b) = (params.len() - 1, params.len());
            sql += &format!(" AND (created_at < ${a} OR (created_at = ${a} AND id < ${b}))");
        }
        params.push(Box::new(limit(scan.limit)));
        sql += &format!(" ORDER BY created_at DESC, id DESC LIMIT ${}", params.len());
        self.query_boxed(&sql, &params)?
            .iter()
            .map(|r| self.version_row(r, scan.with_content))
            .collect()
    }
}
