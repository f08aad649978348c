//! Symbolic links planted inside the store (pointing outside it, to a folder and to a file, by
//! absolute and by relative target, and one pointing inside) are never followed, by any
//! operation: nothing outside is read, written or deleted, a command whose path or an ancestor
//! of it is a link fails with `Error::SymbolicLink` naming that path (SPEC, Paths), and
//! listings leave links out. The store's own lock file and folder of temporary files are never
//! followed either.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use memory_core::{Error, MemoryHandler, MemoryPath, MemoryTool, Storage, Version, WriteMode};
use memory_fs::{FsOptions, FsStorage};
use serde_json::json;
use sha2::{Digest, Sha256};

const SECRET: &[u8] = b"TOP SECRET host file";
const INNER_SECRET: &[u8] = b"INNER SECRET host file";

struct Fixture {
    _base_dir: tempfile::TempDir,
    _outside_dir: tempfile::TempDir,
    outside: PathBuf,
    memories: PathBuf,
    storage: FsStorage,
}

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

/// Every entry below `dir` (links not followed) with the content of each file.
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let file_type = entry.file_type().unwrap();
            if file_type.is_dir() {
                out.insert(format!("{name}/"), None);
                walk(root, &path, out);
            } else {
                out.insert(name, std::fs::read(&path).ok());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The fixture on a store that takes the Linux fast paths, or (`portable`) the portable ones.
fn fixture(portable: bool) -> Fixture {
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().to_path_buf();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::create_dir(outside.join("dir")).unwrap();
    std::fs::write(outside.join("dir/inner.txt"), INNER_SECRET).unwrap();

    let base_dir = tempfile::tempdir().unwrap();
    let storage =
        FsStorage::with_options(base_dir.path(), FsOptions::default().portable(portable)).unwrap();
    assert!(!portable || !storage.uses_fast_paths());
    let memories = base_dir.path().join("memories");
    std::fs::write(memories.join("real.md"), b"real").unwrap();
    std::fs::create_dir(memories.join("realdir")).unwrap();
    std::fs::write(memories.join("realdir/x.md"), b"x").unwrap();

    symlink(outside.join("secret.txt"), memories.join("link_file")).unwrap();
    symlink(outside.join("dir"), memories.join("link_dir")).unwrap();
    // base/memories/../../<outside>/dir: a relative escape.
    let relative = Path::new("../..")
        .join(outside.file_name().unwrap())
        .join("dir");
    assert_eq!(
        std::fs::read(memories.join(&relative).join("inner.txt")).unwrap(),
        INNER_SECRET,
        "fixture: the relative link target resolves outside"
    );
    symlink(&relative, memories.join("rel_dir")).unwrap();
    // A link to a file inside the store is not followed either.
    symlink("real.md", memories.join("inner_link")).unwrap();
    std::fs::create_dir(memories.join("sub")).unwrap();
    symlink(outside.join("dir"), memories.join("sub/deep_link")).unwrap();

    Fixture {
        _base_dir: base_dir,
        _outside_dir: outside_dir,
        outside,
        memories,
        storage,
    }
}

const LINKED: [&str; 9] = [
    "/memories/link_file",
    "/memories/link_dir",
    "/memories/link_dir/inner.txt",
    "/memories/link_dir/new.md",
    "/memories/rel_dir",
    "/memories/rel_dir/inner.txt",
    "/memories/inner_link",
    "/memories/sub/deep_link",
    "/memories/sub/deep_link/inner.txt",
];

fn assert_link_error<T: std::fmt::Debug>(what: &str, path: &str, result: memory_core::Result<T>) {
    match result {
        Err(Error::SymbolicLink { path: named }) => assert_eq!(named.as_str(), path, "{what}"),
        other => panic!("{what}: expected the symbolic-link error for {path}, got {other:?}"),
    }
}

#[tokio::test]
async fn every_storage_call_through_a_link_fails_and_nothing_outside_changes() {
    for portable in [false, true] {
        every_storage_call_through_a_link_fails_and_nothing_outside_changes_with(portable).await;
    }
}

async fn every_storage_call_through_a_link_fails_and_nothing_outside_changes_with(portable: bool) {
    let f = fixture(portable);
    let outside_before = snapshot(&f.outside);
    let s = &f.storage;
    let assert_outside_intact = |what: &str| {
        assert_eq!(
            snapshot(&f.outside),
            outside_before,
            "{what}: something outside the store changed"
        );
    };
    let secret_version = Version::new(hex::encode(Sha256::digest(SECRET)));
    let inner_version = Version::new(hex::encode(Sha256::digest(INNER_SECRET)));

    for path in LINKED {
        assert_link_error(&format!("read {path}"), path, s.read(&p(path)).await);
        assert_link_error(&format!("stat {path}"), path, s.stat(&p(path)).await);
        assert_link_error(&format!("list {path}"), path, s.list(&p(path)).await);
        for mode in [
            WriteMode::Create,
            WriteMode::Overwrite,
            WriteMode::Update(secret_version.clone()),
            WriteMode::Update(inner_version.clone()),
        ] {
            let what = format!("write {path} ({mode:?})");
            let result = s.write(&p(path), b"OVERWRITTEN".to_vec(), mode).await;
            assert_link_error(&what, path, result);
            assert_outside_intact(&what);
        }
        assert_link_error(
            &format!("rename {path} -> /memories/moved"),
            path,
            s.rename(&p(path), &p("/memories/moved")).await,
        );
        for from in ["/memories/real.md", "/memories/realdir"] {
            let what = format!("rename {from} -> {path}");
            assert_link_error(&what, path, s.rename(&p(from), &p(path)).await);
            assert_outside_intact(&what);
        }
        let what = format!("delete {path}");
        assert_link_error(&what, path, s.delete(&p(path)).await);
        assert_outside_intact(&what);
    }
    // Creating below a linked folder, with missing levels in between, is refused too.
    for path in ["/memories/link_dir/a/b.md", "/memories/rel_dir/x/y/z.md"] {
        let result = s.write(&p(path), b"x".to_vec(), WriteMode::Create).await;
        assert_link_error(&format!("create {path}"), path, result);
    }
    assert_outside_intact("every call");
    // Every link is still in place, untouched, and the real files too.
    for link in [
        "link_file",
        "link_dir",
        "rel_dir",
        "inner_link",
        "sub/deep_link",
    ] {
        assert!(
            std::fs::symlink_metadata(f.memories.join(link))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{link} is still the planted link"
        );
    }
    assert_eq!(
        s.read(&p("/memories/real.md")).await.unwrap().contents,
        b"real"
    );
    assert!(!f.memories.join("moved").exists());

    // Listings leave links out, and everything behind them.
    let all: Vec<String> = s
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_owned())
        .collect();
    assert_eq!(all, ["/memories/real.md", "/memories/realdir/x.md"]);
    // (The fixture placed its files by hand: a store opened now counts them.)
    let reopened = FsStorage::new(f.memories.parent().unwrap()).unwrap();
    assert_eq!(
        reopened.file_count().await.unwrap(),
        2,
        "links are not counted"
    );
    assert!(
        matches!(s.stat(&p("/memories/sub")).await, Ok(None)),
        "a folder holding only a link is empty"
    );

    // Deleting a folder, or the whole store, removes the links in it, never their targets.
    std::fs::create_dir_all(f.memories.join("tree")).unwrap();
    std::fs::write(f.memories.join("tree/a.md"), b"a").unwrap();
    symlink(f.outside.join("dir"), f.memories.join("tree/link_dir")).unwrap();
    symlink(
        f.outside.join("secret.txt"),
        f.memories.join("tree/link_file"),
    )
    .unwrap();
    s.delete(&p("/memories/tree")).await.unwrap();
    assert!(!f.memories.join("tree").exists());
    assert_outside_intact("delete of a folder holding links");
    s.delete(&MemoryPath::root()).await.unwrap();
    assert_outside_intact("delete of /memories");
    assert!(std::fs::read_dir(&f.memories).unwrap().next().is_none());
    assert_eq!(std::fs::read(f.outside.join("secret.txt")).unwrap(), SECRET);
}

