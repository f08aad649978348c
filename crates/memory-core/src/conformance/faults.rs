//! Test doubles around a real store: [`Faulty`] injects failures and conflicts, [`Recording`]
//! records every call.
//!
//! Both forward every [`Storage`] method to the inner store (a lint enforces it), so the inner
//! store's native behaviour, such as an atomic `rename`, is kept.
//!
//! ```
//! # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! # rt.block_on(async {
//! use memory_core::conformance::faults::{Faulty, Op, FAKE_HOST_PATH};
//! use memory_core::{Error, InMemoryStorage, MemoryPath, Storage, WriteMode};
//!
//! let store = Faulty::new(InMemoryStorage::new());
//! store.fail_method(Op::Write);
//! let path = MemoryPath::parse("/memories/a.md").unwrap();
//! let e = store.write(&path, b"x".to_vec(), WriteMode::Create).await.unwrap_err();
//! assert!(matches!(e, Error::Backend { .. }));
//! assert!(e.to_string().contains(FAKE_HOST_PATH)); // must never reach the model
//! # });
//! ```

use std::fmt;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;

use crate::search::{SearchHit, SearchQuery};
use crate::{
    Capabilities, Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version,
    WriteMode,
};

/// A host path that injected errors carry in their message, so a test can check that backend
/// detail never reaches the model.
pub const FAKE_HOST_PATH: &str = "/var/secret/host/path";

/// The backend name of errors [`Faulty`] injects.
pub const FAULTY_BACKEND: &str = "Faulty";

/// One [`Storage`] method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// [`Storage::read`].
    Read,
    /// [`Storage::stat`].
    Stat,
    /// [`Storage::write`].
    Write,
    /// [`Storage::delete`].
    Delete,
    /// [`Storage::list`].
    List,
    /// [`Storage::rename`].
    Rename,
    /// [`Storage::file_count`].
    FileCount,
    /// [`Storage::create_within`].
    CreateWithin,
    /// [`Storage::search`].
    Search,
}

impl Op {
    /// Every method, in the trait's order.
    pub const ALL: [Op; 9] = [
        Op::Read,
        Op::Stat,
        Op::Write,
        Op::Delete,
        Op::List,
        Op::Rename,
        Op::FileCount,
        Op::CreateWithin,
        Op::Search,
    ];

