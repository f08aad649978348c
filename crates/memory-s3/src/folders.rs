//! What this process knows about folders, so that most creates send no check at all.
//!
//! A create must not put a file below a file (one HEAD per ancestor folder answers that) nor
//! onto a folder (one LIST of the path's own prefix answers that). No single request answers
//! both: S3 lists keys in byte order from a prefix (and from `start-after`), and the keys
//! `a` (a file at the ancestor) and `a/b.md/...` (a folder at the path) are separated by every
//! sibling of `b.md` that sorts before it, so one page covering both costs the size of the
//! folder. What can be saved is asking again what was just asked: [`FolderFacts`] keeps, for
//! the folders this process lately checked,
//!
//! - **keys known not to be files** (a HEAD answered 404): the ancestor check of a later create
//!   below that folder;
//! - **folders whose subfolders are all known** (a LIST of the parent with delimiter `/`, taken
//!   as the path check of a create; then every subfolder this process creates there): a
//!   later create in that folder is not onto a folder unless its name is among them.
//!
//! # Why skipping the checks is as safe as doing them
//!
//! A fact can only be made false by a file appearing where there was none (a file at a key
//! known not to be one, a folder at a name not among the known subfolders); a delete only
//! makes a fact overcautious. Every writer that keeps the file counter changes the counter
//! object *before* it adds a file: a create and an overwrite of a new file raise it before
//! their PUT, a rename touches it before its copies. This process's counter changes are
//! conditional PUTs on the version it last saw, so when one succeeds, no other writer changed
//! the counter since this process last read or wrote it. Facts are kept under the counter's
//! *generation*: it starts anew whenever this process finds the counter changed by someone else
//! (a conditional PUT refused, a GET with a version it did not write). A create whose every
//! check is answered by facts of generation `g`, and whose own reservation (the conditional
//! PUT of the counter, which it sends anyway) succeeds in generation `g`, knows that no other
//! writer added a file between the checks that taught the facts and that reservation; it then
//! sends only its PUT. If the reservation finds another writer's change, the facts are dropped
//! and the create sends its checks after all, before its PUT.
//!
//! What changes against checking every time: today's checks miss a file another process puts
//! between this create's HEAD/LIST and its PUT, that is, a write in flight while this process
//! looks. With the facts, what is missed is a write whose counter change came before this
//! process looked and whose PUT lands after: again a write in flight while this process looked,
//! but a later create that trusts the look misses it too (for at most [`FACT_LIFETIME`], and
//! only while no other writer touches the counter). Writers that do not keep the counter
//! (another tool, an older release) are not seen by the generation at all; the lifetime bounds
//! how long a fact outlives such a write. Within this process, a create records the folders it
//! makes before its PUT, so two creates of one process never trust facts the other is about to
//! make false.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use object_store::path::Path;

/// How long a fact is trusted after the request that taught it was sent.
pub(crate) const FACT_LIFETIME: Duration = Duration::from_secs(10);

/// Facts of each kind kept at most (see [`FolderFacts::prune`]).
const FACTS_KEPT: usize = 4096;

/// The facts, all of one counter generation (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct FolderFacts {
    generation: u64,
    /// How many times `making` was emptied.
    resets: u64,
    /// Keys that are not files, and when the HEAD that said so was sent.
    not_files: HashMap<Path, Instant>,
    /// Folders whose subfolders are all known: their keys, and when the LIST was sent.
    complete: HashMap<Path, (HashSet<Path>, Instant)>,
    /// This process's own creates that make subfolders, by the folder they make one in: how
    /// many are under way, and the `seq` of the last start or end. A listing of a folder is
    /// learned only if none was under way or ended while it was asked (its answer may not
    /// show them).
    making: HashMap<Path, (usize, u64)>,
    /// Moves on at each start and end of such a create, and when `making` is emptied.
    seq: u64,
}

/// Entries of [`FolderFacts::making`] with nothing under way that are kept before it is
/// emptied.
const MAKING_KEPT: usize = 1024;

/// What a listing's learning must compare: the state of `making` for its folder when it was
/// sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Asked {
    making: Option<(usize, u64)>,
    resets: u64,
}

/// The keys a create's checks are about: each ancestor folder with its parent, then the
/// file's own folder and the file.
#[derive(Debug)]
pub(crate) struct CreateKeys {
    /// `(ancestor, its parent)`, outermost first.
    pub(crate) ancestors: Vec<(Path, Path)>,
    /// The folder the file goes into.
    pub(crate) parent: Path,
    /// The file.
    pub(crate) file: Path,
}

fn fresh(at: &Instant, now: Instant) -> bool {
    now.saturating_duration_since(*at) < FACT_LIFETIME
}