fn link_text(path: &str) -> String {
    format!(
        "Error: Path {path} would escape /memories directory: it passes through a symbolic link, which this store never follows"
    )
}

/// What the model sees: SPEC's text for every command, with the path it gave.
#[tokio::test]
async fn every_command_through_a_link_answers_the_spec_text() {
    for portable in [false, true] {
        every_command_through_a_link_answers_the_spec_text_with(portable).await;
    }
}

async fn every_command_through_a_link_answers_the_spec_text_with(portable: bool) {
    let f = fixture(portable);
    let outside_before = snapshot(&f.outside);
    let tool = MemoryTool::new(f.storage.clone());
    for path in LINKED {
        for input in [
            json!({"command": "view", "path": path}),
            json!({"command": "view", "path": path, "view_range": [1, 2]}),
            json!({"command": "create", "path": path, "file_text": "OVERWRITTEN"}),
            json!({"command": "str_replace", "path": path, "old_str": "SECRET", "new_str": "x"}),
            json!({"command": "str_replace", "path": path, "old_str": "real", "new_str": "x"}),
            json!({"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"}),
            json!({"command": "delete", "path": path}),
            json!({"command": "rename", "old_path": path, "new_path": "/memories/moved"}),
            json!({"command": "rename", "old_path": "/memories/real.md", "new_path": path}),
            json!({"command": "rename", "old_path": "/memories/realdir", "new_path": path}),
        ] {
            let out = tool.execute(&input).await;
            assert!(out.is_error, "{input}: {out:?}");
            assert_eq!(out.text(), Some(link_text(path).as_str()), "{input}");
        }
    }
    let out = tool
        .execute(
            &json!({"command": "create", "path": "/memories/link_dir/a/b.md", "file_text": "x"}),
        )
        .await;
    assert_eq!(
        out.text(),
        Some(link_text("/memories/link_dir/a/b.md").as_str())
    );
    // The root listing leaves the links out.
    let out = tool
        .execute(&json!({"command": "view", "path": "/memories"}))
        .await;
    let listing = out.text().unwrap();
    for name in [
        "link_file",
        "link_dir",
        "rel_dir",
        "inner_link",
        "deep_link",
    ] {
        assert!(!listing.contains(name), "{listing}");
    }
    assert!(listing.contains("/memories/real.md"), "{listing}");
    assert_eq!(snapshot(&f.outside), outside_before);
    assert_eq!(
        std::fs::read(f.memories.join("real.md")).unwrap(),
        b"real",
        "the file a link points to inside the store is untouched"
    );
}

