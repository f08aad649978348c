//! Checks of each file's history ([`crate::history`]): every change a revision, readable,
//! restorable, redactable, moved by a rename, pruned as the options say, invisible to the
//! tool, and none for a change that failed.
//!
//! A backend describes how to open a fresh store with given [`HistoryOptions`] with
//! [`OpenHistory`], then runs them all with [`run_all`]:
//!
//! ```
//! use std::sync::Arc;
//!
//! use memory_core::conformance::history::{self, OpenHistory};
//! use memory_core::history::HistoryOptions;
//! use memory_core::{InMemoryStorage, Storage};
//!
//! struct Fresh;
//!
//! #[memory_core::async_trait]
//! impl OpenHistory for Fresh {
//!     async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage> {
//!         Arc::new(InMemoryStorage::with_history(options))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_multi_thread().build().unwrap().block_on(async {
//! history::run_all(&Fresh).await;
//! # });
//! ```
//!
//! The check that races spawns tasks; run them on a multi-threaded tokio runtime.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use super::storage::{ok, p};
use crate::history::{self, Change, HistoryOptions, Redaction, Revision, sha256_hex};
use crate::search::SearchQuery;
use crate::{Error, MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode};

/// How a backend opens a fresh, empty store that keeps history as `options` say.
#[async_trait]
pub trait OpenHistory: Send + Sync {
    /// A new empty store (a new folder, database, schema or prefix each call).
    async fn open(&self, options: HistoryOptions) -> Arc<dyn Storage>;
}

/// Runs every check of this module. Panics on the first failure.
pub async fn run_all(backend: &dyn OpenHistory) {
    let store = backend.open(HistoryOptions::default()).await;
    every_change_is_a_version(&*store).await;
    the_tool_records_and_never_sees_history(store.clone()).await;
    restore_brings_back_a_deleted_file(&*store).await;
    a_rename_keeps_the_history_under_the_new_path(&*store).await;
    a_folder_log_holds_every_file_below_it(&*store).await;
    redaction_removes_past_content_and_keeps_the_record(&*store).await;
    redacting_a_folder_reaches_every_file_below_it(&*store).await;
    a_failed_change_adds_no_version(&*store).await;
    concurrent_edits_keep_every_replaced_content(store).await;
    history_max_keeps_that_many(backend).await;
    history_off_keeps_none(backend).await;
    the_session_is_recorded(backend).await;
}

fn changes(revisions: &[Revision]) -> Vec<(u64, Change)> {
    revisions.iter().map(|r| (r.number, r.change)).collect()
}

async fn log(store: &dyn Storage, path: &str) -> Vec<Revision> {
    ok(
        store,
        &format!("history of {path}"),
        store.history(&p(path)).await,
    )
}

async fn edit(store: &dyn Storage, path: &MemoryPath, contents: &[u8]) {
    let current = ok(store, "read before an edit", store.read(path).await);
    let mode = WriteMode::Update(current.version);
    ok(
        store,
        "edit",
        store.write(path, contents.to_vec(), mode).await,
    );
}

