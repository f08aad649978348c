//! Indexing the rows another program inserted or rewrote (their `words` NULL), before a search.

use memory_core::Result;

use super::PostgresStorage;
use super::words::tsvector;
use crate::error::backend;

impl PostgresStorage {
    /// Whether a row of this root has no words yet (inserted or rewritten by another program).
    pub(super) async fn has_unindexed(&self, client: &deadpool_postgres::Object) -> Result<bool> {
        let stmt = client
            .prepare_cached(&self.inner.sql.any_unindexed)
            .await
            .map_err(backend)?;
        let row = client
            .query_one(&stmt, &[&self.root_param()])
            .await
            .map_err(backend)?;
        Ok(row.get(0))
    }

    /// Writes the words of every row of this root whose `words` is NULL: rows inserted or
    /// rewritten by another program, or written before search existed.
    pub(super) async fn index_unindexed(&self, client: &deadpool_postgres::Object) -> Result<()> {
        let stmt = client
            .prepare_cached(&self.inner.sql.unindexed)
            .await
            .map_err(backend)?;
        let rows = client
            .query(&stmt, &[&self.root_param()])
            .await
            .map_err(backend)?;
        if rows.is_empty() {
            return Ok(());
        }
        let update = client
            .prepare_cached(&self.inner.sql.index_words)
            .await
            .map_err(backend)?;
        for row in &rows {
            let path: String = row.get(0);
            let contents: Vec<u8> = row.get(1);
            let v: i64 = row.get(2);
            client
                .execute(
                    &update,
                    &[&self.root_param(), &path, &v, &tsvector(&contents)],
                )
                .await
                .map_err(backend)?;
        }
        tracing::debug!(store = %self, indexed = rows.len(), "indexed rows changed behind the store's back");
        Ok(())
    }
}
