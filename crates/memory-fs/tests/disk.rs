//! On-disk behaviour beyond the shared suite: the SDK layout, temporary files, empty folders,
//! two stores on one folder, failed writes.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use memory_core::{Entry, Error, MemoryPath, Storage, WriteMode};
use memory_fs::{FsOptions, FsStorage};

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

/// Every file and folder below `dir`, as relative paths (folders end in `/`).
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if entry.file_type().unwrap().is_dir() {
                out.push(format!("{rel}/"));
                walk(root, &entry.path(), out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

const STALE: &str = ".memory-tmp-0123456789abcdef0123456789abcdef.tmp";
const FRESH: &str = ".memory-tmp-fedcba9876543210fedcba9876543210.tmp";

#[tokio::test]
async fn uses_the_sdk_layout_and_reads_an_existing_folder() {
    let dir = tempfile::tempdir().unwrap();
    // A folder as the Python SDK leaves it, with an empty folder and a hidden file.
    let memories = dir.path().join("memories");
    std::fs::create_dir_all(memories.join("projects/empty")).unwrap();
    std::fs::write(memories.join("projects/plan.md"), "plan\n").unwrap();
    std::fs::write(memories.join(".config"), "c").unwrap();

    let storage = FsStorage::new(dir.path()).unwrap();
    let listed: Vec<String> = storage
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_owned())
        .collect();
    assert_eq!(listed, ["/memories/.config", "/memories/projects/plan.md"]);
    assert_eq!(
        storage.stat(&p("/memories/projects/empty")).await.unwrap(),
        None
    );
    storage
        .write(&p("/memories/new.md"), b"n".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(std::fs::read(memories.join("new.md")).unwrap(), b"n");
    // A file may take the place of an empty folder.
    storage
        .write(
            &p("/memories/projects/empty"),
            b"now a file".to_vec(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    assert!(memories.join("projects/empty").is_file());
    // The lock file lives beside memories/, never inside.
    assert!(dir.path().join(".memories.lock").is_file());
    assert!(!tree(&memories).iter().any(|e| e.contains("lock")));
}

#[tokio::test]
async fn empty_folders_go_with_their_last_file() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::new(dir.path()).unwrap();
    let memories = dir.path().join("memories");
    for path in [
        "/memories/a/b/c/one.md",
        "/memories/a/two.md",
        "/memories/x/y/z.md",
    ] {
        storage
            .write(&p(path), b"1".to_vec(), WriteMode::Create)
            .await
            .unwrap();
    }
    storage.delete(&p("/memories/a/b/c/one.md")).await.unwrap();
    assert_eq!(
        tree(&memories),
        ["a/", "a/two.md", "x/", "x/y/", "x/y/z.md"]
    );
    storage
        .rename(&p("/memories/x/y/z.md"), &p("/memories/a/z.md"))
        .await
        .unwrap();
    assert_eq!(tree(&memories), ["a/", "a/two.md", "a/z.md"]);
    storage
        .rename(&p("/memories/a"), &p("/memories/q/r/a"))
        .await
        .unwrap();
    assert_eq!(
        tree(&memories),
        ["q/", "q/r/", "q/r/a/", "q/r/a/two.md", "q/r/a/z.md"]
    );
    storage.delete(&p("/memories/q/r/a")).await.unwrap();
    assert!(tree(&memories).is_empty(), "{:?}", tree(&memories));
    assert!(memories.is_dir(), "memories/ itself stays");
}

#[tokio::test]
async fn temporary_files_are_never_listed_and_stale_ones_are_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let memories = dir.path().join("memories");
    {
        let storage = FsStorage::new(dir.path()).unwrap();
        // Many writes: no temporary file is ever left or listed.
        for i in 0..20 {
            storage
                .write(
                    &p("/memories/d/f.md"),
                    format!("{i}").into_bytes(),
                    WriteMode::Overwrite,
                )
                .await
                .unwrap();
        }
        assert_eq!(tree(&memories), ["d/", "d/f.md"]);
    }
    // A crash left temporary files: an old one beside a file, and one alone in a folder.
    std::fs::create_dir(memories.join("crashed")).unwrap();
    for (path, age) in [
        (memories.join("d").join(STALE), 3600),
        (memories.join("crashed").join(STALE), 3600),
        (memories.join("d").join(FRESH), 0),
    ] {
        std::fs::write(&path, b"half a wri").unwrap();
        let mtime = SystemTime::now() - Duration::from_secs(age);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    }
    // Before any clean-up, they are invisible.
    let storage = FsStorage::with_options(
        dir.path(),
        FsOptions::default().stale_temp_age(Duration::from_secs(24 * 3600)),
    )
    .unwrap();
    let listed: Vec<String> = storage
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_owned())
        .collect();
    assert_eq!(listed, ["/memories/d/f.md"]);
    assert_eq!(storage.stat(&p("/memories/crashed")).await.unwrap(), None);
    let temp = p(&format!("/memories/d/{STALE}"));
    assert_eq!(storage.stat(&temp).await.unwrap(), None);
    assert!(matches!(
        storage.read(&temp).await,
        Err(Error::NotFound { .. })
    ));
    assert!(
        storage
            .write(&temp, b"x".to_vec(), WriteMode::Overwrite)
            .await
            .is_err(),
        "reserved name"
    );
    assert_eq!(
        storage.read(&p("/memories/d/f.md")).await.unwrap().contents,
        b"19"
    );
    // Opening with the default age removes the stale ones and keeps the fresh one (it may
    // belong to a writer still running in another process).
    drop(storage);
    let storage = FsStorage::new(dir.path()).unwrap();
    assert_eq!(
        tree(&memories),
        ["crashed/", "d/", format!("d/{FRESH}").as_str(), "d/f.md"]
    );
    // The emptied folder is harmless: a file can take its place.
    storage
        .write(&p("/memories/crashed"), b"file".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        storage
            .read(&p("/memories/crashed"))
            .await
            .unwrap()
            .contents,
        b"file"
    );
    // Deleting the folder takes any temporary file with it.
    storage.delete(&p("/memories/d")).await.unwrap();
    assert_eq!(tree(&memories), ["crashed"]);
}

/// Two stores on one folder (separate lock handles, as two processes have) keep
/// compare-and-swap: concurrent read-modify-write loops lose nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_on_one_folder_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Arc<dyn Storage>> = (0..2)
        .map(|_| Arc::new(FsStorage::new(dir.path()).unwrap()) as Arc<dyn Storage>)
        .collect();
    let path = p("/memories/shared.md");
    stores[0]
        .write(&path, Vec::new(), WriteMode::Create)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for task in 0..6 {
        let storage = Arc::clone(&stores[task % 2]);
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            for line in 0..10 {
                loop {
                    let file = storage.read(&path).await.unwrap();
                    let mut body = file.contents;
                    body.extend_from_slice(format!("{task}:{line}\n").as_bytes());
                    match storage
                        .write(&path, body, WriteMode::Update(file.version))
                        .await
                    {
                        Ok(_) => break,
                        Err(Error::Conflict { .. }) => continue,
                        Err(e) => panic!("{e:?}"),
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let text = String::from_utf8(stores[1].read(&path).await.unwrap().contents).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    let mut expected: Vec<String> = (0..6)
        .flat_map(|t| (0..10).map(move |l| format!("{t}:{l}")))
        .collect();
    expected.sort();
    assert_eq!(lines, expected);

    // And one create wins across the two stores.
    let target = p("/memories/once.md");
    let (a, b) = tokio::join!(
        stores[0].write(&target, b"a".to_vec(), WriteMode::Create),
        stores[1].write(&target, b"b".to_vec(), WriteMode::Create),
    );
    assert!(a.is_ok() != b.is_ok(), "{a:?} {b:?}");
}

/// A write that fails on disk (here a read-only folder) leaves the old content and litter-free
/// folders. Root ignores folder permissions, so as root this prints a skip line; the same
/// property is also checked with an injected failure in the crate's unit tests.
#[tokio::test]
async fn a_failed_write_leaves_the_old_content() {
    use std::os::unix::fs::PermissionsExt;
    if rustix::process::geteuid().is_root() {
        println!(
            "skipping a_failed_write_leaves_the_old_content: running as root, which ignores folder permissions"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::new(dir.path()).unwrap();
    let path = p("/memories/ro/a.md");
    storage
        .write(&path, b"old".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    let folder = dir.path().join("memories/ro");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o500)).unwrap();
    let result = storage
        .write(&path, b"new".to_vec(), WriteMode::Overwrite)
        .await;
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(matches!(result, Err(Error::Backend { .. })), "{result:?}");
    assert_eq!(storage.read(&path).await.unwrap().contents, b"old");
    assert_eq!(tree(&folder), ["a.md"]);
    assert!(matches!(
        storage.stat(&path).await.unwrap(),
        Some(Entry::File(_))
    ));
}
