//! Creating a file: the keys its checks are about, the checks (one HEAD per ancestor and one
//! LIST, or this process's folder facts), and the create-if-absent PUT under the file counter.

use std::collections::HashSet;
use std::time::Instant;

use bytes::Bytes;
use memory_core::history::Change;
use memory_core::{Error, MemoryPath, Result, Version};
use object_store::path::Path;
use object_store::{PutMode, PutOptions, PutPayload};

use super::ObjectStoreStorage;
use crate::folders::CreateKeys;

impl ObjectStoreStorage {
    /// The keys a create's checks are about (see `folders`).
    pub(super) fn create_keys(&self, path: &MemoryPath, key: &Path) -> Result<CreateKeys> {
        let mut ancestors = Vec::new();
        let mut parent = self.base.clone();
        for ancestor in path.ancestors() {
            let ancestor = self.key(&ancestor)?;
            ancestors.push((ancestor.clone(), parent));
            parent = ancestor;
        }
        Ok(CreateKeys {
            ancestors,
            parent,
            file: key.clone(),
        })
    }

    /// The checks of a create, learning what they find under `generation` (see `folders`):
    /// one HEAD per ancestor and one LIST, all at once. The LIST is of the file's folder with
    /// delimiter `/` (so that its subfolders are known after) while the last change of the
    /// counter met no other writer's and that folder is not known yet; otherwise it is of the
    /// path's own prefix (one short page, whatever the folder holds).
    pub(super) async fn check_create(
        &self,
        path: &MemoryPath,
        keys: &CreateKeys,
        generation: u64,
    ) -> Result<()> {
        let sent = Instant::now();
        let heads = futures_util::future::try_join_all(
            keys.ancestors
                .iter()
                .map(|(ancestor, _)| self.head(ancestor)),
        );
        let learn =
            self.counter_quiet() && !self.folder_facts().knows_folder(generation, &keys.parent);
        let is_dir = async {
            if !learn {
                return self.has_children(&keys.file).await;
            }
            let asked = self.folder_facts().asking(&keys.parent);
            let listed = self
                .store
                .list_with_delimiter(Some(&keys.parent))
                .await
                .map_err(|e| self.request_error("LIST", &keys.parent, e))?;
            let dirs: HashSet<Path> = listed.common_prefixes.into_iter().collect();
            let listed_as_dir = dirs.contains(&keys.file);
            self.folder_facts()
                .learn_folder(generation, keys.parent.clone(), dirs, sent, asked);
            if listed_as_dir {
                // Objects below it, but maybe only foreign ones (which make no folder).
                self.has_children(&keys.file).await
            } else {
                Ok(false)
            }
        };
        let (found, is_dir) = futures_util::try_join!(heads, is_dir)?;
        {
            let mut facts = self.folder_facts();
            for ((ancestor, _), meta) in keys.ancestors.iter().zip(&found) {
                if meta.is_none() {
                    facts.learn_not_file(generation, ancestor.clone(), sent);
                }
            }
        }
        let file_above = path
            .ancestors()
            .into_iter()
            .zip(&found)
            .find_map(|(ancestor, meta)| meta.as_ref().map(|_| ancestor));
        writable(path, file_above, is_dir)
    }

