//! Reading history: a file's or a folder's revisions, one revision's content, restoring and
//! redacting.

use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;
use futures_util::stream::{self, StreamExt, TryStreamExt};
use memory_core::history::{FileHistory, Redaction, Revision, newest_first};
use memory_core::{Error, MemoryPath, Result, Version};
use object_store::path::Path;
use object_store::{Attributes, GetOptions, ObjectMeta};

use super::{CONCURRENCY, Listed, record};
use crate::storage::ObjectStoreStorage;

impl ObjectStoreStorage {
    /// One HEAD: an object's metadata and record, or `None` when there is none.
    async fn head_record(&self, key: &Path) -> Result<Option<(ObjectMeta, Attributes)>> {
        let options = GetOptions {
            head: true,
            ..GetOptions::default()
        };
        match self.store.get_opts(key, options).await {
            Ok(result) => Ok(Some((result.meta, result.attributes))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.request_error("HEAD", key, e)),
        }
    }

    /// The revisions of the file `path`: one HEAD per history object (`listed`), and the
    /// current file's record (`current`, a HEAD the caller made).
    async fn file_revisions(
        &self,
        path: &MemoryPath,
        listed: &Listed,
        current: Option<(ObjectMeta, Attributes)>,
    ) -> Result<FileHistory> {
        let records: Vec<Option<(Revision, SystemTime)>> = stream::iter(listed.iter().cloned())
            .map(|(number, meta)| async move {
                let found = self.head_record(&meta.location).await?;
                Ok::<_, Error>(found.map(|(meta, attributes)| {
                    let kept = SystemTime::from(meta.last_modified);
                    let revision = record::revision(
                        &attributes,
                        path,
                        number,
                        meta.size,
                        kept,
                        None,
                        number == 1,
                    );
                    (revision, kept)
                }))
            })
            .buffered(CONCURRENCY)
            .try_collect()
            .await?;
        let records: Vec<(Revision, SystemTime)> = records.into_iter().flatten().collect();
        let last_kept = records.last().map(|(_, kept)| *kept);
        let mut by_number: BTreeMap<u64, Revision> =
            records.into_iter().map(|(r, _)| (r.number, r)).collect();
        if current.is_none()
            && let Some(newest) = by_number.values().next_back()
            && newest.change != memory_core::history::Change::Deleted
        {
            // No file, and the newest revision holds content: a delete (or a rename away)
            // stopped after removing the file, before its marker (see "History" in the
            // README). The deletion did happen: it is shown, made when the content was kept.
            let mut deleted = newest.clone();
            deleted.number += 1;
            deleted.change = memory_core::history::Change::Deleted;
            deleted.time = last_kept.unwrap_or(newest.time).max(newest.time);
            (deleted.size, deleted.sha256, deleted.old_path) = (0, None, None);
            (deleted.session, deleted.redacted, deleted.path) = (None, false, path.clone());
            by_number.insert(deleted.number, deleted);
        }
        if let Some((meta, attributes)) = current {
            let newest = by_number.keys().next_back().copied();
            let number = record::number(&attributes).unwrap_or(newest.map_or(1, |n| n + 1));
            let revision = record::revision(
                &attributes,
                path,
                number,
                meta.size,
                SystemTime::from(meta.last_modified),
                None,
                newest.is_none(),
            );
            // A copy kept by a change that did not happen has the current file's number:
            // the current file's record is the one shown.
            by_number.insert(number, revision);
        }
        Ok(FileHistory::from_revisions(
            by_number.into_values().collect(),
        ))
    }

    /// The whole history of the file `path` (a LIST and the HEADs).
    async fn file_history(&self, path: &MemoryPath) -> Result<FileHistory> {
        let key = self.key(path)?;
        let (listed, current) =
            futures_util::try_join!(self.listed_revisions(path), self.head_record(&key))?;
        self.file_revisions(path, &listed, current).await
    }

