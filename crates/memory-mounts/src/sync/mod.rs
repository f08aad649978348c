//! [`FolderSync`]: keeps a folder of plain files in step with one versioned memory store, by
//! the rules of the official Python SDK's `SessionMemoryStores` (`anthropic/lib/tools/
//! _memories.py`), so a folder either of them synced can be synced by the other.
//!
//! The memory `/a/b.md` is the file `DIR/a/b.md`; `DIR/.anthropic-memory-store` (the
//! [`MARKER_FILE`], exactly the SDK's bytes) names the store the folder mirrors. Each pass
//! lists the store without content, hashes the folder, and decides per path against the
//! baseline (each path's `content_sha256` at its last sync):
//!
//! - changed only on the store: written to the file;
//! - changed only in the folder: uploaded, as an update with a `content_sha256` precondition
//!   (or a create);
//! - changed on both sides: the store's version wins, and the folder's text is kept beside it
//!   as `PATH.conflict-<UTC time>` (which the next pass uploads as a new memory), so no edit
//!   is lost;
//! - deleted in the folder: deleted on the store with an `expected_content_sha256`
//!   precondition, only once the file stayed missing for [`SyncOptions::delete_after`] and the
//!   marker still holds, at most a bounded number per pass;
//! - deleted on the store: deleted in the folder, unless the file holds an edit the store never
//!   saw, which is re-created;
//! - [`SyncOptions::read_only`]: pulls, never pushes.
//!
//! A folder whose marker is missing or names another store while files remain is never
//! uploaded from and never drives deletes ([`SyncReport::blocked`]); a folder wiped entirely,
//! or every one of two or more files gone at once, is downloaded again
//! ([`SyncReport::recovered`]). A pass that finds nothing changed moves no content.

mod folder;
mod merge;
mod options;
mod report;
mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt as _;
use memory_store::{
    ListMemories, MAX_CONTENT_BYTES, Memory, MemoryListItem, Precondition, StoreError, StoresApi,
    Timestamp, UpdateMemory, View,
};

pub use folder::{MARKER_FILE, marker_bytes};
pub use options::{DEFAULT_DELETE_AFTER, DeleteMode, SyncOptions};
pub use report::{Conflict, SyncError, SyncReport, Unsynced};

use folder::{Folder, Marker, sha256_hex};
use merge::{Step, decide};
use state::{State, StateFile};

/// Content fetches in flight at once during a pass (the SDK's `_FETCH_CONCURRENCY`).
const FETCH_CONCURRENCY: usize = 16;

/// Uploads in flight at once during a pass.
const UPLOAD_CONCURRENCY: usize = 8;

/// Bounds of the per-pass cap on server deletes (the SDK's): a quarter of the baseline, at
/// least 8 and at most 50.
const DELETE_CAP_FLOOR: usize = 8;
const DELETE_CAP_CEILING: usize = 50;

/// Page sizes of the listings: the API's largest per view.
const PAGE: i64 = 100;
const FULL_PAGE: i64 = 20;

/// One folder kept in step with one memory store. See the [module docs](self) for the rules.
///
/// ```no_run
/// use std::path::Path;
/// use memory_mounts::sync::{FolderSync, SyncOptions};
/// use memory_mounts::StoreStorage;
/// use memory_store::MemoryStores;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let engine = MemoryStores::open("memory-stores.db").await?;
/// let store = StoreStorage::local(engine, "memstore_01abc", "sesn_sync")?;
/// let mut sync = FolderSync::open(
///     store.api().clone(),
///     store.store_id(),
///     Path::new("notes"),
///     Path::new("notes-sync-state.json"),
///     SyncOptions::default(),
/// )?;
/// let report = sync.pass().await?;
/// println!("pulled {:?}, pushed {:?}", report.pulled, report.pushed);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FolderSync {
    api: Arc<dyn StoresApi>,
    store_id: String,
    /// The folder as given; opened again at each pass, so a folder removed and made again
    /// (or gone, and then made again empty) is the one synced, never a stale handle.
    dir: PathBuf,
    folder: Arc<Folder>,
    state_file: StateFile,
    state: State,
    options: SyncOptions,
}