    /// Create-if-absent under the counter: checks, a place reserved (below `limit`), the
    /// conditional PUT, the place given back if the PUT fails.
    ///
    /// When this process's folder facts answer both checks, only the reservation is sent
    /// before the PUT, and it proves the facts still hold: it is a conditional PUT of the
    /// counter, which every writer changes before adding a file; if it finds another writer's
    /// change, the checks are sent after all (see `folders` for the argument).
    pub(super) async fn create(
        &self,
        path: &MemoryPath,
        key: &Path,
        contents: Vec<u8>,
        limit: Option<usize>,
    ) -> Result<Version> {
        let keys = self.create_keys(path, key)?;
        let generation = self.counter_generation();
        let known = {
            let mut facts = self.folder_facts();
            let known = facts.cover(generation, &keys);
            facts.adding_file(&keys);
            known
        };
        let _announced = Announced {
            storage: self,
            keys: &keys,
        };
        let listing = async {
            if self.recording() {
                self.listed_revisions(path).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let reserve_and_check = async {
            if known {
                let reserved = self.change_count(1, limit).await;
                let checked = match &reserved {
                    // No other writer changed the counter since the facts were learned.
                    Ok(Some(put_in)) if *put_in == generation => Ok(()),
                    Ok(_) => {
                        self.check_create(path, &keys, self.counter_generation())
                            .await
                    }
                    Err(_) => Ok(()),
                };
                (checked, reserved)
            } else {
                // The checks and the reservation at once: the create costs the longer of the
                // two, then the PUT.
                futures_util::join!(
                    self.check_create(path, &keys, generation),
                    self.change_count(1, limit)
                )
            }
        };
        // The history folder listed meanwhile, for the new revision's number.
        let ((checked, reserved), listed) = futures_util::join!(reserve_and_check, listing);
        let checked = match (checked, listed) {
            (Ok(()), Ok(listed)) => Ok(listed),
            (Err(e), _) | (Ok(()), Err(e)) => Err(e),
        };
        let listed = match checked {
            Ok(listed) => listed,
            Err(e) => {
                if reserved.is_ok() {
                    self.release(1).await;
                }
                return Err(e);
            }
        };
        match reserved {
            Ok(_) => {}
            // A full store still says that a taken path is taken.
            Err(full @ Error::StoreFull { .. }) => {
                return Err(match self.head(key).await? {
                    Some(_) => Error::AlreadyExists { path: path.clone() },
                    None => full,
                });
            }
            Err(e) => return Err(e),
        }
        let (revision, options) = match &listed {
            Some(listed) => {
                let (revision, options) =
                    self.created_revision(path, &contents, listed, Change::Created);
                (Some(revision), options)
            }
            None => (
                None,
                PutOptions {
                    mode: PutMode::Create,
                    ..PutOptions::default()
                },
            ),
        };
        let attributes = revision.as_ref().map(|_| options.attributes.clone());
        let bytes = Bytes::from(contents);
        let put = self
            .store
            .put_opts(key, PutPayload::from(bytes.clone()), options)
            .await;
        if put.is_err() {
            self.release(1).await;
        }
        match put {
            Ok(result) => {
                if let (Some(revision), Some(listed)) = (&revision, &listed) {
                    self.prune_after(path, listed, None, revision).await;
                }
                self.remember_with(key, bytes, result.e_tag, result.version, attributes)
            }
            Err(object_store::Error::AlreadyExists { .. }) => {
                Err(Error::AlreadyExists { path: path.clone() })
            }
            Err(e) => Err(self.request_error("PUT", key, e)),
        }
    }
}

/// A file this process is putting, announced to its folder facts
/// ([`FolderFacts::adding_file`]); the end is announced when this is dropped, whatever the
/// outcome (a cancelled create included).
pub(super) struct Announced<'a> {
    pub(super) storage: &'a ObjectStoreStorage,
    pub(super) keys: &'a CreateKeys,
}

impl Drop for Announced<'_> {
    fn drop(&mut self) {
        self.storage.folder_facts().added_file(self.keys);
    }
}

/// What a create's checks found, as its answer: a file above the path refuses it
/// (`ParentIsFile`), a folder at the path too (`AlreadyExists`).
pub(super) fn writable(
    path: &MemoryPath,
    file_above: Option<MemoryPath>,
    is_dir: bool,
) -> Result<()> {
    if let Some(parent) = file_above {
        return Err(Error::ParentIsFile {
            path: path.clone(),
            parent,
        });
    }
    if is_dir {
        return Err(Error::AlreadyExists { path: path.clone() });
    }
    Ok(())
}
