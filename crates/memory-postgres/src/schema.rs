//! The tables, and the forward-only migrations that create them.
//!
//! Every migration is one SQL script, numbered from 1; the `schema_migrations` table records
//! the ones applied. Opening a store takes a transaction-scoped advisory lock keyed by the
//! schema name, so that processes opening the same schema at once apply each migration once
//! and none sees a half-made schema; a schema whose newest recorded migration is newer than
//! this build knows is refused.
//!
//! A read-only open ([`check_read_only`]) takes no lock and runs no DDL: it only checks that
//! the schema is already at exactly this build's version.

use tokio_postgres::Client;

use crate::error::PostgresOpenError;

/// The migrations, in order: `MIGRATIONS[i]` takes the schema to version `i + 1`. `{s}` is the
/// quoted schema name. Published migrations are never edited, only appended to.
const MIGRATIONS: &[&str] = &[
    // 1: roots, files and the version sequence.
    r#"
    CREATE TABLE {s}.roots (
        root text COLLATE "C" PRIMARY KEY,
        created timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE {s}.files (
        root text COLLATE "C" NOT NULL REFERENCES {s}.roots (root) ON DELETE CASCADE,
        path text COLLATE "C" NOT NULL,
        contents bytea NOT NULL,
        size bigint NOT NULL,
        version bigint NOT NULL,
        modified timestamptz NOT NULL,
        PRIMARY KEY (root, path)
    );
    CREATE SEQUENCE {s}.versions AS bigint;
    "#,
    // 2: the versioned memory stores (memory-store's engine, feature `stores`): stores,
    // memories (one path per store, byte order) and their immutable versions. Times are
    // microseconds since the Unix epoch, as the engine keeps them; texts that may hold any
    // character (content, descriptions) are UTF-8 bytes.
    r#"
    CREATE TABLE {s}.stores (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL,
        description bytea NOT NULL,
        metadata text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        archived_at bigint
    );
    CREATE INDEX stores_by_created ON {s}.stores (created_at, id);
    CREATE TABLE {s}.memories (
        store_id text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        path text COLLATE "C" NOT NULL,
        content bytea NOT NULL,
        content_sha256 text NOT NULL,
        content_size_bytes bigint NOT NULL,
        memory_version_id text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (store_id, id),
        UNIQUE (store_id, path)
    );
    CREATE TABLE {s}.memory_versions (
        store_id text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        operation text NOT NULL,
        created_at bigint NOT NULL,
        created_by_type text,
        created_by_id text,
        created_by_key_id text,
        path text COLLATE "C",
        content bytea,
        content_sha256 text,
        content_size_bytes bigint,
        redacted_at bigint,
        redacted_by_type text,
        redacted_by_id text,
        redacted_by_key_id text,
        PRIMARY KEY (store_id, id)
    );
    CREATE INDEX memory_versions_by_created ON {s}.memory_versions (store_id, created_at, id);
    CREATE INDEX memory_versions_by_memory ON {s}.memory_versions (store_id, memory_id, created_at, id);
    "#,
    // 3: keyword search. `words` is the file's words as memory-core's tokenizer folds them,
    // written by the library in the statement of each write (an empty tsvector for content
    // that is not UTF-8), under a GIN index. NULL means "not indexed yet": rows from before
    // this migration, and rows another program inserted or rewrote (the trigger clears the
    // words of a content change that does not set them); a search indexes those first.
    r#"
    ALTER TABLE {s}.files ADD COLUMN words tsvector;
    CREATE INDEX files_words ON {s}.files USING gin (words);
    CREATE INDEX files_unindexed ON {s}.files (root) WHERE words IS NULL;
    CREATE FUNCTION {s}.files_words_stale() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.words IS NOT DISTINCT FROM OLD.words
           AND NEW.contents IS DISTINCT FROM OLD.contents THEN
            NEW.words := NULL;
        END IF;
        RETURN NEW;
    END;
    $$;
    CREATE TRIGGER files_words_stale BEFORE UPDATE OF contents ON {s}.files
        FOR EACH ROW EXECUTE FUNCTION {s}.files_words_stale();
    "#,
    // 4: the workspace each versioned store belongs to ('' for the default workspace, where
    // every store made before workspaces were kept apart stays).
    r#"
    ALTER TABLE {s}.stores ADD COLUMN workspace_id text COLLATE "C" NOT NULL DEFAULT '';
    CREATE INDEX stores_by_workspace ON {s}.stores (workspace_id, created_at, id);
    "#,
    // 5: each file's earlier versions (memory-core's `history`): one row per revision, keyed
    // by the path whose history it is now (a rename moves rows), numbered from 1 per path.
    // `at_path` is where the change was made; `version` the files row the revision is (NULL
    // for a deletion); `contents` the revision's bytes, NULL for the newest revision of a
    // live file (its content is the file's row), a deletion and a redacted revision. Not a
    // table the files' listings, count or search read.
    r#"
    CREATE TABLE {s}.history (
        root text COLLATE "C" NOT NULL REFERENCES {s}.roots (root) ON DELETE CASCADE,
        path text COLLATE "C" NOT NULL,
        number bigint NOT NULL,
        change text NOT NULL
            CHECK (change IN ('created', 'modified', 'renamed', 'deleted', 'restored')),
        at_path text COLLATE "C" NOT NULL,
        old_path text COLLATE "C",
        time timestamptz NOT NULL,
        size bigint NOT NULL,
        sha256 text,
        session text,
        redacted boolean NOT NULL DEFAULT false,
        version bigint,
        contents bytea,
        PRIMARY KEY (root, path, number)
    );
    "#,
];

/// The schema version this build writes: the number of migrations it knows.
pub(crate) const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// The first half of the advisory lock key (`pg_advisory_xact_lock(int, int)`): "MMPG" in
/// ASCII, so the lock does not collide with other applications' locks on the schema's hash.
const LOCK_CLASS: i32 = 0x4d4d_5047;

/// The schema name, quoted for SQL. Names are checked (`config::valid_schema`) to be plain
/// lowercase identifiers, so quoting changes nothing but keyword clashes.
pub(crate) fn quoted(schema: &str) -> String {
    format!("\"{schema}\"")
}

/// Why `prepare` failed: a refusal, or a query error (mapped with host and port by the caller).
pub(crate) enum PrepareError {
    Refused(PostgresOpenError),
    Query(tokio_postgres::Error),
}

impl From<tokio_postgres::Error> for PrepareError {
    fn from(e: tokio_postgres::Error) -> Self {
        PrepareError::Query(e)
    }
}

/// Refuses a database that is not UTF-8.
async fn check_encoding(client: &Client, database: &str) -> Result<(), PrepareError> {
    let encoding: String = client
        .query_one("SELECT pg_encoding_to_char(encoding)::text FROM pg_database WHERE datname = current_database()", &[])
        .await?
        .get(0);
    if encoding != "UTF8" {
        return Err(PrepareError::Refused(PostgresOpenError::NotUtf8 {
            database: database.to_owned(),
            encoding,
        }));
    }
    Ok(())
}

/// The read-only open's check, which writes nothing and takes no lock: the database is UTF-8,
/// `schema` exists at exactly [`SCHEMA_VERSION`] (a missing, foreign, older or newer schema is
/// refused, saying what to do), and `root`, if given, has its row. Every query only reads
/// (and the session is `default_transaction_read_only`, so none could write).
pub(crate) async fn check_read_only(
    client: &Client,
    database: &str,
    schema: &str,
    root: Option<&str>,
) -> Result<(), PrepareError> {
    check_encoding(client, database).await?;
    let s = quoted(schema);
    let found = match what_is_there(client, schema).await? {
        Found::Missing => {
            return Err(PrepareError::Refused(PostgresOpenError::SchemaMissing {
                schema: schema.to_owned(),
                database: database.to_owned(),
            }));
        }
        Found::Empty => 0,
        Found::Version(version) => version,
    };
    refuse_newer(schema, found)?;
    if found < SCHEMA_VERSION {
        return Err(PrepareError::Refused(
            PostgresOpenError::SchemaNeedsUpgrade {
                schema: schema.to_owned(),
                found,
                supported: SCHEMA_VERSION,
            },
        ));
    }
    if let Some(root) = root {
        let known = client
            .query_opt(
                &format!("SELECT 1 FROM {s}.roots WHERE root = $1"),
                &[&root],
            )
            .await?
            .is_some();
        if !known {
            return Err(PrepareError::Refused(PostgresOpenError::RootMissing {
                schema: schema.to_owned(),
                root: root.to_owned(),
            }));
        }
    }
    Ok(())
}

/// What an open finds at `schema` (a schema holding other tables and no migrations table is
/// refused here, as `ForeignSchema`).
enum Found {
    /// No schema of that name.
    Missing,
    /// The schema, empty: made for this store by an operator, nothing applied yet.
    Empty,
    /// This crate's schema, at the highest version its migrations table records.
    Version(i32),
}

async fn what_is_there<C: tokio_postgres::GenericClient>(
    client: &C,
    schema: &str,
) -> Result<Found, PrepareError> {
    let exists = client
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
        .await?
        .is_some();
    if !exists {
        return Ok(Found::Missing);
    }
    let has_table = client
        .query_opt(
            "SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'schema_migrations'",
            &[&schema],
        )
        .await?
        .is_some();
    if has_table {
        let s = quoted(schema);
        let version: i32 = client
            .query_one(
                &format!("SELECT coalesce(max(version), 0) FROM {s}.schema_migrations"),
                &[],
            )
            .await?
            .get(0);
        return Ok(Found::Version(version));
    }
    match foreign_tables(client, schema).await? {
        Some(tables) => Err(PrepareError::Refused(PostgresOpenError::ForeignSchema {
            schema: schema.to_owned(),
            tables,
        })),
        None => Ok(Found::Empty),
    }
}

/// A schema a newer release migrated is never opened: this one cannot know its rules.
fn refuse_newer(schema: &str, found: i32) -> Result<(), PrepareError> {
    if found > SCHEMA_VERSION {
        return Err(PrepareError::Refused(PostgresOpenError::SchemaTooNew {
            schema: schema.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        }));
    }
    Ok(())
}

/// The table that records which migrations `s` (quoted) has had.
fn create_migrations_table(s: &str) -> String {
    format!(
        "CREATE TABLE {s}.schema_migrations (
             version integer PRIMARY KEY,
             applied timestamptz NOT NULL DEFAULT now()
         )"
    )
}

