//! [`Faulty`]: forwards every call, except those it is told to fail or to hand to a hook.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;

use super::{FAKE_HOST_PATH, FAULTY_BACKEND, Op, lock};
use crate::search::{SearchHit, SearchQuery};
use crate::{
    Capabilities, Entry, Error, FileMeta, MemoryPath, Result, Storage, StoredFile, Version,
    WriteMode,
};

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

/// The future a [`Faulty`] hook returns: it may borrow the inner store and the call's
/// arguments, and await anything (a pause, a yield, another store).
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

type WriteHook<S> = Box<
    dyn for<'a> Fn(&'a S, &'a MemoryPath, Vec<u8>, WriteMode) -> HookFuture<'a, Version>
        + Send
        + Sync,
>;
type DeleteHook<S> = Box<dyn for<'a> Fn(&'a S, &'a MemoryPath) -> HookFuture<'a, ()> + Send + Sync>;
type CreateWithinHook<S> = Box<
    dyn for<'a> Fn(&'a S, &'a MemoryPath, Vec<u8>, usize) -> HookFuture<'a, Version> + Send + Sync,
>;
type SetModifiedHook<S> =
    Box<dyn for<'a> Fn(&'a S, &'a MemoryPath, SystemTime) -> HookFuture<'a, bool> + Send + Sync>;
type RenameHook<S> =
    Box<dyn for<'a> Fn(&'a S, &'a MemoryPath, &'a MemoryPath) -> HookFuture<'a, ()> + Send + Sync>;
type SearchHook<S> =
    Box<dyn for<'a> Fn(&'a S, &'a SearchQuery) -> HookFuture<'a, Vec<SearchHit>> + Send + Sync>;

/// What a [`Faulty`] runs in place of forwarding a call.
struct Hooks<S> {
    write: Option<WriteHook<S>>,
    delete: Option<DeleteHook<S>>,
    rename: Option<RenameHook<S>>,
    create_within: Option<CreateWithinHook<S>>,
    search: Option<SearchHook<S>>,
    set_modified: Option<SetModifiedHook<S>>,
    capabilities: Option<Capabilities>,
}

impl<S> Default for Hooks<S> {
    fn default() -> Self {
        Hooks {
            write: None,
            delete: None,
            rename: None,
            create_within: None,
            search: None,
            set_modified: None,
            capabilities: None,
        }
    }
}

impl<S> fmt::Debug for Hooks<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("write", &self.write.is_some())
            .field("delete", &self.delete.is_some())
            .field("rename", &self.rename.is_some())
            .field("create_within", &self.create_within.is_some())
            .field("search", &self.search.is_some())
            .field("set_modified", &self.set_modified.is_some())
            .field("capabilities", &self.capabilities)
            .finish()
    }
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
///
/// Hooks, set when the wrapper is built, run in place of forwarding a call that no fault
/// stopped; each gets the inner store and the call's arguments, and may await before, between
/// or after its own calls of the inner store (a test double in one line):
///
/// - [`on_write`](Faulty::on_write), [`on_delete`](Faulty::on_delete),
///   [`on_rename`](Faulty::on_rename), [`on_create_within`](Faulty::on_create_within),
///   [`on_search`](Faulty::on_search), [`on_set_modified`](Faulty::on_set_modified);
/// - [`with_capabilities`](Faulty::with_capabilities) declares other capabilities than the
///   inner store's.
///
/// ```
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// use memory_core::conformance::faults::Faulty;
/// use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
///
/// // A store that ignores the write mode: every write overwrites.
/// let sloppy = Faulty::new(InMemoryStorage::new())
///     .on_write(|inner, path, contents, _mode| inner.write(path, contents, WriteMode::Overwrite));
/// let path = MemoryPath::parse("/memories/a.md").unwrap();
/// sloppy.write(&path, b"1".to_vec(), WriteMode::Create).await.unwrap();
/// sloppy.write(&path, b"2".to_vec(), WriteMode::Create).await.unwrap();
/// assert_eq!(sloppy.read(&path).await.unwrap().contents, b"2");
/// # });
/// ```
pub struct Faulty<S> {
    inner: S,
    faults: Mutex<Faults>,
    hooks: Hooks<S>,
}

impl<S> Faulty<S> {
    /// Wraps `inner`, injecting nothing until told to.
    pub fn new(inner: S) -> Self {
        Faulty {
            inner,
            faults: Mutex::new(Faults::default()),
            hooks: Hooks::default(),
        }
    }

