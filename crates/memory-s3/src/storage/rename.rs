//! A rename's moves with history off: the copies (copy-if-absent, server-side), then the
//! deletes of the sources; and the memory paths of a rename's files.

use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use memory_core::{Error, MemoryPath, Result};
use object_store::ObjectStoreExt;
use object_store::path::Path;

use super::{COPY_CONCURRENCY, ObjectStoreStorage};
use crate::error::S3Error;

impl ObjectStoreStorage {
    /// Step 4 and 5 of a rename: the copies, then the deletes of the sources.
    pub(super) async fn copy_all(
        &self,
        from: &MemoryPath,
        to: &MemoryPath,
        to_key: &Path,
        is_file: bool,
        sources: Vec<Path>,
    ) -> Result<()> {
        let mut moves = Vec::with_capacity(sources.len());
        for source in sources {
            let target = if is_file {
                to_key.clone()
            } else {
                let Some(target) = self.memory_path(&source).and_then(|p| p.rebase(from, to))
                else {
                    return Err(S3Error::RenameTooLong {
                        source_path: source.to_string(),
                        to: to.to_string(),
                    }
                    .into());
                };
                self.key(&target)?
            };
            moves.push((source, target));
        }
        let copied: Vec<(Path, object_store::Result<()>)> = stream::iter(moves.clone())
            .map(|(source, target)| {
                let store = Arc::clone(&self.store);
                async move {
                    let result = store.copy_if_not_exists(&source, &target).await;
                    (target, result)
                }
            })
            .buffer_unordered(COPY_CONCURRENCY)
            .collect()
            .await;
        let mut failure = None;
        let mut done = Vec::new();
        for (target, result) in copied {
            match result {
                Ok(()) => done.push(target),
                Err(object_store::Error::AlreadyExists { .. }) => {
                    failure.get_or_insert(Error::AlreadyExists { path: to.clone() });
                }
                Err(object_store::Error::NotFound { .. }) => {
                    // A source vanished: someone else moved or deleted it meanwhile.
                    failure.get_or_insert(Error::NotFound { path: from.clone() });
                }
                Err(e) => {
                    let e = self.request_error("COPY", &target, e);
                    failure.get_or_insert(e);
                }
            }
        }
        if let Some(failure) = failure {
            // Every source is still in place: take back the copies made, so the failed rename
            // changes nothing (best effort; a copy left behind is a duplicate, never a loss).
            if let Err(e) = self.delete_keys(done).await {
                tracing::warn!(store = %self.label, error = %e, "could not remove the copies of a failed rename");
            }
            return Err(failure);
        }
        // 5. Delete the sources, now that every file is at its new place.
        self.delete_keys(moves.into_iter().map(|(source, _)| source).collect())
            .await
    }

    /// The memory paths of a rename's files: each source and where it goes.
    pub(super) fn rebased(
        &self,
        from: &MemoryPath,
        to: &MemoryPath,
        is_file: bool,
        sources: Vec<Path>,
    ) -> Result<Vec<(MemoryPath, MemoryPath)>> {
        if is_file {
            return Ok(vec![(from.clone(), to.clone())]);
        }
        let mut moves = Vec::with_capacity(sources.len());
        for source in sources {
            let Some((path, target)) = self
                .memory_path(&source)
                .and_then(|p| p.rebase(from, to).map(|t| (p, t)))
            else {
                return Err(S3Error::RenameTooLong {
                    source_path: source.to_string(),
                    to: to.to_string(),
                }
                .into());
            };
            moves.push((path, target));
        }
        Ok(moves)
    }
}
