//! The stores of [`MemoryStores`]: creating, retrieving, updating, listing, archiving and deleting
//! a store.

use super::{MemoryStores, page_of, page_size, store_in};
use crate::Timestamp;
use crate::cursor::Cursor;
use crate::error::{Reason, Result, StoreError};
use crate::id::{self, STORE_PREFIX};
use crate::model::{CreateStore, DeletedStore, ListStores, Page, Store, UpdateStore, View};
use crate::persist::{Persistence, StoreScan};
use crate::validate::{validate_description, validate_metadata, validate_name};

impl<P: Persistence> MemoryStores<P> {
    /// `POST /v1/memory_stores`.
    pub async fn create_store(&self, params: CreateStore) -> Result<Store> {
        validate_name(&params.name)?;
        let description = params.description.unwrap_or_default();
        validate_description(&description)?;
        let metadata = params.metadata.unwrap_or_default();
        validate_metadata(&metadata)?;
        let workspace_id = self.workspace.clone();
        self.blocking(true, move |tx| {
            let now = Timestamp::now();
            let store = Store {
                id: id::new_id(STORE_PREFIX, now),
                workspace_id,
                name: params.name,
                description,
                metadata,
                created_at: now,
                updated_at: now,
                archived_at: None,
            };
            tx.put_store(&store)?;
            Ok(store)
        })
        .await
    }

    /// `GET /v1/memory_stores/{id}` (archived stores included).
    pub async fn retrieve_store(&self, store_id: &str) -> Result<Store> {
        let store_id = store_id.to_owned();
        let ws = self.workspace.clone();
        self.blocking(false, move |tx| store_in(tx, &ws, &store_id))
            .await
    }

    /// `POST /v1/memory_stores/{id}`: `metadata` is a patch. Refused (400) on an archived store.
    /// `updated_at` moves only when something changes.
    pub async fn update_store(&self, store_id: &str, params: UpdateStore) -> Result<Store> {
        if let Some(name) = &params.name {
            validate_name(name)?;
        }
        if let Some(description) = &params.description {
            validate_description(description)?;
        }
        let store_id = store_id.to_owned();
        let ws = self.workspace.clone();
        self.blocking(true, move |tx| {
            let mut store = store_in(tx, &ws, &store_id)?;
            if store.archived_at.is_some() {
                return Err(StoreError::refused(
                    Reason::StoreArchived,
                    format!("memory store {store_id} is archived and cannot be updated"),
                ));
            }
            let before = store.clone();
            if let Some(name) = params.name {
                store.name = name;
            }
            if let Some(description) = params.description {
                store.description = description;
            }
            if let Some(patch) = params.metadata {
                for (key, value) in patch {
                    match value {
                        Some(value) => store.metadata.insert(key, value),
                        None => store.metadata.remove(&key),
                    };
                }
                validate_metadata(&store.metadata)?;
            }
            if store != before {
                store.updated_at = Timestamp::now();
                tx.put_store(&store)?;
            }
            Ok(store)
        })
        .await
    }

    /// `GET /v1/memory_stores`: the stores of this handle's workspace, newest first; archived
    /// stores only with `include_archived`.
    pub async fn list_stores(&self, params: ListStores) -> Result<Page<Store>> {
        let limit = page_size(params.limit, View::Basic)?;
        let after = params.page.as_deref().map(Cursor::stores).transpose()?;
        let workspace = self.workspace.clone();
        self.blocking(false, move |tx| {
            let data = tx.stores(&StoreScan {
                workspace,
                created_at_gte: params.created_at_gte,
                created_at_lte: params.created_at_lte,
                include_archived: params.include_archived,
                after,
                limit: limit + 1,
            })?;
            Ok(page_of(data, limit, |last| Cursor::Stores {
                t: last.created_at.as_micros(),
                i: last.id.clone(),
            }))
        })
        .await
    }

    /// `POST /v1/memory_stores/{id}/archive`: one way; an archived store comes back unchanged.
    pub async fn archive_store(&self, store_id: &str) -> Result<Store> {
        let store_id = store_id.to_owned();
        let ws = self.workspace.clone();
        self.blocking(true, move |tx| {
            let mut store = store_in(tx, &ws, &store_id)?;
            if store.archived_at.is_none() {
                let now = Timestamp::now();
                store.archived_at = Some(now);
                store.updated_at = now;
                tx.put_store(&store)?;
            }
            Ok(store)
        })
        .await
    }

    /// `DELETE /v1/memory_stores/{id}`: the store, its memories and all versions, at once.
    pub async fn delete_store(&self, store_id: &str) -> Result<DeletedStore> {
        let store_id = store_id.to_owned();
        let ws = self.workspace.clone();
        self.blocking(true, move |tx| {
            store_in(tx, &ws, &store_id)?;
            tx.delete_store(&store_id)?;
            Ok(DeletedStore { id: store_id })
        })
        .await
    }
}
