//! The store's writer thread: group commit inside one process.
//!
//! Every write of a [`SqliteStorage`](crate::SqliteStorage) is a job queued to one thread that
//! owns a connection of its own. The thread takes the first job and every job queued behind it
//! (up to [`MAX_BATCH`]), opens one `BEGIN IMMEDIATE` transaction, runs each job inside a
//! savepoint of its own and commits once: many tasks writing at once share one commit (one
//! flush of the write-ahead log) instead of paying one each. A job that fails is rolled back to
//! its savepoint, so it fails alone and the others still commit. Each caller is told its own
//! result only after the commit that holds its write (or the failure of that commit).
//!
//! Reads that must run on this connection (an in-memory store has no other) are queued too and
//! run between transactions.
//!
//! With [`IndexMode::Batched`](crate::IndexMode::Batched) the thread also keeps the search
//! index: after [`INDEX_BATCH`] writes, when no job has come for [`INDEX_IDLE`], and before it
//! ends, it indexes every marked row in one transaction of its own (see [`catch_up`]).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::error::{JobError, SqliteError};
use crate::options::{INDEX_BATCH, INDEX_IDLE};
use crate::pool::Ctx;
use crate::search::{INDEX_CHUNK, index_marked};

/// Most writes one transaction takes.
pub(crate) const MAX_BATCH: usize = 64;

/// Longest the writer thread waits for the other writers of a busy moment to queue.
const LINGER: Duration = Duration::from_micros(500);

/// Tells a caller how its write ended, given how the commit ended.
pub(crate) type Finish = Box<dyn FnOnce(Option<&Arc<SqliteError>>) + Send>;

/// A queued write.
pub(crate) trait Write: Send {
    /// Runs inside the batch's transaction (in its own savepoint); says whether it succeeded,
    /// with what to tell its caller once the batch is committed or lost.
    fn run(self: Box<Self>, conn: &Connection, ctx: &Ctx) -> (bool, Finish);
    /// Tells the caller that the write never ran, because of `e`.
    fn abandon(self: Box<Self>, e: &Arc<SqliteError>);
}

/// A queued write, boxed.
pub(crate) type WriteJob = Box<dyn Write>;

/// A write job from a closure and the channel its caller waits on.
pub(crate) struct Pending<T, F> {
    pub(crate) job: F,
    pub(crate) reply: tokio::sync::oneshot::Sender<Result<T, JobError>>,
}

impl<T, F> Write for Pending<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Connection, &Ctx) -> Result<T, JobError> + Send,
{
    fn run(self: Box<Self>, conn: &Connection, ctx: &Ctx) -> (bool, Finish) {
        let Pending { job, reply } = *self;
        // A panic in `job` drops `reply`: the caller sees the closed channel.
        let result = job(conn, ctx);
        let ok = result.is_ok();
        let finish: Finish = Box::new(move |lost| {
            let _ = reply.send(match lost {
                Some(e) if ok => Err(commit_error(e)),
                _ => result,
            });
        });
        (ok, finish)
    }

    fn abandon(self: Box<Self>, e: &Arc<SqliteError>) {
        let _ = self.reply.send(Err(commit_error(e)));
    }
}

/// A read on the writer's connection, outside any batch.
pub(crate) type ReadJob = Box<dyn FnOnce(&mut Connection, &Ctx) + Send>;

pub(crate) enum Job {
    Write(WriteJob),
    Read(ReadJob),
}