/// Some of the tables (and other relations) in `schema`, joined, when it holds any.
async fn foreign_tables<C: tokio_postgres::GenericClient>(
    client: &C,
    schema: &str,
) -> Result<Option<String>, PrepareError> {
    let rows = client
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
             ORDER BY c.relname LIMIT 5",
            &[&schema],
        )
        .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let tables: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    Ok(Some(tables.join(", ")))
}

/// Checks the database, creates or migrates `schema` under the advisory lock, and makes sure
/// `root`, if given, has its row (an empty store of its own).
pub(crate) async fn prepare(
    client: &mut Client,
    database: &str,
    schema: &str,
    root: Option<&str>,
) -> Result<(), PrepareError> {
    check_encoding(client, database).await?;
    let s = quoted(schema);
    let tx = client.transaction().await?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext($2))",
        &[&LOCK_CLASS, &schema],
    )
    .await?;
    let found = match what_is_there(&tx, schema).await? {
        Found::Missing => {
            tx.batch_execute(&format!("CREATE SCHEMA {s}")).await?;
            tx.batch_execute(&create_migrations_table(&s)).await?;
            0
        }
        // An empty schema made by an operator for us.
        Found::Empty => {
            tx.batch_execute(&create_migrations_table(&s)).await?;
            0
        }
        Found::Version(version) => version,
    };
    refuse_newer(schema, found)?;
    for (at, script) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let version = at as i32 + 1;
        tx.batch_execute(&script.replace("{s}", &s)).await?;
        tx.execute(
            &format!("INSERT INTO {s}.schema_migrations (version) VALUES ($1)"),
            &[&version],
        )
        .await?;
        tracing::info!(schema, version, "applied memory-postgres migration");
    }
    if let Some(root) = root {
        tx.execute(
            &format!("INSERT INTO {s}.roots (root) VALUES ($1) ON CONFLICT (root) DO NOTHING"),
            &[&root],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}
