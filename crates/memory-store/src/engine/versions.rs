//! The versions of [`MemoryStores`]: listing, retrieving and redacting a memory's versions.

use super::{MemoryStores, page_of, page_size, store_in, version_in};
use crate::Timestamp;
use crate::cursor::Cursor;
use crate::error::{Reason, Result, StoreError};
use crate::model::{Actor, ListVersions, MemoryVersion, Page, View};
use crate::persist::{Persistence, VersionScan};

impl<P: Persistence> MemoryStores<P> {
    /// `GET /v1/memory_stores/{id}/memory_versions`: newest first (`created_at`, then `id`).
    pub async fn list_versions(
        &self,
        store_id: &str,
        params: ListVersions,
    ) -> Result<Page<MemoryVersion>> {
        let limit = page_size(params.limit, params.view)?;
        let store_id = store_id.to_owned();
        let after = match &params.page {
            None => None,
            Some(token) => match Cursor::decode(token)? {
                Cursor::Versions { s, t, i } if s == store_id => {
                    Some((Timestamp::from_micros(t), i))
                }
                _ => {
                    return Err(StoreError::invalid(
                        "page is not a page token of this listing",
                    ));
                }
            },
        };
        let mut created_by = Vec::new();
        if let Some(id) = params.session_id {
            created_by.push(("session_actor", id));
        }
        if let Some(id) = params.api_key_id {
            created_by.push(("api_actor", id));
        }
        if let Some(id) = params.service_account_id {
            created_by.push(("service_account_actor", id));
        }
        let scan = VersionScan {
            memory_id: params.memory_id,
            operation: params.operation,
            created_by,
            created_at_gte: params.created_at_gte,
            created_at_lte: params.created_at_lte,
            after,
            limit: limit + 1,
            with_content: params.view == View::Full,
        };
        let ws = self.workspace.clone();
        self.blocking(false, move |tx| {
            store_in(tx, &ws, &store_id)?;
            let data = tx.versions(&store_id, &scan)?;
            Ok(page_of(data, limit, |last| Cursor::Versions {
                s: store_id.clone(),
                t: last.created_at.as_micros(),
                i: last.id.clone(),
            }))
        })
        .await
    }

    /// `GET /v1/memory_stores/{id}/memory_versions/{version_id}` (a redacted version too: its
    /// content, hash, size and path are `None`).
    pub async fn retrieve_version(
        &self,
        store_id: &str,
        version_id: &str,
    ) -> Result<MemoryVersion> {
        let (store_id, version_id) = (store_id.to_owned(), version_id.to_owned());
        let ws = self.workspace.clone();
        self.blocking(false, move |tx| {
            store_in(tx, &ws, &store_id)?;
            version_in(tx, &store_id, &version_id)
        })
        .await
    }

    /// `POST /v1/memory_stores/{id}/memory_versions/{version_id}/redact`: wipes content, hash,
    /// size and path, records `redacted_at` and `redacted_by`. The head version of a live
    /// memory is refused ([`StoreError::Conflict`]); a redacted version comes back unchanged.
    pub async fn redact_version(
        &self,
        store_id: &str,
        version_id: &str,
        actor: Option<Actor>,
    ) -> Result<MemoryVersion> {
        let (store_id, version_id) = (store_id.to_owned(), version_id.to_owned());
        let ws = self.workspace.clone();
        self.blocking(true, move |tx| {
            store_in(tx, &ws, &store_id)?;
            let mut version = version_in(tx, &store_id, &version_id)?;
            if version.redacted_at.is_some() {
                return Ok(version);
            }
            if let Some(memory) = tx.memory(&store_id, &version.memory_id)?
                && memory.memory_version_id == version.id
            {
                return Err(StoreError::Conflict {
                    message: format!(
                        "memory version {version_id} is the current version of memory {}; write a new version (or delete the memory) first",
                        memory.id
                    ),
                    reason: Reason::HeadVersion,
                });
            }
            version.path = None;
            version.content = None;
            version.content_sha256 = None;
            version.content_size_bytes = None;
            version.redacted_at = Some(Timestamp::now());
            version.redacted_by = actor;
            tx.put_version(&version)?;
            Ok(version)
        })
        .await
    }
}
