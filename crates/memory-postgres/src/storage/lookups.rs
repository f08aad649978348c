//! The reads a change checks paths with: a file above a path, files below it, the file
//! itself, the root's count.

use deadpool_postgres::GenericClient;
use memory_core::{MemoryPath, Result};

use super::{PostgresStorage, below};
use crate::error::backend;

impl PostgresStorage {
    /// The outermost ancestor of `path` that is a file.
    pub(super) async fn file_ancestor<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
    ) -> Result<Option<MemoryPath>> {
        let ancestors: Vec<String> = path
            .ancestors()
            .into_iter()
            .map(|a| a.as_str().to_owned())
            .collect();
        if ancestors.is_empty() {
            return Ok(None);
        }
        let stmt = client
            .prepare_cached(&self.inner.sql.file_ancestor)
            .await
            .map_err(backend)?;
        let row = client
            .query_opt(&stmt, &[&self.root_param(), &ancestors])
            .await
            .map_err(backend)?;
        row.map(|r| self.stored_path(r.get(0))).transpose()
    }

    /// Whether `path` is a directory: `/memories`, or a path with files below it.
    pub(super) async fn is_dir<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
    ) -> Result<bool> {
        if path.is_root() {
            return Ok(true);
        }
        let (lo, hi) = below(path);
        let stmt = client
            .prepare_cached(&self.inner.sql.has_below)
            .await
            .map_err(backend)?;
        let row = client
            .query_one(&stmt, &[&self.root_param(), &lo, &hi])
            .await
            .map_err(backend)?;
        Ok(row.get(0))
    }

    pub(super) async fn file_exists<C: GenericClient>(
        &self,
        client: &C,
        path: &MemoryPath,
    ) -> Result<bool> {
        let stmt = client
            .prepare_cached(&self.inner.sql.read)
            .await
            .map_err(backend)?;
        Ok(client
            .query_opt(&stmt, &[&self.root_param(), &path.as_str()])
            .await
            .map_err(backend)?
            .is_some())
    }

    pub(super) async fn count<C: GenericClient>(&self, client: &C) -> Result<usize> {
        let stmt = client
            .prepare_cached(&self.inner.sql.count)
            .await
            .map_err(backend)?;
        let n: i64 = client
            .query_one(&stmt, &[&self.root_param()])
            .await
            .map_err(backend)?
            .get(0);
        Ok(usize::try_from(n).unwrap_or(0))
    }
}
