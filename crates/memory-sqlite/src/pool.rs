//! A small blocking connection pool: idle connections in a vector, a condition variable to wait
//! for one, new connections opened lazily up to a maximum.
//!
//! [`Pool::get`] may wait, so it is only called from `spawn_blocking` threads; the async side
//! uses [`Pool::try_idle`], which never waits.

use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;

use crate::error::SqliteError;

/// Where errors happened, for their messages: the database file and the busy timeout in force.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// The database file, or `:memory:`.
    pub(crate) path: PathBuf,
    /// How long a connection waits for a lock before giving up.
    pub(crate) busy_timeout: Duration,
}

impl Ctx {
    /// Wraps a rusqlite error with this database's context.
    pub(crate) fn err(&self, e: rusqlite::Error) -> SqliteError {
        SqliteError::classify(self.path.clone(), self.busy_timeout, e)
    }
}

type Connect = Box<dyn Fn() -> Result<Connection, SqliteError> + Send + Sync>;

struct State {
    idle: Vec<Connection>,
    open: usize,
}

pub(crate) struct Pool {
    state: Mutex<State>,
    freed: Condvar,
    max: usize,
    connect: Connect,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Pool")
            .field("open", &state.open)
            .field("idle", &state.idle.len())
            .field("max", &self.max)
            .finish()
    }
}

impl Pool {
    /// A pool holding `first` (already opened and prepared), which opens more with `connect`
    /// up to `max` connections in all.
    pub(crate) fn new(first: Connection, max: usize, connect: Connect) -> Self {
        Pool {
            state: Mutex::new(State {
                idle: vec![first],
                open: 1,
            }),
            freed: Condvar::new(),
            max: max.max(1),
            connect,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a vector and a counter, each changed in one step: still consistent after
        // a panic elsewhere.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes an idle connection if there is one, without waiting or opening a new one.
    pub(crate) fn try_idle(&self) -> Option<Pooled<'_>> {
        let conn = self.lock().idle.pop()?;
        Some(Pooled {
            pool: self,
            conn: Some(conn),
        })
    }

    /// Takes an idle connection, opens a new one if the pool may grow, or waits for one.
    pub(crate) fn get(&self) -> Result<Pooled<'_>, SqliteError> {
        let mut state = self.lock();
        loop {
            if let Some(conn) = state.idle.pop() {
                return Ok(Pooled {
                    pool: self,
                    conn: Some(conn),
                });
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                return match (self.connect)() {
                    Ok(conn) => Ok(Pooled {
                        pool: self,
                        conn: Some(conn),
                    }),
                    Err(e) => {
                        self.lock().open -= 1;
                        self.freed.notify_one();
                        Err(e)
                    }
                };
            }
            state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A connection on loan; it goes back to the pool when dropped.
pub(crate) struct Pooled<'a> {
    pool: &'a Pool,
    conn: Option<Connection>,
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("a loaned connection is present until drop")
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn
            .as_mut()
            .expect("a loaned connection is present until drop")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            // A transaction still open here (a panic mid-job) was rolled back when its
            // `Transaction` guard dropped; the connection is clean to reuse.
            self.pool.lock().idle.push(conn);
            self.pool.freed.notify_one();
        }
    }
}
