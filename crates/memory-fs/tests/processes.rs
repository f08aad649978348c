//! Several OS processes on one folder store: this test binary runs itself as worker processes
//! (chosen by the conformance suite's variable), so it has its own `main` instead of the test
//! harness.
//!
//! - `processes_lose_no_edit` and `creates_race_at_the_limit`: the conformance suite's process
//!   checks, each process with its own `FsStorage` on the folder;
//! - `history_survives_kill` (fast paths and portable ones): a worker edits, replaces, renames
//!   and deletes files until it is killed with SIGKILL, several rounds; after each, the store
//!   opened again has the version of every content a change replaced and none for a change
//!   that did not happen.

use std::sync::Arc;

use memory_core::Storage;
use memory_core::conformance::processes::{self, OpenAt};
use memory_core::options::SyncMode;
use memory_fs::{FsOptions, FsStorage};

const PROCESSES: usize = 4;
const APPENDS: usize = 40;
const RACE_LIMIT: usize = 30;
const RACE_ROUNDS: usize = 4;
const KILL_ROUNDS: usize = 6;

/// A process opens the store in the folder `place`; a place ending in `+portable` takes the
/// portable paths.
struct Folder;

#[memory_core::async_trait]
impl OpenAt for Folder {
    async fn open(&self, place: &str) -> Arc<dyn Storage> {
        let (folder, portable) = match place.strip_suffix("+portable") {
            Some(folder) => (folder, true),
            None => (place, false),
        };
        let options = FsOptions::default().portable(portable).sync(SyncMode::None);
        Arc::new(FsStorage::with_options(folder, options).unwrap())
    }
}

fn main() {
    processes::run_worker_if_asked(&Folder);
    let dir = tempfile::tempdir().unwrap();
    let place = |name: &str| dir.path().join(name).display().to_string();
    let (shared, race, crash, crash_portable) = (
        place("shared"),
        place("race"),
        place("crash"),
        format!("{}+portable", place("crash-portable")),
    );
    processes::run_tests(vec![
        (
            "processes_lose_no_edit",
            Box::new(|| processes::processes_lose_no_edit(&Folder, &shared, PROCESSES, APPENDS)),
        ),
        (
            "creates_race_at_the_limit",
            Box::new(|| {
                processes::creates_race_at_the_limit(
                    &Folder,
                    &race,
                    PROCESSES,
                    RACE_LIMIT,
                    RACE_ROUNDS,
                )
            }),
        ),
        (
            "history_survives_kill",
            Box::new(|| processes::history_survives_kill(&Folder, &crash, KILL_ROUNDS)),
        ),
        (
            "history_survives_kill_portable",
            Box::new(|| processes::history_survives_kill(&Folder, &crash_portable, KILL_ROUNDS)),
        ),
    ]);
}
