//! The view cache: files lately read or written, revalidated with `If-None-Match` so that a
//! repeated view of an unchanged file costs a `304 Not Modified`.

use bytes::Bytes;
use memory_core::{Result, Version};
use object_store::Attributes;
use object_store::path::Path;

use super::ObjectStoreStorage;

impl ObjectStoreStorage {
    pub(super) fn views(&self) -> std::sync::MutexGuard<'_, ViewCache> {
        // A cache of whole entries, each changed in one step: usable after a panic elsewhere.
        self.views.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The version of what was just written, and the bytes kept for the next view.
    pub(super) fn remember(
        &self,
        key: &Path,
        contents: Bytes,
        e_tag: Option<String>,
        version: Option<String>,
    ) -> Result<Version> {
        self.remember_with(key, contents, e_tag, version, None)
    }

    /// [`Self::remember`], with the metadata (the history record) the object was put with.
    pub(crate) fn remember_with(
        &self,
        key: &Path,
        contents: Bytes,
        e_tag: Option<String>,
        version: Option<String>,
        attributes: Option<Attributes>,
    ) -> Result<Version> {
        let token = self.version_of(key, e_tag.clone(), version.clone())?;
        self.views().put(
            key,
            CachedView {
                e_tag,
                version,
                contents,
                attributes,
            },
        );
        Ok(token)
    }
}

/// Most files the view cache keeps, and most bytes in all.
const VIEW_CACHE_FILES: usize = 64;
const VIEW_CACHE_BYTES: usize = 1 << 20;

/// A file as last read or written: its ETag (and version id) and bytes.
#[derive(Clone)]
pub(super) struct CachedView {
    pub(super) e_tag: Option<String>,
    pub(super) version: Option<String>,
    pub(super) contents: Bytes,
    /// The object's metadata (its history record), when known.
    pub(super) attributes: Option<Attributes>,
}

/// A small bounded cache of files lately read or written, so that a repeated view of an
/// unchanged file costs a `304 Not Modified` instead of the bytes. It is always revalidated
/// (never answers without asking the server), so it can never serve stale content; the oldest
/// entries go first when it holds more than [`VIEW_CACHE_FILES`] files or
/// [`VIEW_CACHE_BYTES`] bytes.
#[derive(Default)]
pub(super) struct ViewCache {
    entries: std::collections::VecDeque<(Path, CachedView)>,
    bytes: usize,
}

impl ViewCache {
    pub(super) fn get(&self, key: &Path) -> Option<CachedView> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    pub(super) fn remove(&mut self, key: &Path) {
        if let Some(at) = self.entries.iter().position(|(k, _)| k == key)
            && let Some((_, old)) = self.entries.remove(at)
        {
            self.bytes -= old.contents.len();
        }
    }

    pub(super) fn put(&mut self, key: &Path, view: CachedView) {
        self.remove(key);
        if view.e_tag.is_none() || view.contents.len() > VIEW_CACHE_BYTES / 4 {
            return;
        }
        self.bytes += view.contents.len();
        self.entries.push_back((key.clone(), view));
        while self.entries.len() > VIEW_CACHE_FILES || self.bytes > VIEW_CACHE_BYTES {
            match self.entries.pop_front() {
                Some((_, old)) => self.bytes -= old.contents.len(),
                None => break,
            }
        }
    }
}
