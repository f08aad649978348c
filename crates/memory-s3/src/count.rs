//! The file count, kept in a counter object so that no create lists the store.
//!
//! The counter is the object `PREFIX/.memory-count` (outside `PREFIX/memories/`, so no memory
//! path reaches it); it holds the number of files as decimal text. Every change goes through a
//! conditional PUT (`If-Match` on the ETag last read), so of two writers that read the same
//! count exactly one changes it; the other reads it again and retries.
//!
//! The protocol, and what it guarantees:
//!
//! - **create** reserves first: the count is raised by one only while it is below the limit,
//!   then the file is put with `If-None-Match: *`. A put that fails gives the place back.
//!   Creates racing at `max_files - 1`, from any number of processes and hosts, are exact:
//!   one raise succeeds, the others see the limit and are refused. The files in the store
//!   never exceed the count.
//! - **delete** lowers the count by the number of files it deleted, after deleting them.
//! - A process that stops between the raise and the put (a crash, a lost connection) leaves
//!   the count one too high: the store refuses one create too early, never one too many.
//! - Two deletes of the same file at the same moment both succeed on S3 (a DELETE does not say
//!   whether there was an object) and both lower the count: it is then one too low, and the
//!   store could take one file over the limit, until the count is recounted.
//! - Writers that do not keep the counter (another tool, an older release) make it drift.
//!
//! [`ObjectStoreStorage::reconcile_file_count`] recounts (one listing of the store) and stores
//! the true figure; it runs by itself the first time a store without a counter is used, and
//! an operator can run it at any time (best while nothing else writes: a create between its
//! listing and its put is not counted).

use bytes::Bytes;
use memory_core::{Error, Result};
use object_store::path::Path;
use object_store::{GetOptions, PutMode, PutOptions, PutPayload, UpdateVersion};

use crate::ObjectStoreStorage;
use crate::error::S3Error;

/// Conditional updates tried before a change of the count gives up (each failed try means
/// another writer changed it in between, so this bounds contention, not correctness).
const ATTEMPTS: usize = 64;

/// The counter as last read or written: the count and the version to update it from.
pub(crate) type Counter = (usize, UpdateVersion);

impl ObjectStoreStorage {
    /// The counter object's key: `PREFIX/.memory-count`.
    pub(crate) fn counter_key(prefix: &str) -> String {
        if prefix.is_empty() {
            ".memory-count".to_owned()
        } else {
            format!("{prefix}/.memory-count")
        }
    }

