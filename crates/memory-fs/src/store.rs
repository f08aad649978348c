//! The synchronous engine behind [`FsStorage`](crate::FsStorage): every call here blocks and
//! runs inside `spawn_blocking`.
//!
//! Confinement: all access goes through `root`, a cap-std [`Dir`] capability for
//! `base/memories`, with relative paths made only of plain names. Every ancestor of a path is
//! checked without following links (`symlink_metadata`), so a symbolic link anywhere in a
//! path fails the call with [`Error::SymbolicLink`]; cap-std refuses any resolution that would
//! leave the root even if a link is swapped in concurrently.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use cap_std::fs::{Dir, DirBuilder, DirBuilderExt, Metadata, OpenOptions};
use memory_core::options::SyncMode;
use memory_core::{Entry, Error, FileMeta, MemoryPath, Result, Version, WriteMode};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, ResolveFlags};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use crate::FsOptions;
use crate::error::FsError;
use crate::kept_open::{Found, KeptOpen};
use crate::spare::Helper;

/// Mode of every file the store writes.
pub(crate) const FILE_MODE: u32 = 0o600;
/// Mode of every folder the store creates.
pub(crate) const DIR_MODE: u32 = 0o700;
/// The lock file, beside (not inside) the `memories` folder.
pub(crate) const LOCK_FILE: &str = ".memories.lock";
/// The file count, beside the lock file: the number of files in `memories/`, kept under the
/// lock by every writer and recounted by a walk whenever a store opens.
pub(crate) const COUNT_FILE: &str = ".memories.count";
/// The count is written as this many decimal digits and a newline, always the same length, so
/// that one positioned write replaces it whole.
const COUNT_DIGITS: usize = 20;

/// The folder of temporary files, beside (not inside) the `memories` folder, so that no memory
/// path can reach a temporary file and no name inside `memories/` is reserved. It is on the same
/// file system as `memories/` (checked when the store opens), so a finished temporary file moves
/// into place with one rename or hard link.
pub(crate) const TEMP_DIR: &str = ".memory-tmp";

/// Temporary files are `<32 hex digits>.tmp` inside [`TEMP_DIR`]: with 128 bits of randomness
/// two writers never pick the same name.
const TEMP_SUFFIX: &str = ".tmp";
const TEMP_HEX: usize = 32;

/// The name temporary files had inside `memories/` before they moved to [`TEMP_DIR`]: such files
/// are ordinary memories now (a file of that name may be a user's memory, renamed there by an
/// earlier version), so they are only pointed out in the log when the store opens.
pub(crate) fn is_legacy_temp_name(name: &str) -> bool {
    name.strip_prefix(".memory-tmp-").is_some_and(is_temp_name)
}

/// How `openat2` resolves a path below the root: never above it, never through a symbolic
/// link (a link anywhere in the path fails the call with `ELOOP`), never through a magic link.
pub(crate) const BENEATH: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// What `openat2` found below the root.
enum Beneath {
    /// The path, opened.
    Opened(std::os::fd::OwnedFd),
    /// The path or one of its ancestors is a symbolic link.
    Link,
    /// Nothing there (every ancestor that exists is a real folder).
    Missing,
    /// An ancestor is not a folder (a file or a special file).
    BelowNonDir,
    /// `openat2` cannot answer (the kernel lacks it, a filter forbids it, or it could not rule
    /// out a race): resolve component by component instead.
    Walk,
}

/// How often a write starts over when folders vanish under a concurrent delete.
const MAX_ATTEMPTS: usize = 8;

/// Whether `name` is one of the store's temporary files (in [`TEMP_DIR`]).
pub(crate) fn is_temp_name(name: &str) -> bool {
    name.strip_suffix(TEMP_SUFFIX).is_some_and(|hex| {
        hex.len() == TEMP_HEX
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

pub(crate) fn temp_name() -> String {
    // What tells this process apart from every other writer, worked out once (the process id
    // and the time it first wrote); the counter tells this process's names apart.
    static PROCESS: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let process = PROCESS.get_or_init(|| {
        let mut hasher = Sha256::new();
        hasher.update(std::process::id().to_le_bytes());
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        hasher.update(now.as_nanos().to_le_bytes());
        hasher.update(format!("{:?}", std::thread::current().id()).as_bytes());
        hasher.finalize().into()
    });
    let mut hasher = Sha256::new();
    hasher.update(process);
    hasher.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let digest = hex::encode(hasher.finalize());
    format!("{}{TEMP_SUFFIX}", &digest[..TEMP_HEX])
}

/// Creates the empty temporary file `name` in the folder of temporary files `dir`: a new file
/// (never one already there, never through a link), mode 0600, set again when `chmod`.
pub(crate) fn create_temp(dir: impl AsFd, name: &str, chmod: bool) -> io::Result<std::fs::File> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(FILE_MODE),
    )?;
    let file = std::fs::File::from(fd);
    if chmod {
        file.set_permissions(std_perms(FILE_MODE))?;
    }
    Ok(file)
}

/// Removes the temporary file `name` from the folder of temporary files `dir`. A file already
/// gone is fine (another process's open took it for stale); one that cannot be removed stays
/// behind as a stale temporary file for a later open to remove.
pub(crate) fn remove_temp(dir: impl AsFd, name: &str) {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => tracing::warn!(error = %e, name, "memory-fs: cannot remove a temporary file"),
    }
}

/// The version of some content: the hex SHA-256 of its bytes.
pub(crate) fn version_of(contents: &[u8]) -> Version {
    Version::new(hex::encode(Sha256::digest(contents)))
}

/// The path relative to the root, made only of plain names; `.` for the root.
fn rel(path: &MemoryPath) -> Result<PathBuf, FsError> {
    let mut out = PathBuf::new();
    for segment in path.segments() {
        out.push(segment);
    }
    if out.as_os_str().is_empty() {
        return Ok(PathBuf::from("."));
    }
    if out.components().count() != path.segments().count()
        || !out.components().all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(FsError::UnsafePath { path: path.clone() });
    }
    Ok(out)
}

/// What [`Probe::File`] knows about a file.
#[derive(Debug, Clone, Copy)]
struct FileInfo {
    size: u64,
    modified: Option<SystemTime>,
}

impl FileInfo {
    fn from_meta(meta: &Metadata) -> Self {
        FileInfo {
            size: meta.len(),
            modified: meta.modified().ok().map(|t| t.into_std()),
        }
    }

    fn from_stat(st: &rustix::fs::Stat) -> Self {
        FileInfo {
            size: u64::try_from(st.st_size).unwrap_or(0),
            modified: modified_time(st.st_mtime, st.st_mtime_nsec),
        }
    }
}

/// What a path is, found without following any link.
#[derive(Debug)]
enum Probe {
    /// Nothing there (or an ancestor is missing).
    Missing,
    /// A regular file, with its size and modification time.
    File(FileInfo),
    /// A real folder (which may or may not hold files).
    Dir,
    /// A special file (a FIFO, a socket, a device): never opened nor shown.
    Special,
    /// The path or one of its ancestors is a symbolic link: never followed nor shown.
    Link,
    /// An ancestor is a regular file.
    BelowFile(MemoryPath),
    /// An ancestor is a special file.
    BelowSpecial(MemoryPath),
}