impl FolderSync {
    /// Opens the folder `dir` (created when missing) and the sync state at `state_path`
    /// (locked for as long as the value lives; created on the first pass), for the store
    /// `store_id` behind `api`.
    ///
    /// # Errors
    /// [`SyncError::Folder`] when `dir` cannot be a folder, [`SyncError::Busy`] when another
    /// sync holds the state, [`SyncError::State`] when it is damaged or another store's.
    pub fn open(
        api: Arc<dyn StoresApi>,
        store_id: &str,
        dir: &Path,
        state_path: &Path,
        options: SyncOptions,
    ) -> Result<FolderSync, SyncError> {
        let folder = Folder::open(dir).map_err(|source| SyncError::Folder {
            path: dir.to_owned(),
            source,
        })?;
        let state_error = |source: io::Error| {
            if source.kind() == io::ErrorKind::WouldBlock {
                SyncError::Busy {
                    path: state_path.to_owned(),
                }
            } else {
                SyncError::State {
                    path: state_path.to_owned(),
                    source,
                }
            }
        };
        let state_file = StateFile::lock(state_path).map_err(state_error)?;
        let state = state_file.load(store_id).map_err(state_error)?;
        Ok(FolderSync {
            api,
            store_id: store_id.to_owned(),
            dir: dir.to_owned(),
            folder: Arc::new(folder),
            state_file,
            state,
            options,
        })
    }

    /// The folder's canonical path.
    pub fn folder(&self) -> &Path {
        self.folder.root()
    }

    /// The store's id.
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    /// One pass: scan, list, merge, move what changed, save the state.
    ///
    /// # Errors
    /// [`SyncError`] when the folder cannot be scanned, the store cannot be listed or the
    /// state cannot be saved; a single path's failure is in [`SyncReport::failed`] instead.
    pub async fn pass(&mut self) -> Result<SyncReport, SyncError> {
        self.run_pass(false).await
    }

    /// The last pass of a run (on Ctrl-C or SIGTERM): the same rules, but a file deleted in
    /// the folder is deleted on the store without waiting for the delay, since no later pass
    /// will confirm it (the cap and the checks still apply), as the SDK's `finish` does.
    ///
    /// # Errors
    /// As [`pass`](Self::pass).
    pub async fn final_pass(&mut self) -> Result<SyncReport, SyncError> {
        self.run_pass(true).await
    }

    async fn run_pass(&mut self, waive_delay: bool) -> Result<SyncReport, SyncError> {
        let mut report = SyncReport::default();
        let folder = Folder::open(&self.dir).map_err(|source| SyncError::Folder {
            path: self.dir.clone(),
            source,
        })?;
        self.folder = Arc::new(folder);
        let scan = self.scan().await?;
        report
            .warnings
            .extend(scan.skipped.iter().map(|what| format!("skipped {what}")));
        let mut local = scan.files;
        match scan.marker {
            Marker::Ours => {}
            Marker::Missing if self.options.adopt && !local.is_empty() => {
                self.write_marker()?;
                report
                    .warnings
                    .push("adopted the folder: wrote its marker".to_owned());
            }
            marker if local.is_empty() => {
                let reason = if self.state.baseline.is_empty() && marker == Marker::Missing {
                    "the first sync of this folder"
                } else {
                    "the folder or its marker is gone"
                };
                self.recover(reason, &mut report).await?;
                return self.finish(report);
            }
            marker => {
                report.blocked = Some(format!(
                    "{}; the folder is left as found and nothing is synced (a folder is synced \
                     only when its {MARKER_FILE} names this store{})",
                    if marker == Marker::Missing {
                        format!("the folder holds files but no {MARKER_FILE}")
                    } else {
                        format!("{MARKER_FILE} names another store")
                    },
                    if marker == Marker::Missing {
                        "; pass --adopt to sync the files it holds"
                    } else {
                        ""
                    }
                ));
                return Ok(report);
            }
        }
        let remote = self.list_remote().await?;
        self.settle_sent(&remote);
        // One file gone is a delete; every file gone at once is a wipe.
        if local.is_empty() && self.state.baseline.len() > 1 {
            self.recover("every file of the folder is gone at once", &mut report)
                .await?;
            return self.finish(report);
        }

        let read_only = self.options.read_only;
        let paths: BTreeSet<String> = remote
            .keys()
            .chain(local.keys())
            .chain(self.state.baseline.keys())
            .cloned()
            .collect();
        let mut baseline = BTreeMap::new();
        let mut removals = Vec::new();
        let mut deletes = Vec::new();
        let mut uploads = Vec::new();
        let mut pulls = Vec::new();
        for rel in paths {
            let base = self.state.baseline.get(&rel).map(String::as_str);
            let local_sha = local.get(&rel).map(String::as_str);
            let remote_item = remote.get(&rel);
            if local_sha.is_some() || remote_item.is_none() {
                self.state.pending_deletes.remove(&rel);
            }
            let refused = self.state.refused.get(&rel).map(String::as_str);
            match decide(base, local_sha, remote_item, read_only, refused) {
                Step::Settled(sha) => {
                    if let Some(sha) = sha {
                        baseline.insert(rel, sha);
                    } else if local_sha.is_some() && remote_item.is_none() && read_only {
                        report.warnings.push(format!(
                            "{} is only in the folder; a read-only sync never uploads it",
                            memory_path(&rel)
                        ));
                    }
                }
                Step::Pull { remote, keep, .. } => {
                    if let Some(keep) = &keep {
                        baseline.insert(rel.clone(), keep.clone());
                    }
                    pulls.push((rel, remote, keep));
                }
                Step::Upload {
                    local_sha,
                    existing,
                    on_failure,
                } => {
                    if let Some(sha) = &on_failure {
                        baseline.insert(rel.clone(), sha.clone());
                    }
                    uploads.push((rel, local_sha, existing));
                }
                Step::RemoveLocal { base } => removals.push((rel, base)),
                Step::DeleteRemote { remote, base } => {
                    baseline.insert(rel.clone(), base.clone());
                    deletes.push((rel, remote, base));
                }
            }
        }
        self.state.baseline = baseline;
        local.clear();

        for (rel, base) in removals {
            self.remove_local(rel, base, &mut uploads, &mut report);
        }
        self.delete_remote_all(deletes, waive_delay, &mut report)
            .await;
        self.upload_all(uploads, &mut report).await?;
        self.pull_all(pulls, &mut report).await;
        self.finish(report)
    }

