//! Files are 0600 and folders 0700 whatever the umask, the missing parents of the base folder
//! included. The umask is process-wide, so this
//! binary holds a single test that sets it in turn.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use memory_core::{MemoryPath, Storage, WriteMode};
use memory_fs::FsStorage;
use rustix::fs::Mode;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

#[tokio::test]
async fn modes_are_0600_and_0700_whatever_the_umask() {
    let original = rustix::process::umask(Mode::empty());
    for umask in [0o000, 0o022, 0o077, 0o277, 0o777] {
        rustix::process::umask(Mode::from_raw_mode(umask));
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("missing/parents/store");
        let storage = FsStorage::new(&base).unwrap();
        for parent in ["missing", "missing/parents"] {
            assert_eq!(
                mode(&dir.path().join(parent)),
                0o700,
                "missing parent {parent}/ of the base, umask {umask:o}"
            );
        }
        let memories = base.join("memories");
        assert_eq!(mode(&memories), 0o700, "memories/ with umask {umask:o}");
        assert_eq!(
            mode(&base),
            0o700,
            "a base folder the store creates, umask {umask:o}"
        );
        assert_eq!(
            mode(&base.join(".memory-tmp")),
            0o700,
            "the folder of temporary files, umask {umask:o}"
        );
        assert_eq!(
            mode(&base.join(".memories.lock")) & 0o077,
            0,
            "lock file with umask {umask:o}"
        );

        storage
            .write(&p("/memories/a/b/c.md"), b"c".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        storage
            .write(&p("/memories/top.md"), b"t".to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
        let v = storage.read(&p("/memories/top.md")).await.unwrap().version;
        storage
            .write(&p("/memories/top.md"), b"u".to_vec(), WriteMode::Update(v))
            .await
            .unwrap();
        storage
            .rename(&p("/memories/top.md"), &p("/memories/moved/here/top.md"))
            .await
            .unwrap();
        for folder in ["a", "a/b", "moved", "moved/here"] {
            assert_eq!(
                mode(&memories.join(folder)),
                0o700,
                "{folder}/ with umask {umask:o}"
            );
        }
        for file in ["a/b/c.md", "moved/here/top.md"] {
            assert_eq!(
                mode(&memories.join(file)),
                0o600,
                "{file} with umask {umask:o}"
            );
        }
    }
    rustix::process::umask(original);
}