fn is_not_found(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Reads a whole file whose size `fstat` gave. The store replaces files by rename, never in
/// place, so the size holds and one read usually gets everything, without the extra read
/// that finds the end; a file another program changes in place meanwhile is read to its end.
fn read_whole(file: &mut std::fs::File, size: i64) -> io::Result<Vec<u8>> {
    let size = usize::try_from(size).unwrap_or(0);
    let mut contents = vec![0u8; size];
    let mut filled = 0;
    while filled < size {
        match file.read(&mut contents[filled..]) {
            Ok(0) => {
                // Shorter than it was: what is there is the file.
                contents.truncate(filled);
                return Ok(contents);
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if size == 0 {
        // An empty size may also be a file that grew since: read whatever is there.
        file.read_to_end(&mut contents)?;
    }
    Ok(contents)
}

/// The device and (where the kernel tells it, since Linux 5.8) the mount a folder is on: a
/// rename moves a file in one step only within one mount.
fn mount_of(dir: &std::os::fd::OwnedFd) -> io::Result<(u64, Option<u64>)> {
    use rustix::fs::StatxFlags;
    let device = rustix::fs::fstat(dir)?.st_dev;
    let mount = rustix::fs::statx(dir, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)
        .ok()
        .filter(|st| StatxFlags::from_bits_retain(st.stx_mask).contains(StatxFlags::MNT_ID))
        .map(|st| st.stx_mnt_id);
    Ok((device, mount))
}

/// A modification time from `fstat`'s seconds and nanoseconds.
fn modified_time(secs: i64, nanos: impl TryInto<u32>) -> Option<SystemTime> {
    let nanos = nanos.try_into().ok()?;
    if secs >= 0 {
        SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs.unsigned_abs(), nanos))
    } else {
        SystemTime::UNIX_EPOCH
            .checked_sub(Duration::from_secs(secs.unsigned_abs()))?
            .checked_add(Duration::from_nanos(u64::from(nanos)))
    }
}

/// Creates `dir` and its missing ancestors, each with mode 0700 whatever the umask: a folder
/// the store creates holds memories, so it is private (the ancestors too: a world-writable
/// parent would let anyone swap the store's folder).
fn create_private_dirs(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    let mut missing = Vec::new();
    let mut current = Some(dir);
    while let Some(folder) = current {
        if folder.as_os_str().is_empty() || folder.is_dir() {
            break;
        }
        missing.push(folder);
        current = folder.parent();
    }
    for folder in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(DIR_MODE).create(folder) {
            Ok(()) => std::fs::set_permissions(folder, std_perms(DIR_MODE))?,
            // Created meanwhile by someone else: theirs, left as it is.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && folder.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether the process's umask may take bits off the modes the store creates files and
/// folders with ([`FILE_MODE`], [`DIR_MODE`]), so that each needs a `chmod` after creation.
/// Read once, from `/proc/self/status` (asking `umask` itself would change it for a moment
/// under every other thread); `true` when it cannot be read. A umask changed later can only
/// narrow a mode, never widen it.
fn umask_narrows_modes() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return true;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("Umask:"))
        .and_then(|value| u32::from_str_radix(value.trim(), 8).ok())
        .is_none_or(|umask| umask & (FILE_MODE | DIR_MODE) != 0)
}

fn std_perms(mode: u32) -> std::fs::Permissions {
    std::fs::Permissions::from_mode(mode)
}

/// Holds the store-wide lock: the in-process mutex and the advisory file lock.
struct Locked<'a> {
    file: MutexGuard<'a, std::fs::File>,
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.file.unlock() {
            tracing::warn!(error = %e, "memory-fs: cannot release the store lock");
        }
    }
}

/// The opened store.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) base: PathBuf,
    root: Dir,
    /// The folder of temporary files, `base/.memory-tmp`, beside `memories/`.
    temp: Dir,
    /// The lock file, opened once. The mutex serialises this process's writers (an advisory
    /// lock is held per open file, so threads sharing it would not exclude each other); the
    /// file lock serialises processes and other `FsStorage`s on the same folder.
    lock: Mutex<std::fs::File>,
    /// The file count ([`COUNT_FILE`]), read and written under the lock only.
    count: std::fs::File,
    /// Set when this process failed to update the count file: the next count is a walk.
    count_stale: AtomicBool,
    /// The count this process last read or wrote (`usize::MAX` before any): a hint, read
    /// without the lock, of whether a create should check the limit before writing anything.
    seen_count: AtomicUsize,
    /// Whether paths are opened with one `openat2` call (`RESOLVE_BENEATH |
    /// RESOLVE_NO_SYMLINKS`); otherwise, or when the kernel refuses it, every ancestor is
    /// checked without following links and cap-std opens the path.
    openat2: AtomicBool,
    /// Whether created files and folders need a `chmod` ([`umask_narrows_modes`]).
    chmod_after_create: bool,
    /// Makes temporary files ahead and removes replaced ones off the writers' path
    /// ([`crate::spare`]); `None` for a read-only store, or when no thread could be started.
    helper: Option<Helper>,
    /// Whether files are replaced by exchanging names (see [`Store::replace`]); cleared when
    /// the file system refuses `RENAME_EXCHANGE`.
    exchange: AtomicBool,
    /// Files kept open after a read, for reading them again without opening their path
    /// ([`crate::kept_open`]); `None` where changes cannot be watched.
    kept_open: Option<KeptOpen>,
    options: FsOptions,
}

/// What a write found at its target, under the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Nothing (or a special file, which is never counted): the write adds a file.
    Absent,
    /// An empty folder tree, removed before the rename: the write adds a file.
    EmptyTree,
    /// A file, replaced.
    File,
}

enum Attempt {
    Done,
    Retry,
}

/// A folder a write places its file in.
enum Folder {
    /// The root, through the store's own handle.
    Root,
    /// A folder below it, opened for this write.
    Below(OwnedFd),
}

impl Folder {
    fn fd<'a>(&'a self, root: &'a Dir) -> BorrowedFd<'a> {
        match self {
            Folder::Root => root.as_fd(),
            Folder::Below(fd) => fd.as_fd(),
        }
    }
}

/// What one try at placing a written file under the lock came to.
enum Commit {
    /// Placed, in this folder; `replaced`: the file it replaced is now under the temporary
    /// file's name, for [`Store::dispose_replaced`] once the folder is synced.
    Done { folder: Folder, replaced: bool },
    /// The file's folder is not there: make it and try again.
    NoFolder,
    /// Something changed under the call: try again.
    Retry,
}

