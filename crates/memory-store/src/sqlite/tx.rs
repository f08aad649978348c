//! The [`Tx`] of [`SqlitePersistence`](super::SqlitePersistence): the rows of stores, memories and
//! versions read and written in one SQLite transaction.

use rusqlite::types::Value;
use rusqlite::{Row, params};

use super::Ctx;
use crate::Timestamp;
use crate::error::{Result, SqliteError, StoreError};
use crate::model::{Actor, Memory, MemoryVersion, Operation, Store};
use crate::persist::{MemoryScan, StoreScan, Tx, VersionScan};

/// One open transaction, and the database it is on (for error messages).
pub(super) struct SqliteTx<'a> {
    pub(super) tx: &'a rusqlite::Transaction<'a>,
    pub(super) ctx: Ctx<'a>,
}

const STORE_COLS: &str =
    "id, name, description, metadata, created_at, updated_at, archived_at, workspace_id";
const MEMORY_COLS: &str = "id, store_id, path, content_sha256, content_size_bytes, \
     memory_version_id, created_at, updated_at";
const VERSION_COLS: &str = "id, store_id, memory_id, operation, created_at, created_by_type, \
     created_by_id, path, content_sha256, content_size_bytes, redacted_at, redacted_by_type, \
     redacted_by_id, created_by_key_id, redacted_by_key_id";

fn size(v: Option<i64>) -> Option<u64> {
    v.and_then(|v| u64::try_from(v).ok())
}

fn actor(kind: Option<String>, id: Option<String>, key: Option<String>) -> Option<Actor> {
    Actor::from_parts(&kind?, id?, key)
}

/// The API key stored beside a session actor (`None` for every other actor).
fn session_key(actor: Option<&Actor>) -> Option<&str> {
    match actor {
        Some(a @ Actor::Session { .. }) => a.api_key_id(),
        _ => None,
    }
}

impl SqliteTx<'_> {
    fn store_row(&self, r: &Row<'_>) -> rusqlite::Result<Result<Store, SqliteError>> {
        let metadata: String = r.get(3)?;
        let id: String = r.get(0)?;
        Ok(match serde_json::from_str(&metadata) {
            Ok(metadata) => Ok(Store {
                id,
                name: r.get(1)?,
                description: r.get(2)?,
                metadata,
                created_at: Timestamp::from_micros(r.get(4)?),
                updated_at: Timestamp::from_micros(r.get(5)?),
                archived_at: r.get::<_, Option<i64>>(6)?.map(Timestamp::from_micros),
                workspace_id: Some(r.get::<_, String>(7)?).filter(|w| !w.is_empty()),
            }),
            Err(_) => Err(self.ctx.bad(format!("store {id} has unreadable metadata"))),
        })
    }

    fn query<T>(
        &self,
        sql: &str,
        args: &[Value],
        map: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, SqliteError> {
        let mut stmt = self.tx.prepare_cached(sql).map_err(|e| self.ctx.err(e))?;
        stmt.query_map(rusqlite::params_from_iter(args.iter()), map)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.ctx.err(e))
    }
}

fn memory_row(r: &Row<'_>, with_content: bool) -> rusqlite::Result<Memory> {
    Ok(Memory {
        id: r.get(0)?,
        memory_store_id: r.get(1)?,
        path: r.get(2)?,
        content_sha256: r.get(3)?,
        content_size_bytes: size(r.get(4)?).unwrap_or(0),
        memory_version_id: r.get(5)?,
        created_at: Timestamp::from_micros(r.get(6)?),
        updated_at: Timestamp::from_micros(r.get(7)?),
        content: if with_content { Some(r.get(8)?) } else { None },
    })
}

fn version_row(r: &Row<'_>, with_content: bool) -> rusqlite::Result<Result<MemoryVersion, String>> {
    let id: String = r.get(0)?;
    let op: String = r.get(3)?;
    let Some(operation) = Operation::parse(&op) else {
        return Ok(Err(format!("version {id} has operation {op:?}")));
    };
    Ok(Ok(MemoryVersion {
        memory_store_id: r.get(1)?,
        memory_id: r.get(2)?,
        operation,
        created_at: Timestamp::from_micros(r.get(4)?),
        created_by: actor(r.get(5)?, r.get(6)?, r.get(13)?),
        path: r.get(7)?,
        content_sha256: r.get(8)?,
        content_size_bytes: size(r.get(9)?),
        redacted_at: r.get::<_, Option<i64>>(10)?.map(Timestamp::from_micros),
        redacted_by: actor(r.get(11)?, r.get(12)?, r.get(14)?),
        content: if with_content { r.get(15)? } else { None },
        id,
    }))
}

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