/// A create, five edits and a delete are seven versions, newest first, each with the size
/// and SHA-256 of the content it left; the first reads back as the original bytes; the
/// deletion holds no content; an unknown number is `NoRevision`.
pub async fn every_change_is_a_version(store: &dyn Storage) {
    let path = p("/memories/history/seven.md");
    let texts: Vec<Vec<u8>> = (0..6)
        .map(|i| format!("version {i}\n").into_bytes())
        .collect();
    ok(
        store,
        "create",
        store
            .write(&path, texts[0].clone(), WriteMode::Create)
            .await,
    );
    for text in &texts[1..] {
        edit(store, &path, text).await;
    }
    ok(store, "delete", store.delete(&path).await);
    let revisions = log(store, path.as_str()).await;
    let mut expected = vec![(7, Change::Deleted)];
    expected.extend((2..=6).rev().map(|n| (n, Change::Modified)));
    expected.push((1, Change::Created));
    assert_eq!(
        changes(&revisions),
        expected,
        "{store}: seven versions, newest first"
    );
    for (revision, text) in revisions[1..].iter().rev().zip(&texts) {
        assert_eq!(
            revision.size,
            text.len() as u64,
            "{store}: size of {}",
            revision.number
        );
        assert_eq!(
            revision.sha256.as_deref(),
            Some(sha256_hex(text).as_str()),
            "{store}"
        );
        assert_eq!(
            revision.path, path,
            "{store}: the path of version {}",
            revision.number
        );
        assert!(
            !revision.redacted && revision.old_path.is_none(),
            "{store}: {revision:?}"
        );
    }
    assert_eq!(
        (revisions[0].size, &revisions[0].sha256),
        (0, &None),
        "{store}: deletion"
    );
    assert!(
        revisions.windows(2).all(|w| w[0].time >= w[1].time),
        "{store}: times newest first: {revisions:?}"
    );
    for (number, text) in (1..).zip(&texts) {
        let read = ok(
            store,
            "read a version",
            store.read_revision(&path, number).await,
        );
        assert_eq!(
            &read, text,
            "{store}: version {number} reads back its bytes"
        );
    }
    match store.read_revision(&path, 7).await {
        Err(Error::RevisionWithoutContent {
            number: 7,
            redacted: false,
            ..
        }) => {}
        other => panic!("{store}: reading a deletion: {other:?}"),
    }
    match store.read_revision(&path, 8).await {
        Err(Error::NoRevision { number: 8, .. }) => {}
        other => panic!("{store}: reading a version that does not exist: {other:?}"),
    }
    assert!(
        log(store, "/memories/history/never.md").await.is_empty(),
        "{store}"
    );
}

/// The six commands record their changes (create, edits, rename, delete), and history is
/// invisible to them: the listing, the file count and search see only current files.
pub async fn the_tool_records_and_never_sees_history(shared: Arc<dyn Storage>) {
    let store = &*shared;
    let tool = MemoryTool::new(shared.clone());
    let steps = [
        json!({"command": "create", "path": "/memories/tool/a.md", "file_text": "zanzibar one\n"}),
        json!({"command": "str_replace", "path": "/memories/tool/a.md", "old_str": "zanzibar", "new_str": "plain"}),
        json!({"command": "insert", "path": "/memories/tool/a.md", "insert_line": 1, "insert_text": "two\n"}),
        json!({"command": "rename", "old_path": "/memories/tool/a.md", "new_path": "/memories/tool/b.md"}),
    ];
    for step in &steps {
        let out = tool.execute(step).await;
        assert!(!out.is_error, "{store}: {step}: {out:?}");
    }
    let revisions = log(store, "/memories/tool/b.md").await;
    assert_eq!(
        changes(&revisions),
        vec![
            (4, Change::Renamed),
            (3, Change::Modified),
            (2, Change::Modified),
            (1, Change::Created)
        ],
        "{store}: the tool's changes"
    );
    let listed = ok(store, "list", store.list(&p("/memories/tool")).await);
    let listed: Vec<&str> = listed.iter().map(|meta| meta.path.as_str()).collect();
    assert_eq!(
        listed,
        ["/memories/tool/b.md"],
        "{store}: history is not listed"
    );
    assert_eq!(
        ok(store, "count", store.file_count().await),
        1,
        "{store}: count"
    );
    let query = SearchQuery::new("zanzibar").unwrap_or_else(|e| panic!("suite bug: {e}"));
    let hits = ok(store, "search", store.search(&query).await);
    assert!(
        hits.is_empty(),
        "{store}: search found a past version: {hits:?}"
    );
    let out = tool
        .execute(&json!({"command": "delete", "path": "/memories/tool"}))
        .await;
    assert!(!out.is_error, "{store}: delete: {out:?}");
    let revisions = log(store, "/memories/tool/b.md").await;
    assert_eq!(
        revisions[0].change,
        Change::Deleted,
        "{store}: a folder's delete"
    );
}