impl Store {
    pub(crate) fn open(base: &Path, options: FsOptions) -> Result<Self, FsError> {
        if options.read_only {
            return Self::open_read_only(base, options);
        }
        let open_err = |source| FsError::Open {
            base: base.to_path_buf(),
            source,
        };
        create_private_dirs(base).map_err(open_err)?;
        let base_dir = rustix::fs::open(
            base,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| open_err(e.into()))?;
        let memories = base.join("memories");
        let temp_dir = base.join(TEMP_DIR);
        for name in ["memories", TEMP_DIR] {
            match rustix::fs::mkdirat(&base_dir, name, Mode::from_raw_mode(DIR_MODE)) {
                Ok(()) => {
                    // Explicitly, whatever the umask did to the mode given at creation.
                    rustix::fs::chmodat(
                        &base_dir,
                        name,
                        Mode::from_raw_mode(DIR_MODE),
                        AtFlags::empty(),
                    )
                    .map_err(|e| open_err(e.into()))?;
                }
                Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(open_err(e.into())),
            }
        }
        // `memories` may be a link the owner made (it is followed, as by the SDKs); the folder
        // of temporary files and the lock file are the store's own and never followed.
        let root = rustix::fs::openat(
            &base_dir,
            "memories",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| open_err(e.into()))?;
        let temp = rustix::fs::openat(
            &base_dir,
            TEMP_DIR,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| open_err(e.into()))?;
        if mount_of(&root).map_err(open_err)? != mount_of(&temp).map_err(open_err)? {
            return Err(FsError::TempElsewhere {
                base: base.to_path_buf(),
                temp_dir,
                memories,
            });
        }
        let root = Dir::from_std_file(std::fs::File::from(root));
        let temp = Dir::from_std_file(std::fs::File::from(temp));
        let lock = rustix::fs::openat(
            &base_dir,
            LOCK_FILE,
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )
        .map_err(|e| open_err(e.into()))?;
        let lock = std::fs::File::from(lock);
        let count = rustix::fs::openat(
            &base_dir,
            COUNT_FILE,
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )
        .map_err(|e| open_err(e.into()))?;
        let count = std::fs::File::from(count);
        let mut store = Store {
            base: base.to_path_buf(),
            root,
            temp,
            lock: Mutex::new(lock),
            count,
            count_stale: AtomicBool::new(false),
            seen_count: AtomicUsize::new(usize::MAX),
            openat2: AtomicBool::new(true),
            chmod_after_create: umask_narrows_modes(),
            helper: None,
            exchange: AtomicBool::new(true),
            kept_open: None,
            options,
        };
        store.probe_openat2();
        let removed = store.remove_stale_temps();
        if removed > 0 {
            tracing::info!(base = %base.display(), removed, "memory-fs: removed stale temporary files");
        }
        {
            // Files placed or removed by hand since the last open are counted from here on.
            let _locked = store.lock()?;
            let files = store.recount()?;
            tracing::debug!(base = %base.display(), files, "memory-fs: counted the files");
        }
        store.helper = store
            .temp
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|temp| {
                Helper::start(temp, store.chmod_after_create, store.options.stale_temp_age)
            });
        Ok(store)
    }

    /// Opens the store changing nothing on disk ([`FsOptions::read_only`]): no folder, lock
    /// file or count file is created, no stale temporary file is removed and no count is
    /// stored; `base/memories` must exist. The store lock is an advisory lock on the base
    /// folder's own handle (which writes nothing), the file count is a walk, and every change
    /// is refused ([`Store::refuse_if_read_only`]).
    fn open_read_only(base: &Path, options: FsOptions) -> Result<Self, FsError> {
        let open_err = |e: rustix::io::Errno| FsError::Open {
            base: base.to_path_buf(),
            source: e.into(),
        };
        let dir = |at: &std::os::fd::OwnedFd, name: &str| {
            rustix::fs::openat(
                at,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
        };
        let base_dir = rustix::fs::open(
            base,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(open_err)?;
        let root = dir(&base_dir, "memories").map_err(open_err)?;
        // Never written to: a read-only store makes no temporary file.
        let temp = dir(&base_dir, "memories").map_err(open_err)?;
        let lock = dir(&base_dir, ".").map_err(open_err)?;
        let mut store = Store {
            base: base.to_path_buf(),
            root: Dir::from_std_file(std::fs::File::from(root)),
            temp: Dir::from_std_file(std::fs::File::from(temp)),
            lock: Mutex::new(std::fs::File::from(lock)),
            // A folder's handle: reading a count from it fails, so every count is a walk.
            count: std::fs::File::from(base_dir),
            count_stale: AtomicBool::new(true),
            seen_count: AtomicUsize::new(usize::MAX),
            openat2: AtomicBool::new(true),
            // It creates nothing, so the umask does not matter.
            chmod_after_create: false,
            helper: None,
            exchange: AtomicBool::new(true),
            kept_open: None,
            options,
        };
        store.probe_openat2();
        Ok(store)
    }

    /// Refuses a change of a store opened read-only.
    fn refuse_if_read_only(&self, path: &MemoryPath) -> Result<()> {
        if self.options.read_only {
            return Err(memory_core::read_only_refusal(&MemoryPath::root(), path));
        }
        Ok(())
    }

    /// The store resolving every path component by component, as on a kernel without
    /// `openat2` (for tests of that path).
    #[cfg(test)]
    pub(crate) fn without_openat2(self) -> Self {
        self.openat2.store(false, Ordering::Relaxed);
        self
    }

    /// The options the store was opened with.
    pub(crate) fn options(&self) -> &FsOptions {
        &self.options
    }

    fn lock(&self) -> Result<Locked<'_>, FsError> {
        // A panic while locked leaves nothing half-done in memory (the mutex guards a file
        // handle only), so a poisoned mutex is still usable.
        let file = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        file.lock().map_err(|source| FsError::Lock { source })?;
        Ok(Locked { file })
    }

    fn lstat(&self, path: &MemoryPath) -> Result<Option<Metadata>, FsError> {
        match self.root.symlink_metadata(rel(path)?) {
            Ok(meta) => Ok(Some(meta)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(FsError::io("stat", path, e)),
        }
    }

    fn probe(&self, path: &MemoryPath) -> Result<Probe, FsError> {
        if path.is_root() {
            return Ok(Probe::Dir);
        }
        // One openat2 answers every case but "an ancestor is not a folder" (ENOTDIR), where the
        // walk below names that ancestor. ENOENT means every existing ancestor is a real
        // folder (a link or a file on the way would have failed first).
        match self.beneath(path, OFlags::PATH)? {
            Beneath::Opened(fd) => {
                let st = rustix::fs::fstat(&fd).map_err(|e| FsError::io("stat", path, e.into()))?;
                return Ok(match FileType::from_raw_mode(st.st_mode) {
                    FileType::RegularFile => Probe::File(FileInfo::from_stat(&st)),
                    FileType::Directory => Probe::Dir,
                    FileType::Symlink => Probe::Link,
                    _ => Probe::Special,
                });
            }
            Beneath::Link => return Ok(Probe::Link),
            Beneath::Missing => return Ok(Probe::Missing),
            Beneath::BelowNonDir | Beneath::Walk => {}
        }
        for ancestor in path.ancestors() {
            match self.lstat(&ancestor)? {
                None => return Ok(Probe::Missing),
                Some(meta) if meta.is_dir() => {}
                Some(meta) if meta.is_file() => {
                    return Ok(Probe::BelowFile(ancestor));
                }
                Some(meta) if meta.file_type().is_symlink() => return Ok(Probe::Link),
                Some(_) => return Ok(Probe::BelowSpecial(ancestor)),
            }
        }
        Ok(match self.lstat(path)? {
            None => Probe::Missing,
            Some(meta) if meta.is_dir() => Probe::Dir,
            Some(meta) if meta.is_file() => Probe::File(FileInfo::from_meta(&meta)),
            Some(meta) if meta.file_type().is_symlink() => Probe::Link,
            Some(_) => Probe::Special,
        })
    }

    /// [`probe`](Self::probe) for a command's own path: a symbolic link on the way is the
    /// command's error ([`Error::SymbolicLink`]).
    fn probe_unlinked(&self, path: &MemoryPath) -> Result<Probe> {
        match self.probe(path)? {
            Probe::Link => Err(Error::SymbolicLink { path: path.clone() }),
            other => Ok(other),
        }
    }

    /// Visits the regular files below a real folder, depth first; `visit` returns `false` to
    /// stop. Links, special files and names no [`MemoryPath`] can hold are skipped. With
    /// `with_info`, each file comes with its size and modification time (one `fstatat` each);
    /// without, the type the folder entry records is enough (no call per file).
    ///
    /// The walk goes down by folder handles: each subfolder is opened relative to its parent's
    /// handle by a single name with `O_NOFOLLOW | O_DIRECTORY`, and each file is looked at
    /// relative to its folder's handle with `AT_SYMLINK_NOFOLLOW`, so no link is ever
    /// followed and no path is resolved twice.
    fn walk(
        &self,
        dir: &MemoryPath,
        with_info: bool,
        visit: &mut dyn FnMut(MemoryPath, Option<FileInfo>) -> bool,
    ) -> Result<bool, FsError> {
        let Some(fd) = self.open_dir_for_walk(dir)? else {
            return Ok(true);
        };
        self.walk_fd(fd, dir, with_info, visit)
    }

    /// A readable handle on the real folder `dir`, or `None` if it is not there.
    fn open_dir_for_walk(&self, dir: &MemoryPath) -> Result<Option<OwnedFd>, FsError> {
        if dir.is_root() {
            return match rustix::fs::openat(
                &self.root,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => Ok(Some(fd)),
                Err(e) => Err(FsError::io("list", dir, e.into())),
            };
        }
        match self.beneath(dir, OFlags::RDONLY | OFlags::DIRECTORY)? {
            Beneath::Opened(fd) => return Ok(Some(fd)),
            Beneath::Link | Beneath::Missing | Beneath::BelowNonDir => return Ok(None),
            Beneath::Walk => {}
        }
        // Without openat2: cap-std resolves inside the root (the callers checked every
        // ancestor first).
        let handle = match self.root.open_dir(rel(dir)?) {
            Ok(d) => d,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(FsError::io("list", dir, e)),
        };
        // cap-std's handle may be path-only; reading entries needs a readable one.
        rustix::fs::openat(
            &handle,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(Some)
        .map_err(|e| FsError::io("list", dir, e.into()))
    }

    fn walk_fd(
        &self,
        fd: OwnedFd,
        dir: &MemoryPath,
        with_info: bool,
        visit: &mut dyn FnMut(MemoryPath, Option<FileInfo>) -> bool,
    ) -> Result<bool, FsError> {
        // Entries are read into one buffer per folder (`Dir` would allocate a name per entry);
        // 8 KiB holds the longest entry many times over.
        let mut buffer = Vec::with_capacity(8192);
        let mut entries = rustix::fs::RawDir::new(&fd, buffer.spare_capacity_mut());
        while let Some(entry) = entries.next() {
            let entry = match entry {
                Ok(entry) => entry,
                // The folder was removed while it was read: nothing more in it.
                Err(Errno::NOENT) => break,
                Err(e) => return Err(FsError::io("list", dir, e.into())),
            };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                tracing::debug!(dir = %dir, "memory-fs: skipping a name that is not UTF-8");
                continue;
            };
            let Ok(child) = dir.join(name) else {
                tracing::debug!(dir = %dir, name, "memory-fs: skipping a name no memory path can hold");
                continue;
            };
            let dir_fd = fd.as_fd();
            let c_name = entry.file_name();
            let mut file_type = entry.file_type();
            let mut info = None;
            if file_type == FileType::Unknown || (with_info && file_type == FileType::RegularFile) {
                let st = match rustix::fs::statat(dir_fd, c_name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => st,
                    Err(Errno::NOENT | Errno::NOTDIR) => continue,
                    Err(e) => return Err(FsError::io("stat", &child, e.into())),
                };
                file_type = FileType::from_raw_mode(st.st_mode);
                info = Some(FileInfo::from_stat(&st));
            }
            match file_type {
                FileType::Directory => {
                    let sub = match rustix::fs::openat(
                        dir_fd,
                        c_name,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    ) {
                        Ok(sub) => sub,
                        // Gone, or replaced by a link or a file since it was listed.
                        Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => continue,
                        Err(e) => return Err(FsError::io("list", &child, e.into())),
                    };
                    if !self.walk_fd(sub, &child, with_info, visit)? {
                        return Ok(false);
                    }
                }
                FileType::RegularFile if !visit(child, info.filter(|_| with_info)) => {
                    return Ok(false);
                }
                _ => {}
            }
        }
        Ok(true)
    }

    // -----------------------------------------------------------------------------------------
    // The file count (every method here runs under the lock)

    /// Counts the files by a walk and stores the count. Also logs files named like the
    /// temporary files of earlier versions (which kept them inside `memories/`): they are
    /// ordinary memories now, listed and counted, never deleted by the store, so the operator
    /// may want to look at them.
    fn recount(&self) -> Result<usize, FsError> {
        let mut files = 0usize;
        let mut legacy = 0usize;
        self.walk(&MemoryPath::root(), false, &mut |path, _| {
            files += 1;
            if path.name().is_some_and(is_legacy_temp_name) {
                legacy += 1;
            }
            true
        })?;
        if legacy > 0 {
            tracing::info!(
                base = %self.base.display(),
                files = legacy,
                "memory-fs: files named like the temporary files of earlier versions are in the store; \
                 they are kept and listed as ordinary memories (delete them if a crash left them)"
            );
        }
        self.store_count(files);
        Ok(files)
    }

    /// The stored count, or a walk's if it cannot be read.
    fn count(&self) -> Result<usize, FsError> {
        if !self.count_stale.load(Ordering::Relaxed)
            && let Some(n) = self.read_count()
        {
            return Ok(n);
        }
        self.recount()
    }

    fn read_count(&self) -> Option<usize> {
        use std::os::unix::fs::FileExt as _;
        let mut buf = [0u8; COUNT_DIGITS + 1];
        self.count.read_exact_at(&mut buf, 0).ok()?;
        let n = std::str::from_utf8(&buf[..COUNT_DIGITS])
            .ok()?
            .parse()
            .ok()?;
        self.seen_count.store(n, Ordering::Relaxed);
        Some(n)
    }

    fn store_count(&self, files: usize) {
        use std::os::unix::fs::FileExt as _;
        if self.options.read_only {
            return;
        }
        self.seen_count.store(files, Ordering::Relaxed);
        let text = format!("{files:0width$}\n", width = COUNT_DIGITS);
        match self.count.write_all_at(text.as_bytes(), 0) {
            Ok(()) => self.count_stale.store(false, Ordering::Relaxed),
            Err(e) => {
                // The write it counts is done; the next count in this process walks instead,
                // and every store recounts when it opens.
                tracing::warn!(error = %e, "memory-fs: cannot update the file count");
                self.count_stale.store(true, Ordering::Relaxed);
            }
        }
    }

    fn add_to_count(&self, added: usize, removed: usize) {
        match self.count() {
            Ok(n) => self.store_count((n + added).saturating_sub(removed)),
            Err(e) => {
                tracing::warn!(error = %e, "memory-fs: cannot count the files");
                self.count_stale.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Refuses a create in a store that holds `max_files` files. The count is confirmed by a
    /// walk before refusing, so files removed by hand never make a store look full.
    /// Returns the count it checked.
    fn check_room(&self, max_files: usize) -> Result<usize> {
        let mut count = self.count()?;
        if count >= max_files {
            count = self.recount()?;
            if count >= max_files {
                return Err(Error::StoreFull { max_files });
            }
        }
        Ok(count)
    }

    /// The number of files, for [`Storage::file_count`](memory_core::Storage::file_count).
    pub(crate) fn file_count(&self) -> Result<usize> {
        let _locked = self.lock()?;
        Ok(self.count()?)
    }

    fn has_file_below(&self, dir: &MemoryPath) -> Result<bool, FsError> {
        let mut found = false;
        self.walk(dir, false, &mut |_, _| {
            found = true;
            false
        })?;
        Ok(found)
    }

    // -----------------------------------------------------------------------------------------
    // Reads

    /// Opens `path` below the root with one `openat2` call, never through a link.
    fn beneath(&self, path: &MemoryPath, flags: OFlags) -> Result<Beneath, FsError> {
        if !self.openat2.load(Ordering::Relaxed) {
            return Ok(Beneath::Walk);
        }
        // A memory path below the root is plain names joined by `/` (what `MemoryPath`
        // guarantees, and `rel` checks for the other ways of opening): its relative text is
        // the path to resolve, with nothing to build.
        let r = if path.is_root() { "." } else { path.relative() };
        match rustix::fs::openat2(
            &self.root,
            r,
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            BENEATH,
        ) {
            Ok(fd) => Ok(Beneath::Opened(fd)),
            Err(Errno::LOOP) => Ok(Beneath::Link),
            Err(Errno::NOENT) => Ok(Beneath::Missing),
            Err(Errno::NOTDIR) => Ok(Beneath::BelowNonDir),
            // No openat2 (ENOSYS), a filter (EPERM), flags it does not know (EINVAL), or a
            // concurrent rename it could not rule out (EAGAIN, EXDEV): the walk decides.
            Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::AGAIN | Errno::XDEV) => {
                Ok(Beneath::Walk)
            }
            Err(e) => Err(FsError::io("open", path, e.into())),
        }
    }

    /// Probes once whether `openat2` works here (an old kernel, before 5.6, or a system-call
    /// filter refuses it); where it does, reads may keep files open ([`KeptOpen`]).
    fn probe_openat2(&mut self) {
        if matches!(self.beneath_root(), Beneath::Walk) {
            self.openat2.store(false, Ordering::Relaxed);
            tracing::debug!(base = %self.base.display(), "memory-fs: openat2 is not available; resolving paths component by component");
        } else {
            self.kept_open = KeptOpen::start(&self.root);
        }
    }

    /// Whether `openat2` works here: opens the root itself.
    fn beneath_root(&self) -> Beneath {
        self.beneath(&MemoryPath::root(), OFlags::PATH | OFlags::DIRECTORY)
            .unwrap_or(Beneath::Walk)
    }

    /// See [`FsStorage::keeps_files_open`](crate::FsStorage::keeps_files_open).
    pub(crate) fn keeps_files_open(&self) -> bool {
        self.kept_open.is_some()
    }

    /// Closes the kept files at or below `path` before this store changes it.
    fn let_go(&self, path: &MemoryPath) {
        if let Some(kept_open) = &self.kept_open {
            kept_open.let_go(path);
        }
    }

    pub(crate) fn read(&self, path: &MemoryPath) -> Result<memory_core::StoredFile> {
        let not_found = || Error::NotFound { path: path.clone() };
        if path.is_root() {
            return Err(not_found());
        }
        // A file kept open by an earlier read, its path unchanged since: one pread.
        let mut kept = None;
        if let Some(kept_open) = &self.kept_open {
            match kept_open.find(&self.root, path) {
                Found::Kept(file) => match file.read() {
                    Ok(contents) => {
                        let version = version_of(&contents);
                        return Ok(memory_core::StoredFile { contents, version });
                    }
                    // Read it the usual way, which reports what is wrong.
                    Err(_) => kept_open.let_go(path),
                },
                Found::Open(events) => kept = events.map(|events| (kept_open, events)),
            }
        }
        // One openat2, one fstat, the reads (NONBLOCK: a FIFO planted there cannot hang us).
        match self.beneath(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)? {
            Beneath::Opened(fd) => {
                let st = rustix::fs::fstat(&fd).map_err(|e| FsError::io("stat", path, e.into()))?;
                if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                    return Err(not_found());
                }
                let mut file = std::fs::File::from(fd);
                let contents =
                    read_whole(&mut file, st.st_size).map_err(|e| FsError::io("read", path, e))?;
                if let Some((kept_open, events)) = kept {
                    kept_open.keep(path, file, contents.len(), events);
                }
                let version = version_of(&contents);
                return Ok(memory_core::StoredFile { contents, version });
            }
            Beneath::Link => return Err(Error::SymbolicLink { path: path.clone() }),
            Beneath::Missing | Beneath::BelowNonDir => return Err(not_found()),
            Beneath::Walk => {}
        }
        if !matches!(self.probe_unlinked(path)?, Probe::File(_)) {
            return Err(not_found());
        }
        let file = match self.root.open(rel(path)?) {
            Ok(file) => file,
            Err(e) if is_not_found(&e) => return Err(not_found()),
            Err(e) => return Err(FsError::io("open", path, e).into()),
        };
        let mut file = file.into_std();
        // Files are only ever replaced by rename, never changed in place, so the open file is
        // one whole version.
        let mut contents = Vec::new();
        file.read_to_end(&mut contents)
            .map_err(|e| FsError::io("read", path, e))?;
        let version = version_of(&contents);
        Ok(memory_core::StoredFile { contents, version })
    }

    pub(crate) fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        if !path.is_root() {
            // O_PATH with O_NOFOLLOW: a link at the end is opened itself, never followed.
            match self.beneath(path, OFlags::PATH)? {
                Beneath::Opened(fd) => {
                    let st =
                        rustix::fs::fstat(&fd).map_err(|e| FsError::io("stat", path, e.into()))?;
                    return Ok(match FileType::from_raw_mode(st.st_mode) {
                        FileType::RegularFile => Some(Entry::File(FileMeta {
                            path: path.clone(),
                            size: u64::try_from(st.st_size).unwrap_or(0),
                            modified: modified_time(st.st_mtime, st.st_mtime_nsec),
                        })),
                        FileType::Directory if self.has_file_below(path)? => Some(Entry::Directory),
                        FileType::Symlink => {
                            return Err(Error::SymbolicLink { path: path.clone() });
                        }
                        _ => None,
                    });
                }
                Beneath::Link => return Err(Error::SymbolicLink { path: path.clone() }),
                Beneath::Missing | Beneath::BelowNonDir => return Ok(None),
                Beneath::Walk => {}
            }
        }
        Ok(match self.probe_unlinked(path)? {
            Probe::File(info) => Some(Entry::File(FileMeta {
                path: path.clone(),
                size: info.size,
                modified: info.modified,
            })),
            Probe::Dir if path.is_root() || self.has_file_below(path)? => Some(Entry::Directory),
            _ => None,
        })
    }

    pub(crate) fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        if !matches!(self.probe_unlinked(dir)?, Probe::Dir) {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        self.walk(dir, true, &mut |path, info| {
            if let Some(info) = info {
                out.push(FileMeta {
                    path,
                    size: info.size,
                    modified: info.modified,
                });
            }
            true
        })?;
        out.sort_unstable_by(|a, b| a.path.as_str().cmp(b.path.as_str()));
        Ok(out)
    }

    // -----------------------------------------------------------------------------------------
    // Folder helpers

    /// Creates the missing ancestors of `path` (mode 0700), returning those it created,
    /// outermost first. `Ok(None)` means a folder vanished meanwhile: start over.
    fn make_parents(&self, path: &MemoryPath) -> Result<Option<Vec<MemoryPath>>> {
        let mut created = Vec::new();
        let mut builder = DirBuilder::new();
        builder.mode(DIR_MODE);
        for ancestor in path.ancestors() {
            let r = rel(&ancestor)?;
            match self.root.create_dir_with(&r, &builder) {
                Ok(()) => {
                    // Explicitly, if the umask took bits off the mode given at creation.
                    if self.chmod_after_create {
                        self.root
                            .set_permissions(
                                &r,
                                cap_std::fs::Permissions::from_std(std_perms(DIR_MODE)),
                            )
                            .map_err(|e| FsError::io("chmod folder", &ancestor, e))?;
                    }
                    created.push(ancestor);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    match self.lstat(&ancestor)? {
                        Some(meta) if meta.is_dir() => {}
                        Some(meta) if meta.is_file() => {
                            self.prune_created(&created);
                            return Err(Error::ParentIsFile {
                                path: path.clone(),
                                parent: ancestor,
                            });
                        }
                        Some(meta) if meta.file_type().is_symlink() => {
                            self.prune_created(&created);
                            return Err(Error::SymbolicLink { path: path.clone() });
                        }
                        Some(_) => {
                            self.prune_created(&created);
                            return Err(FsError::NotRegular { path: ancestor }.into());
                        }
                        None => {
                            self.prune_created(&created);
                            return Ok(None);
                        }
                    }
                }
                Err(e) if is_not_found(&e) => {
                    self.prune_created(&created);
                    return Ok(None);
                }
                Err(e) => {
                    self.prune_created(&created);
                    return Err(FsError::io("create folder", &ancestor, e).into());
                }
            }
        }
        Ok(Some(created))
    }

    /// Removes folders this call created, innermost first, if they are still empty.
    fn prune_created(&self, created: &[MemoryPath]) {
        for dir in created.iter().rev() {
            if let Ok(r) = rel(dir)
                && self.root.remove_dir(r).is_err()
            {
                break;
            }
        }
    }

    /// Removes the folders above `path` that are left empty, up to (not including) the root.
    /// Returns how many it removed.
    fn prune_empty_parents(&self, path: &MemoryPath) -> usize {
        let mut removed = 0;
        for dir in path.ancestors().iter().rev() {
            let Ok(r) = rel(dir) else { break };
            if self.root.remove_dir(r).is_err() {
                break;
            }
            removed += 1;
        }
        removed
    }

    /// Removes a real folder and everything in it, never following a link (links are
    /// removed, not their targets).
    fn remove_tree(&self, dir: &MemoryPath, r: &Path) -> Result<(), FsError> {
        let entries = match self.root.read_dir(r) {
            Ok(entries) => entries,
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) => return Err(FsError::io("list", dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| FsError::io("list", dir, e))?;
            let child = r.join(entry.file_name());
            let is_dir = entry
                .file_type()
                .map(|t| t.is_dir())
                .map_err(|e| FsError::io("stat", dir, e))?;
            let result = if is_dir {
                self.remove_tree(dir, &child).map_err(|e| match e {
                    FsError::Io { source, .. } => source,
                    other => io::Error::other(other.to_string()),
                })
            } else {
                self.root.remove_file(&child)
            };
            match result {
                Ok(()) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(FsError::io("delete", dir, e)),
            }
        }
        match self.root.remove_dir(r) {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(FsError::io("delete folder", dir, e)),
        }
    }

    /// Removes temporary files older than the configured age from the folder of temporary
    /// files (never anything in `memories/`); returns how many.
    fn remove_stale_temps(&self) -> usize {
        let Ok(entries) = self.temp.entries() else {
            return 0;
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !entry.file_type().is_ok_and(|t| t.is_file())
                || !name.to_str().is_some_and(is_temp_name)
            {
                continue;
            }
            let age = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| now.duration_since(t.into_std()).ok())
                .unwrap_or(Duration::ZERO);
            if age >= self.options.stale_temp_age && self.temp.remove_file(&name).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// Syncs a folder (with [`SyncMode::Full`] only), so that the names a write changed in it
    /// survive a crash.
    fn sync_dir(&self, dir: &MemoryPath) -> Result<(), FsError> {
        if self.options.sync != SyncMode::Full {
            return Ok(());
        }
        let failed = |e: io::Error| FsError::io("sync folder", dir, e);
        if dir.is_root() {
            return rustix::fs::fsync(&self.root).map_err(|e| failed(e.into()));
        }
        match self.beneath(dir, OFlags::RDONLY | OFlags::DIRECTORY)? {
            Beneath::Opened(fd) => return rustix::fs::fsync(&fd).map_err(|e| failed(e.into())),
            Beneath::Link => return Err(FsError::NotRegular { path: dir.clone() }),
            Beneath::Missing | Beneath::BelowNonDir => {
                return Err(failed(io::ErrorKind::NotFound.into()));
            }
            Beneath::Walk => {}
        }
        // A readable handle (not a path-only one): fsync needs it.
        let mut options = OpenOptions::new();
        options.read(true);
        self.root
            .open_with(rel(dir)?, &options)
            .and_then(|d| d.into_std().sync_all())
            .map_err(|e| FsError::io("sync folder", dir, e))
    }

    // -----------------------------------------------------------------------------------------
    // Writes

    pub(crate) fn write(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        mode: &WriteMode,
    ) -> Result<Version> {
        self.write_within(path, contents, mode, None)
    }

    /// [`write`](Self::write); a `WriteMode::Create` with `Some(max_files)` succeeds only while
    /// the store holds fewer files, decided under the lock.
    pub(crate) fn write_within(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        mode: &WriteMode,
        max_files: Option<usize>,
    ) -> Result<Version> {
        self.refuse_if_read_only(path)?;
        if path.is_root() {
            return Err(match mode {
                WriteMode::Update(_) => Error::NotFound { path: path.clone() },
                _ => Error::AlreadyExists { path: path.clone() },
            });
        }
        for _ in 0..MAX_ATTEMPTS {
            if let Attempt::Done = self.try_write(path, contents, mode, max_files)? {
                return Ok(version_of(contents));
            }
        }
        Err(FsError::Vanished {
            path: path.clone(),
            attempts: MAX_ATTEMPTS,
        }
        .into())
    }

    /// Refuses the write if what is at `path` forbids it in this mode, or tells what the write
    /// will replace.
    fn check_write_target(&self, path: &MemoryPath, mode: &WriteMode) -> Result<Target> {
        let exists = || Error::AlreadyExists { path: path.clone() };
        let not_found = || Error::NotFound { path: path.clone() };
        if let WriteMode::Update(expected) = mode {
            // The file is read whole anyway to compare versions: one open, no probe first.
            // Only when there is no file does the probe tell why.
            match self.read(path) {
                Ok(current) if current.version == *expected => return Ok(Target::File),
                Ok(_) => return Err(Error::Conflict { path: path.clone() }),
                Err(Error::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        match (self.probe_unlinked(path)?, mode) {
            (Probe::BelowFile(parent), _) => Err(Error::ParentIsFile {
                path: path.clone(),
                parent,
            }),
            (Probe::BelowSpecial(at), _) => Err(FsError::NotRegular { path: at }.into()),
            (Probe::Link, _) => Err(Error::SymbolicLink { path: path.clone() }),
            (Probe::Dir, WriteMode::Update(_)) => Err(not_found()),
            (Probe::Dir, _) => {
                if self.has_file_below(path)? {
                    Err(exists())
                } else {
                    Ok(Target::EmptyTree)
                }
            }
            (Probe::File(_) | Probe::Special, WriteMode::Create) => Err(exists()),
            (Probe::Missing | Probe::Special, WriteMode::Update(_)) => Err(not_found()),
            (Probe::File(_), WriteMode::Update(expected)) => {
                // A file appeared since the read above found none.
                let current = self.read(path)?;
                if current.version == *expected {
                    Ok(Target::File)
                } else {
                    Err(Error::Conflict { path: path.clone() })
                }
            }
            (Probe::File(_), _) => Ok(Target::File),
            (Probe::Missing | Probe::Special, _) => Ok(Target::Absent),
        }
    }

    fn try_write(
        &self,
        path: &MemoryPath,
        contents: &[u8],
        mode: &WriteMode,
        max_files: Option<usize>,
    ) -> Result<Attempt> {
        // An update replaces a file the caller has just read: its check (a read, to compare
        // versions) is made once, under the lock, and its folder exists while the file does.
        let update = matches!(mode, WriteMode::Update(_));
        // Cheap checks first, without the lock, so that refused writes create nothing.
        if !update {
            self.check_write_target(path, mode)?;
        }
        if let Some(max_files) = max_files
            && self.seen_count.load(Ordering::Relaxed) >= max_files
        {
            // Looked full when last counted: decide under the lock before writing anything.
            // (Otherwise the check under the lock that places the file decides; a create
            // refused there has only written a temporary file.)
            let _locked = self.lock()?;
            self.check_write_target(path, mode)?;
            self.check_room(max_files)?;
        }
        let temp = self.write_temp(path, contents)?;
        let parent = path.parent().unwrap_or_else(MemoryPath::root);
        // Folders this call created for the file, removed again if the write fails.
        let mut created = Vec::new();
        for _ in 0..MAX_ATTEMPTS {
            let outcome = {
                let _locked = self.lock()?;
                self.commit(path, &parent, &temp, mode, max_files)
            };
            match outcome {
                Ok(Commit::Done { folder, replaced }) => {
                    // The folder the name went into, synced through the handle it was
                    // placed with.
                    let synced = if self.options.sync == SyncMode::Full {
                        rustix::fs::fsync(folder.fd(&self.root))
                            .map_err(|e| FsError::io("sync folder", &parent, e.into()))
                    } else {
                        Ok(())
                    };
                    if replaced {
                        self.dispose_replaced(&temp, synced.is_ok());
                    }
                    synced?;
                    return Ok(Attempt::Done);
                }
                // The folder is missing: made (outside the lock, as any writer may) and the
                // file placed again. An update's folder exists while its file does: the next
                // check under the lock tells what happened.
                Ok(Commit::NoFolder) if !update => match self.make_parents(path) {
                    Ok(Some(made)) => created.extend(made),
                    // A folder vanished meanwhile: try again.
                    Ok(None) => {}
                    Err(e) => {
                        let _ = rustix::fs::unlinkat(&self.temp, &temp, AtFlags::empty());
                        let _locked = self.lock()?;
                        self.prune_created(&created);
                        return Err(e);
                    }
                },
                Ok(Commit::NoFolder | Commit::Retry) => {}
                Err(e) => {
                    let _ = rustix::fs::unlinkat(&self.temp, &temp, AtFlags::empty());
                    let _locked = self.lock()?;
                    self.prune_created(&created);
                    return Err(e);
                }
            }
        }
        let _ = rustix::fs::unlinkat(&self.temp, &temp, AtFlags::empty());
        Ok(Attempt::Retry)
    }

    /// Writes and syncs a temporary file holding `contents` (one made ahead by the helper, or
    /// one created here) and returns its name in the folder of temporary files. A failed write
    /// removes its file.
    fn write_temp(&self, path: &MemoryPath, contents: &[u8]) -> Result<String, FsError> {
        let (temp, mut file, held) = match self.helper.as_ref().and_then(Helper::take) {
            Some(spare) => (spare.name, spare.file, spare.size),
            None => {
                let temp = temp_name();
                let file = create_temp(&self.temp, &temp, self.chmod_after_create)
                    .map_err(|e| FsError::io("create temporary file for", path, e))?;
                (temp, file, 0)
            }
        };
        match self.fill_temp(path, &mut file, contents, held) {
            Ok(()) => Ok(temp),
            Err(e) => {
                let _ = rustix::fs::unlinkat(&self.temp, &temp, AtFlags::empty());
                Err(e)
            }
        }
    }

    /// Writes `contents` from the start of `file`, which holds `held` bytes already (a
    /// replaced file kept for reuse), cuts off what is left of those, and syncs it.
    fn fill_temp(
        &self,
        path: &MemoryPath,
        file: &mut std::fs::File,
        contents: &[u8],
        held: u64,
    ) -> Result<(), FsError> {
        #[cfg(test)]
        if crate::tests::fail_temp_writes() {
            return Err(FsError::io(
                "write temporary file for",
                path,
                io::Error::other("injected test failure"),
            ));
        }
        file.write_all(contents)
            .map_err(|e| FsError::io("write temporary file for", path, e))?;
        let written = contents.len() as u64;
        if held > written {
            file.set_len(written)
                .map_err(|e| FsError::io("write temporary file for", path, e))?;
        }
        match self.options.sync {
            SyncMode::Full => file.sync_all(),
            SyncMode::Data => file.sync_data(),
            SyncMode::None => Ok(()),
        }
        .map_err(|e| FsError::io("sync temporary file for", path, e))
    }

    /// A real folder of the store, opened readable (for `fsync`) without following any link:
    /// one `openat2` where the kernel has it; otherwise every ancestor and the folder itself
    /// are checked without following links and cap-std opens it inside the root. `None` when
    /// it is not a real folder (missing, a link, below a file).
    fn open_folder(&self, dir: &MemoryPath) -> Result<Option<Folder>, FsError> {
        if dir.is_root() {
            return Ok(Some(Folder::Root));
        }
        match self.beneath(dir, OFlags::RDONLY | OFlags::DIRECTORY)? {
            Beneath::Opened(fd) => return Ok(Some(Folder::Below(fd))),
            Beneath::Link | Beneath::Missing | Beneath::BelowNonDir => return Ok(None),
            Beneath::Walk => {}
        }
        if !matches!(self.probe(dir)?, Probe::Dir) {
            return Ok(None);
        }
        let handle = match self.root.open_dir(rel(dir)?) {
            Ok(handle) => handle,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(FsError::io("open folder", dir, e)),
        };
        // cap-std's handle may be path-only; fsync needs a readable one.
        rustix::fs::openat(
            &handle,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(|fd| Some(Folder::Below(fd)))
        .map_err(|e| FsError::io("open folder", dir, e.into()))
    }

    /// Moves the temporary file to `name` in `folder` only if nothing is there, in one step:
    /// a `rename` that refuses to replace (`RENAME_NOREPLACE`), or where the file system lacks
    /// it a hard link and the removal of the temporary name. `EOPNOTSUPP` when the file
    /// system has neither.
    fn place_new(&self, temp: &str, folder: BorrowedFd<'_>, name: &str) -> Result<(), Errno> {
        match rustix::fs::renameat_with(&self.temp, temp, folder, name, RenameFlags::NOREPLACE) {
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {}
            other => return other,
        }
        match rustix::fs::linkat(&self.temp, temp, folder, name, AtFlags::empty()) {
            Ok(()) => {
                let _ = rustix::fs::unlinkat(&self.temp, temp, AtFlags::empty());
                Ok(())
            }
            Err(Errno::PERM | Errno::OPNOTSUPP | Errno::NOSYS) => Err(Errno::OPNOTSUPP),
            Err(e) => Err(e),
        }
    }

    /// Moves the temporary file over the file `name` in `folder`, in one step readers see
    /// whole.
    ///
    /// A plain `rename` over a file makes ext4 start writing the new file out at once (its
    /// `auto_da_alloc` guard for programs that never sync), a disk round trip per write that
    /// `sync=none` exists to avoid. Exchanging the two names (`RENAME_EXCHANGE`) and then
    /// removing the old file, which now has the temporary name, changes the same names
    /// without it. A crash between the two steps leaves the old file as a stale temporary
    /// file, removed by a later open. Where the file system cannot exchange, a `rename`.
    ///
    /// `Ok(true)`: the names were exchanged, and the old file is now `temp` (for
    /// [`Store::dispose_replaced`]); `Ok(false)`: renamed over it.
    fn replace(&self, temp: &str, folder: BorrowedFd<'_>, name: &str) -> Result<bool, Errno> {
        if self.exchange.load(Ordering::Relaxed) {
            match rustix::fs::renameat_with(&self.temp, temp, folder, name, RenameFlags::EXCHANGE) {
                Ok(()) => {
                    // `temp` now names what was at the target: a file, unless a writer that
                    // ignores the lock put a folder there. A folder is put back (the `rename`
                    // below refuses to replace it).
                    let folder_swapped_out =
                        rustix::fs::statat(&self.temp, temp, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(
                            |st| FileType::from_raw_mode(st.st_mode) == FileType::Directory,
                        );
                    if !folder_swapped_out {
                        return Ok(true);
                    }
                    rustix::fs::renameat_with(
                        &self.temp,
                        temp,
                        folder,
                        name,
                        RenameFlags::EXCHANGE,
                    )?;
                }
                Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                    self.exchange.store(false, Ordering::Relaxed);
                }
                // Nothing at the target after all: the `rename` below decides.
                Err(_) => {}
            }
        }
        rustix::fs::renameat(&self.temp, temp, folder, name).map(|()| false)
    }

    /// Hands over the temporary file `temp`, which holds a file a write replaced: to the
    /// helper thread where there is one (a write need not wait for it), else removed here.
    ///
    /// The helper may keep it for a later write to overwrite ([`crate::spare`]) only with
    /// [`SyncMode::Full`] and once the folder it left is `synced`: from then on no name in
    /// `memories/` leads to it on disk either, so a power loss cannot show another file's
    /// bytes under its old name. Otherwise it is removed.
    fn dispose_replaced(&self, temp: &str, synced: bool) {
        match &self.helper {
            Some(helper) if synced && self.options.sync == SyncMode::Full => {
                helper.replaced(temp.to_owned())
            }
            Some(helper) => helper.remove(temp.to_owned()),
            None => remove_temp(&self.temp, temp),
        }
    }

    /// Under the lock: checks the target again and moves the temporary file into place, in
    /// the folder opened here, under this same lock hold (so no concurrent rename of a folder
    /// can move the place it goes to).
    ///
    /// A create is checked by the one-step create itself, which fails if anything is at the
    /// target; only then does a probe tell what is there (an empty folder tree is replaced).
    /// Other modes probe (or, for an update, read) the target first.
    fn commit(
        &self,
        path: &MemoryPath,
        parent: &MemoryPath,
        temp: &str,
        mode: &WriteMode,
        max_files: Option<usize>,
    ) -> Result<Commit> {
        let Some(name) = path.name() else {
            return Err(Error::AlreadyExists { path: path.clone() });
        };
        let target_rel = rel(path)?;
        let mut target = if matches!(mode, WriteMode::Create) {
            Target::Absent
        } else {
            self.check_write_target(path, mode)?
        };
        let count = match max_files {
            Some(max_files) => Some(self.check_room(max_files)?),
            None => None,
        };
        let Some(folder) = self.open_folder(parent)? else {
            return Ok(Commit::NoFolder);
        };
        let dir = folder.fd(&self.root);
        if target == Target::EmptyTree {
            self.remove_tree(path, &target_rel)?;
        }
        let mut replaced = false;
        let result = match mode {
            WriteMode::Create => {
                let mut placed = self.place_new(temp, dir, name);
                if placed == Err(Errno::EXIST) {
                    // Something is there: refused, unless it is an empty folder tree.
                    target = self.check_write_target(path, mode)?;
                    if target == Target::EmptyTree {
                        self.remove_tree(path, &target_rel)?;
                    }
                    placed = self.place_new(temp, dir, name);
                }
                match placed {
                    Err(Errno::EXIST) => return Err(Error::AlreadyExists { path: path.clone() }),
                    Err(Errno::OPNOTSUPP) => {
                        // File systems without a one-step create: a check under the lock
                        // stands in for it.
                        target = self.check_write_target(path, mode)?;
                        if target == Target::EmptyTree {
                            self.remove_tree(path, &target_rel)?;
                        }
                        rustix::fs::renameat(&self.temp, temp, dir, name)
                    }
                    other => other,
                }
            }
            WriteMode::Overwrite | WriteMode::Update(_) if target == Target::File => {
                self.let_go(path);
                self.replace(temp, dir, name)
                    .map(|exchanged| replaced = exchanged)
            }
            WriteMode::Overwrite | WriteMode::Update(_) => {
                rustix::fs::renameat(&self.temp, temp, dir, name)
            }
        };
        match result {
            Ok(()) => {
                if target != Target::File {
                    match count {
                        // Read under this same lock hold: no need to read it again.
                        Some(n) => self.store_count(n + 1),
                        None => self.add_to_count(1, 0),
                    }
                }
                Ok(Commit::Done { folder, replaced })
            }
            // The folder vanished since it was opened (only a writer that ignores the lock
            // does that): open it again.
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(Commit::Retry),
            Err(e) => Err(FsError::io("rename into place", path, e.into()).into()),
        }
    }

    pub(crate) fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(path)?;
        let _locked = self.lock()?;
        self.let_go(path);
        let result = self.delete_locked(path);
        if result.is_err()
            && !matches!(
                result,
                Err(Error::NotFound { .. } | Error::SymbolicLink { .. })
            )
        {
            // A delete that failed part-way may have removed some files.
            if let Err(e) = self.recount() {
                tracing::warn!(error = %e, "memory-fs: cannot count the files");
                self.count_stale.store(true, Ordering::Relaxed);
            }
        }
        result
    }

    fn delete_locked(&self, path: &MemoryPath) -> Result<()> {
        if path.is_root() {
            let entries = self
                .root
                .entries()
                .map_err(|e| FsError::io("list", path, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| FsError::io("list", path, e))?;
                let name = PathBuf::from(entry.file_name());
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                let result = if is_dir {
                    self.remove_tree(path, &name).map_err(Error::from)
                } else {
                    match self.root.remove_file(&name) {
                        Err(e) if !is_not_found(&e) => Err(FsError::io("delete", path, e).into()),
                        _ => Ok(()),
                    }
                };
                result?;
            }
            self.store_count(0);
            self.sync_dir(path)?;
            return Ok(());
        }
        if self.delete_file_in_folder(path)? {
            return Ok(());
        }
        let r = rel(path)?;
        match self.probe_unlinked(path)? {
            Probe::File(_) => match self.root.remove_file(&r) {
                Ok(()) => self.add_to_count(0, 1),
                Err(e) if is_not_found(&e) => {
                    return Err(Error::NotFound { path: path.clone() });
                }
                Err(e) => return Err(FsError::io("delete", path, e).into()),
            },
            Probe::Dir => {
                let mut files = 0usize;
                self.walk(path, false, &mut |_, _| {
                    files += 1;
                    true
                })?;
                if files == 0 {
                    return Err(Error::NotFound { path: path.clone() });
                }
                self.remove_tree(path, &r)?;
                self.add_to_count(0, files);
            }
            _ => return Err(Error::NotFound { path: path.clone() }),
        }
        self.prune_empty_parents(path);
        self.sync_dir(&self.existing_ancestor(path))?;
        Ok(())
    }

    /// Deletes `path` if it is a regular file, through one handle on its folder (opened with
    /// `openat2`, never through a link): a look at the name, the unlink, and the sync of that
    /// same folder. `Ok(false)` when it is anything else or `openat2` is not there: the caller
    /// probes the path and tells why.
    fn delete_file_in_folder(&self, path: &MemoryPath) -> Result<bool> {
        let (Some(name), Some(parent)) = (path.name(), path.parent()) else {
            return Ok(false);
        };
        let folder = if parent.is_root() {
            None
        } else {
            match self.beneath(&parent, OFlags::RDONLY | OFlags::DIRECTORY)? {
                Beneath::Opened(fd) => Some(fd),
                _ => return Ok(false),
            }
        };
        let dir = match &folder {
            Some(fd) => fd.as_fd(),
            None => self.root.as_fd(),
        };
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {}
            _ => return Ok(false),
        }
        match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) => {}
            Err(Errno::NOENT) => return Err(Error::NotFound { path: path.clone() }),
            Err(e) => return Err(FsError::io("delete", path, e.into()).into()),
        }
        self.add_to_count(0, 1);
        if self.prune_empty_parents(path) == 0 {
            // The folder stays: sync it through the handle already open.
            if self.options.sync == SyncMode::Full {
                rustix::fs::fsync(dir)
                    .map_err(|e| FsError::io("sync folder", &parent, e.into()))?;
            }
        } else {
            self.sync_dir(&self.existing_ancestor(path))?;
        }
        Ok(true)
    }

    /// The innermost ancestor of `path` that is still a folder (at worst the root).
    fn existing_ancestor(&self, path: &MemoryPath) -> MemoryPath {
        let mut current = path.parent();
        while let Some(dir) = current {
            if dir.is_root() || matches!(self.lstat(&dir), Ok(Some(meta)) if meta.is_dir()) {
                return dir;
            }
            current = dir.parent();
        }
        MemoryPath::root()
    }

    pub(crate) fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(from)?;
        let _locked = self.lock()?;
        let source_exists = match self.probe_unlinked(from)? {
            Probe::File(_) => true,
            Probe::Dir => self.has_file_below(from)?,
            _ => false,
        };
        if !source_exists {
            return Err(Error::NotFound { path: from.clone() });
        }
        if to.starts_with(from) {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        }
        let to_rel = rel(to)?;
        match self.probe_unlinked(to)? {
            Probe::Link => return Err(Error::SymbolicLink { path: to.clone() }),
            Probe::File(_) | Probe::Special => {
                return Err(Error::AlreadyExists { path: to.clone() });
            }
            Probe::Dir => {
                if self.has_file_below(to)? {
                    return Err(Error::AlreadyExists { path: to.clone() });
                }
                self.remove_tree(to, &to_rel)?;
            }
            Probe::BelowFile(parent) => {
                return Err(Error::ParentIsFile {
                    path: to.clone(),
                    parent,
                });
            }
            Probe::BelowSpecial(at) => return Err(FsError::NotRegular { path: at }.into()),
            Probe::Missing => {}
        }
        let Some(created) = self.make_parents(to)? else {
            // Only our own writers change folders, and they wait for the lock.
            return Err(FsError::Vanished {
                path: to.clone(),
                attempts: 1,
            }
            .into());
        };
        if let Err(e) = self.root.rename(rel(from)?, &self.root, &to_rel) {
            self.prune_created(&created);
            return Err(FsError::io("rename", from, e).into());
        }
        self.prune_empty_parents(from);
        let to_parent = to.parent().unwrap_or_else(MemoryPath::root);
        self.sync_dir(&to_parent)?;
        let from_parent = self.existing_ancestor(from);
        if from_parent != to_parent {
            self.sync_dir(&from_parent)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::names_in;

    #[test]
    fn temp_names_are_recognised_and_unique() {
        let a = temp_name();
        let b = temp_name();
        assert_ne!(a, b);
        assert!(is_temp_name(&a), "{a}");
        assert!(a.len() < 64);
        for other in [
            ".tmp",
            "0123456789abcdef0123456789abcdef.tmp.md",
            "0123456789ABCDEF0123456789ABCDEF.tmp",
            "0123456789abcdef0123456789abcde.tmp",
            "notes.tmp",
        ] {
            assert!(!is_temp_name(other), "{other}");
        }
        assert!(is_temp_name("0123456789abcdef0123456789abcdef.tmp"));
        assert!(is_legacy_temp_name(
            ".memory-tmp-0123456789abcdef0123456789abcdef.tmp"
        ));
        assert!(!is_legacy_temp_name(&a));
    }

    #[test]
    fn relative_paths_are_plain_names() {
        let p = MemoryPath::parse("/memories/a b/c.md").unwrap();
        assert_eq!(rel(&p).unwrap(), PathBuf::from("a b/c.md"));
        assert_eq!(rel(&MemoryPath::root()).unwrap(), PathBuf::from("."));
        let dots = MemoryPath::parse("/memories/.../x").unwrap();
        assert_eq!(rel(&dots).unwrap(), PathBuf::from(".../x"));
    }

    #[test]
    fn whole_reads_trust_the_size_but_not_blindly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"hello world").unwrap();
        let open = || std::fs::File::open(&path).unwrap();
        assert_eq!(read_whole(&mut open(), 11).unwrap(), b"hello world");
        // Shrunk since the size was taken: what is there.
        assert_eq!(read_whole(&mut open(), 64).unwrap(), b"hello world");
        // Grown from empty since: everything.
        assert_eq!(read_whole(&mut open(), 0).unwrap(), b"hello world");
    }

    /// A replaced file is gone once the store closes, by name exchange or by `rename`.
    #[test]
    fn replacing_a_file_leaves_no_old_file_behind() {
        for exchange in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path(), FsOptions::default().fsync(false)).unwrap();
            store.exchange.store(exchange, Ordering::Relaxed);
            let path = MemoryPath::parse("/memories/notes/a.md").unwrap();
            store.write(&path, b"one", &WriteMode::Create).unwrap();
            store.write(&path, b"two", &WriteMode::Overwrite).unwrap();
            let version = store.read(&path).unwrap().version;
            store
                .write(&path, b"three", &WriteMode::Update(version))
                .unwrap();
            assert_eq!(store.read(&path).unwrap().contents, b"three");
            // Closed, so that the helper has removed the replaced files and its own.
            drop(store);
            assert!(
                names_in(&dir.path().join(TEMP_DIR)).is_empty(),
                "{exchange}"
            );
            assert_eq!(names_in(&dir.path().join("memories/notes")), ["a.md"]);
        }
    }

    /// A folder put at the target by a writer that ignores the lock is neither replaced nor
    /// pulled into the folder of temporary files by the exchange.
    #[test]
    fn a_folder_at_the_target_is_never_exchanged_away() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path(), FsOptions::default().fsync(false)).unwrap();
        // Without the helper, whose files made ahead would be in the folder too.
        store.helper = None;
        let memories = dir.path().join("memories");
        std::fs::create_dir_all(memories.join("a.md")).unwrap();
        std::fs::write(memories.join("a.md/inner.md"), b"inner").unwrap();
        let temp = temp_name();
        std::fs::write(dir.path().join(TEMP_DIR).join(&temp), b"new").unwrap();

        let e = store
            .replace(&temp, store.root.as_fd(), "a.md")
            .unwrap_err();
        assert!(matches!(e, Errno::ISDIR | Errno::NOTEMPTY), "{e:?}");
        assert_eq!(
            std::fs::read(memories.join("a.md/inner.md")).unwrap(),
            b"inner"
        );
        assert_eq!(
            names_in(&dir.path().join(TEMP_DIR)),
            std::slice::from_ref(&temp)
        );
        assert_eq!(
            std::fs::read(dir.path().join(TEMP_DIR).join(&temp)).unwrap(),
            b"new"
        );
    }

    #[test]
    fn versions_are_content_hashes() {
        assert_eq!(version_of(b"a"), version_of(b"a"));
        assert_ne!(version_of(b"a"), version_of(b"b"));
        assert_eq!(version_of(b"").as_str().len(), 64);
    }
}