    fn finish(&mut self, report: SyncReport) -> Result<SyncReport, SyncError> {
        self.save_state()?;
        Ok(report)
    }

    async fn scan(&self) -> Result<folder::Scan, SyncError> {
        let folder = Arc::clone(&self.folder);
        let store_id = self.store_id.clone();
        let scanned = tokio::task::spawn_blocking(move || folder.scan(&store_id))
            .await
            .map_err(io::Error::other)
            .and_then(|scan| scan);
        scanned.map_err(|source| SyncError::Folder {
            path: self.folder.root().to_owned(),
            source,
        })
    }

    fn folder_error(&self, source: io::Error) -> SyncError {
        SyncError::Folder {
            path: self.folder.root().to_owned(),
            source,
        }
    }

    fn save_state(&self) -> Result<(), SyncError> {
        self.state_file
            .save(&self.state)
            .map_err(|source| SyncError::State {
                path: self.state_file.path().to_owned(),
                source,
            })
    }

    fn write_marker(&self) -> Result<(), SyncError> {
        self.folder
            .write(MARKER_FILE, &marker_bytes(&self.store_id))
            .map_err(|e| self.folder_error(e))
    }

    /// Every memory of the store by relative path (content-free listing).
    async fn list_remote(&self) -> Result<BTreeMap<String, Memory>, SyncError> {
        let mut out = BTreeMap::new();
        self.list_into(View::Basic, |rel, memory| {
            out.insert(rel, memory);
        })
        .await?;
        Ok(out)
    }

