#![doc = include_str!("../README.md")]

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// Whether [`open_read_write`] may follow a symbolic link in the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Links in the path are followed, as any program opening a file follows them.
    Follow,
    /// A link anywhere in the path is refused (`SQLITE_OPEN_NOFOLLOW`): the open fails with
    /// SQLite's `SQLITE_CANTOPEN`, and nothing is written where the link points.
    Refuse,
}

/// Opens `path` read-write, creating the file if it does not exist.
///
/// No `SQLITE_OPEN_URI`: a file name is a file name, never `file:...?mode=...` options. The
/// connection is for one thread at a time (`SQLITE_OPEN_NO_MUTEX`; the callers pool them).
///
/// # Errors
/// SQLite's, as it opens the file (a missing folder, permissions, a link with
/// [`Links::Refuse`]).
pub fn open_read_write(path: &Path, links: Links) -> rusqlite::Result<Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if links == Links::Refuse {
        flags |= OpenFlags::SQLITE_OPEN_NOFOLLOW;
    }
    Connection::open_with_flags(path, flags)
}

/// Opens `path` read-only, changing nothing in its folder.
///
/// A read-only connection to a WAL database makes SQLite create the `-wal` and `-shm` files
/// when they are missing (and leave them after closing), which would change the folder; so
/// while there is no `-wal` file (no process has the database open, and every commit is in
/// the main file) the file is opened as immutable (`immutable=1`: no locks, no `-shm`). With a
/// `-wal` file present, the log holds commits the main file may lack, so the database is read
/// through it as usual (its `-shm` exists beside it then).
///
/// # Errors
/// SQLite's; a path that cannot be made absolute is [`rusqlite::Error::InvalidPath`].
pub fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let immutable = !Path::new(&wal).exists();
    let absolute =
        std::path::absolute(path).map_err(|_| rusqlite::Error::InvalidPath(path.to_owned()))?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(read_only_uri(&absolute, immutable), flags)
}

/// The `file:` URI of an absolute path, read-only, and immutable when asked.
///
/// Every byte but unreserved ones and `/` is percent-encoded. The bytes are the path's own on
/// Unix; on Windows they are its UTF-8 (`as_encoded_bytes`: WTF-8, the same as UTF-8 for any
/// path that is valid Unicode), which is what SQLite takes there, with `C:` and `\`
/// percent-encoded like any other byte.
///
/// ```
/// # #[cfg(unix)] {
/// use std::path::Path;
/// assert_eq!(
///     memory_sqlite_conn::read_only_uri(Path::new("/data/my notes.db"), true),
///     "file:/data/my%20notes.db?mode=ro&immutable=1"
/// );
/// # }
/// ```
pub fn read_only_uri(path: &Path, immutable: bool) -> String {
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?mode=ro");
    if immutable {
        uri.push_str("&immutable=1");
    }
    uri
}

/// Creates the database file, empty and readable by its owner only (0600 whatever the umask),
/// if nothing is at `path` yet; an existing file keeps its permissions. SQLite gives the
/// `-wal` and `-shm` files it creates next to it the main file's permissions, so they are 0600
/// too. On other platforms (Windows) the file gets the platform's default permissions,
/// inherited from its folder.
///
/// # Errors
/// The file could not be created (a missing folder, no permission) or, on Unix, given its
/// mode. Something already at `path` is not an error: it is SQLite's to open or refuse.
pub fn create_private(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        // The umask can only take bits away from 0600; set it exactly anyway (a umask of 0277
        // would leave 0400, which SQLite cannot write).
        Ok(_) => make_private(path),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes an existing file readable by its owner only (0600) on Unix; nothing elsewhere.
///
/// # Errors
/// Setting the permissions failed.
pub fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_open_leaves_the_folder_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        {
            let conn = open_read_write(&db, Links::Follow).unwrap();
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
                .unwrap();
        }
        let names = || {
            let mut names: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            names
        };
        let before = names();
        let conn = open_read_only(&db).unwrap();
        let x: i64 = conn.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(x, 1);
        assert!(conn.execute("INSERT INTO t VALUES (2)", []).is_err());
        drop(conn);
        assert_eq!(names(), before, "no -wal or -shm file was left");
    }

    #[cfg(unix)]
    #[test]
    fn links_are_refused_when_asked_and_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.db");
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(open_read_write(&link, Links::Refuse).is_err());
        assert!(!real.exists(), "nothing written where the link points");
        create_private(&real).unwrap();
        let mode = std::fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        open_read_write(&real, Links::Refuse).unwrap();
    }
}
