//! What a sync remembers between passes (and between runs): the baseline, the refused files,
//! the deletions waiting for corroboration and the uploads whose answer never came. Kept in one
//! JSON file outside the synced folder, written atomically, and locked while a sync holds it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file format's version; a newer one is refused rather than misread.
const FORMAT: u32 = 1;

/// The state of one folder-and-store pair.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct State {
    /// The file format (see [`FORMAT`]).
    pub(crate) format: u32,
    /// The store this state belongs to (a state file of another store is refused).
    pub(crate) store_id: String,
    /// `relative path → content_sha256` as of the last successful sync of each path.
    pub(crate) baseline: BTreeMap<String, String>,
    /// `relative path → sha256` of content the store refused; retried when the file changes.
    pub(crate) refused: BTreeMap<String, String>,
    /// `relative path → Unix time (seconds)` when a pass first saw the file missing locally.
    pub(crate) pending_deletes: BTreeMap<String, f64>,
    /// `relative path → sha256` of uploads sent whose outcome is unknown: recorded before the
    /// request, dropped after its answer, else settled by the next listing.
    pub(crate) sent: BTreeMap<String, String>,
}

/// The state file, locked for as long as this value lives: two syncs of the same pair (a cron
/// run while `--watch` runs) would each trust a baseline the other changes.
#[derive(Debug)]
pub(crate) struct StateFile {
    path: PathBuf,
    _lock: File,
}

impl StateFile {
    /// Locks the state at `path` (creating its folder), or fails with
    /// [`io::ErrorKind::WouldBlock`] when another sync holds it.
    pub(crate) fn lock(path: &Path) -> io::Result<StateFile> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let lock = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path(path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "another `memory sync` of this folder and store is running",
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        Ok(StateFile {
            path: path.to_owned(),
            _lock: lock,
        })
    }

    /// Where the state is kept.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The saved state, or an empty one for `store_id` when there is none yet.
    pub(crate) fn load(&self, store_id: &str) -> io::Result<State> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(State {
                    format: FORMAT,
                    store_id: store_id.to_owned(),
                    ..State::default()
                });
            }
            Err(e) => return Err(e),
        };
        let state: State = serde_json::from_slice(&bytes).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is damaged ({e}); remove it to start over",
                    self.path.display()
                ),
            )
        })?;
        if state.format > FORMAT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} was written by a newer memory (format {}); upgrade memory",
                    self.path.display(),
                    state.format
                ),
            ));
        }
        if state.store_id != store_id {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} belongs to the store {}, not {store_id}",
                    self.path.display(),
                    state.store_id
                ),
            ));
        }
        Ok(state)
    }

    /// Saves `state` atomically (a temporary file, flushed, renamed over the old one).
    pub(crate) fn save(&self, state: &State) -> io::Result<()> {
        let mut temp = self.path.clone().into_os_string();
        temp.push(".tmp");
        let temp = PathBuf::from(temp);
        let json = serde_json::to_vec_pretty(state).map_err(io::Error::other)?;
        let written = (|| {
            let mut file = File::create(&temp)?;
            file.write_all(&json)?;
            file.sync_all()?;
            std::fs::rename(&temp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut lock = path.to_owned().into_os_string();
    lock.push(".lock");
    PathBuf::from(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_is_locked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/pair.json");
        let file = StateFile::lock(&path).unwrap();
        let mut state = file.load("memstore_1").unwrap();
        assert!(state.baseline.is_empty());
        state.baseline.insert("a.md".into(), "ab".into());
        state.pending_deletes.insert("b.md".into(), 12.5);
        file.save(&state).unwrap();
        assert_eq!(file.load("memstore_1").unwrap(), state);
        let busy = StateFile::lock(&path).unwrap_err();
        assert_eq!(busy.kind(), io::ErrorKind::WouldBlock);
        assert!(file.load("memstore_2").is_err());
        drop(file);
        StateFile::lock(&path).unwrap();
    }

    #[test]
    fn a_damaged_state_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pair.json");
        std::fs::write(&path, "{not json").unwrap();
        let err = StateFile::lock(&path)
            .unwrap()
            .load("memstore_1")
            .unwrap_err();
        assert!(err.to_string().contains("remove it to start over"), "{err}");
    }
}
