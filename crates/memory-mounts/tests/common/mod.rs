//! Shared by the test files: stores on an in-memory engine, the conformance run with the
//! store's declared differences, and an adaptor that puts one mount at `/memories`.

#![allow(dead_code, unreachable_pub)]

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use memory_core::conformance::{commands, storage as checks};
use memory_core::{
    Entry, Error, FileMeta, MemoryHandler, MemoryPath, MemoryTool, Result, Storage, StoredFile,
    ToolContent, Version, WriteMode,
};
use memory_mounts::{Mounts, StoreStorage};
use memory_store::{CreateStore, MemoryStores};
use serde_json::Value;

pub const SESSION: &str = "sesn_01TestSessionAbcdefghij";

pub fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

/// A new store on `engine`.
pub async fn new_store(engine: &MemoryStores, name: &str, description: &str) -> String {
    engine
        .create_store(CreateStore {
            name: name.into(),
            description: Some(description.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .id
}

/// A store-backed storage on a fresh in-memory engine.
pub async fn local_store() -> (MemoryStores, StoreStorage) {
    let engine = MemoryStores::open_in_memory().unwrap();
    let id = new_store(&engine, "Conformance", "").await;
    let storage = StoreStorage::local(engine.clone(), id, SESSION);
    (engine, storage)
}

/// Every storage-level check of the shared suite, clearing the store after each, except the
/// three a store cannot pass by its documented rules (`unicode_and_spaces_in_names`: an NFD
/// name; `binary_content_round_trip` and `rename_file`: non-UTF-8 content), which
/// [`store_rules`] replaces, and,
/// when `full_depth` is false, `deep_nesting` (a mount's folder takes one of the 20 levels),
/// which the mount tests replace.
pub async fn storage_checks(storage: Arc<dyn Storage>, full_depth: bool) {
    let s: &dyn Storage = &*storage;
    assert!(s.list(&MemoryPath::root()).await.unwrap().is_empty());
    macro_rules! check {
        ($($name:ident),* $(,)?) => { $( checks::$name(s).await; checks::clear(s).await; )* };
    }
    macro_rules! shared {
        ($($name:ident),* $(,)?) => { $( checks::$name(storage.clone()).await; checks::clear(s).await; )* };
    }
    check!(
        read_returns_last_written,
        read_missing_is_not_found,
        stat_file_has_size,
        stat_directories,
        stat_missing_is_none,
        write_create,
        write_overwrite_replaces_file,
        write_overwrite_directory_is_already_exists,
        write_root_is_refused,
        write_update_at_current_version,
        write_update_stale_version_is_conflict,
        write_update_missing_is_not_found,
        write_parent_is_file_names_ancestor,
        write_creates_parents,
        write_failure_changes_nothing,
        write_versions_change,
        write_same_content_version_still_valid,
        delete_file,
        delete_directory_removes_subtree,
        delete_root_removes_everything,
        delete_missing_is_not_found,
        delete_leaves_no_empty_directories,
        list_sorted_with_sizes,
        list_includes_hidden_files,
        list_whole_segment_prefix,
        list_missing_or_file_is_empty,
        rename_directory_moves_every_file,
        rename_missing_is_not_found,
        rename_never_overwrites,
        rename_into_itself,
        rename_to_below_file,
        rename_after_emptied_directory,
        empty_files,
    );
    if full_depth {
        check!(deep_nesting);
    }
    shared!(
        read_never_torn,
        write_create_race_one_winner,
        concurrent_creates_one_winner,
        concurrent_updates_lose_nothing,
    );
}

/// Whether a golden line needs what a store refuses: the binary setups (`pic.png`,
/// `blob.bin`) and what uses them, and the `/memories/u` block with its NFD name.
fn needs_binary_or_nfd(line: &str) -> bool {
    [
        "/memories/u\"",
        "/memories/u/",
        "pic.",
        "blob.bin",
        "/memories/img",
    ]
    .iter()
    .any(|needle| line.contains(needle))
}

/// The golden transcript without the lines [`needs_binary_or_nfd`] picks (exactly 16 of
/// them, so the filter cannot quietly grow), then the other command-level checks but
/// `big_views`, whose 999,999-line file is over a memory's 102,400 bytes ([`store_rules`]
/// checks the truncation on a file a store can hold).
pub async fn command_checks(storage: Arc<dyn Storage>) {
    let tool = MemoryTool::new(storage.clone());
    let mut skipped = 0;
    let mut mismatches = Vec::new();
    for (number, line) in commands::GOLDEN.lines().enumerate() {
        if needs_binary_or_nfd(line) {
            skipped += 1;
            continue;
        }
        let step: Value = serde_json::from_str(line).unwrap();
        if let Some(path) = step.get("setup").and_then(Value::as_str) {
            let bytes = match (step.get("base64"), step.get("text")) {
                (Some(Value::String(b64)), _) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .unwrap(),
                (_, Some(Value::String(text))) => text.clone().into_bytes(),
                _ => panic!("golden line {}: bad setup", number + 1),
            };
            storage
                .write(&p(path), bytes, WriteMode::Overwrite)
                .await
                .unwrap();
            continue;
        }
        let out = tool.execute(&step["input"]).await;
        let content = match &out.content {
            ToolContent::Text(text) => Value::String(text.clone()),
            ToolContent::Blocks(blocks) => Value::Array(blocks.clone()),
        };
        let expected = (
            &step["content"],
            step["is_error"].as_bool().unwrap_or(false),
        );
        if (&content, out.is_error) != expected {
            mismatches.push(format!(
                "golden line {}: {}\n  got      {content} {}\n  expected {} {}",
                number + 1,
                step["input"],
                out.is_error,
                expected.0,
                expected.1
            ));
        }
    }
    assert_eq!(
        skipped, 16,
        "the golden lines left out changed; review the filter"
    );
    assert!(
        mismatches.is_empty(),
        "{storage}:\n{}",
        mismatches.join("\n")
    );
    storage.delete(&MemoryPath::root()).await.unwrap();
    commands::concurrent_inserts_lose_nothing(storage.clone()).await;
    commands::concurrent_creates_one_wins(storage.clone()).await;
    commands::limits_are_enforced(storage).await;
}

async fn is_refused(storage: &dyn Storage, path: &str, bytes: Vec<u8>, mode: WriteMode) {
    let e = storage
        .write(&p(path), bytes, mode.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::Refused { path: got, .. } if got.as_str() == path),
        "{storage}: {path} with {mode:?}: {e:?}"
    );
}

/// What replaces the left-out checks on a store: every name of
/// `unicode_and_spaces_in_names` but the NFD one works; the NFD one, non-UTF-8 content and
/// content over 102,400 bytes are refused and change nothing; a long file views truncated.
pub async fn store_rules(storage: Arc<dyn Storage>) {
    let s: &dyn Storage = &*storage;
    let names = [
        "/memories/notes with spaces/my file.md",
        "/memories/日本語/メモ.md",
        "/memories/emoji 🧠/🚀 launch.txt",
        "/memories/caf\u{e9}.md",
        "/memories/Case.md",
        "/memories/case.md",
        "/memories/odd/a'b\"c;d$e&f(g)#h!.md",
        "/memories/odd/ trailing space ",
        "/memories/odd/100%.md",
    ];
    for (i, path) in names.iter().enumerate() {
        s.write(
            &p(path),
            format!("file {i}").into_bytes(),
            WriteMode::Create,
        )
        .await
        .unwrap();
    }
    let mut expected: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    expected.sort();
    let listed: Vec<String> = s
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect();
    assert_eq!(listed, expected, "{s}");
    for (i, path) in names.iter().enumerate() {
        assert_eq!(
            s.read(&p(path)).await.unwrap().contents,
            format!("file {i}").into_bytes()
        );
    }
    s.rename(&p("/memories/日本語"), &p("/memories/emoji 🧠/日本語 2"))
        .await
        .unwrap();
    assert_eq!(
        s.read(&p("/memories/emoji 🧠/日本語 2/メモ.md"))
            .await
            .unwrap()
            .contents,
        b"file 1"
    );
    checks::clear(s).await;

    // rename_file, with text: a file moves to new parents, its emptied folder goes.
    let body: String = ('\u{20}'..='\u{7e}').rev().chain("é日🧠".chars()).collect();
    s.write(
        &p("/memories/r/src/only.md"),
        body.clone().into_bytes(),
        WriteMode::Overwrite,
    )
    .await
    .unwrap();
    s.write(
        &p("/memories/r/keep.md"),
        b"k".to_vec(),
        WriteMode::Overwrite,
    )
    .await
    .unwrap();
    s.rename(
        &p("/memories/r/src/only.md"),
        &p("/memories/r/n1/n2/moved.md"),
    )
    .await
    .unwrap();
    assert_eq!(
        s.read(&p("/memories/r/n1/n2/moved.md"))
            .await
            .unwrap()
            .contents,
        body.as_bytes()
    );
    assert!(
        s.stat(&p("/memories/r/src")).await.unwrap().is_none(),
        "{s}"
    );
    assert!(matches!(
        s.stat(&p("/memories/r/n1/n2")).await.unwrap(),
        Some(Entry::Directory)
    ));
    let listed: Vec<String> = s
        .list(&MemoryPath::root())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.path.to_string())
        .collect();
    assert_eq!(
        listed,
        ["/memories/r/keep.md", "/memories/r/n1/n2/moved.md"],
        "{s}"
    );
    checks::clear(s).await;

    is_refused(
        s,
        "/memories/cafe\u{301}.md",
        b"x".to_vec(),
        WriteMode::Create,
    )
    .await;
    is_refused(
        s,
        "/memories/cafe\u{301}.md",
        b"x".to_vec(),
        WriteMode::Overwrite,
    )
    .await;
    is_refused(
        s,
        "/memories/bin/blob.bin",
        vec![0xff, 0xfe],
        WriteMode::Create,
    )
    .await;
    let v = s
        .write(&p("/memories/text.md"), b"text".to_vec(), WriteMode::Create)
        .await
        .unwrap();
    is_refused(
        s,
        "/memories/text.md",
        vec![0xc3, 0x28],
        WriteMode::Update(v.clone()),
    )
    .await;
    is_refused(
        s,
        "/memories/text.md",
        vec![b'x'; 102_401],
        WriteMode::Overwrite,
    )
    .await;
    let e = s
        .rename(&p("/memories/text.md"), &p("/memories/cafe\u{301}.md"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Refused { .. }), "{e:?}");
    assert_eq!(
        s.read(&p("/memories/text.md")).await.unwrap(),
        StoredFile {
            contents: b"text".to_vec(),
            version: v
        },
        "{s}: refused writes change nothing"
    );
    let listed = s.list(&MemoryPath::root()).await.unwrap();
    assert_eq!(listed.len(), 1, "{s}: {listed:?}");
    s.write(
        &p("/memories/max.md"),
        vec![b'x'; 102_400],
        WriteMode::Create,
    )
    .await
    .unwrap();
    checks::clear(s).await;

    // A long file (29 KB, 3,001 lines) views truncated, as `big_views` checks.
    let text: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    s.write(
        &p("/memories/big.txt"),
        text.into_bytes(),
        WriteMode::Create,
    )
    .await
    .unwrap();
    let tool = MemoryTool::new(storage.clone());
    let out = tool
        .execute(&serde_json::json!({"command": "view", "path": "/memories/big.txt"}))
        .await;
    assert!(
        out.text().unwrap().ends_with(
            "\n[Output truncated: showed lines 1-1006 of 3001. Use view_range to see the rest.]"
        ),
        "{s}"
    );
    checks::clear(s).await;
}

/// One mount of a [`Mounts`] as a whole store: `/memories/x` is `<mount folder>/x`, so the
/// shared suite, which works within `/memories`, runs inside the mount.
#[derive(Debug)]
pub struct Within {
    pub mounts: Arc<Mounts>,
    pub root: MemoryPath,
}

impl Within {
    fn down(&self, path: &MemoryPath) -> Result<MemoryPath> {
        path.rebase(&MemoryPath::root(), &self.root).ok_or_else(|| {
            Error::backend(
                "Within",
                format!("{path} is too long or deep inside the mount"),
            )
        })
    }

    fn up(&self, path: MemoryPath) -> MemoryPath {
        path.rebase(&self.root, &MemoryPath::root())
            .unwrap_or_else(|| panic!("{path} came back from outside {}", self.root))
    }

    fn up_error(&self, e: Error) -> Error {
        match e {
            Error::NotFound { path } => Error::NotFound {
                path: self.up(path),
            },
            Error::AlreadyExists { path } => Error::AlreadyExists {
                path: self.up(path),
            },
            Error::ParentIsFile { path, parent } => Error::ParentIsFile {
                path: self.up(path),
                parent: self.up(parent),
            },
            Error::Conflict { path } => Error::Conflict {
                path: self.up(path),
            },
            Error::RenameIntoItself { from, to } => Error::RenameIntoItself {
                from: self.up(from),
                to: self.up(to),
            },
            Error::Refused { path, reason } => Error::Refused {
                path: self.up(path),
                reason,
            },
            other => other,
        }
    }
}

impl fmt::Display for Within {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Within({}, {})", self.root, self.mounts)
    }
}

