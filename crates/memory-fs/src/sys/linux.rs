//! The Linux speed-ups. Each answers one question the portable path answers too, in fewer
//! system calls, and says [`Beneath::Walk`] (or `None`) when it cannot, so the caller takes
//! the portable path; none of them changes what any reader, other process or later write sees.

use std::os::fd::AsFd;
use std::time::{Duration, SystemTime};

use cap_std::fs::Dir;
use memory_core::MemoryPath;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, ResolveFlags};
use rustix::io::Errno;

use super::{Beneath, Open};
use crate::error::FsError;
use crate::layout::{DIR_MODE, FILE_MODE, FileInfo};

/// How `openat2` resolves a path below the root: never above it, never through a symbolic
/// link (a link anywhere in the path fails the call with `ELOOP`), never through a magic link.
const BENEATH: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// The Linux fast paths of one store, present when the kernel has `openat2` (Linux 5.6 on, and
/// no system-call filter refusing it) and the store was not opened with `portable=true`.
#[derive(Debug)]
pub(crate) struct Fast {
    _private: (),
}

impl Fast {
    /// The fast paths, if `openat2` works on `root`.
    pub(crate) fn detect(root: &Dir) -> Option<Fast> {
        let fast = Fast { _private: () };
        match fast.open(root, &MemoryPath::root(), Open::Look) {
            Ok(Beneath::Opened(_)) => Some(fast),
            _ => None,
        }
    }

    /// Opens `path` below `root` with one `openat2` call, never through a link.
    pub(crate) fn open(
        &self,
        root: &Dir,
        path: &MemoryPath,
        open: Open,
    ) -> Result<Beneath, FsError> {
        let flags = match open {
            Open::Read => OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            Open::Folder => OFlags::RDONLY | OFlags::DIRECTORY,
            Open::Look => OFlags::PATH,
        };
        // A memory path below the root is plain names joined by `/` (what `MemoryPath`
        // guarantees): its relative text is the path to resolve.
        let r = if path.is_root() { "." } else { path.relative() };
        match rustix::fs::openat2(
            root,
            r,
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            BENEATH,
        ) {
            Ok(fd) => Ok(Beneath::Opened(std::fs::File::from(fd))),
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

    /// Moves `temp` from `temp_dir` to `name` in `folder` only if nothing is there, in one
    /// `renameat2(RENAME_NOREPLACE)`. `None` where the file system lacks the flag (the caller
    /// links instead).
    pub(crate) fn place_new(
        &self,
        temp_dir: &Dir,
        temp: &str,
        folder: &Dir,
        name: &str,
    ) -> Option<std::io::Result<()>> {
        match rustix::fs::renameat_with(temp_dir, temp, folder, name, RenameFlags::NOREPLACE) {
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => None,
            other => Some(other.map_err(Into::into)),
        }
    }

    /// Visits the regular files below an open folder, depth first, reading its entries into
    /// one buffer (`getdents64`; the portable walk allocates a name per entry); `visit` returns
    /// `false` to stop. With `with_info`, each file comes with its size and modification time
    /// (one `fstatat` each); without, the entry's type is enough.
    pub(crate) fn walk(
        &self,
        folder: std::fs::File,
        dir: &MemoryPath,
        with_info: bool,
        visit: &mut dyn FnMut(MemoryPath, Option<FileInfo>) -> bool,
    ) -> Result<bool, FsError> {
        let mut buffer = Vec::with_capacity(8192);
        let mut entries = rustix::fs::RawDir::new(&folder, buffer.spare_capacity_mut());
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
            let Ok(child) = std::str::from_utf8(name).map(|name| dir.join(name)) else {
                tracing::debug!(dir = %dir, "memory-fs: skipping a name that is not UTF-8");
                continue;
            };
            let Ok(child) = child else {
                tracing::debug!(dir = %dir, "memory-fs: skipping a name no memory path can hold");
                continue;
            };
            let c_name = entry.file_name();
            let mut file_type = entry.file_type();
            let mut info = None;
            if file_type == FileType::Unknown || (with_info && file_type == FileType::RegularFile) {
                let st = match rustix::fs::statat(&folder, c_name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => st,
                    Err(Errno::NOENT | Errno::NOTDIR) => continue,
                    Err(e) => return Err(FsError::io("stat", &child, e.into())),
                };
                file_type = FileType::from_raw_mode(st.st_mode);
                info = Some(FileInfo {
                    size: u64::try_from(st.st_size).unwrap_or(0),
                    modified: modified_time(st.st_mtime, st.st_mtime_nsec),
                });
            }
            match file_type {
                FileType::Directory => {
                    let sub = match rustix::fs::openat(
                        folder.as_fd(),
                        c_name,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    ) {
                        Ok(sub) => std::fs::File::from(sub),
                        // Gone, or replaced by a link or a file since it was listed.
                        Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => continue,
                        Err(e) => return Err(FsError::io("list", &child, e.into())),
                    };
                    if !self.walk(sub, &child, with_info, visit)? {
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
}

/// A modification time from seconds and nanoseconds since the epoch (as `stat` gives them).
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

/// The mount a folder is on, where the kernel tells it (`statx`, Linux 5.8 on).
pub(super) fn mount_id(dir: &Dir) -> Option<u64> {
    use rustix::fs::StatxFlags;
    rustix::fs::statx(dir, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)
        .ok()
        .filter(|st| StatxFlags::from_bits_retain(st.stx_mask).contains(StatxFlags::MNT_ID))
        .map(|st| st.stx_mnt_id)
}

/// See [`super::umask_narrows_modes`]: `true` when `/proc/self/status` cannot be read.
pub(super) fn umask_narrows_modes() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return true;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("Umask:"))
        .and_then(|value| u32::from_str_radix(value.trim(), 8).ok())
        .is_none_or(|umask| umask & (FILE_MODE | DIR_MODE) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_times_before_and_after_the_epoch() {
        let after = modified_time(10, 5u32).unwrap();
        assert_eq!(
            after.duration_since(SystemTime::UNIX_EPOCH).unwrap(),
            Duration::new(10, 5)
        );
        let before = modified_time(-10, 0u32).unwrap();
        assert!(before < SystemTime::UNIX_EPOCH);
        assert!(modified_time(0, -1i64).is_none());
    }
}
