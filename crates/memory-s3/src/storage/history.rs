//! Each file's earlier versions on an object store (see the crate README, "History").
//!
//! Layout: the current file `PREFIX/memories/REL` carries the record of its newest revision as
//! its own metadata ([`record`]); each earlier revision is an object
//! `PREFIX/.memory-history/REL/NUMBER` holding that revision's bytes and record (a deletion
//! or a redacted revision: no bytes). Nothing under `PREFIX/.memory-history/` is below
//! `PREFIX/memories/`, so listings, the file count, search and the foreign-entry filter never
//! meet it.
//!
//! Order of every change, for crash safety without transactions: the content the change
//! replaces is put to its history key first (create-if-absent, from the bytes and record read
//! with one GET, or the view cache), then the conditional PUT (or the DELETE) of the current
//! file carries the new record. A change that fails or never happens leaves at most a copy
//! numbered as the current file, shown once; never a record of its own.

mod log;
mod record;
mod rename;
mod write;

use std::time::SystemTime;

use bytes::Bytes;
use futures_util::TryStreamExt;
use memory_core::history::{Change, FileHistory, HistoryOptions, Revision, sha256_hex};
use memory_core::{Error, MemoryPath, Result};
use object_store::path::Path;
use object_store::{
    Attributes, GetOptions, ObjectMeta, ObjectStore, PutMode, PutOptions, PutPayload, UpdateVersion,
};

use super::ObjectStoreStorage;
use crate::error::S3Error;

/// The folder (beside `memories`) that holds every history object.
pub(crate) const HISTORY_FOLDER: &str = ".memory-history";

/// How many history objects are read or written at once.
const CONCURRENCY: usize = 8;

/// A current file as one GET returned it: its bytes, record and version.
#[derive(Debug, Clone)]
pub(crate) struct Current {
    pub(crate) bytes: Bytes,
    pub(crate) attributes: Attributes,
    pub(crate) e_tag: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) modified: SystemTime,
}

impl Current {
    fn update_version(&self) -> UpdateVersion {
        UpdateVersion {
            e_tag: self.e_tag.clone(),
            version: self.version.clone(),
        }
    }
}

/// A file's history objects as one LIST found them: number and object, by number.
pub(crate) type Listed = Vec<(u64, ObjectMeta)>;

impl ObjectStoreStorage {
    /// These history options (see [`ObjectStoreStorage::with_history`]).
    pub fn history_options(&self) -> &HistoryOptions {
        &self.history
    }

    /// This store keeping history as `options` say (the default: on, 30 days;
    /// [`HistoryOptions::off`] for none). The store options `history`, `history_days`,
    /// `history_max` and `history_session` set it for `s3://` URLs ([`crate::S3Options`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use memory_core::history::HistoryOptions;
    /// use memory_s3::ObjectStoreStorage;
    ///
    /// let store = ObjectStoreStorage::new(Arc::new(object_store::memory::InMemory::new()), "t")?
    ///     .with_history(HistoryOptions::default().with_max_per_file(10));
    /// assert_eq!(store.history_options().max_per_file, Some(10));
    /// # Ok::<(), memory_core::Error>(())
    /// ```
    pub fn with_history(mut self, options: HistoryOptions) -> Self {
        self.history = options;
        self
    }

    pub(crate) fn recording(&self) -> bool {
        self.history.enabled
    }

    fn check_history(&self) -> Result<()> {
        if self.history.enabled {
            Ok(())
        } else {
            Err(Error::HistoryOff)
        }
    }

    /// `PREFIX/.memory-history/REL`: the folder of `path`'s history objects (for the root,
    /// every file's).
    pub(crate) fn history_key(&self, path: &MemoryPath) -> Result<Path> {
        if path.is_root() {
            return Ok(self.history_base.clone());
        }
        let raw = format!("{}/{}", self.history_base, path.relative());
        Path::parse(&raw).map_err(|source| S3Error::Key { key: raw, source }.into())
    }

    /// `PREFIX/.memory-history/REL/NUMBER`: revision `number` of `path`.
    pub(crate) fn revision_key(&self, path: &MemoryPath, number: u64) -> Result<Path> {
        Ok(self.history_key(path)?.clone().join(number.to_string()))
    }

    /// The file and revision number a history object's key names, if it is one.
    fn revision_of(&self, location: &Path) -> Option<(MemoryPath, u64)> {
        let rel = location
            .as_ref()
            .strip_prefix(self.history_base.as_ref())?
            .strip_prefix('/')?;
        let (file, number) = rel.rsplit_once('/')?;
        let number = number.parse().ok()?;
        Some((
            MemoryPath::parse(&format!("/memories/{file}")).ok()?,
            number,
        ))
    }

    /// Every history object below `path`'s history folder, by file (one LIST, all pages).
    async fn list_history(
        &self,
        path: &MemoryPath,
    ) -> Result<std::collections::BTreeMap<MemoryPath, Listed>> {
        let key = self.history_key(path)?;
        let all: Vec<ObjectMeta> = self
            .store
            .list(Some(&key))
            .try_collect()
            .await
            .map_err(|e| self.request_error("LIST", &key, e))?;
        let mut files: std::collections::BTreeMap<MemoryPath, Listed> = Default::default();
        for meta in all {
            if let Some((file, number)) = self.revision_of(&meta.location) {
                files.entry(file).or_default().push((number, meta));
            }
        }
        for listed in files.values_mut() {
            listed.sort_by_key(|(number, _)| *number);
        }
        Ok(files)
    }