#[async_trait]
impl Storage for Within {
    async fn read(&self, path: &MemoryPath) -> Result<StoredFile> {
        self.mounts
            .read(&self.down(path)?)
            .await
            .map_err(|e| self.up_error(e))
    }
    async fn stat(&self, path: &MemoryPath) -> Result<Option<Entry>> {
        match self
            .mounts
            .stat(&self.down(path)?)
            .await
            .map_err(|e| self.up_error(e))?
        {
            Some(Entry::File(meta)) => Ok(Some(Entry::File(FileMeta {
                path: self.up(meta.path),
                ..meta
            }))),
            other => Ok(other),
        }
    }
    async fn write(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        mode: WriteMode,
    ) -> Result<Version> {
        self.mounts
            .write(&self.down(path)?, contents, mode)
            .await
            .map_err(|e| self.up_error(e))
    }
    async fn delete(&self, path: &MemoryPath) -> Result<()> {
        self.mounts
            .delete(&self.down(path)?)
            .await
            .map_err(|e| self.up_error(e))
    }
    async fn list(&self, dir: &MemoryPath) -> Result<Vec<FileMeta>> {
        let files = self
            .mounts
            .list(&self.down(dir)?)
            .await
            .map_err(|e| self.up_error(e))?;
        // The mark Mounts lists in an empty mount's folder is the mount's, not the store's.
        let mark = self.root.join(memory_mounts::EMPTY_MARK).unwrap();
        Ok(files
            .into_iter()
            .filter(|f| f.path != mark)
            .map(|f| FileMeta {
                path: self.up(f.path),
                ..f
            })
            .collect())
    }
    async fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.mounts
            .rename(&self.down(from)?, &self.down(to)?)
            .await
            .map_err(|e| self.up_error(e))
    }
}
