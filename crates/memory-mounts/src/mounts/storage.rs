//! `Storage` for [`Mounts`]: each call routed to the mount its path falls in (paths mapped
//! into the mount and errors mapped back), listings and searches over every mount merged, and
//! the root's changes refused as the contract says.

use memory_core::history::{Redaction, Revision, newest_first};

use super::*;

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Storage for Mounts {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        match self.route(path) {
            Route::In(m, inner) => m.storage.read(&inner).await.map_err(|e| outer_error(m, e)),
            Route::Root | Route::Outside => Err(Error::NotFound { path: path.clone() }),
        }
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        match self.route(path) {
            Route::Root => Ok(Some(Entry::Directory)),
            Route::Outside => Ok(None),
            Route::In(_, inner) if inner.is_root() => Ok(Some(Entry::Directory)),
            Route::In(m, inner) => match m.storage.stat(&inner).await {
                Ok(Some(Entry::File(meta))) => Ok(Some(Entry::File(memory_core::FileMeta {
                    path: path.clone(),
                    ..meta
                }))),
                Ok(other) => Ok(other),
                Err(e) => Err(outer_error(m, e)),
            },
        }
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        match self.route(path) {
            Route::Root => Err(Error::AlreadyExists { path: path.clone() }),
            Route::Outside => Err(self.outside(path)),
            Route::In(_, inner) if inner.is_root() => {
                Err(Error::AlreadyExists { path: path.clone() })
            }
            Route::In(m, inner) => m
                .storage
                .write(&inner, contents, mode)
                .await
                .map_err(|e| outer_error(m, e)),
        }
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        match self.route(path) {
            Route::Root => {
                if let Some(m) = self
                    .mounts
                    .iter()
                    .find(|m| m.mount.access == Access::ReadOnly)
                {
                    return Err(Self::read_only(m, path));
                }
                for m in &self.mounts {
                    match m.storage.delete(&MemoryPath::root()).await {
                        Ok(()) | Err(Error::NotFound { .. }) => {}
                        Err(e) => return Err(outer_error(m, e)),
                    }
                }
                Ok(())
            }
            Route::Outside => Err(Error::NotFound { path: path.clone() }),
            Route::In(m, inner) => match m.storage.delete(&inner).await {
                // An empty mount's folder still exists: deleting it removes nothing.
                Err(Error::NotFound { .. }) if inner.is_root() => Ok(()),
                other => other.map_err(|e| outer_error(m, e)),
            },
        }
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        Ok(self.listing(dir).await?.entries)
    }

    /// Each mount's listing, lifted to its folder; the skipped entries are summed over the
    /// stores listed.
    async fn listing(&self, dir: &MemoryPath) -> Result<Listing> {
        let lift = |m: &Mounted, files: Vec<FileMeta>| -> Vec<FileMeta> {
            files
                .into_iter()
                .filter_map(|f| {
                    let path = outer(m, &f.path)?;
                    Some(FileMeta { path, ..f })
                })
                .collect()
        };
        match self.route(dir) {
            Route::Root => {
                let mut all = Vec::new();
                let mut skipped = 0;
                for m in &self.mounts {
                    let listing = m
                        .storage
                        .listing(&MemoryPath::root())
                        .await
                        .map_err(|e| outer_error(m, e))?;
                    skipped += listing.skipped;
                    let files = listing.entries;
                    if files.is_empty() {
                        all.push(FileMeta {
                            path: m.root.join(EMPTY_MARK).expect("a short hidden name"),
                            size: 0,
                            modified: None,
                        });
                    }
                    all.extend(lift(m, files));
                }
                all.sort_by(|a, b| a.path.as_str().cmp(b.path.as_str()));
                Ok(Listing {
                    entries: all,
                    skipped,
                })
            }
            Route::Outside => Ok(Listing::default()),
            Route::In(m, inner) => {
                let Listing { entries, skipped } = m
                    .storage
                    .listing(&inner)
                    .await
                    .map_err(|e| outer_error(m, e))?;
                let entries = if entries.is_empty() && inner.is_root() {
                    vec![FileMeta {
                        path: m.root.join(EMPTY_MARK).expect("a short hidden name"),
                        size: 0,
                        modified: None,
                    }]
                } else {
                    lift(m, entries)
                };
                Ok(Listing { entries, skipped })
            }
        }
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let source = match self.route(from) {
            Route::Root => {
                return Err(Error::RenameIntoItself {
                    from: from.clone(),
                    to: to.clone(),
                });
            }
            Route::Outside => return Err(Error::NotFound { path: from.clone() }),
            Route::In(m, inner) => (m, inner),
        };
        if to.starts_with(from) {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        }
        if source.1.is_root() {
            return Err(Error::Refused {
                path: from.clone(),
                reason: "a mounted folder cannot be moved or renamed".to_owned(),
            });
        }
        if self.stat(from).await?.is_none() {
            return Err(Error::NotFound { path: from.clone() });
        }
        let target = match self.route(to) {
            Route::Root => return Err(Error::AlreadyExists { path: to.clone() }),
            Route::Outside => return Err(self.outside(to)),
            Route::In(_, inner) if inner.is_root() => {
                return Err(Error::AlreadyExists { path: to.clone() });
            }
            Route::In(m, inner) => (m, inner),
        };
        for (m, path) in [(source.0, from), (target.0, to)] {
            if m.mount.access == Access::ReadOnly {
                return Err(Self::read_only(m, path));
            }
        }
        if std::ptr::eq(source.0, target.0) {
            let m = source.0;
            return m
                .storage
                .rename(&source.1, &target.1)
                .await
                .map_err(|e| outer_error(m, e));
        }
        copy_then_delete(self, from, to).await
    }

    /// Every mount's files.
    async fn file_count(&self) -> Result<usize> {
        let mut n = 0usize;
        for m in &self.mounts {
            let count = m
                .storage
                .file_count()
                .await
                .map_err(|e| outer_error(m, e))?;
            n = n.saturating_add(count);
        }
        Ok(n)
    }

    /// `max_files` limits the mount the path is in (each store has its own limit, as in the
    /// hosted product), exactly as that mount's storage does; a read-only mount refuses.
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        match self.route(path) {
            Route::Root => Err(Error::AlreadyExists { path: path.clone() }),
            Route::Outside => Err(self.outside(path)),
            Route::In(_, inner) if inner.is_root() => {
                Err(Error::AlreadyExists { path: path.clone() })
            }
            Route::In(m, inner) => m
                .storage
                .create_within(&inner, contents, max_files)
                .await
                .map_err(|e| outer_error(m, e)),
        }
    }

    /// Every mount's search (read-only mounts too), for the mounts `query.under()` reaches
    /// (all of them under `/memories`, one under a path inside it): each answers the query
    /// below its part of `under`, its hits come back under the mount's folder, and the hits
    /// are merged by score (ties by path) and cut to `query.limit()` after merging. Scores of
    /// different engines are merged as they are (BM25 on both sides for the stores of this
    /// workspace).
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let targets: Vec<(&Mounted, MemoryPath)> = match self.route(query.under()) {
            Route::Root => self
                .mounts
                .iter()
                .map(|m| (m, MemoryPath::root()))
                .collect(),
            Route::In(m, inner) => vec![(m, inner)],
            Route::Outside => Vec::new(),
        };
        let mut hits = Vec::new();
        for (m, inner) in targets {
            let found = m
                .storage
                .search(&query.clone().with_under(inner))
                .await
                .map_err(|e| outer_error(m, e))?;
            for mut hit in found {
                // A storage's hits lie below the `under` it was given, so inside it.
                let Some(path) = outer(m, &hit.path) else {
                    continue;
                };
                hit.path = path;
                hits.push(hit);
            }
        }
        sort_hits(&mut hits);
        hits.truncate(query.limit());
        Ok(hits)
    }

    /// What every mount holds, with each mount's folder taken off its path limits.
    fn capabilities(&self) -> Capabilities {
        let mut caps = Capabilities::FULL;
        for m in &self.mounts {
            let inner = m.storage.capabilities();
            let folder = m.root.as_str().len() - MemoryPath::root().as_str().len();
            caps.binary_files &= inner.binary_files;
            caps.non_nfc_names &= inner.non_nfc_names;
            caps.large_files &= inner.large_files;
            caps.max_depth = caps.max_depth.min(inner.max_depth.saturating_sub(1));
            caps.max_path_bytes = caps
                .max_path_bytes
                .min(inner.max_path_bytes.saturating_sub(folder));
        }
        caps
    }
    async fn set_modified(
        &self,
        path: &MemoryPath,
        modified: std::time::SystemTime,
    ) -> Result<bool> {
        match self.route(path) {
            Route::In(_, inner) if inner.is_root() => Err(Error::NotFound { path: path.clone() }),
            Route::In(m, inner) => m
                .storage
                .set_modified(&inner, modified)
                .await
                .map_err(|e| outer_error(m, e)),
            Route::Root | Route::Outside => Err(Error::NotFound { path: path.clone() }),
        }
    }

    /// Routed to the path's mount; for `/memories`, every mount's history merged (a mount
    /// that keeps none is left out).
    async fn history(&self, path: &MemoryPath) -> Result<Vec<Revision>> {
        let outer_revision = |m: &Mounted, mut revision: Revision| {
            revision.path = outer(m, &revision.path).unwrap_or_else(|| m.root.clone());
            revision.old_path = revision.old_path.and_then(|old| outer(m, &old));
            revision
        };
        match self.route(path) {
            Route::In(m, inner) => {
                let revisions = m.storage.history(&inner).await;
                let revisions = revisions.map_err(|e| outer_error(m, e))?;
                Ok(revisions
                    .into_iter()
                    .map(|r| outer_revision(m, r))
                    .collect())
            }
            Route::Root => {
                let mut all = Vec::new();
                for m in &self.mounts {
                    match m.storage.history(&MemoryPath::root()).await {
                        Ok(revisions) => {
                            all.extend(revisions.into_iter().map(|r| outer_revision(m, r)))
                        }
                        Err(Error::HistoryOff | Error::Unsupported { .. }) => {}
                        Err(e) => return Err(outer_error(m, e)),
                    }
                }
                newest_first(&mut all);
                Ok(all)
            }
            Route::Outside => Ok(Vec::new()),
        }
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        match self.route(path) {
            Route::In(m, inner) => {
                (m.storage.read_revision(&inner, number).await).map_err(|e| outer_error(m, e))
            }
            Route::Root | Route::Outside => Err(Error::NoRevision {
                path: path.clone(),
                number,
            }),
        }
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        match self.route(path) {
            Route::In(_, inner) if inner.is_root() => {
                Err(Error::AlreadyExists { path: path.clone() })
            }
            Route::In(m, inner) => (m.storage.write_restored(&inner, number, contents).await)
                .map_err(|e| outer_error(m, e)),
            Route::Root => Err(Error::AlreadyExists { path: path.clone() }),
            Route::Outside => Err(self.outside(path)),
        }
    }

    async fn redact_revisions(&self, path: &MemoryPath, which: Redaction) -> Result<u64> {
        match self.route(path) {
            Route::In(m, inner) => {
                (m.storage.redact_revisions(&inner, which).await).map_err(|e| outer_error(m, e))
            }
            Route::Root | Route::Outside => Err(Error::NotFound { path: path.clone() }),
        }
    }
}