/// `restore` writes a deleted file's version back and adds a `restored` version; restoring
/// over a file that exists keeps what it replaced; a number that does not exist writes
/// nothing.
pub async fn restore_brings_back_a_deleted_file(store: &dyn Storage) {
    let path = p("/memories/restore/gone.md");
    ok(
        store,
        "create",
        store
            .write(&path, b"original".to_vec(), WriteMode::Create)
            .await,
    );
    edit(store, &path, b"placeholder").await;
    ok(store, "delete", store.delete(&path).await);
    ok(store, "restore", history::restore(store, &path, 1).await);
    let read = ok(store, "read", store.read(&path).await);
    assert_eq!(read.contents, b"original", "{store}: the restored content");
    let revisions = log(store, path.as_str()).await;
    assert_eq!(revisions[0].number, 4, "{store}: {revisions:?}");
    assert_eq!(revisions[0].change, Change::Restored, "{store}");
    assert_eq!(
        revisions[0].sha256.as_deref(),
        Some(sha256_hex(b"original").as_str())
    );
    ok(
        store,
        "restore over",
        history::restore(store, &path, 2).await,
    );
    let read = ok(store, "read", store.read(&path).await);
    assert_eq!(read.contents, b"placeholder", "{store}");
    let four = ok(store, "read version 4", store.read_revision(&path, 4).await);
    assert_eq!(
        four, b"original",
        "{store}: what a restore replaced is kept"
    );
    match store.write_restored(&path, 99, b"x".to_vec()).await {
        Err(Error::NoRevision { number: 99, .. }) => {}
        other => panic!("{store}: restoring a version that does not exist: {other:?}"),
    }
    let read = ok(store, "read", store.read(&path).await);
    assert_eq!(
        read.contents, b"placeholder",
        "{store}: nothing was written"
    );
    match history::restore(store, &path, 3).await {
        Err(Error::RevisionWithoutContent { number: 3, .. }) => {}
        other => panic!("{store}: restoring a deletion: {other:?}"),
    }
}

/// A rename moves a file's history with it (a folder's files too): the new path's log holds
/// the earlier versions, made at the old path, and a `renamed` version naming it; the old
/// path has none. Onto a path with a deleted file's history, the moved versions come after.
pub async fn a_rename_keeps_the_history_under_the_new_path(store: &dyn Storage) {
    let (from, to) = (p("/memories/move/a.md"), p("/memories/move/b.md"));
    ok(
        store,
        "create",
        store
            .write(&from, b"first".to_vec(), WriteMode::Create)
            .await,
    );
    edit(store, &from, b"second").await;
    ok(store, "rename", store.rename(&from, &to).await);
    let revisions = log(store, to.as_str()).await;
    assert_eq!(
        changes(&revisions),
        vec![
            (3, Change::Renamed),
            (2, Change::Modified),
            (1, Change::Created)
        ],
        "{store}: a renamed file's log"
    );
    assert_eq!(revisions[0].old_path.as_ref(), Some(&from), "{store}");
    assert_eq!(revisions[0].path, to, "{store}");
    assert_eq!(
        revisions[1].path, from,
        "{store}: earlier versions keep their path"
    );
    assert!(
        log(store, from.as_str()).await.is_empty(),
        "{store}: the old path's log"
    );
    let first = ok(store, "read", store.read_revision(&to, 1).await);
    assert_eq!(first, b"first", "{store}");
    let second = ok(store, "read", store.read_revision(&to, 2).await);
    assert_eq!(second, b"second", "{store}: the content before the rename");
    edit(store, &to, b"third").await;
    let three = ok(store, "read", store.read_revision(&to, 3).await);
    assert_eq!(three, b"second", "{store}: the renamed version's content");

    // A folder: every file's history moves.
    let inside = p("/memories/move/dir/x.md");
    ok(
        store,
        "create",
        store.write(&inside, b"x".to_vec(), WriteMode::Create).await,
    );
    ok(
        store,
        "rename a folder",
        store
            .rename(&p("/memories/move/dir"), &p("/memories/move/moved"))
            .await,
    );
    let revisions = log(store, "/memories/move/moved/x.md").await;
    assert_eq!(
        changes(&revisions),
        vec![(2, Change::Renamed), (1, Change::Created)],
        "{store}"
    );

    // Onto a deleted file's history.
    let (c, d) = (p("/memories/move/c.md"), p("/memories/move/d.md"));
    ok(
        store,
        "create",
        store.write(&d, b"old d".to_vec(), WriteMode::Create).await,
    );
    ok(store, "delete", store.delete(&d).await);
    ok(
        store,
        "create",
        store.write(&c, b"c".to_vec(), WriteMode::Create).await,
    );
    ok(store, "rename", store.rename(&c, &d).await);
    let revisions = log(store, d.as_str()).await;
    assert_eq!(
        changes(&revisions),
        vec![
            (4, Change::Renamed),
            (3, Change::Created),
            (2, Change::Deleted),
            (1, Change::Created)
        ],
        "{store}: moved versions after the deleted file's"
    );
    let old = ok(store, "read", store.read_revision(&d, 1).await);
    assert_eq!(old, b"old d", "{store}");
    let moved = ok(store, "read", store.read_revision(&d, 3).await);
    assert_eq!(moved, b"c", "{store}");
}

