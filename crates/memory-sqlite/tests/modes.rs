//! A store file and its `-wal` and `-shm` are 0600 whatever the umask. The umask is
//! process-wide, so this binary holds a single test that sets it in turn.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use memory_core::{MemoryPath, Storage, WriteMode};
use memory_sqlite::SqliteStorage;
use rustix::fs::Mode;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[tokio::test]
async fn store_files_are_0600_whatever_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let original = rustix::process::umask(Mode::empty());
    for umask in [0o022, 0o000, 0o002, 0o077, 0o277] {
        rustix::process::umask(Mode::from_raw_mode(umask));
        let db = dir.path().join(format!("umask-{umask:o}.db"));
        let storage = SqliteStorage::open(&db).unwrap();
        // A write makes SQLite create the -wal and -shm files (WAL mode), and keeps them while
        // the store is open.
        storage
            .write(
                &MemoryPath::parse("/memories/a.md").unwrap(),
                b"x".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        for suffix in ["", "-wal", "-shm"] {
            let file = dir.path().join(format!("umask-{umask:o}.db{suffix}"));
            assert_eq!(
                mode(&file),
                0o600,
                "{} with umask {umask:o}",
                file.display()
            );
        }
        drop(storage);
    }
    // A file that already exists keeps the permissions its owner gave it.
    rustix::process::umask(Mode::from_raw_mode(0o022));
    let shared = dir.path().join("shared.db");
    std::fs::write(&shared, b"").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o640)).unwrap();
    SqliteStorage::open(&shared).unwrap();
    assert_eq!(mode(&shared), 0o640);
    rustix::process::umask(original);
}
