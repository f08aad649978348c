//! The platform seam, in the style of redb's `file_backend`: what differs between Linux, the
//! other Unix systems (macOS) and Windows is here and nowhere else.
//!
//! - [`Fast`]: the Linux-only speed-ups (`openat2` resolution, `RENAME_NOREPLACE`, raw folder
//!   reads), in `linux.rs`. Elsewhere, and with the store option `portable=true`, a store has
//!   none and every operation takes its portable path (cap-std, one name at a time, never
//!   following a link), which the callers keep beside each fast one.
//! - Small functions every platform has in its own way: file modes, folder syncs, positioned
//!   reads and writes of the count file, the file-system check between `memories/` and the
//!   folder of temporary files.

use std::io;
use std::path::Path;

use cap_std::fs::{Dir, DirBuilder, OpenOptions};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::Fast;

#[cfg(not(target_os = "linux"))]
mod none;
#[cfg(not(target_os = "linux"))]
pub(crate) use none::Fast;

/// What a fast open below the root found.
#[derive(Debug)]
// Only Linux's fast paths make one; elsewhere the callers' matches are never reached.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) enum Beneath {
    /// The path, opened.
    Opened(std::fs::File),
    /// The path or one of its ancestors is a symbolic link.
    Link,
    /// Nothing there (every ancestor that exists is a real folder).
    Missing,
    /// An ancestor is not a folder (a file or a special file): the portable walk names it.
    BelowNonDir,
    /// The fast path cannot answer (a filter refuses the call, or a concurrent rename it could
    /// not rule out): the portable walk decides.
    Walk,
}

/// What a fast open is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Open {
    /// Reading a regular file (never blocking on a FIFO planted there).
    Read,
    /// A folder, readable (for listing and syncing).
    Folder,
    /// Looking at whatever is there (its type and size), without opening it for reading.
    Look,
}

/// Options for creating a new temporary file: write-only, failing if anything (a link
/// included) is at the name, mode [`FILE_MODE`](crate::layout::FILE_MODE) on Unix.
pub(crate) fn new_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::mode(&mut options, crate::layout::FILE_MODE);
    options
}

/// Options for reading a regular file without following a link at its name and (on Unix)
/// without blocking on a FIFO or taking a terminal.
pub(crate) fn read_options() -> OpenOptions {
    use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(
        &mut options,
        (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
    );
    options
}

/// Options for setting a file's times: read (Windows also needs write access to change
/// them), never following a link at its name.
pub(crate) fn times_options() -> OpenOptions {
    let mut options = read_options();
    options.write(cfg!(windows));
    options
}

/// Options for one of the store's own files beside `memories/` (the lock and count files):
/// read and write, created if missing, never through a link.
pub(crate) fn own_file_options() -> OpenOptions {
    use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .follow(FollowSymlinks::No);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::mode(&mut options, crate::layout::FILE_MODE);
    options
}

/// A builder of private folders: mode [`DIR_MODE`](crate::layout::DIR_MODE) on Unix.
pub(crate) fn private_dir_builder() -> DirBuilder {
    #[allow(unused_mut)] // Only Unix sets a mode.
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    cap_std::fs::DirBuilderExt::mode(&mut builder, crate::layout::DIR_MODE);
    builder
}

/// Sets `mode` on `rel` below `dir` again, after a umask took bits off it at creation. Windows
/// has no modes: its default ACL stands.
pub(crate) fn set_mode(dir: &Dir, rel: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let perms = std::fs::Permissions::from_mode(mode);
        dir.set_permissions(rel, cap_std::fs::Permissions::from_std(perms))
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, rel, mode);
        Ok(())
    }
}

/// Sets `mode` on an open file (see [`set_mode`]).
pub(crate) fn set_file_mode(file: &std::fs::File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// Whether the process's umask may take bits off the modes the store creates files and
/// folders with, so that each needs a `chmod` after creation. Linux reads it once from
/// `/proc/self/status` (asking `umask` itself would change it for a moment under every other
/// thread); other Unix systems always set the mode again; Windows has no modes.
pub(crate) fn umask_narrows_modes() -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::umask_narrows_modes()
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        true
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Creates `dir` and its missing ancestors, each private (mode 0700 on Unix whatever the umask:
/// a world-writable parent would let anyone swap the store's folder).
pub(crate) fn create_private_dirs(dir: &Path) -> io::Result<()> {
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
        #[allow(unused_mut)] // Only Unix sets a mode.
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, crate::layout::DIR_MODE);
        match builder.create(folder) {
            Ok(()) => {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    let perms = std::fs::Permissions::from_mode(crate::layout::DIR_MODE);
                    std::fs::set_permissions(folder, perms)?;
                }
            }
            // Created meanwhile by someone else: theirs, left as it is.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && folder.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Opens the folder at `path` (following a link there, as the SDKs do for `memories`) as a
/// handle that can also be synced and listed: cap-std's own opens give a path-only handle on
/// Linux, which [`sync_dir`] would have to open again for every sync of the folder.
pub(crate) fn open_readable_dir(path: &Path) -> io::Result<Dir> {
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Dir::from_std_file(std::fs::File::from(fd)))
    }
    #[cfg(not(unix))]
    {
        Dir::open_ambient_dir(path, cap_std::ambient_authority())
    }
}

/// Syncs a folder, so that the names a write changed in it survive a power loss. Windows
/// cannot flush a folder (NTFS journals its metadata): nothing to do there.
pub(crate) fn sync_dir(dir: &Dir) -> io::Result<()> {
    #[cfg(unix)]
    {
        match rustix::fs::fsync(dir) {
            // A path-only handle (cap-std opens folders so on Linux): sync a readable one.
            Err(rustix::io::Errno::BADF) => {
                let readable = rustix::fs::openat(
                    dir,
                    ".",
                    rustix::fs::OFlags::RDONLY
                        | rustix::fs::OFlags::DIRECTORY
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )?;
                Ok(rustix::fs::fsync(readable)?)
            }
            other => Ok(other?),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Whether two folders are on one file system (and, on Linux, one mount), so that a rename
/// moves a file from one to the other in one step. Windows answers `true`: a rename across
/// volumes fails there with an error the write reports.
pub(crate) fn same_file_system(a: &Dir, b: &Dir) -> io::Result<bool> {
    #[cfg(unix)]
    {
        let device = |dir: &Dir| rustix::fs::fstat(dir).map(|st| st.st_dev);
        #[cfg(target_os = "linux")]
        let mount = |dir: &Dir| linux::mount_id(dir);
        #[cfg(not(target_os = "linux"))]
        let mount = |_: &Dir| None::<u64>;
        Ok(device(a)? == device(b)? && mount(a) == mount(b))
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        Ok(true)
    }
}

/// Reads exactly `buf.len()` bytes at `offset`, without moving a shared cursor.
pub(crate) fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut filled = 0;
        while filled < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_read(
                file,
                &mut buf[filled..],
                offset + filled as u64,
            )?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            filled += n;
        }
        Ok(())
    }
}

/// Writes all of `buf` at `offset`, without moving a shared cursor.
pub(crate) fn write_all_at(file: &std::fs::File, buf: &[u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut written = 0;
        while written < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_write(
                file,
                &buf[written..],
                offset + written as u64,
            )?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            written += n;
        }
        Ok(())
    }
}