/// A folder's log holds the versions of every file below it, deleted ones included, newest
/// first; the root's, every file's.
pub async fn a_folder_log_holds_every_file_below_it(store: &dyn Storage) {
    let (a, b, c) = (
        p("/memories/folder/a.md"),
        p("/memories/folder/sub/b.md"),
        p("/memories/outside.md"),
    );
    ok(
        store,
        "create",
        store.write(&a, b"a".to_vec(), WriteMode::Create).await,
    );
    ok(
        store,
        "create",
        store.write(&b, b"b".to_vec(), WriteMode::Create).await,
    );
    ok(
        store,
        "create",
        store.write(&c, b"c".to_vec(), WriteMode::Create).await,
    );
    ok(store, "delete", store.delete(&b).await);
    let revisions = log(store, "/memories/folder").await;
    let mut seen: Vec<(&str, Change)> = revisions
        .iter()
        .map(|r| (r.path.as_str(), r.change))
        .collect();
    assert!(
        revisions.windows(2).all(|w| w[0].time >= w[1].time),
        "{store}: a folder's log is newest first: {revisions:?}"
    );
    seen.sort();
    assert_eq!(
        seen,
        [
            ("/memories/folder/a.md", Change::Created),
            ("/memories/folder/sub/b.md", Change::Created),
            ("/memories/folder/sub/b.md", Change::Deleted),
        ],
        "{store}: a folder's log"
    );
    let everything = log(store, "/memories").await;
    assert!(
        everything.iter().any(|r| r.path == c),
        "{store}: the root's log"
    );
    assert!(
        everything.windows(2).all(|w| w[0].time >= w[1].time),
        "{store}: the root's log is newest first"
    );
}

/// Redaction removes past content (read back: `RevisionWithoutContent` with `redacted`),
/// keeps the record, never touches the current file, and refuses the current version.
pub async fn redaction_removes_past_content_and_keeps_the_record(store: &dyn Storage) {
    let path = p("/memories/redact/keys.md");
    ok(
        store,
        "create",
        store
            .write(&path, b"api key sk-secret".to_vec(), WriteMode::Create)
            .await,
    );
    edit(store, &path, b"api key: see the vault").await;
    edit(store, &path, b"api key: in the vault").await;
    match store.redact_revisions(&path, Redaction::Revision(3)).await {
        Err(Error::RevisionIsCurrent { number: 3, .. }) => {}
        other => panic!("{store}: redacting the current version: {other:?}"),
    }
    match store.redact_revisions(&path, Redaction::Revision(9)).await {
        Err(Error::NoRevision { number: 9, .. }) => {}
        other => panic!("{store}: redacting a version that does not exist: {other:?}"),
    }
    let one = ok(
        store,
        "redact one",
        store.redact_revisions(&path, Redaction::Revision(1)).await,
    );
    assert_eq!(one, 1, "{store}");
    let rest = ok(
        store,
        "redact all",
        store.redact_revisions(&path, Redaction::AllPast).await,
    );
    assert_eq!(rest, 1, "{store}: only version 2 still had content");
    for number in [1, 2] {
        match store.read_revision(&path, number).await {
            Err(Error::RevisionWithoutContent { redacted: true, .. }) => {}
            other => panic!("{store}: reading redacted version {number}: {other:?}"),
        }
    }
    let revisions = log(store, path.as_str()).await;
    assert_eq!(revisions.len(), 3, "{store}: records stay");
    assert!(
        revisions[1].redacted && revisions[2].redacted,
        "{store}: {revisions:?}"
    );
    assert!(revisions[2].sha256.is_none(), "{store}: a redacted digest");
    assert_eq!(
        revisions[2].change,
        Change::Created,
        "{store}: the record of what it was"
    );
    assert!(!revisions[0].redacted, "{store}");
    let current = ok(store, "read", store.read(&path).await);
    assert_eq!(
        current.contents, b"api key: in the vault",
        "{store}: current untouched"
    );
}

