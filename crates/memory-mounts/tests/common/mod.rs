//! Shared by the test files: stores on an in-memory engine, the conformance run with the
//! store's declared differences, and an adaptor that puts one mount at `/memories`.

#![allow(dead_code, unreachable_pub)]

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use memory_core::conformance::{Capabilities, storage as checks};
use memory_core::search::{SearchHit, SearchQuery};
use memory_core::{
    Capabilities as StoreCapabilities, Entry, Error, FileMeta, MemoryPath, Result, Storage,
    StoredFile, Version, WriteMode,
};
use memory_mounts::{Mounts, StoreStorage};
use memory_store::{CreateStore, MemoryStores};

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
    let storage = StoreStorage::local(engine.clone(), id, SESSION).unwrap();
    (engine, storage)
}

/// What a versioned store holds, for the shared suite: NFC-named UTF-8 text of at most
/// 102,400 bytes (no binary files, no other normalization forms, no larger files). The suite
/// runs the narrower form of its checks; [`store_rules`] checks the refusals themselves.
pub const STORE: Capabilities = Capabilities {
    binary_files: false,
    non_nfc_names: false,
    large_files: false,
    ..Capabilities::FULL
};

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

/// What a store refuses by its rules: a name that is not NFC, non-UTF-8 content and content
/// over 102,400 bytes are refused and change nothing; 102,400 bytes exactly are fine.
pub async fn store_rules(storage: Arc<dyn Storage>) {
    let s: &dyn Storage = &*storage;
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
        e.map_paths(|p| self.up(p))
    }
}

impl fmt::Display for Within {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Within({}, {})", self.root, self.mounts)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
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
    async fn file_count(&self) -> Result<usize> {
        // The files of this one mount.
        Ok(self.list(&MemoryPath::root()).await?.len())
    }
    async fn create_within(
        &self,
        path: &MemoryPath,
        contents: Vec<u8>,
        max_files: usize,
    ) -> Result<Version> {
        self.mounts
            .create_within(&self.down(path)?, contents, max_files)
            .await
            .map_err(|e| self.up_error(e))
    }
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let under = self.down(query.under())?;
        let hits = self
            .mounts
            .search(&query.clone().with_under(under))
            .await
            .map_err(|e| self.up_error(e))?;
        Ok(hits
            .into_iter()
            .map(|hit| SearchHit {
                path: self.up(hit.path),
                ..hit
            })
            .collect())
    }
    fn capabilities(&self) -> StoreCapabilities {
        // The mount's own store, with its folder taken off the path limits.
        let (root, mount) = self
            .mounts
            .mounts()
            .find(|(root, _)| **root == self.root)
            .expect("the mount exists");
        let inner = mount.storage().capabilities();
        StoreCapabilities {
            max_depth: inner.max_depth - 1,
            max_path_bytes: inner.max_path_bytes - (root.as_str().len() - "/memories".len()),
            ..inner
        }
    }
    async fn listing(&self, dir: &MemoryPath) -> Result<memory_core::Listing> {
        Ok(self.list(dir).await?.into())
    }

    async fn set_modified(
        &self,
        path: &MemoryPath,
        modified: std::time::SystemTime,
    ) -> Result<bool> {
        self.mounts
            .set_modified(&self.down(path)?, modified)
            .await
            .map_err(|e| self.up_error(e))
    }
    async fn history(&self, path: &MemoryPath) -> Result<Vec<memory_core::history::Revision>> {
        let revisions = self.mounts.history(&self.down(path)?).await;
        let revisions = revisions.map_err(|e| self.up_error(e))?;
        Ok(revisions
            .into_iter()
            .map(|mut revision| {
                revision.path = self.up(revision.path);
                revision.old_path = revision.old_path.map(|old| self.up(old));
                revision
            })
            .collect())
    }

    async fn read_revision(&self, path: &MemoryPath, number: u64) -> Result<Vec<u8>> {
        (self.mounts.read_revision(&self.down(path)?, number).await).map_err(|e| self.up_error(e))
    }

    async fn write_restored(
        &self,
        path: &MemoryPath,
        number: u64,
        contents: Vec<u8>,
    ) -> Result<Version> {
        let inner = self.down(path)?;
        (self.mounts.write_restored(&inner, number, contents).await).map_err(|e| self.up_error(e))
    }

    async fn redact_revisions(
        &self,
        path: &MemoryPath,
        which: memory_core::history::Redaction,
    ) -> Result<u64> {
        let inner = self.down(path)?;
        (self.mounts.redact_revisions(&inner, which).await).map_err(|e| self.up_error(e))
    }
}