impl Tx for SqliteTx<'_> {
    fn store(&mut self, id: &str) -> Result<Option<Store>> {
        let sql = format!("SELECT {STORE_COLS} FROM stores WHERE id = ?1");
        let rows = self.query(&sql, &[text(id)], |r| self.store_row(r))?;
        Ok(rows.into_iter().next().transpose()?)
    }

    fn put_store(&mut self, s: &Store) -> Result<()> {
        let metadata = serde_json::to_string(&s.metadata)
            .map_err(|e| StoreError::from(self.ctx.bad(e.to_string())))?;
        self.tx
            .execute(
                &format!("INSERT OR REPLACE INTO stores ({STORE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
                params![
                    s.id,
                    s.name,
                    s.description,
                    metadata,
                    s.created_at.as_micros(),
                    s.updated_at.as_micros(),
                    s.archived_at.map(Timestamp::as_micros),
                    s.workspace_id.as_deref().unwrap_or("")
                ],
            )
            .map_err(|e| self.ctx.err(e))?;
        Ok(())
    }

    fn delete_store(&mut self, id: &str) -> Result<bool> {
        let n = self
            .tx
            .execute("DELETE FROM stores WHERE id = ?1", [id])
            .map_err(|e| self.ctx.err(e))?;
        for table in ["memories", "versions"] {
            self.tx
                .execute(&format!("DELETE FROM {table} WHERE store_id = ?1"), [id])
                .map_err(|e| self.ctx.err(e))?;
        }
        Ok(n > 0)
    }

    fn stores(&mut self, scan: &StoreScan) -> Result<Vec<Store>> {
        let mut args = vec![text(scan.workspace.as_deref().unwrap_or(""))];
        let mut sql = format!("SELECT {STORE_COLS} FROM stores WHERE workspace_id = ?1");
        if let Some(t) = scan.created_at_gte {
            args.push(Value::Integer(t.as_micros()));
            sql += &format!(" AND created_at >= ?{}", args.len());
        }
        if let Some(t) = scan.created_at_lte {
            args.push(Value::Integer(t.as_micros()));
            sql += &format!(" AND created_at <= ?{}", args.len());
        }
        if !scan.include_archived {
            sql += " AND archived_at IS NULL";
        }
        if let Some((t, id)) = &scan.after {
            args.push(Value::Integer(t.as_micros()));
            args.push(text(id));
            let (a, b) = (args.len() - 1, args.len());
            sql += &format!(" AND (created_at < ?{a} OR (created_at = ?{a} AND id < ?{b}))");
        }
        args.push(Value::Integer(
            i64::try_from(scan.limit).unwrap_or(i64::MAX),
        ));
        sql += &format!(" ORDER BY created_at DESC, id DESC LIMIT ?{}", args.len());
        let rows = self.query(&sql, &args, |r| self.store_row(r))?;
        Ok(rows.into_iter().collect::<Result<_, _>>()?)
    }

    fn memory(&mut self, store_id: &str, id: &str) -> Result<Option<Memory>> {
        let sql =
            format!("SELECT {MEMORY_COLS}, content FROM memories WHERE store_id = ?1 AND id = ?2");
        let rows = self.query(&sql, &[text(store_id), text(id)], |r| memory_row(r, true))?;
        Ok(rows.into_iter().next())
    }

    fn memory_at(&mut self, store_id: &str, path: &str) -> Result<Option<Memory>> {
        let sql = format!(
            "SELECT {MEMORY_COLS}, content FROM memories WHERE store_id = ?1 AND path = ?2"
        );
        let rows = self.query(&sql, &[text(store_id), text(path)], |r| memory_row(r, true))?;
        Ok(rows.into_iter().next())
    }

    fn memories(&mut self, store_id: &str, scan: &MemoryScan) -> Result<Vec<Memory>> {
        let content = if scan.with_content { ", content" } else { "" };
        let op = if scan.lower_inclusive { ">=" } else { ">" };
        let sql = format!(
            "SELECT {MEMORY_COLS}{content} FROM memories WHERE store_id = ?1 AND path {op} ?2 \
             AND path < ?3 ORDER BY path LIMIT ?4"
        );
        let args = [
            text(store_id),
            text(&scan.lower),
            text(&scan.upper),
            Value::Integer(i64::try_from(scan.limit).unwrap_or(i64::MAX)),
        ];
        Ok(self.query(&sql, &args, |r| memory_row(r, scan.with_content))?)
    }

    fn count_memories(&mut self, store_id: &str) -> Result<u64> {
        let n: i64 = self
            .tx
            .query_row(
                "SELECT count(*) FROM memories WHERE store_id = ?1",
                [store_id],
                |r| r.get(0),
            )
            .map_err(|e| self.ctx.err(e))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn put_memory(&mut self, m: &Memory) -> Result<()> {
        let Some(content) = &m.content else {
            return Err(self
                .ctx
                .bad(format!("memory {} written without content", m.id))
                .into());
        };
        self.tx
            .execute(
                &format!(
                    "INSERT OR REPLACE INTO memories ({MEMORY_COLS}, content) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                ),
                params![
                    m.id,
                    m.memory_store_id,
                    m.path,
                    m.content_sha256,
                    i64::try_from(m.content_size_bytes).unwrap_or(i64::MAX),
                    m.memory_version_id,
                    m.created_at.as_micros(),
                    m.updated_at.as_micros(),
                    content
                ],
            )
            .map_err(|e| self.ctx.err(e))?;
        Ok(())
    }

    fn delete_memory(&mut self, store_id: &str, id: &str) -> Result<()> {
        self.tx
            .execute(
                "DELETE FROM memories WHERE store_id = ?1 AND id = ?2",
                [store_id, id],
            )
            .map_err(|e| self.ctx.err(e))?;
        Ok(())
    }

    fn version(&mut self, store_id: &str, id: &str) -> Result<Option<MemoryVersion>> {
        let sql =
            format!("SELECT {VERSION_COLS}, content FROM versions WHERE store_id = ?1 AND id = ?2");
        let rows = self.query(&sql, &[text(store_id), text(id)], |r| version_row(r, true))?;
        match rows.into_iter().next() {
            None => Ok(None),
            Some(Ok(v)) => Ok(Some(v)),
            Some(Err(what)) => Err(self.ctx.bad(what).into()),
        }
    }

    fn put_version(&mut self, v: &MemoryVersion) -> Result<()> {
        let by = v.created_by.as_ref().map(Actor::parts);
        let red = v.redacted_by.as_ref().map(Actor::parts);
        self.tx
            .execute(
                &format!(
                    "INSERT OR REPLACE INTO versions ({VERSION_COLS}, content) VALUES \
                     (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
                ),
                params![
                    v.id,
                    v.memory_store_id,
                    v.memory_id,
                    v.operation.as_str(),
                    v.created_at.as_micros(),
                    by.map(|p| p.0),
                    by.map(|p| p.1),
                    v.path,
                    v.content_sha256,
                    v.content_size_bytes
                        .map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
                    v.redacted_at.map(Timestamp::as_micros),
                    red.map(|p| p.0),
                    red.map(|p| p.1),
                    session_key(v.created_by.as_ref()),
                    session_key(v.redacted_by.as_ref()),
                    v.content
                ],
            )
            .map_err(|e| self.ctx.err(e))?;
        Ok(())
    }

    fn versions(&mut self, store_id: &str, scan: &VersionScan) -> Result<Vec<MemoryVersion>> {
        let content = if scan.with_content { ", content" } else { "" };
        let mut sql = format!("SELECT {VERSION_COLS}{content} FROM versions WHERE store_id = ?1");
        let mut args = vec![text(store_id)];
        if let Some(m) = &scan.memory_id {
            args.push(text(m));
            sql += &format!(" AND memory_id = ?{}", args.len());
        }
        if let Some(op) = scan.operation {
            args.push(text(op.as_str()));
            sql += &format!(" AND operation = ?{}", args.len());
        }
        for (kind, id) in &scan.created_by {
            args.push(text(kind));
            args.push(text(id));
            let (k, i) = (args.len() - 1, args.len());
            if *kind == "api_actor" {
                // A key's writes include the sessions' writes it sent.
                sql += &format!(
                    " AND ((created_by_type = ?{k} AND created_by_id = ?{i}) OR created_by_key_id = ?{i})"
                );
            } else {
                sql += &format!(" AND created_by_type = ?{k} AND created_by_id = ?{i}");
            }
        }
        if let Some(t) = scan.created_at_gte {
            args.push(Value::Integer(t.as_micros()));
            sql += &format!(" AND created_at >= ?{}", args.len());
        }
        if let Some(t) = scan.created_at_lte {
            args.push(Value::Integer(t.as_micros()));
            sql += &format!(" AND created_at <= ?{}", args.len());
        }
        if let Some((t, id)) = &scan.after {
            args.push(Value::Integer(t.as_micros()));
            args.push(text(id));
            let (a, b) = (args.len() - 1, args.len());
            sql += &format!(" AND (created_at < ?{a} OR (created_at = ?{a} AND id < ?{b}))");
        }
        args.push(Value::Integer(
            i64::try_from(scan.limit).unwrap_or(i64::MAX),
        ));
        sql += &format!(" ORDER BY created_at DESC, id DESC LIMIT ?{}", args.len());
        let rows = self.query(&sql, &args, |r| version_row(r, scan.with_content))?;
        rows.into_iter()
            .map(|r| r.map_err(|what| self.ctx.bad(what).into()))
            .collect()
    }
}
