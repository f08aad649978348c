//! Writes and deletes that record their change: the replaced content kept first, then the
//! conditional PUT (or DELETE) of the current file carrying the new record.

use bytes::Bytes;
use memory_core::history::{Change, Revision};
use memory_core::{Error, MemoryPath, Result, Version};
use object_store::path::Path;
use object_store::{PutMode, PutOptions, PutPayload};

use super::{Current, Listed, record};
use crate::storage::create::Announced;
use crate::storage::{ObjectStoreStorage, update_version};

/// How often an overwrite (or restore) starts again when another writer changed the file
/// between its read and its conditional PUT.
const OVERWRITE_ATTEMPTS: usize = 16;

impl ObjectStoreStorage {
    /// An edit (`WriteMode::Update`) that records its change: the content it replaces, read
    /// from the view cache (the caller's read) or with one GET conditional on `version`, is
    /// kept while its history folder is listed, then one conditional PUT.
    pub(crate) async fn update_recorded(
        &self,
        path: &MemoryPath,
        key: &Path,
        contents: Vec<u8>,
        version: &Version,
    ) -> Result<Version> {
        let expected = update_version(version);
        let cached = self.views().get(key).filter(|c| {
            c.e_tag == expected.e_tag && c.version == expected.version && c.attributes.is_some()
        });
        let current = match cached {
            Some(view) => Current {
                bytes: view.contents,
                attributes: view.attributes.unwrap_or_default(),
                e_tag: view.e_tag,
                version: view.version,
                // Only read for a file without a record, which the cache never holds.
                modified: std::time::SystemTime::now(),
            },
            None => match self.get_current(key, Some(&expected)).await {
                Ok(Some(current)) => current,
                Ok(None)
                | Err(
                    object_store::Error::Precondition { .. }
                    | object_store::Error::NotModified { .. },
                ) => return Err(self.explain_failed_update(path, key).await),
                Err(e) => return Err(self.request_error("GET", key, e)),
            },
        };
        let (listed, kept) = self.keep_current(path, &current).await?;
        let new = self.new_revision(
            Change::Modified,
            path,
            None,
            Some(&contents),
            kept.number + 1,
        );
        match self
            .put_current(
                path,
                key,
                Bytes::from(contents),
                &new,
                PutMode::Update(expected),
            )
            .await
        {
            Ok(version) => {
                self.prune_after(path, &listed, Some(&kept), &new).await;
                Ok(version)
            }
            Err(
                object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. },
            ) => Err(self.explain_failed_update(path, key).await),
            Err(e) => Err(self.request_error("PUT", key, e)),
        }
    }

    /// Keeps `current` in history (with its history folder listed at once when its record
    /// names its number, as every file written with history on has).
    async fn keep_current(
        &self,
        path: &MemoryPath,
        current: &Current,
    ) -> Result<(Listed, Revision)> {
        if record::number(&current.attributes).is_some() {
            let kept = self.current_revision(path, current, None);
            let (listed, ()) = futures_util::try_join!(
                self.listed_revisions(path),
                self.keep(path, current, &kept)
            )?;
            Ok((listed, kept))
        } else {
            let listed = self.listed_revisions(path).await?;
            let kept = self.current_revision(path, current, Some(&listed));
            self.keep(path, current, &kept).await?;
            Ok((listed, kept))
        }
    }

    /// The PUT of the current file carrying `revision`'s record.
    pub(crate) async fn put_current(
        &self,
        path: &MemoryPath,
        key: &Path,
        bytes: Bytes,
        revision: &Revision,
        mode: PutMode,
    ) -> std::result::Result<Version, object_store::Error> {
        let attributes = record::attributes(revision, path);
        let options = PutOptions {
            mode,
            attributes: attributes.clone(),
            ..PutOptions::default()
        };
        let result = self
            .store
            .put_opts(key, PutPayload::from(bytes.clone()), options)
            .await?;
        // A version the store cannot name is reported as an error by `remember`; here it
        // only means the cache keeps nothing.
        match self.remember_with(key, bytes, result.e_tag, result.version, Some(attributes)) {
            Ok(version) => Ok(version),
            Err(e) => Err(object_store::Error::Generic {
                store: "memory-s3",
                source: e.to_string().into(),
            }),
        }
    }

    /// An overwrite (`WriteMode::Overwrite`, or a restore as `Change::Restored`) that records
    /// its change: the checks, one GET of the file and the LIST of its history folder at once;
    /// the replaced content kept; then a PUT conditional on what was read (started again if
    /// another writer came between).
    pub(crate) async fn overwrite_recorded(
        &self,
        path: &MemoryPath,
        key: &Path,
        contents: Vec<u8>,
        change: Option<Change>,
    ) -> Result<Version> {
        let contents = Bytes::from(contents);
        let keys = self.create_keys(path, key)?;
        self.folder_facts().adding_file(&keys);
        let _announced = Announced {
            storage: self,
            keys: &keys,
        };
        for _ in 0..OVERWRITE_ATTEMPTS {
            let current = async {
                self.get_current(key, None)
                    .await
                    .map_err(|e| self.request_error("GET", key, e))
            };
            let (_, current, listed) = futures_util::try_join!(
                self.check_writable(path, key),
                current,
                self.listed_revisions(path)
            )?;
            match current {
                Some(current) => {
                    let kept = self.current_revision(path, &current, Some(&listed));
                    self.keep(path, &current, &kept).await?;
                    let new = self.new_revision(
                        change.unwrap_or(Change::Modified),
                        path,
                        None,
                        Some(&contents),
                        kept.number + 1,
                    );
                    let mode = PutMode::Update(current.update_version());
                    match self
                        .put_current(path, key, contents.clone(), &new, mode)
                        .await
                    {
                        Ok(version) => {
                            self.prune_after(path, &listed, Some(&kept), &new).await;
                            return Ok(version);
                        }
                        Err(
                            object_store::Error::Precondition { .. }
                            | object_store::Error::NotFound { .. },
                        ) => continue,
                        Err(e) => return Err(self.request_error("PUT", key, e)),
                    }
                }
                None => {
                    let number = listed.last().map_or(1, |(n, _)| n + 1);
                    let new = self.new_revision(
                        change.unwrap_or(Change::Created),
                        path,
                        None,
                        Some(&contents),
                        number,
                    );
                    self.change_count(1, None).await?;
                    match self
                        .put_current(path, key, contents.clone(), &new, PutMode::Create)
                        .await
                    {
                        Ok(version) => {
                            self.prune_after(path, &listed, None, &new).await;
                            return Ok(version);
                        }
                        Err(object_store::Error::AlreadyExists { .. }) => {
                            self.release(1).await;
                            continue;
                        }
                        Err(e) => {
                            self.release(1).await;
                            return Err(self.request_error("PUT", key, e));
                        }
                    }
                }
            }
        }
        Err(Error::Conflict { path: path.clone() })
    }

    /// The record and options of a create (`create_within`, `WriteMode::Create`, a restore of
    /// a deleted file): numbered after the path's history (`listed`).
    pub(crate) fn created_revision(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        listed: &Listed,
        change: Change,
    ) -> (Revision, PutOptions) {
        let number = listed.last().map_or(1, |(n, _)| n + 1);
        let new = self.new_revision(change, path, None, Some(contents), number);
        let options = PutOptions {
            mode: PutMode::Create,
            attributes: record::attributes(&new, path),
            ..PutOptions::default()
        };
        (new, options)
    }

    /// Deletes the file `path` (read as `current`) recording it: its content kept, the
    /// DELETE, then the deletion's marker (a history object without bytes). A crash between
    /// the DELETE and the marker leaves the deletion unrecorded, never a record of a deletion
    /// that did not happen.
    pub(crate) async fn delete_recorded(
        &self,
        path: &MemoryPath,
        key: &Path,
        current: &Current,
    ) -> Result<()> {
        let (listed, kept) = self.keep_current(path, current).await?;
        self.delete_keys(vec![key.clone()]).await?;
        self.release(1).await;
        let marker = self.new_revision(Change::Deleted, path, None, None, kept.number + 1);
        if let Err(e) = self.put_revision(path, &marker, Bytes::new(), true).await {
            tracing::warn!(store = %self.label, %path, error = %e, "deleted, but the deletion could not be recorded");
        }
        self.prune_after(path, &listed, Some(&kept), &marker).await;
        Ok(())
    }

    /// Deletes every file of a folder, each recorded as [`Self::delete_recorded`] does.
    pub(crate) async fn delete_folder_recorded(
        &self,
        files: Vec<(MemoryPath, Path)>,
    ) -> Result<()> {
        use futures_util::stream::{self, StreamExt, TryStreamExt};
        stream::iter(files)
            .map(|(path, key)| async move {
                match self.get_current(&key, None).await {
                    Ok(Some(current)) => self.delete_recorded(&path, &key, &current).await,
                    Ok(None) => Ok(()), // deleted meanwhile
                    Err(e) => Err(self.request_error("GET", &key, e)),
                }
            })
            .buffer_unordered(super::CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await
            .map(|_| ())
    }

    /// Whether `path` has revision `number` (a history object, or the current file's record).
    pub(crate) async fn has_revision(
        &self,
        path: &MemoryPath,
        key: &Path,
        number: u64,
    ) -> Result<bool> {
        let revision_key = self.revision_key(path, number)?;
        if self.head(&revision_key).await?.is_some() {
            return Ok(true);
        }
        match self.get_current(key, None).await {
            Ok(Some(current)) => {
                let listed = match record::number(&current.attributes) {
                    Some(_) => None,
                    None => Some(self.listed_revisions(path).await?),
                };
                Ok(self
                    .current_revision(path, &current, listed.as_ref())
                    .number
                    == number)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(self.request_error("GET", key, e)),
        }
    }
}