    /// Whether the method changes the store (write, delete, rename, create_within).
    pub fn is_mutation(self) -> bool {
        matches!(self, Op::Write | Op::Delete | Op::Rename | Op::CreateWithin)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Stat => "stat",
            Op::Write => "write",
            Op::Delete => "delete",
            Op::List => "list",
            Op::Rename => "rename",
            Op::FileCount => "file_count",
            Op::CreateWithin => "create_within",
            Op::Search => "search",
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded state is plain data updated in single steps; a panic elsewhere cannot leave
    // it inconsistent.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[derive(Debug, Default)]
struct Faults {
    /// Calls seen so far (every method, failed ones included).
    calls: u64,
    /// Fail every call once this many calls have been let through.
    fail_after: Option<u64>,
    /// Fail every write, delete and rename.
    fail_mutations: bool,
    /// Fail every call of these methods.
    fail_methods: Vec<Op>,
    /// Answer this many upcoming `WriteMode::Update` writes with `Conflict`.
    conflicts: u64,
}

/// A wrapper that forwards every call to its inner store, except the calls it is told to fail.
///
/// Failures are [`Error::Backend`] from backend [`FAULTY_BACKEND`], whose message contains
/// [`FAKE_HOST_PATH`] (as a real I/O error would carry a host path), so tests can check that
/// such detail only goes to logs. Faults can be set and cleared at any time through `&self`,
/// also while the store is shared in an `Arc`:
///
/// - [`fail_after(n)`](Faulty::fail_after): the first `n` calls (from now) go through, every
///   later one fails;
/// - [`fail_mutations()`](Faulty::fail_mutations): every write, delete, rename and
///   create_within fails (a read-only outage);
/// - [`fail_method(op)`](Faulty::fail_method): every call of one method fails;
/// - [`inject_conflicts(k)`](Faulty::inject_conflicts): the next `k` writes with
///   [`WriteMode::Update`] return [`Error::Conflict`] without writing, to test bounded retry;
/// - [`heal()`](Faulty::heal): back to forwarding everything.
///
/// Every call counts towards [`calls()`](Faulty::calls), failed ones included.
pub struct Faulty<S> {
    inner: S,
    faults: Mutex<Faults>,
}

impl<S> Faulty<S> {
    /// Wraps `inner`, injecting nothing until told to.
    pub fn new(inner: S) -> Self {
        Faulty {
            inner,
            faults: Mutex::new(Faults::default()),
        }
    }

    /// Lets the next `n` calls through, then fails every call (until [`heal`](Self::heal)).
    pub fn fail_after(&self, n: u64) {
        let mut faults = lock(&self.faults);
        faults.fail_after = Some(faults.calls + n);
    }

    /// Fails every write, delete, rename and create_within.
    pub fn fail_mutations(&self) {
        lock(&self.faults).fail_mutations = true;
    }

    /// Fails every call of `op`.
    pub fn fail_method(&self, op: Op) {
        let mut faults = lock(&self.faults);
        if !faults.fail_methods.contains(&op) {
            faults.fail_methods.push(op);
        }
    }

    /// Answers the next `k` [`WriteMode::Update`] writes with [`Error::Conflict`] (adds to any
    /// still pending), without passing them to the inner store.
    pub fn inject_conflicts(&self, k: u64) {
        lock(&self.faults).conflicts += k;
    }

    /// How many injected conflicts are still to come.
    pub fn pending_conflicts(&self) -> u64 {
        lock(&self.faults).conflicts
    }

    /// Stops injecting anything (the call count is kept).
    pub fn heal(&self) {
        let mut faults = lock(&self.faults);
        let calls = faults.calls;
        *faults = Faults {
            calls,
            ..Faults::default()
        };
    }

    /// How many calls this wrapper has seen, failed ones included.
    pub fn calls(&self) -> u64 {
        lock(&self.faults).calls
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Counts a call and decides whether it fails.
    fn check(&self, op: Op, path: &MemoryPath, mode: Option<&WriteMode>) -> Result<()> {
        let mut faults = lock(&self.faults);
        faults.calls += 1;
        let reason = if faults.fail_after.is_some_and(|limit| faults.calls > limit) {
            Some("operation budget exhausted")
        } else if faults.fail_mutations && op.is_mutation() {
            Some("store is read-only")
        } else if faults.fail_methods.contains(&op) {
            Some("method disabled")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(Error::backend(
                FAULTY_BACKEND,
                format!(
                    "injected {op} fault ({reason}): I/O error at {FAKE_HOST_PATH}{}",
                    path.as_str().trim_start_matches("/memories")
                ),
            ));
        }
        if matches!(mode, Some(WriteMode::Update(_))) && faults.conflicts > 0 {
            faults.conflicts -= 1;
            return Err(Error::Conflict { path: path.clone() });
        }
        Ok(())
    }
}

impl<S: fmt::Debug> fmt::Debug for Faulty<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Faulty")
            .field("inner", &self.inner)
            .field("faults", &*lock(&self.faults))
            .finish()
    }
}

impl<S: fmt::Display> fmt::Display for Faulty<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Faulty({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<S: Storage> Storage for Faulty<S> {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        self.check(Op::Read, path, None)?;
        self.inner.read(path).await
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        self.check(Op::Stat, path, None)?;
        self.inner.stat(path).await
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        self.check(Op::Write, path, Some(&mode))?;
        self.inner.write(path, contents, mode).await
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.check(Op::Delete, path, None)?;
        self.inner.delete(path).await
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        self.check(Op::List, dir, None)?;
        self.inner.list(dir).await
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.check(Op::Rename, from, None)?;
        self.inner.rename(from, to).await
    }

    async fn file_count(&self) -> Result<usize> {
        self.check(Op::FileCount, &MemoryPath::root(), None)?;
        self.inner.file_count().await
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        self.check(Op::CreateWithin, path, None)?;
        self.inner.create_within(path, contents, max_files).await
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        self.check(Op::Search, query.under(), None)?;
        self.inner.search(query).await
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<crate::Listing> {
        self.check(Op::List, dir, None)?;
        self.inner.listing(dir).await
    }

    /// Forwarded as it is (no fault is injected into it, nothing recorded).
    async fn set_modified(
        &self,
        path: &MemoryPath,
        modified: std::time::SystemTime,
    ) -> Result<bool> {
        self.inner.set_modified(path, modified).await
    }
}

/// One call seen by [`Recording`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The method.
    pub op: Op,
    /// The path (for `rename`, the source; for `list`, the directory; for `file_count`,
    /// `/memories`).
    pub path: MemoryPath,
    /// For `rename`, the destination.
    pub to: Option<MemoryPath>,
    /// For `write`, the mode.
    pub mode: Option<WriteMode>,
    /// Whether the inner store answered `Ok`.
    pub ok: bool,
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.op, self.path)?;
        if let Some(to) = &self.to {
            write!(f, " -> {to}")?;
        }
        if let Some(mode) = &self.mode {
            write!(f, " ({mode:?})")?;
        }
        if !self.ok {
            f.write_str(" [error]")?;
        }
        Ok(())
    }
}