    /// Runs `hook` in place of forwarding [`Storage::write`] (after the fault checks).
    pub fn on_write<F>(mut self, hook: F) -> Self
    where
        F: for<'a> Fn(&'a S, &'a MemoryPath, Vec<u8>, WriteMode) -> HookFuture<'a, Version>
            + Send
            + Sync
            + 'static,
    {
        self.hooks.write = Some(Box::new(hook));
        self
    }

    /// Runs `hook` in place of forwarding [`Storage::delete`] (after the fault checks).
    pub fn on_delete<F>(mut self, hook: F) -> Self
    where
        F: for<'a> Fn(&'a S, &'a MemoryPath) -> HookFuture<'a, ()> + Send + Sync + 'static,
    {
        self.hooks.delete = Some(Box::new(hook));
        self
    }

    /// Runs `hook` in place of forwarding [`Storage::create_within`] (after the fault checks).
    pub fn on_create_within<F>(mut self, hook: F) -> Self
    where
        F: for<'a> Fn(&'a S, &'a MemoryPath, Vec<u8>, usize) -> HookFuture<'a, Version>
            + Send
            + Sync
            + 'static,
    {
        self.hooks.create_within = Some(Box::new(hook));
        self
    }

    /// Runs `hook` in place of forwarding [`Storage::set_modified`] (no fault is injected into
    /// that method).
    pub fn on_set_modified<F>(mut self, hook: F) -> Self
    where
        F: for<'a> Fn(&'a S, &'a MemoryPath, SystemTime) -> HookFuture<'a, bool>
            + Send
            + Sync
            + 'static,
    {
        self.hooks.set_modified = Some(Box::new(hook));
        self
    }

    /// Runs `hook` in place of forwarding [`Storage::rename`] (after the fault checks).
    pub fn on_rename<F>(mut self, hook: F) -> Self
    where
        F: for<'a> Fn(&'a S, &'a MemoryPath, &'a MemoryPath) -> HookFuture<'a, ()>
            + Send
            + Sync
            + 'static,
    {
        self.hooks.rename = Some(Box::new(hook));
        self
    }

    /// Runs `hook` in place of forwarding [`Storage::search`] (after the fault checks).
    pub fn on_search<F>(mut self, hook: F) -> Self
    where
        F: for<'a> Fn(&'a S, &'a SearchQuery) -> HookFuture<'a, Vec<SearchHit>>
            + Send
            + Sync
            + 'static,
    {
        self.hooks.search = Some(Box::new(hook));
        self
    }

    /// Answers [`Storage::capabilities`] with `capabilities` instead of the inner store's.
    pub fn with_capabilities(mut self, capabilities: Capabilities) -> Self {
        self.hooks.capabilities = Some(capabilities);
        self
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
            .field("hooks", &self.hooks)
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
        match &self.hooks.write {
            Some(hook) => hook(&self.inner, path, contents, mode).await,
            None => self.inner.write(path, contents, mode).await,
        }
    }

    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.check(Op::Delete, path, None)?;
        match &self.hooks.delete {
            Some(hook) => hook(&self.inner, path).await,
            None => self.inner.delete(path).await,
        }
    }

    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        self.check(Op::List, dir, None)?;
        self.inner.list(dir).await
    }

    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.check(Op::Rename, from, None)?;
        match &self.hooks.rename {
            Some(hook) => hook(&self.inner, from, to).await,
            None => self.inner.rename(from, to).await,
        }
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
        match &self.hooks.create_within {
            Some(hook) => hook(&self.inner, path, contents, max_files).await,
            None => self.inner.create_within(path, contents, max_files).await,
        }
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        self.check(Op::Search, query.under(), None)?;
        match &self.hooks.search {
            Some(hook) => hook(&self.inner, query).await,
            None => self.inner.search(query).await,
        }
    }

    fn capabilities(&self) -> Capabilities {
        self.hooks
            .capabilities
            .unwrap_or_else(|| self.inner.capabilities())
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<crate::Listing> {
        self.check(Op::List, dir, None)?;
        self.inner.listing(dir).await
    }

    /// Forwarded as it is, or to its hook (no fault is injected into it).
    async fn set_modified(&self, path: &MemoryPath, modified: SystemTime) -> Result<bool> {
        match &self.hooks.set_modified {
            Some(hook) => hook(&self.inner, path, modified).await,
            None => self.inner.set_modified(path, modified).await,
        }
    }

    // History is forwarded as it is: no fault is injected into it.
    async fn history(&self, path: &MemoryPath) -> Result<Vec<crate::history::Revision>> {
        self.inner.history(path).await
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        self.inner.read_revision(path, number).await
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        self.inner.write_restored(path, number, contents).await
    }

    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: crate::history::Redaction,
    ) -> Result<u64> {
        self.inner.redact_revisions(path, which).await
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
}