/// The sending side; dropping it ends the thread once it has finished its queue.
pub(crate) struct Writer {
    queue: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// Starts the writer thread over `conn`; with `index`, the thread indexes the rows the
    /// writes marked, in batches ([`IndexMode::Batched`](crate::IndexMode::Batched)).
    pub(crate) fn start(conn: Connection, ctx: Ctx, index: bool) -> Result<Self, SqliteError> {
        let (queue, jobs) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("memory-sqlite-writer".into())
            .spawn(move || run(conn, &ctx, &jobs, index))
            .map_err(SqliteError::Thread)?;
        Ok(Writer {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Queues a job; `Err` gives it back when the thread is gone (it panicked).
    pub(crate) fn send(&self, job: Job) -> Result<(), Job> {
        match &self.queue {
            Some(queue) => queue.send(job).map_err(|e| e.0),
            None => Err(job),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread after the jobs already queued; waiting for it
        // closes the connection before the store is gone, so a reopened file finds it closed.
        self.queue.take();
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

fn run(mut conn: Connection, ctx: &Ctx, jobs: &mpsc::Receiver<Job>, index: bool) {
    // How many writers seem to be writing at once, from the last batches: while fewer have
    // queued, the thread waits a moment for the rest (they are being told the previous
    // commit's results and are about to queue their next write), so that they share the next
    // commit instead of splitting into a commit of one and a commit of the others. A single
    // writer never waits.
    let mut writers = 1usize;
    // Writes committed since the search index last caught up (none are counted without
    // `index`, so no catch-up is ever due).
    let mut unindexed = 0usize;
    let counted = |writes: usize| if index { writes } else { 0 };
    loop {
        let first = if unindexed == 0 {
            jobs.recv().ok()
        } else {
            match jobs.recv_timeout(INDEX_IDLE) {
                Ok(job) => Some(job),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    unindexed = 0;
                    catch_up(&conn, ctx);
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => None,
            }
        };
        let Some(first) = first else { break };
        let mut batch = Vec::new();
        let mut next = Some(first);
        let deadline = Instant::now() + LINGER;
        while let Some(job) = next.take() {
            match job {
                Job::Read(read) => {
                    // Between transactions: runs before the writes queued behind it.
                    if !batch.is_empty() {
                        unindexed += counted(batch.len());
                        commit_batch(&conn, ctx, std::mem::take(&mut batch));
                    }
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| read(&mut conn, ctx)));
                }
                Job::Write(write) => batch.push(write),
            }
            if batch.len() >= MAX_BATCH {
                break;
            }
            next = jobs.try_recv().ok();
            if next.is_none() && !batch.is_empty() && batch.len() < writers {
                let left = deadline.saturating_duration_since(Instant::now());
                next = jobs.recv_timeout(left).ok();
            }
        }
        if !batch.is_empty() {
            // Grows at once with more writers, shrinks slowly when fewer show up.
            writers = batch.len().max(writers.saturating_mul(3) / 4).max(1);
            unindexed += counted(batch.len());
            commit_batch(&conn, ctx, batch);
        }
        if unindexed >= INDEX_BATCH {
            unindexed = 0;
            catch_up(&conn, ctx);
        }
    }
    if unindexed > 0 {
        // The store is closing: leave the index whole for the next process's searches.
        catch_up(&conn, ctx);
    }
}

/// Indexes the marked rows, up to [`INDEX_CHUNK`] of them, in one transaction
/// ([`IndexMode::Batched`]): the writes queued meanwhile wait for one chunk at most, and the
/// rows of a store that had many marked already (migrated, or written by another program)
/// are indexed a chunk per catch-up. Nothing depends on it succeeding: a row it leaves
/// marked is indexed by the next catch-up or search, so a failure (another process holding
/// the database past the busy timeout, a full disk) is only logged.
///
/// [`IndexMode::Batched`]: crate::IndexMode::Batched
fn catch_up(conn: &Connection, ctx: &Ctx) {
    let indexed = conn
        .execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| ctx.err(e))
        .and_then(|()| index_marked(conn, ctx, INDEX_CHUNK))
        .and_then(|indexed| {
            conn.execute_batch("COMMIT")
                .map_err(|e| ctx.err(e))
                .map(|()| indexed)
        });
    match indexed {
        Ok(indexed) => {
            tracing::trace!(db = %ctx.path.display(), indexed, "indexed the rows written since the last batch");
        }
        Err(e) => {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            tracing::warn!(db = %ctx.path.display(), error = %e, "could not index the rows written lately; the next search will");
        }
    }
}

/// Runs `batch` in one transaction and tells every caller its result.
fn commit_batch(conn: &Connection, ctx: &Ctx, batch: Vec<WriteJob>) {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        let e = Arc::new(ctx.err(e));
        for job in batch {
            job.abandon(&e);
        }
        return;
    }
    let mut done: Vec<(bool, Finish)> = Vec::with_capacity(batch.len());
    let mut lost: Option<Arc<SqliteError>> = None;
    for job in batch {
        if let Some(e) = &lost {
            job.abandon(e);
            continue;
        }
        if let Err(e) = conn.execute_batch("SAVEPOINT job") {
            let e = Arc::new(ctx.err(e));
            job.abandon(&e);
            lost = Some(e);
            continue;
        }
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| job.run(conn, ctx)));
        let (ok, finish) = match outcome {
            Ok(outcome) => outcome,
            Err(_) => (false, panicked()),
        };
        let undone = if ok {
            conn.execute_batch("RELEASE job")
        } else {
            conn.execute_batch("ROLLBACK TO job; RELEASE job")
        };
        if conn.is_autocommit() || undone.is_err() {
            // SQLite rolled the whole transaction back (a full disk, an I/O error): the writes
            // done before in this batch are gone too.
            let e = Arc::new(match undone {
                Err(e) => ctx.err(e),
                Ok(()) => SqliteError::BatchRolledBack {
                    path: ctx.path.clone(),
                },
            });
            for (_, earlier) in done.drain(..) {
                earlier(Some(&e));
            }
            // This job's own failure is the better explanation for its caller.
            if ok {
                finish(Some(&e))
            } else {
                finish(None)
            }
            lost = Some(e);
            continue;
        }
        done.push((ok, finish));
    }
    if lost.is_some() {
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        return;
    }
    let committed = conn
        .execute_batch("COMMIT")
        .map_err(|e| Arc::new(ctx.err(e)));
    if committed.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    let failure = committed.as_ref().err();
    // The callers whose writes failed (a compare-and-swap that lost to an earlier write of
    // this batch) hear first, so that their retries queue ahead of the winners' next writes:
    // a writer that keeps winning cannot starve the others.
    let (won, lost): (Vec<_>, Vec<_>) = done.into_iter().partition(|(ok, _)| *ok);
    for (_, finish) in lost {
        // A failed job wrote nothing: its own error stands whatever the commit did.
        finish(None);
    }
    for (_, finish) in won {
        finish(failure);
    }
}

fn panicked() -> Finish {
    Box::new(|_| {})
}

/// What a caller gets when its job failed or its batch did not commit.
pub(crate) fn commit_error(e: &Arc<SqliteError>) -> JobError {
    JobError::Backend(SqliteError::Batch {
        retryable: e.is_retryable(),
        shared: Arc::clone(e),
    })
}
