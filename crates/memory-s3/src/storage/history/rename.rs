//! A rename that moves each file's history with it: the file put at its new path with a
//! `renamed` record, then its earlier revisions (and the content before the rename) put as
//! history objects of the new path, renumbered after that path's own
//! ([`FileHistory::append_moved`]); only then are the sources and their history deleted.

use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use memory_core::history::{Change, FileHistory, Revision};
use memory_core::{Error, MemoryPath, Result};
use object_store::path::Path;
use object_store::{GetOptions, PutMode};

use super::{CONCURRENCY, record};
use crate::storage::ObjectStoreStorage;

/// One file moved: what was written at the new path (to take back if the rename fails) and
/// what to delete at the old one once every file is moved.
struct Moved {
    written: Vec<Path>,
    sources: Vec<Path>,
}

impl ObjectStoreStorage {
    /// Moves every `(source, target)` file with its history; on a failure, takes back what was
    /// written at the targets and leaves the sources as they were.
    pub(crate) async fn move_recorded(
        &self,
        from: &MemoryPath,
        to: &MemoryPath,
        moves: Vec<(MemoryPath, MemoryPath)>,
    ) -> Result<()> {
        let results: Vec<Result<Moved>> = stream::iter(moves)
            .map(|(source, target)| async move { self.move_one(from, to, &source, &target).await })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        let mut failure = None;
        let mut written = Vec::new();
        let mut sources = Vec::new();
        for result in results {
            match result {
                Ok(moved) => {
                    written.extend(moved.written);
                    sources.extend(moved.sources);
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        if let Some(failure) = failure {
            if let Err(e) = self.delete_keys(written).await {
                tracing::warn!(store = %self.label, error = %e, "could not remove the copies of a failed rename");
            }
            return Err(failure);
        }
        // The current files first (the sources' history last: a crash between leaves history
        // objects of a path without a file, never a file without its history).
        let (files, history): (Vec<Path>, Vec<Path>) = sources
            .into_iter()
            .partition(|key| key.as_ref().starts_with(self.base.as_ref()));
        self.delete_keys(files).await?;
        self.delete_keys(history).await
    }

    async fn move_one(
        &self,
        from: &MemoryPath,
        to: &MemoryPath,
        source: &MemoryPath,
        target: &MemoryPath,
    ) -> Result<Moved> {
        let (source_key, target_key) = (self.key(source)?, self.key(target)?);
        let current = async {
            match self.get_current(&source_key, None).await {
                Ok(Some(current)) => Ok(current),
                // Someone else moved or deleted it meanwhile.
                Ok(None) => Err(Error::NotFound { path: from.clone() }),
                Err(e) => Err(self.request_error("GET", &source_key, e)),
            }
        };
        let (current, listed, target_listed) = futures_util::try_join!(
            current,
            self.listed_revisions(source),
            self.listed_revisions(target)
        )?;
        // The source's earlier revisions, bytes and records (one GET each).
        let earlier: Vec<Result<(Revision, Bytes)>> = stream::iter(listed.iter().cloned())
            .map(|(number, meta)| async move {
                let got = self
                    .store
                    .get_opts(&meta.location, GetOptions::default())
                    .await
                    .map_err(|e| self.request_error("GET", &meta.location, e))?;
                let attributes = got.attributes.clone();
                let bytes = got
                    .bytes()
                    .await
                    .map_err(|e| self.request_error("GET", &meta.location, e))?;
                let revision = record::revision(
                    &attributes,
                    source,
                    number,
                    bytes.len() as u64,
                    std::time::SystemTime::from(meta.last_modified),
                    Some(&bytes),
                    false,
                );
                Ok((revision, bytes))
            })
            .buffered(CONCURRENCY)
            .collect()
            .await;
        let mut moved = Vec::with_capacity(earlier.len() + 1);
        for item in earlier {
            moved.push(item?);
        }
        let last = self.current_revision(source, &current, Some(&listed));
        if moved.last().map(|(r, _)| r.number) == Some(last.number) {
            moved.pop(); // a copy kept by a change that did not happen: the current file
        }
        moved.push((last, current.bytes.clone()));
        let mut bytes_of = std::collections::BTreeMap::new();
        let moving = FileHistory::from_revisions(
            moved
                .into_iter()
                .map(|(revision, bytes)| {
                    bytes_of.insert(revision.number, bytes);
                    revision
                })
                .collect(),
        );
        let mut history = FileHistory::from_revisions(
            target_listed
                .iter()
                .map(|(n, _)| super::placeholder(target, *n, std::time::SystemTime::now()))
                .collect(),
        );
        let revisions: Vec<Revision> = moving.revisions().to_vec();
        let renumbered = history.append_moved(moving);
        let renamed = self.new_revision(
            Change::Renamed,
            target,
            Some(source),
            Some(&current.bytes),
            history.next_number(),
        );
        // The history objects it will have, named before anything is put, so that a failed
        // rename takes back whatever landed.
        let mut written = Vec::new();
        let mut pending = Vec::new();
        for (mut revision, (old, new)) in revisions.into_iter().zip(renumbered) {
            let bytes = bytes_of.remove(&old).unwrap_or_default();
            revision.number = new;
            written.push(self.revision_key(target, new)?);
            pending.push((revision, bytes));
        }
        // 1. The file at its new path: the rename's commit point for this file.
        match self
            .put_current(
                target,
                &target_key,
                current.bytes.clone(),
                &renamed,
                PutMode::Create,
            )
            .await
        {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => {
                return Err(Error::AlreadyExists { path: to.clone() });
            }
            Err(e) => return Err(self.request_error("PUT", &target_key, e)),
        }
        written.insert(0, target_key);
        // 2. Its history under the new path.
        let puts: Vec<Result<()>> = stream::iter(pending)
            .map(|(revision, bytes)| async move {
                self.put_revision(target, &revision, bytes, false).await
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        let failure = puts.into_iter().find_map(|result| result.err());
        if let Some(failure) = failure {
            if let Err(e) = self.delete_keys(written).await {
                tracing::warn!(store = %self.label, error = %e, "could not remove the copies of a failed rename");
            }
            return Err(failure);
        }
        let mut sources = vec![source_key];
        sources.extend(listed.into_iter().map(|(_, meta)| meta.location));
        Ok(Moved { written, sources })
    }
}