    /// The history objects of the file `path` (one LIST of its history folder).
    pub(crate) async fn listed_revisions(&self, path: &MemoryPath) -> Result<Listed> {
        Ok(self
            .list_history(path)
            .await?
            .remove(path)
            .unwrap_or_default())
    }

    /// One GET of the current file at `key` (only if it is still `expected`, when given):
    /// `None` when there is none.
    pub(crate) async fn get_current(
        &self,
        key: &Path,
        expected: Option<&UpdateVersion>,
    ) -> std::result::Result<Option<Current>, object_store::Error> {
        let options = GetOptions {
            if_match: expected.and_then(|v| v.e_tag.clone()),
            version: expected.and_then(|v| v.version.clone()),
            ..GetOptions::default()
        };
        let result = match self.store.get_opts(key, options).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let attributes = result.attributes.clone();
        let meta = result.meta.clone();
        let bytes = result.bytes().await?;
        Ok(Some(Current {
            bytes,
            attributes,
            e_tag: meta.e_tag,
            version: meta.version,
            modified: SystemTime::from(meta.last_modified),
        }))
    }

    /// The revision the current file is: the number its record names, or (a file without
    /// a record) the one after its newest history object.
    pub(crate) fn current_revision(
        &self,
        path: &MemoryPath,
        current: &Current,
        listed: Option<&Listed>,
    ) -> Revision {
        let newest = listed.and_then(|l| l.last()).map(|(n, _)| *n);
        let number = record::number(&current.attributes).unwrap_or(newest.map_or(1, |n| n + 1));
        record::revision(
            &current.attributes,
            path,
            number,
            current.bytes.len() as u64,
            current.modified,
            Some(&current.bytes),
            newest.is_none(),
        )
    }

    /// A new revision of `path`, made now by this store's session.
    pub(crate) fn new_revision(
        &self,
        change: Change,
        path: &MemoryPath,
        old_path: Option<&MemoryPath>,
        content: Option<&[u8]>,
        number: u64,
    ) -> Revision {
        Revision {
            number,
            change,
            path: path.clone(),
            old_path: old_path.cloned(),
            time: SystemTime::now(),
            size: content.map_or(0, |c| c.len() as u64),
            sha256: content.map(sha256_hex),
            session: self.history.session.clone(),
            redacted: false,
        }
    }

    /// Puts a history object: `bytes` as revision `revision.number` of `path`, with its record.
    /// `create`: only if absent (an object already there holds that same revision, kept by
    /// an earlier attempt or another writer).
    pub(crate) async fn put_revision(
        &self,
        path: &MemoryPath,
        revision: &Revision,
        bytes: Bytes,
        create: bool,
    ) -> Result<()> {
        let key = self.revision_key(path, revision.number)?;
        let options = PutOptions {
            mode: if create {
                PutMode::Create
            } else {
                PutMode::Overwrite
            },
            attributes: record::attributes(revision, path),
            ..PutOptions::default()
        };
        match self
            .store
            .put_opts(&key, PutPayload::from(bytes), options)
            .await
        {
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(self.request_error("PUT", &key, e)),
        }
    }

    /// Keeps the current file's content in history before a change replaces it.
    pub(crate) async fn keep(
        &self,
        path: &MemoryPath,
        current: &Current,
        revision: &Revision,
    ) -> Result<()> {
        self.put_revision(path, revision, current.bytes.clone(), true)
            .await
    }

    /// Prunes `path`'s history after a change that made `newest` (and kept `kept`): the
    /// revisions the options no longer keep are deleted (best effort: one DELETE request).
    /// A history object's date is when its revision was replaced.
    pub(crate) async fn prune_after(
        &self,
        path: &MemoryPath,
        listed: &Listed,
        kept: Option<&Revision>,
        newest: &Revision,
    ) {
        let now = SystemTime::now();
        let skip = |n: u64| Some(n) == kept.map(|k| k.number) || n == newest.number;
        let mut revisions: Vec<Revision> = listed
            .iter()
            .filter(|(n, _)| !skip(*n))
            .map(|(n, meta)| placeholder(path, *n, SystemTime::from(meta.last_modified)))
            .collect();
        if let Some(kept) = kept {
            revisions.push(placeholder(path, kept.number, now));
        }
        revisions.push(newest.clone());
        let mut file = FileHistory::from_revisions(revisions);
        let dropped = file.prune(&self.history, now);
        let mut keys = Vec::with_capacity(dropped.len());
        for number in dropped {
            match self.revision_key(path, number) {
                Ok(key) => keys.push(key),
                Err(_) => return,
            }
        }
        if let Err(e) = self.delete_keys(keys).await {
            tracing::warn!(store = %self.label, %path, error = %e, "could not prune history");
        }
    }
}

/// A revision known only by number and date, for pruning.
pub(crate) fn placeholder(path: &MemoryPath, number: u64, time: SystemTime) -> Revision {
    Revision {
        number,
        change: Change::Modified,
        path: path.clone(),
        old_path: None,
        time,
        size: 0,
        sha256: None,
        session: None,
        redacted: false,
    }
}