/// `AllPast` on a folder redacts the past revisions of every file below it (deleted ones and
/// ones moved in included) and touches no current file and nothing outside it.
pub async fn redacting_a_folder_reaches_every_file_below_it(store: &dyn Storage) {
    let (a, b, c, outside) = (
        p("/memories/scrub/a.md"),
        p("/memories/scrub/sub/b.md"),
        p("/memories/scrub/c.md"),
        p("/memories/unscrubbed.md"),
    );
    for path in [&a, &b, &outside] {
        ok(
            store,
            "create",
            store
                .write(path, b"plain 1".to_vec(), WriteMode::Create)
                .await,
        );
        edit(store, path, b"plain 2").await;
    }
    ok(store, "delete", store.delete(&b).await);
    let moved = p("/memories/scrub-elsewhere.md");
    ok(
        store,
        "create",
        store
            .write(&moved, b"moved 1".to_vec(), WriteMode::Create)
            .await,
    );
    edit(store, &moved, b"moved 2").await;
    ok(store, "rename", store.rename(&moved, &c).await);
    let redacted = store
        .redact_revisions(&p("/memories/scrub"), Redaction::AllPast)
        .await;
    // a: version 1; b: versions 1 and 2 (3 is its deletion); c: versions 1 and 2 (3, the
    // rename, is the current file).
    assert_eq!(ok(store, "redact a folder", redacted), 5, "{store}");
    for (path, number) in [(&a, 1), (&b, 1), (&b, 2), (&c, 1), (&c, 2)] {
        match store.read_revision(path, number).await {
            Err(Error::RevisionWithoutContent { redacted: true, .. }) => {}
            other => {
                panic!("{store}: version {number} of {path} after a folder's redaction: {other:?}")
            }
        }
    }
    let current = ok(store, "read", store.read(&a).await);
    assert_eq!(current.contents, b"plain 2", "{store}: the current file");
    let kept = ok(store, "read", store.read_revision(&outside, 1).await);
    assert_eq!(kept, b"plain 1", "{store}: a file outside the folder");
}

/// A change that fails (an existing file created again, a stale compare-and-swap, a full
/// store, a missing file deleted) adds no version.
pub async fn a_failed_change_adds_no_version(store: &dyn Storage) {
    let path = p("/memories/failed/a.md");
    ok(
        store,
        "create",
        store.write(&path, b"1".to_vec(), WriteMode::Create).await,
    );
    let stale = ok(store, "read", store.read(&path).await).version;
    edit(store, &path, b"2").await;
    let before = log(store, path.as_str()).await;
    assert!(
        store
            .write(&path, b"x".to_vec(), WriteMode::Create)
            .await
            .is_err()
    );
    assert!(
        store
            .write(&path, b"x".to_vec(), WriteMode::Update(stale))
            .await
            .is_err()
    );
    assert!(
        store
            .create_within(&path, b"x".to_vec(), 1_000)
            .await
            .is_err()
    );
    let count = ok(store, "count", store.file_count().await);
    let full = p("/memories/failed/full.md");
    assert!(
        store
            .create_within(&full, b"x".to_vec(), count)
            .await
            .is_err()
    );
    assert!(
        store
            .delete(&p("/memories/failed/missing.md"))
            .await
            .is_err()
    );
    assert_eq!(
        log(store, path.as_str()).await,
        before,
        "{store}: failed changes"
    );
    assert!(
        log(store, full.as_str()).await.is_empty(),
        "{store}: a refused create"
    );
}

