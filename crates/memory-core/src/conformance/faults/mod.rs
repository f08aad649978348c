//! Test doubles around a real store: [`Faulty`] injects failures and conflicts and runs hooks
//! in place of some methods, [`Recording`] records every call.
//!
//! Both forward every [`Storage`](crate::Storage) method to the inner store (a lint enforces it), so the inner
//! store's native behaviour, such as an atomic `rename`, is kept. A test double that must
//! behave differently in one method is a `Faulty` with a hook for that method
//! ([`Faulty::on_write`] and its siblings), not an `impl Storage` of its own.
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

mod faulty;
mod recording;

pub use faulty::{Faulty, HookFuture};
pub use recording::{Call, Recording};

/// A host path that injected errors carry in their message, so a test can check that backend
/// detail never reaches the model.
pub const FAKE_HOST_PATH: &str = "/var/secret/host/path";

/// The backend name of errors [`Faulty`] injects.
pub const FAULTY_BACKEND: &str = "Faulty";

/// One [`Storage`](crate::Storage) method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// [`Storage::read`](crate::Storage::read).
    Read,
    /// [`Storage::stat`](crate::Storage::stat).
    Stat,
    /// [`Storage::write`](crate::Storage::write).
    Write,
    /// [`Storage::delete`](crate::Storage::delete).
    Delete,
    /// [`Storage::list`](crate::Storage::list).
    List,
    /// [`Storage::rename`](crate::Storage::rename).
    Rename,
    /// [`Storage::file_count`](crate::Storage::file_count).
    FileCount,
    /// [`Storage::create_within`](crate::Storage::create_within).
    CreateWithin,
    /// [`Storage::search`](crate::Storage::search).
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