/// A wrapper that forwards every call to its inner store and records it, in the order the
/// calls finished, for assertions such as "a rejected create never reached the store" or "an
/// edit retried with a fresh read".
///
/// ```
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// use memory_core::conformance::faults::{Op, Recording};
/// use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
///
/// let store = Recording::new(InMemoryStorage::new());
/// let path = MemoryPath::parse("/memories/a.md").unwrap();
/// store.write(&path, b"x".to_vec(), WriteMode::Create).await.unwrap();
/// store.read(&path).await.unwrap();
/// assert_eq!(store.ops(), [Op::Write, Op::Read]);
/// # });
/// ```
pub struct Recording<S> {
    inner: S,
    calls: Mutex<Vec<Call>>,
}

impl<S> Recording<S> {
    /// Wraps `inner` with an empty record.
    pub fn new(inner: S) -> Self {
        Recording {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// Every call recorded so far, oldest first.
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.calls).clone()
    }

    /// The methods called so far, oldest first.
    pub fn ops(&self) -> Vec<Op> {
        lock(&self.calls).iter().map(|c| c.op).collect()
    }

    /// Returns the record and starts a new, empty one.
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *lock(&self.calls))
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }

    fn record<T>(
        &self,
        op: Op,
        path: &MemoryPath,
        to: Option<&MemoryPath>,
        mode: Option<WriteMode>,
        result: &Result<T>,
    ) {
        lock(&self.calls).push(Call {
            op,
            path: path.clone(),
            to: to.cloned(),
            mode,
            ok: result.is_ok(),
        });
    }
}

impl<S: fmt::Debug> fmt::Debug for Recording<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recording")
            .field("inner", &self.inner)
            .field("calls", &lock(&self.calls).len())
            .finish()
    }
}