    async fn list_into(
        &self,
        view: View,
        mut each: impl FnMut(String, Memory),
    ) -> Result<(), SyncError> {
        let mut page = None;
        loop {
            let got = self
                .api
                .list_memories(
                    &self.store_id,
                    ListMemories {
                        limit: Some(if view == View::Full { FULL_PAGE } else { PAGE }),
                        page,
                        view,
                        ..Default::default()
                    },
                )
                .await?;
            for item in got.data {
                let MemoryListItem::Memory(memory) = item else {
                    continue;
                };
                let rel = memory.path.trim_start_matches('/').to_owned();
                // The reserved marker is never synced, whoever wrote it to the store.
                if rel != MARKER_FILE && !rel.is_empty() {
                    each(rel, memory);
                }
            }
            match got.next_page {
                Some(next) => page = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// Rebuilds the folder from the store: the marker, then every memory; pushes nothing.
    async fn recover(&mut self, reason: &str, report: &mut SyncReport) -> Result<(), SyncError> {
        report.recovered = Some(reason.to_owned());
        self.state.baseline.clear();
        self.state.sent.clear();
        // The folder was just rebuilt: earlier absences mean nothing.
        self.state.pending_deletes.clear();
        self.write_marker()?;
        let mut memories = Vec::new();
        self.list_into(View::Full, |rel, memory| memories.push((rel, memory)))
            .await?;
        for (rel, memory) in memories {
            let content = memory.content.as_deref().unwrap_or_default();
            match self.folder.write(&rel, content.as_bytes()) {
                Ok(()) => {
                    self.state.baseline.insert(rel, memory.content_sha256);
                    report.pulled.push(memory.path);
                }
                // Never in the baseline, so its absence reads as a failed download: pulled
                // again next pass, never deleted.
                Err(e) => report.failed.push(Unsynced {
                    path: memory.path,
                    reason: format!("cannot write the file: {e}"),
                }),
            }
        }
        Ok(())
    }

    /// Answers of uploads that never came: a memory holding exactly the sent bytes is that
    /// upload, saved after all.
    fn settle_sent(&mut self, remote: &BTreeMap<String, Memory>) {
        for (rel, sha) in std::mem::take(&mut self.state.sent) {
            if remote.get(&rel).is_some_and(|m| m.content_sha256 == sha) {
                self.state.baseline.insert(rel, sha);
            }
        }
    }

    /// The store deleted `rel`: removes the file if it still holds `base`; a file edited since
    /// the scan is re-created on the store instead.
    fn remove_local(
        &mut self,
        rel: String,
        base: String,
        uploads: &mut Vec<(String, String, Option<Memory>)>,
        report: &mut SyncReport,
    ) {
        let fresh = match self.folder.hash(&rel) {
            Ok(fresh) => fresh,
            Err(e) => {
                self.state.baseline.insert(rel.clone(), base);
                report.failed.push(Unsynced {
                    path: memory_path(&rel),
                    reason: format!("cannot read the file: {e}"),
                });
                return;
            }
        };
        match fresh {
            None => {}
            Some(fresh) if fresh == base => match self.folder.remove(&rel) {
                Ok(()) => report.deleted_local.push(memory_path(&rel)),
                Err(e) => {
                    self.state.baseline.insert(rel.clone(), base);
                    report.failed.push(Unsynced {
                        path: memory_path(&rel),
                        reason: format!("cannot remove the file the store deleted: {e}"),
                    });
                }
            },
            // Edited since the scan: the only copy, re-created unless this sync never pushes.
            Some(fresh)
                if !self.options.read_only
                    && self.state.refused.get(&rel).map(String::as_str) != Some(&fresh) =>
            {
                uploads.push((rel, fresh, None));
            }
            Some(_) => {}
        }
    }

    /// The corroborated server deletes of one pass.
    async fn delete_remote_all(
        &mut self,
        deletes: Vec<(String, Memory, String)>,
        waive_delay: bool,
        report: &mut SyncReport,
    ) {
        let cap = (self.state.baseline.len() / 4).clamp(DELETE_CAP_FLOOR, DELETE_CAP_CEILING);
        let mut attempted = 0;
        let now = unix_now();
        for (rel, remote, base) in deletes {
            if self.options.deletions == DeleteMode::Disabled {
                continue;
            }
            let first_absent = *self.state.pending_deletes.entry(rel.clone()).or_insert(now);
            let waited = Duration::from_secs_f64((now - first_absent).max(0.0));
            if !waive_delay && waited < self.options.delete_after {
                report.pending_deletes.push(memory_path(&rel));
                continue;
            }
            // Checked again now: the folder may have been destroyed or refilled meanwhile.
            let marker_ok = self
                .folder
                .read(MARKER_FILE)
                .is_ok_and(|bytes| bytes == Some(marker_bytes(&self.store_id)));
            if !marker_ok {
                report.pending_deletes.push(memory_path(&rel));
                continue;
            }
            if !matches!(self.folder.exists(&rel), Ok(false)) {
                self.state.pending_deletes.remove(&rel);
                continue;
            }
            if attempted >= cap {
                report.pending_deletes.push(memory_path(&rel));
                continue;
            }
            attempted += 1;
            if self.options.deletions == DeleteMode::LogOnly {
                report.would_delete.push(memory_path(&rel));
                continue;
            }
            match self
                .api
                .delete_memory(&self.store_id, &remote.id, Some(&base))
                .await
            {
                Ok(_) | Err(StoreError::NotFound { .. }) => {
                    self.state.baseline.remove(&rel);
                    self.state.pending_deletes.remove(&rel);
                    report.deleted_remote.push(memory_path(&rel));
                }
                Err(StoreError::PreconditionFailed { .. }) => report.warnings.push(format!(
                    "{} was deleted here but changed on the store meanwhile; the store's \
                     version comes back next pass",
                    memory_path(&rel)
                )),
                Err(e) => report.failed.push(Unsynced {
                    path: memory_path(&rel),
                    reason: format!("the store did not delete it: {e}"),
                }),
            }
        }
    }

    /// Uploads, a bounded number at a time. The sent hashes are saved before any request, so
    /// an answer lost to a crash is recognised by the next listing.
    async fn upload_all(
        &mut self,
        uploads: Vec<(String, String, Option<Memory>)>,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        let mut ready = Vec::new();
        for (rel, local_sha, existing) in uploads {
            match self.upload_content(&rel) {
                Ok(Some(content)) => {
                    self.state
                        .sent
                        .insert(rel.clone(), sha256_hex(content.as_bytes()));
                    ready.push((rel, content, existing));
                }
                Ok(None) => {}
                Err(Refusal::Permanent(reason)) => {
                    self.state.refused.insert(rel.clone(), local_sha);
                    report.refused.push(Unsynced {
                        path: memory_path(&rel),
                        reason,
                    });
                }
                Err(Refusal::Failed(reason)) => report.failed.push(Unsynced {
                    path: memory_path(&rel),
                    reason,
                }),
            }
        }
        if ready.is_empty() {
            return Ok(());
        }
        self.save_state()?;
        let api = &self.api;
        let store_id = self.store_id.as_str();
        let results: Vec<_> = futures_util::stream::iter(ready)
            .map(|(rel, content, existing)| async move {
                let result = upload(api.as_ref(), store_id, &rel, &content, existing).await;
                (rel, content, result)
            })
            .buffer_unordered(UPLOAD_CONCURRENCY)
            .collect()
            .await;
        for (rel, content, result) in results {
            match result {
                Ok(memory) => {
                    self.state.sent.remove(&rel);
                    self.state.refused.remove(&rel);
                    self.state.baseline.insert(rel, memory.content_sha256);
                    report.pushed.push(memory.path);
                }
                Err(StoreError::InvalidRequest { message, .. }) => {
                    self.state.sent.remove(&rel);
                    self.state
                        .refused
                        .insert(rel.clone(), sha256_hex(content.as_bytes()));
                    report.refused.push(Unsynced {
                        path: memory_path(&rel),
                        reason: message,
                    });
                }
                // The precondition lost a race: the store moved meanwhile. The next pass pulls
                // its version and keeps this edit as a conflict copy.
                Err(StoreError::PreconditionFailed { .. }) => report.warnings.push(format!(
                    "{} changed on the store while it was uploaded; the next pass keeps this \
                     edit as a conflict copy",
                    memory_path(&rel)
                )),
                // Unknown outcome: the sent hash stays for the next listing to settle.
                Err(e) => report.failed.push(Unsynced {
                    path: memory_path(&rel),
                    reason: format!("the upload failed: {e}"),
                }),
            }
        }
        Ok(())
    }

    /// The text to upload for `rel`, read now; `None` when the file is gone.
    fn upload_content(&self, rel: &str) -> Result<Option<String>, Refusal> {
        let bytes = match self.folder.read(rel) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(e) => return Err(Refusal::Failed(format!("cannot read the file: {e}"))),
        };
        if bytes.len() > MAX_CONTENT_BYTES {
            return Err(Refusal::Permanent(format!(
                "the file is {} bytes; a memory holds at most {MAX_CONTENT_BYTES} bytes",
                bytes.len()
            )));
        }
        String::from_utf8(bytes).map(Some).map_err(|_| {
            Refusal::Permanent("the file is not UTF-8 text, which a memory must be".to_owned())
        })
    }

    /// Fetches and writes the pulls, a bounded number at a time. A file holding an edit the
    /// store never saw is copied to a conflict file first.
    async fn pull_all(
        &mut self,
        pulls: Vec<(String, Memory, Option<String>)>,
        report: &mut SyncReport,
    ) {
        let api = &self.api;
        let store_id = self.store_id.as_str();
        let fetched: Vec<_> = futures_util::stream::iter(pulls)
            .map(|(rel, listed, keep)| async move {
                let got = api.retrieve_memory(store_id, &listed.id).await;
                (rel, listed, keep, got)
            })
            .buffer_unordered(FETCH_CONCURRENCY)
            .collect()
            .await;
        for (rel, listed, keep, got) in fetched {
            let memory = match got {
                Ok(memory) if memory.path == listed.path => memory,
                // Deleted or renamed since the listing: the next pass reconciles it.
                Ok(_) | Err(StoreError::NotFound { .. }) => continue,
                Err(e) => {
                    report.failed.push(Unsynced {
                        path: listed.path,
                        reason: format!("cannot fetch it: {e}"),
                    });
                    continue;
                }
            };
            match self.write_pulled(&rel, &memory, keep.as_deref()) {
                Ok(conflict) => {
                    report.conflicts.extend(conflict);
                    self.state
                        .baseline
                        .insert(rel, memory.content_sha256.clone());
                    report.pulled.push(memory.path);
                }
                Err(reason) => report.failed.push(Unsynced {
                    path: memory.path,
                    reason,
                }),
            }
        }
    }

    /// Writes a fetched memory over its file, first keeping a local edit (bytes that are
    /// neither the baseline nor the store's) as a conflict copy.
    fn write_pulled(
        &self,
        rel: &str,
        memory: &Memory,
        base: Option<&str>,
    ) -> Result<Option<Conflict>, String> {
        let content = memory.content.as_deref().unwrap_or_default().as_bytes();
        let current = self
            .folder
            .read(rel)
            .map_err(|e| format!("cannot read the file before replacing it: {e}"))?;
        let mut conflict = None;
        if let Some(current) = current {
            let sha = sha256_hex(&current);
            if Some(sha.as_str()) != base && sha != memory.content_sha256 {
                let kept = self
                    .conflict_path(rel)
                    .map_err(|e| format!("cannot name a conflict copy: {e}"))?;
                self.folder
                    .write(&kept, &current)
                    .map_err(|e| format!("cannot keep the local edit as {kept}: {e}"))?;
                conflict = Some(Conflict {
                    path: memory_path(rel),
                    kept_as: memory_path(&kept),
                });
            }
        }
        self.folder
            .write(rel, content)
            .map_err(|e| format!("cannot write the file: {e}"))?;
        Ok(conflict)
    }

    /// `rel.conflict-<UTC time>`, with `-2`, `-3`... when taken.
    fn conflict_path(&self, rel: &str) -> io::Result<String> {
        let stamp = compact_utc(Timestamp::now());
        let first = format!("{rel}.conflict-{stamp}");
        let mut candidate = first.clone();
        let mut n = 1;
        while self.folder.exists(&candidate)? {
            n += 1;
            candidate = format!("{first}-{n}");
        }
        Ok(candidate)
    }
}

/// Why a file is not uploaded.
enum Refusal {
    /// The store would refuse these bytes every time: retried once they change.
    Permanent(String),
    /// Reading failed: retried next pass.
    Failed(String),
}

/// One upload: an update with the listed hash as precondition, or a create; an update of a
/// memory deleted meanwhile becomes a create (the file is now the only copy).
async fn upload(
    api: &dyn StoresApi,
    store_id: &str,
    rel: &str,
    content: &str,
    existing: Option<Memory>,
) -> Result<Memory, StoreError> {
    if let Some(existing) = existing {
        let update = UpdateMemory {
            content: Some(content.to_owned()),
            path: None,
            precondition: Some(Precondition {
                content_sha256: existing.content_sha256.clone(),
            }),
        };
        match api.update_memory(store_id, &existing.id, update).await {
            Err(StoreError::NotFound { .. }) => {}
            other => return other,
        }
    }
    api.create_memory(store_id, &memory_path(rel), content, None)
        .await
}

/// The memory path of a relative file path: `a/b.md` → `/a/b.md`.
fn memory_path(rel: &str) -> String {
    format!("/{rel}")
}

/// `20261203T171500Z` of a time: RFC 3339 without separators or fraction, so a file name
/// holds it on every platform.
fn compact_utc(time: Timestamp) -> String {
    let text = time.to_string();
    let seconds = text.split('.').next().unwrap_or(&text);
    let mut out: String = seconds.chars().filter(|c| *c != '-' && *c != ':').collect();
    out.push('Z');
    out
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests;