/// Tasks racing compare-and-swap edits on one file: every edit that landed is a version,
/// and each version's content is the one before it plus one line (no replaced content lost).
pub async fn concurrent_edits_keep_every_replaced_content(store: Arc<dyn Storage>) {
    let path = p("/memories/race/log.md");
    ok(
        &*store,
        "create",
        store.write(&path, Vec::new(), WriteMode::Create).await,
    );
    let (tasks, edits) = (4, 5);
    let mut handles = Vec::new();
    for task in 0..tasks {
        let (store, path) = (store.clone(), path.clone());
        handles.push(tokio::spawn(async move {
            for n in 0..edits {
                loop {
                    let file = ok(&*store, "read", store.read(&path).await);
                    let mut next = file.contents.clone();
                    next.extend(format!("{task}.{n}\n").bytes());
                    match store
                        .write(&path, next, WriteMode::Update(file.version))
                        .await
                    {
                        Ok(_) => break,
                        Err(Error::Conflict { .. }) => tokio::task::yield_now().await,
                        Err(e) => panic!("{store}: racing edit: {e:?}"),
                    }
                }
            }
        }));
    }
    for handle in handles {
        if let Err(e) = handle.await {
            panic!("racing edit task: {e}");
        }
    }
    let revisions = log(&*store, path.as_str()).await;
    assert_eq!(
        revisions.len(),
        1 + tasks * edits,
        "{store}: one version per edit"
    );
    let mut previous: Option<Vec<u8>> = None;
    let mut lines = BTreeSet::new();
    for revision in revisions.iter().rev() {
        let content = ok(
            &*store,
            "read",
            store.read_revision(&path, revision.number).await,
        );
        if let Some(previous) = &previous {
            // Each edit appends one line of four bytes (`{task}.{n}\n`).
            assert!(
                content.starts_with(previous) && content.len() == previous.len() + 4,
                "{store}: version {} is not the one before it plus a line",
                revision.number
            );
            lines.insert(content[previous.len()..].to_vec());
        } else {
            assert!(
                content.is_empty(),
                "{store}: the first version is the empty file"
            );
        }
        previous = Some(content);
    }
    assert_eq!(lines.len(), tasks * edits, "{store}: every edit's line");
}

/// `history_max=3` keeps the three newest versions of a file.
pub async fn history_max_keeps_that_many(backend: &dyn OpenHistory) {
    let store = backend
        .open(HistoryOptions::default().with_max_per_file(3))
        .await;
    let path = p("/memories/max.md");
    ok(
        &*store,
        "create",
        store.write(&path, b"0".to_vec(), WriteMode::Create).await,
    );
    for n in 1..6 {
        edit(&*store, &path, n.to_string().as_bytes()).await;
    }
    let revisions = log(&*store, path.as_str()).await;
    let numbers: Vec<u64> = revisions.iter().map(|r| r.number).collect();
    assert_eq!(numbers, [6, 5, 4], "{store}: history_max=3");
    match store.read_revision(&path, 3).await {
        Err(Error::NoRevision { number: 3, .. }) => {}
        other => panic!("{store}: a pruned version: {other:?}"),
    }
    let four = ok(&*store, "read", store.read_revision(&path, 4).await);
    assert_eq!(four, b"3", "{store}");
}

/// `history=off` keeps nothing, and every history method says so.
pub async fn history_off_keeps_none(backend: &dyn OpenHistory) {
    let store = backend.open(HistoryOptions::off()).await;
    let path = p("/memories/off.md");
    ok(
        &*store,
        "create",
        store.write(&path, b"a".to_vec(), WriteMode::Create).await,
    );
    edit(&*store, &path, b"b").await;
    assert!(
        matches!(store.history(&path).await, Err(Error::HistoryOff)),
        "{store}"
    );
    assert!(
        matches!(store.read_revision(&path, 1).await, Err(Error::HistoryOff)),
        "{store}"
    );
    let restored = store.write_restored(&path, 1, b"a".to_vec()).await;
    assert!(
        matches!(restored, Err(Error::HistoryOff)),
        "{store}: {restored:?}"
    );
    let redacted = store.redact_revisions(&path, Redaction::AllPast).await;
    assert!(
        matches!(redacted, Err(Error::HistoryOff)),
        "{store}: {redacted:?}"
    );
    let read = ok(&*store, "read", store.read(&path).await);
    assert_eq!(read.contents, b"b", "{store}");
}

/// Each version records the store's session.
pub async fn the_session_is_recorded(backend: &dyn OpenHistory) {
    let store = backend
        .open(HistoryOptions::default().with_session("sess_conformance-1"))
        .await;
    let (a, b) = (p("/memories/s/a.md"), p("/memories/s/b.md"));
    ok(
        &*store,
        "create",
        store.write(&a, b"a".to_vec(), WriteMode::Create).await,
    );
    ok(&*store, "rename", store.rename(&a, &b).await);
    ok(&*store, "delete", store.delete(&b).await);
    let revisions = log(&*store, b.as_str()).await;
    assert_eq!(revisions.len(), 3, "{store}: {revisions:?}");
    for revision in &revisions {
        assert_eq!(
            revision.session.as_deref(),
            Some("sess_conformance-1"),
            "{store}: {revision:?}"
        );
    }
}
