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
//! - **rename** puts the counter unchanged before its copies: the count stays, but the new
//!   version tells every other process that files appear where its folder facts cannot know
//!   (see the `folders` module: every addition of a file changes the counter first).
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

/// What this process knows of the counter.
#[derive(Debug, Default)]
pub(crate) struct CounterState {
    /// The counter as this process last read or wrote it.
    counter: Option<Counter>,
    /// Starts anew each time the counter is found changed by another writer (or found at all
    /// for the first time): while it stays the same, every change of the counter was this
    /// process's own conditional PUT (see the `folders` module, which keeps its facts under it).
    pub(crate) generation: u64,
    /// Whether the last change of the counter met another writer's.
    pub(crate) contended: bool,
}

impl ObjectStoreStorage {
    /// The counter object's key: `PREFIX/.memory-count`.
    pub(crate) fn counter_key(prefix: &str) -> String {
        if prefix.is_empty() {
            ".memory-count".to_owned()
        } else {
            format!("{prefix}/.memory-count")
        }
    }

    fn counter_state(&self) -> std::sync::MutexGuard<'_, CounterState> {
        // Each change is one assignment: usable after a panic elsewhere.
        self.counter_cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached counter and the generation it belongs to.
    fn cached_counter(&self) -> (Option<Counter>, u64) {
        let state = self.counter_state();
        (state.counter.clone(), state.generation)
    }

    /// The counter's generation now (see [`CounterState::generation`]).
    pub(crate) fn counter_generation(&self) -> u64 {
        self.counter_state().generation
    }

    /// Starts a new generation: every fact kept under the old one is dropped (this process is
    /// moving files where its facts cannot follow).
    pub(crate) fn new_counter_generation(&self) {
        self.counter_state().generation += 1;
    }

    /// Whether the last change of the counter met no other writer's.
    pub(crate) fn counter_quiet(&self) -> bool {
        !self.counter_state().contended
    }

    /// Caches a counter read from the store (or put from a version read from it): a new
    /// generation unless it is the very version cached.
    fn cache_read_counter(&self, counter: Counter) -> u64 {
        let mut state = self.counter_state();
        if state.counter.as_ref().map(|(_, v)| v) != Some(&counter.1) {
            state.generation += 1;
        }
        state.counter = Some(counter);
        state.generation
    }

    /// Caches the counter this process just put from the cached version: the same generation.
    /// `contended`: whether this change met another writer's first.
    fn cache_own_counter(&self, counter: Counter, contended: bool) {
        let mut state = self.counter_state();
        state.counter = Some(counter);
        state.contended = contended;
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
        Ok(self.load_counter_in().await?.0)
    }

    /// [`Self::load_counter`], with the generation the counter read belongs to.
    async fn load_counter_in(&self) -> Result<(Counter, u64)> {
        for _ in 0..ATTEMPTS {
            match self.get_counter().await? {
                Some((Some(count), version)) => {
                    let counter = (count, version);
                    let generation = self.cache_read_counter(counter.clone());
                    return Ok((counter, generation));
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
                let _ = self.cache_read_counter((count, version));
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
    ///
    /// `Ok(Some(generation))`: the change went out in a conditional PUT from a version of that
    /// generation, so no other writer changed the counter between the start of the generation
    /// and this change. `Ok(None)`: no PUT was needed (the batch's changes cancelled out).
    pub(crate) async fn change_count(
        &self,
        delta: isize,
        limit: Option<usize>,
    ) -> Result<Option<u64>> {
        self.queue_change(delta, limit, false).await
    }

    /// A conditional PUT of the counter that leaves the count as it is: tells every other
    /// process that files are about to appear where it cannot know (a rename's copies), so
    /// that the facts it keeps about folders are dropped (see the `folders` module).
    pub(crate) async fn touch_counter(&self) -> Result<()> {
        self.queue_change(0, None, true).await.map(|_| ())
    }

    async fn queue_change(
        &self,
        delta: isize,
        limit: Option<usize>,
        touch: bool,
    ) -> Result<Option<u64>> {
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        self.counter_queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Change {
                delta,
                limit,
                touch,
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
            (Some(counter), generation) => Ok((counter, generation, false)),
            (None, _) => self
                .load_counter_in()
                .await
                .map(|(counter, generation)| (counter, generation, true)),
        };
        let (mut current, mut generation, mut fresh) = match start {
            Ok(start) => start,
            Err(e) => return answer_all(batch, &e),
        };
        let touch = batch.iter().any(|change| change.touch);
        let mut contended = false;
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
            } else if new == *count && !touch {
                Some(Ok(None))
            } else {
                match self.put_counter(new, Some(version)).await {
                    Ok(Some(version)) => {
                        self.cache_own_counter((new, version), contended);
                        Some(Ok(Some(generation)))
                    }
                    Ok(None) => {
                        contended = true;
                        None
                    }
                    Err(e) => Some(Err(e)),
                }
            };
            match outcome {
                Some(Ok(put)) => {
                    for (change, granted) in batch.into_iter().zip(granted) {
                        let result = match (granted, change.limit) {
                            (true, _) => Ok(put),
                            (false, Some(max_files)) => Err(Error::StoreFull { max_files }),
                            (false, None) => Ok(put),
                        };
                        let _ = change.reply.send(result);
                    }
                    return;
                }
                Some(Err(e)) => return answer_all(batch, &e),
                None => match self.load_counter_in().await {
                    Ok((counter, in_generation)) => {
                        current = counter;
                        generation = in_generation;
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
    /// Put the counter even if the batch leaves the count as it is.
    touch: bool,
    reply: tokio::sync::oneshot::Sender<Result<Option<u64>>>,
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
