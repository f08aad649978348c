//! Symbolic links planted inside the store that point outside it (to a folder and to a file,
//! by absolute and by relative target) are never followed out, by any operation: nothing
//! outside is read, written or deleted, and each call fails or acts as if the link were absent.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use memory_core::{Entry, MemoryPath, Result, Storage, Version, WriteMode};
use memory_fs::FsStorage;
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

fn fixture() -> Fixture {
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().to_path_buf();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::create_dir(outside.join("dir")).unwrap();
    std::fs::write(outside.join("dir/inner.txt"), INNER_SECRET).unwrap();

    let base_dir = tempfile::tempdir().unwrap();
    let storage = FsStorage::new(base_dir.path()).unwrap();
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

fn assert_no_secret(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text.contains("SECRET"),
        "{what}: content from outside the store leaked: {text:?}"
    );
}

fn check_outcome<T: std::fmt::Debug>(what: &str, result: &Result<T>) {
    if let Err(e) = result {
        // Errors are fine; they must not be anything that pretends to have found the target.
        assert!(
            !format!("{e:?}").contains("SECRET"),
            "{what}: error leaks outside content: {e:?}"
        );
    }
}

#[tokio::test]
async fn no_operation_follows_a_link_out_of_the_store() {
    let f = fixture();
    let outside_before = snapshot(&f.outside);
    let s = &f.storage;
    let assert_outside_intact = |what: &str| {
        assert_eq!(
            snapshot(&f.outside),
            outside_before,
            "{what}: something outside the store changed"
        );
    };

    // read
    for path in LINKED {
        let result = s.read(&p(path)).await;
        check_outcome(&format!("read {path}"), &result);
        if let Ok(file) = &result {
            assert_no_secret(&format!("read {path}"), &file.contents);
        }
        assert!(
            result.is_err(),
            "read {path} must not follow the link: {result:?}"
        );
    }
    // stat
    for path in LINKED {
        let result = s.stat(&p(path)).await;
        check_outcome(&format!("stat {path}"), &result);
        assert!(
            matches!(result, Ok(None) | Err(_)),
            "stat {path} must act as if the link were absent: {result:?}"
        );
    }
    // list: links are never listed, nor anything behind them.
    let all: Vec<String> = s
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_owned())
        .collect();
    assert_eq!(all, ["/memories/real.md", "/memories/realdir/x.md"]);
    for path in LINKED {
        let result = s.list(&p(path)).await;
        check_outcome(&format!("list {path}"), &result);
        assert!(
            matches!(&result, Ok(v) if v.is_empty()) || result.is_err(),
            "list {path} must not look behind the link: {result:?}"
        );
    }
    assert!(
        matches!(s.stat(&p("/memories/sub")).await, Ok(None)),
        "a folder holding only a link is empty"
    );
    assert_outside_intact("read/stat/list");

    // write, every mode, including Update with the version the target's content would have.
    let secret_version = Version::new(hex::encode(Sha256::digest(SECRET)));
    let inner_version = Version::new(hex::encode(Sha256::digest(INNER_SECRET)));
    for path in LINKED {
        for mode in [
            WriteMode::Create,
            WriteMode::Overwrite,
            WriteMode::Update(secret_version.clone()),
            WriteMode::Update(inner_version.clone()),
        ] {
            let what = format!("write {path} ({mode:?})");
            let result = s
                .write(&p(path), b"OVERWRITTEN".to_vec(), mode.clone())
                .await;
            check_outcome(&what, &result);
            if matches!(mode, WriteMode::Update(_)) {
                assert!(
                    result.is_err(),
                    "{what}: must not update through a link: {result:?}"
                );
            }
            assert_outside_intact(&what);
        }
    }
    // Writes that succeeded replaced the link itself, inside the store.
    for path in LINKED {
        if let Ok(file) = s.read(&p(path)).await {
            assert_no_secret(&format!("read {path} after writes"), &file.contents);
            assert_eq!(file.contents, b"OVERWRITTEN", "{path}");
        }
    }
    // Put fresh links back for the remaining operations.
    drop(f);
    let f = fixture();
    let s = &f.storage;
    let outside_before = snapshot(&f.outside);
    let assert_outside_intact = |what: &str| {
        assert_eq!(
            snapshot(&f.outside),
            outside_before,
            "{what}: something outside the store changed"
        );
    };

    // rename from a link, and to a path through or onto a link.
    for from in LINKED {
        let to = "/memories/moved";
        let what = format!("rename {from} -> {to}");
        let result = s.rename(&p(from), &p(to)).await;
        check_outcome(&what, &result);
        assert!(
            result.is_err(),
            "{what}: must not move a link's target: {result:?}"
        );
        assert_outside_intact(&what);
    }
    for to in LINKED {
        for from in ["/memories/real.md", "/memories/realdir"] {
            let what = format!("rename {from} -> {to}");
            let result = s.rename(&p(from), &p(to)).await;
            check_outcome(&what, &result);
            assert!(
                result.is_err(),
                "{what}: must not move into or onto a link: {result:?}"
            );
            assert_outside_intact(&what);
        }
    }
    assert_eq!(
        s.read(&p("/memories/real.md")).await.unwrap().contents,
        b"real"
    );

    // delete each link: nothing outside goes.
    for path in LINKED {
        let what = format!("delete {path}");
        let result = s.delete(&p(path)).await;
        check_outcome(&what, &result);
        assert_outside_intact(&what);
    }
    // delete of folders and of the whole store removes links, never their targets.
    for link in ["link_dir", "rel_dir"] {
        std::fs::remove_file(f.memories.join(link)).ok();
    }
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
    symlink(f.outside.join("dir"), f.memories.join("link_dir_again")).unwrap();
    s.delete(&MemoryPath::root()).await.unwrap();
    assert_outside_intact("delete of /memories");
    assert!(std::fs::read_dir(&f.memories).unwrap().next().is_none());
    assert_eq!(std::fs::read(f.outside.join("secret.txt")).unwrap(), SECRET);
}

#[tokio::test]
async fn a_link_in_the_middle_of_a_path_is_never_traversed() {
    let f = fixture();
    let s = &f.storage;
    let before = snapshot(&f.outside);
    // Create below a linked folder, with and without a missing level in between.
    for path in ["/memories/link_dir/a/b.md", "/memories/rel_dir/new.md"] {
        let result = s.write(&p(path), b"x".to_vec(), WriteMode::Create).await;
        assert!(result.is_err(), "write {path}: {result:?}");
    }
    assert_eq!(snapshot(&f.outside), before);
    // Listing the root reports neither the links nor files behind them; stat agrees.
    for path in ["/memories/link_dir", "/memories/link_file"] {
        assert!(!matches!(
            s.stat(&p(path)).await,
            Ok(Some(Entry::File(_) | Entry::Directory))
        ));
    }
}