impl<S: fmt::Display> fmt::Display for Recording<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Recording({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<S: Storage> Storage for Recording<S> {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        let result = self.inner.read(path).await;
        self.record(Op::Read, path, None, None, &result);
        result
    }

    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        let result = self.inner.stat(path).await;
        self.record(Op::Stat, path, None, None, &result);
        result
    }

    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        let result = self.inner.write(path, contents, mode.clone()).await;
        self.record(Op::Write, path, None, Some(mode), &result);
        result
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        let result = self.inner.delete(path).await;
        self.record(Op::Delete, path, None, None, &result);
        result
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let result = self.inner.list(dir).await;
        self.record(Op::List, dir, None, None, &result);
        result
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        let result = self.inner.rename(from, to).await;
        self.record(Op::Rename, from, Some(to), None, &result);
        result
    }

    async fn file_count(&self) -> Result<usize> {
        let result = self.inner.file_count().await;
        self.record(Op::FileCount, &MemoryPath::root(), None, None, &result);
        result
    }

    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        let result = self.inner.create_within(path, contents, max_files).await;
        self.record(Op::CreateWithin, path, None, None, &result);
        result
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let result = self.inner.search(query).await;
        self.record(Op::Search, query.under(), None, None, &result);
        result
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<crate::Listing> {
        self.inner.listing(dir).await
    }

    /// Forwarded as it is (no fault is injected into it, nothing recorded).
    async fn set_modified(
        &self,
        path: &MemoryPath,
        modified: std::time::SystemTime,
    ) -> Result<bool> {
        self.inner.set_modified(path, modified).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::InMemoryStorage;

    fn p(raw: &str) -> MemoryPath {
        MemoryPath::parse(raw).unwrap()
    }

    fn is_injected(e: &Error) -> bool {
        matches!(
            e,
            Error::Backend {
                backend: FAULTY_BACKEND,
                ..
            }
        ) && e.to_string().contains(FAKE_HOST_PATH)
    }

    #[tokio::test]
    async fn faulty_forwards_everything_when_healthy() {
        let store = Arc::new(Faulty::new(InMemoryStorage::new()));
        crate::conformance::storage::run_all(store.clone()).await;
        assert!(store.calls() > 100);
        assert_eq!(store.to_string(), "Faulty(InMemory)");
    }

    #[tokio::test]
    async fn fail_after_n_operations() {
        let store = Faulty::new(InMemoryStorage::new());
        store
            .write(&p("/memories/a"), b"a".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store.fail_after(2);
        store.read(&p("/memories/a")).await.unwrap();
        store.stat(&p("/memories/a")).await.unwrap();
        let e = store.read(&p("/memories/a")).await.unwrap_err();
        assert!(is_injected(&e), "{e:?}");
        assert!(e.to_string().contains("/var/secret/host/path/a"), "{e}");
        let e = store.list(&MemoryPath::root()).await.unwrap_err();
        assert!(is_injected(&e), "{e:?}");
        assert_eq!(store.calls(), 5);
        store.heal();
        assert_eq!(store.read(&p("/memories/a")).await.unwrap().contents, b"a");
    }

    #[tokio::test]
    async fn fail_mutations_and_single_methods() {
        let store = Faulty::new(InMemoryStorage::new());
        store
            .write(&p("/memories/a"), b"a".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store.fail_mutations();
        for e in [
            store
                .write(&p("/memories/b"), b"b".to_vec(), WriteMode::Create)
                .await
                .unwrap_err(),
            store.delete(&p("/memories/a")).await.unwrap_err(),
            store
                .rename(&p("/memories/a"), &p("/memories/c"))
                .await
                .unwrap_err(),
        ] {
            assert!(is_injected(&e), "{e:?}");
        }
        // Reads still work and nothing changed underneath.
        assert_eq!(store.read(&p("/memories/a")).await.unwrap().contents, b"a");
        assert_eq!(
            store.inner().list(&MemoryPath::root()).await.unwrap().len(),
            1
        );

        store.heal();
        store.fail_method(Op::Stat);
        assert!(is_injected(
            &store.stat(&p("/memories/a")).await.unwrap_err()
        ));
        store.delete(&p("/memories/a")).await.unwrap();
        assert!(
            store
                .inner()
                .list(&MemoryPath::root())
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn injected_conflicts_hit_only_update_writes() {
        let store = Faulty::new(InMemoryStorage::new());
        let path = p("/memories/cas.md");
        let v = store
            .write(&path, b"0".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store.inject_conflicts(2);
        // Overwrite and Create are not conditional: no conflict injected.
        let v = store
            .write(&path, b"1".to_vec(), WriteMode::Overwrite)
            .await
            .map(|nv| {
                assert_ne!(nv, v);
                nv
            })
            .unwrap();
        for left in [1, 0] {
            let e = store
                .write(&path, b"lost".to_vec(), WriteMode::Update(v.clone()))
                .await
                .unwrap_err();
            assert!(matches!(e, Error::Conflict { .. }), "{e:?}");
            assert_eq!(store.pending_conflicts(), left);
        }
        assert_eq!(store.inner().read(&path).await.unwrap().contents, b"1");
        store
            .write(&path, b"2".to_vec(), WriteMode::Update(v))
            .await
            .unwrap();
        assert_eq!(store.read(&path).await.unwrap().contents, b"2");
    }

    #[tokio::test]
    async fn recording_records_calls_in_order() {
        let store = Recording::new(InMemoryStorage::new());
        let a = p("/memories/a.md");
        let b = p("/memories/d/b.md");
        store
            .write(&a, b"x".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store
            .write(&a, b"y".to_vec(), WriteMode::Create)
            .await
            .unwrap_err();
        store.rename(&a, &b).await.unwrap();
        store.stat(&b).await.unwrap();
        store.list(&MemoryPath::root()).await.unwrap();
        store.delete(&b).await.unwrap();
        store.read(&b).await.unwrap_err();
        let calls = store.take();
        let rendered: Vec<String> = calls.iter().map(ToString::to_string).collect();
        assert_eq!(
            rendered,
            [
                "write /memories/a.md (Create)",
                "write /memories/a.md (Create) [error]",
                "rename /memories/a.md -> /memories/d/b.md",
                "stat /memories/d/b.md",
                "list /memories",
                "delete /memories/d/b.md",
                "read /memories/d/b.md [error]",
            ]
        );
        assert!(store.calls().is_empty(), "take() starts a new record");
        assert_eq!(store.to_string(), "Recording(InMemory)");
    }

    #[tokio::test]
    async fn recording_passes_the_suite() {
        let store = Arc::new(Recording::new(InMemoryStorage::new()));
        crate::conformance::storage::run_all(store.clone()).await;
        let ops = store.ops();
        for op in Op::ALL {
            assert!(ops.contains(&op), "the suite calls {op}");
        }
    }
}