    fn cached_counter(&self) -> Option<Counter> {
        self.counter_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn cache_counter(&self, counter: Option<Counter>) {
        *self.counter_cache.lock().unwrap_or_else(|p| p.into_inner()) = counter;
    }

    /// GET of the counter: `None` when there is none yet, or when it does not hold a count.
    async fn get_counter(&self) -> Result<Option<(Option<usize>, UpdateVersion)>> {
        let key = &self.counter;
        let result = match self.store.get_opts(key, GetOptions::default()).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.request_error("GET", key, e)),
        };
        let version = UpdateVersion {
            e_tag: result.meta.e_tag.clone(),
            version: result.meta.version.clone(),
        };
        let bytes = result
            .bytes()
            .await
            .map_err(|e| self.request_error("GET", key, e))?;
        let count = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok());
        Ok(Some((count, version)))
    }

    /// Puts `count` if the counter is still at `expected` (`None`: only if there is none).
    /// `Ok(None)` when another writer changed it first.
    async fn put_counter(
        &self,
        count: usize,
        expected: Option<&UpdateVersion>,
    ) -> Result<Option<UpdateVersion>> {
        let key = &self.counter;
        let mode = match expected {
            Some(version) => PutMode::Update(version.clone()),
            None => PutMode::Create,
        };
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let payload = PutPayload::from(Bytes::from(count.to_string()));
        match self.store.put_opts(key, payload, options).await {
            Ok(result) => Ok(Some(UpdateVersion {
                e_tag: result.e_tag,
                version: result.version,
            })),
            Err(
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. }
                | object_store::Error::NotFound { .. },
            ) => Ok(None),
            Err(e) => Err(self.request_error("PUT", key, e)),
        }
    }

    /// The counter fresh from the store; a store without one (or with an unreadable one) is
    /// recounted first.
    pub(crate) async fn load_counter(&self) -> Result<Counter> {
        for _ in 0..ATTEMPTS {
            match self.get_counter().await? {
                Some((Some(count), version)) => {
                    let counter = (count, version);
                    self.cache_counter(Some(counter.clone()));
                    return Ok(counter);
                }
                Some((None, version)) => {
                    tracing::warn!(store = %self.label, key = %self.counter, "the file counter does not hold a count; recounting");
                    self.recount(Some(version)).await?;
                }
                None => {
                    self.recount(None).await?;
                }
            }
        }
        Err(self.contended())
    }

    /// Lists the store and puts the count if the counter is still at `expected`.
    async fn recount(&self, expected: Option<UpdateVersion>) -> Result<Option<usize>> {
        let count = self.list_below(&self.base).await?.len();
        match self.put_counter(count, expected.as_ref()).await? {
            Some(version) => {
                self.cache_counter(Some((count, version)));
                tracing::info!(store = %self.label, files = count, "counted the store's files");
                Ok(Some(count))
            }
            None => Ok(None),
        }
    }

    /// Counts the files (one listing of the store) and stores that figure in the counter
    /// object, replacing whatever it held. Returns the count.
    ///
    /// Runs by itself the first time a store without a counter is used; call it to repair a
    /// count that drifted (see the crate README: a crash between a create's two steps, two
    /// deletes of one file at the same moment, writers that do not keep the counter). Best
    /// run while nothing else writes: a create that lands between the listing and the update
    /// is not counted.
    ///
    /// # Errors
    /// [`memory_core::Error::Backend`] when a request fails, or when other writers kept
    /// changing the counter for the whole time.
    pub async fn reconcile_file_count(&self) -> Result<usize> {
        for _ in 0..ATTEMPTS {
            let expected = self.get_counter().await?.map(|(_, version)| version);
            if let Some(count) = self.recount(expected).await? {
                return Ok(count);
            }
        }
        Err(self.contended())
    }

    /// Changes the count by `delta` (never below 0). With `limit`, raises it only while it is
    /// below `limit`: `Err(StoreFull)` otherwise.
    ///
    /// Changes asked for at the same moment in this process share one conditional PUT of the
    /// counter (the first caller to get the turn applies every change queued, each checked
    /// against its own limit in turn), so writers of one process never fight each other over
    /// the counter's ETag.
    pub(crate) async fn change_count(&self, delta: isize, limit: Option<usize>) -> Result<()> {
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        self.counter_queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Change {
                delta,
                limit,
                reply,
            });
        let turn = self.counter_turn.lock().await;
        // An earlier holder of the turn may have applied this change already.
        if let Ok(result) = answer.try_recv() {
            return result;
        }
        let batch =
            std::mem::take(&mut *self.counter_queue.lock().unwrap_or_else(|p| p.into_inner()));
        self.apply(batch).await;
        drop(turn);
        match answer.await {
            Ok(result) => result,
            // Every change taken from the queue is answered; this one was in the batch.
            Err(_) => Err(self.contended()),
        }
    }

    /// Applies a batch of changes with one conditional PUT (more when another process changed
    /// the counter in between), and answers each.
    async fn apply(&self, batch: Vec<Change>) {
        if batch.is_empty() {
            return;
        }
        let start = match self.cached_counter() {
            Some(counter) => Ok((counter, false)),
            None => self.load_counter().await.map(|c| (c, true)),
        };
        let (mut current, mut fresh) = match start {
            Ok(start) => start,
            Err(e) => return answer_all(batch, &e),
        };
        for _ in 0..ATTEMPTS {
            let (count, version) = &current;
            let mut new = *count;
            let mut granted = Vec::with_capacity(batch.len());
            let mut stale = false;
            for change in &batch {
                let full = matches!(change.limit, Some(max) if new >= max);
                if full && !fresh {
                    // The cached figure may be old (files deleted elsewhere): look again.
                    stale = true;
                    break;
                }
                granted.push(!full);
                if !full {
                    new = new.saturating_add_signed(change.delta);
                }
            }
            let outcome = if stale {
                None
            } else if new == *count {
                Some(Ok(()))
            } else {
                match self.put_counter(new, Some(version)).await {
                    Ok(Some(version)) => {
                        self.cache_counter(Some((new, version)));
                        Some(Ok(()))
                    }
                    Ok(None) => None,
                    Err(e) => Some(Err(e)),
                }
            };
            match outcome {
                Some(Ok(())) => {
                    for (change, granted) in batch.into_iter().zip(granted) {
                        let result = match (granted, change.limit) {
                            (true, _) => Ok(()),
                            (false, Some(max_files)) => Err(Error::StoreFull { max_files }),
                            (false, None) => Ok(()),
                        };
                        let _ = change.reply.send(result);
                    }
                    return;
                }
                Some(Err(e)) => return answer_all(batch, &e),
                None => match self.load_counter().await {
                    Ok(counter) => {
                        current = counter;
                        fresh = true;
                    }
                    Err(e) => return answer_all(batch, &e),
                },
            }
        }
        let e = self.contended();
        answer_all(batch, &e);
    }

    /// Lowers the count after files were removed (or a reserved place was not used); a
    /// failure is logged, not returned: the files are gone either way, and a count left too
    /// high only refuses creates early until it is reconciled.
    pub(crate) async fn release(&self, files: usize) {
        if files == 0 {
            return;
        }
        let delta = isize::try_from(files).unwrap_or(isize::MAX);
        if let Err(e) = self.change_count(-delta, None).await {
            tracing::warn!(store = %self.label, error = %e, files, "could not lower the file counter; it stays high until reconciled");
        }
    }

    fn contended(&self) -> Error {
        S3Error::CounterContended {
            key: self.counter.to_string(),
            location: self.location.clone(),
        }
        .into()
    }
}

/// One change of the count waiting for its turn.
pub(crate) struct Change {
    delta: isize,
    limit: Option<usize>,
    reply: tokio::sync::oneshot::Sender<Result<()>>,
}

/// Answers every change of a batch with a failure of the whole batch.
fn answer_all(batch: Vec<Change>, e: &Error) {
    for change in batch {
        let _ = change.reply.send(Err(copy_error(e)));
    }
}

/// A copy of `e` for one more caller (`memory_core::Error` is not `Clone`): the contract's
/// outcomes as themselves, a backend failure as the same kind with the same text.
fn copy_error(e: &Error) -> Error {
    match e {
        Error::StoreFull { max_files } => Error::StoreFull {
            max_files: *max_files,
        },
        other if other.is_retryable() => Error::retryable(crate::error::BACKEND, other.to_string()),
        other => Error::backend(crate::error::BACKEND, other.to_string()),
    }
}

/// The counter's key as an object_store path.
pub(crate) fn counter_path(prefix: &str) -> Result<Path> {
    let raw = ObjectStoreStorage::counter_key(prefix);
    Path::parse(&raw).map_err(|source| S3Error::Key { key: raw, source }.into())
}