impl FolderFacts {
    /// Drops every fact of an older generation.
    fn enter(&mut self, generation: u64) {
        if self.generation != generation {
            self.not_files.clear();
            self.complete.clear();
            self.generation = generation;
        }
    }

    /// Whether what was learned in `generation` may be kept: it is the newest generation seen
    /// (an older one is dropped; a newer one drops the facts of the older).
    fn is_current(&mut self, generation: u64) -> bool {
        if generation > self.generation {
            self.enter(generation);
        }
        generation == self.generation
    }

    /// Whether facts of `generation` answer both checks of a create.
    pub(crate) fn cover(&mut self, generation: u64, keys: &CreateKeys) -> bool {
        self.enter(generation);
        let now = Instant::now();
        let ancestors_ok = keys
            .ancestors
            .iter()
            .all(|(key, _)| self.not_files.get(key).is_some_and(|at| fresh(at, now)));
        ancestors_ok
            && self
                .complete
                .get(&keys.parent)
                .is_some_and(|(dirs, at)| fresh(at, now) && !dirs.contains(&keys.file))
    }

    /// Whether the subfolders of `folder` are known (in `generation`, and fresh).
    pub(crate) fn knows_folder(&mut self, generation: u64, folder: &Path) -> bool {
        self.enter(generation);
        let now = Instant::now();
        self.complete
            .get(folder)
            .is_some_and(|(_, at)| fresh(at, now))
    }

    /// A HEAD sent at `at` in `generation` found no file at `key`.
    pub(crate) fn learn_not_file(&mut self, generation: u64, key: Path, at: Instant) {
        if self.is_current(generation) {
            self.prune();
            self.not_files.insert(key, at);
        }
    }

    /// Keeps the facts to at most [`FACTS_KEPT`] of each kind: the aged ones go first, then
    /// all (a long quiet generation would otherwise keep every folder ever checked).
    fn prune(&mut self) {
        let now = Instant::now();
        if self.not_files.len() >= FACTS_KEPT {
            self.not_files.retain(|_, at| fresh(at, now));
            if self.not_files.len() >= FACTS_KEPT {
                self.not_files.clear();
            }
        }
        if self.complete.len() >= FACTS_KEPT {
            self.complete.retain(|_, (_, at)| fresh(at, now));
            if self.complete.len() >= FACTS_KEPT {
                self.complete.clear();
            }
        }
    }

    /// To be taken just before a LIST of `folder` that may be learned.
    pub(crate) fn asking(&self, folder: &Path) -> Asked {
        Asked {
            making: self.making.get(folder).copied(),
            resets: self.resets,
        }
    }

    /// A LIST with delimiter sent at `at` in `generation` found these subfolders in `folder`.
    /// Learned only if none of this process's own creates of a subfolder there was under way
    /// or ended since `asked` (the answer might not show it).
    pub(crate) fn learn_folder(
        &mut self,
        generation: u64,
        folder: Path,
        dirs: HashSet<Path>,
        at: Instant,
        asked: Asked,
    ) {
        let still = self.asking(&folder);
        let none_under_way = asked.making.is_none_or(|(n, _)| n == 0);
        if self.is_current(generation) && still == asked && none_under_way {
            self.prune();
            self.complete.insert(folder, (dirs, at));
        }
    }

    /// This process is about to put a file at `file` (before the PUT, so that its other
    /// creates never trust a fact the PUT makes false): `file` may be a file from now on, and
    /// each ancestor is a subfolder of its parent. [`FolderFacts::added_file`] must follow,
    /// whatever the PUT's outcome.
    pub(crate) fn adding_file(&mut self, keys: &CreateKeys) {
        self.not_files.remove(&keys.file);
        self.seq += 1;
        for (ancestor, parent) in &keys.ancestors {
            if let Some((dirs, _)) = self.complete.get_mut(parent) {
                dirs.insert(ancestor.clone());
            }
            let entry = self.making.entry(parent.clone()).or_insert((0, 0));
            entry.0 += 1;
            entry.1 = self.seq;
        }
    }

    /// The PUT announced by [`FolderFacts::adding_file`] is over.
    pub(crate) fn added_file(&mut self, keys: &CreateKeys) {
        self.seq += 1;
        for (_, parent) in &keys.ancestors {
            if let Some(entry) = self.making.get_mut(parent) {
                entry.0 = entry.0.saturating_sub(1);
                entry.1 = self.seq;
            }
        }
        if self.making.len() > MAKING_KEPT {
            self.making.retain(|_, (n, _)| *n > 0);
            self.resets += 1;
        }
    }
}