    pub(crate) async fn recorded_history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        self.check_history()?;
        let key = self.key(path)?;
        let (mut below, current) = futures_util::try_join!(self.list_history(path), async {
            if path.is_root() {
                Ok(None)
            } else {
                self.head_record(&key).await
            }
        })?;
        if current.is_some() || below.contains_key(path) {
            let listed = below.remove(path).unwrap_or_default();
            return Ok(self
                .file_revisions(path, &listed, current)
                .await?
                .newest_first());
        }
        // A folder: every file below it that has history or is there now.
        for (file, _) in self.list_below(&key).await? {
            below.entry(file).or_default();
        }
        let histories: Vec<Vec<Revision>> = stream::iter(below)
            .map(|(file, listed)| async move {
                let current = self.head_record(&self.key(&file)?).await?;
                Ok::<_, Error>(
                    self.file_revisions(&file, &listed, current)
                        .await?
                        .newest_first(),
                )
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect()
            .await?;
        let mut all: Vec<Revision> = histories.into_iter().flatten().collect();
        newest_first(&mut all);
        Ok(all)
    }

    pub(crate) async fn recorded_revision(
        &self,
        path: &MemoryPath,
        number: u64,
    ) -> Result<Vec<u8>> {
        self.check_history()?;
        let no_revision = || Error::NoRevision {
            path: path.clone(),
            number,
        };
        if path.is_root() {
            return Err(no_revision());
        }
        let revision_key = self.revision_key(path, number)?;
        match self
            .store
            .get_opts(&revision_key, GetOptions::default())
            .await
        {
            Ok(got) => {
                let (attributes, meta) = (got.attributes.clone(), got.meta.clone());
                let bytes = got
                    .bytes()
                    .await
                    .map_err(|e| self.request_error("GET", &revision_key, e))?;
                let revision = record::revision(
                    &attributes,
                    path,
                    number,
                    meta.size,
                    SystemTime::from(meta.last_modified),
                    None,
                    number == 1,
                );
                if !revision.has_content() {
                    return Err(Error::RevisionWithoutContent {
                        path: path.clone(),
                        number,
                        redacted: revision.redacted,
                    });
                }
                return Ok(bytes.to_vec());
            }
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(self.request_error("GET", &revision_key, e)),
        }
        let key = self.key(path)?;
        let current = match self.get_current(&key, None).await {
            Ok(Some(current)) => current,
            // No file: the deletion shown for a delete that stopped before its marker?
            Ok(None) => {
                return match self.file_history(path).await?.readable(path, number) {
                    Ok(_) => Err(no_revision()),
                    Err(e) => Err(e),
                };
            }
            Err(e) => return Err(self.request_error("GET", &key, e)),
        };
        let listed = match record::number(&current.attributes) {
            Some(_) => None,
            None => Some(self.listed_revisions(path).await?),
        };
        if self
            .current_revision(path, &current, listed.as_ref())
            .number
            == number
        {
            Ok(current.bytes.to_vec())
        } else {
            Err(no_revision())
        }
    }

    pub(crate) async fn restore_recorded(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.check_history()?;
        if path.is_root() {
            return Err(Error::AlreadyExists { path: path.clone() });
        }
        let key = self.key(path)?;
        if !self.has_revision(path, &key, number).await? {
            return Err(Error::NoRevision {
                path: path.clone(),
                number,
            });
        }
        self.overwrite_recorded(
            path,
            &key,
            contents,
            Some(memory_core::history::Change::Restored),
        )
        .await
    }

    pub(crate) async fn redact_recorded(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        self.check_history()?;
        if path.is_root() {
            return match which {
                Redaction::Revision(number) => Err(Error::NoRevision {
                    path: path.clone(),
                    number,
                }),
                Redaction::AllPast => memory_core::history::redact_below(self, path).await,
            };
        }
        let mut file = self.file_history(path).await?;
        if file.is_empty() && which == Redaction::AllPast {
            // Not a file's history: a folder's, every file's below it.
            return memory_core::history::redact_below(self, path).await;
        }
        let numbers = file.redact(path, which)?;
        // Each one's content replaced by a marker without bytes that keeps its record: the
        // bytes are gone from the store (a bucket with versioning keeps old versions).
        stream::iter(numbers.iter().copied())
            .map(|number| {
                let revision = file.get(number).cloned();
                async move {
                    match revision {
                        Some(revision) => {
                            self.put_revision(path, &revision, Bytes::new(), false)
                                .await
                        }
                        None => Ok(()),
                    }
                }
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(numbers.len() as u64)
    }
}