/// The lock file and the folder of temporary files, beside `memories/`, are never followed
/// when they are links: opening refuses the store and nothing outside is created or changed.
#[test]
fn the_store_never_follows_its_own_lock_file_or_temporary_folder() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim"), SECRET).unwrap();
    std::fs::create_dir(outside.path().join("tmpdir")).unwrap();

    // A lock file that is a link to an existing file, and one that dangles.
    for target in ["victim", "created-by-the-store"] {
        let base = tempfile::tempdir().unwrap();
        symlink(
            outside.path().join(target),
            base.path().join(".memories.lock"),
        )
        .unwrap();
        let e = FsStorage::new(base.path()).unwrap_err();
        assert!(matches!(e, Error::Backend { backend: "Fs", .. }), "{e:?}");
    }
    assert_eq!(
        std::fs::read(outside.path().join("victim")).unwrap(),
        SECRET
    );
    assert!(!outside.path().join("created-by-the-store").exists());

    // A folder of temporary files that is a link: temporary files would land outside.
    let base = tempfile::tempdir().unwrap();
    symlink(
        outside.path().join("tmpdir"),
        base.path().join(".memory-tmp"),
    )
    .unwrap();
    let e = FsStorage::new(base.path()).unwrap_err();
    assert!(matches!(e, Error::Backend { backend: "Fs", .. }), "{e:?}");
    assert!(
        std::fs::read_dir(outside.path().join("tmpdir"))
            .unwrap()
            .next()
            .is_none()
    );
}
