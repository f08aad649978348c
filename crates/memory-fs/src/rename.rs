//! `rename`: one file-system rename for a file or a whole folder, never overwriting (checked
//! under the lock), creating the destination's parent folders.

use memory_core::{Error, MemoryPath, Result};

use crate::error::FsError;
use crate::layout::rel;
use crate::resolve::Probe;
use crate::store::Store;

impl Store {
    pub(crate) fn rename(&self, from: &MemoryPath, to: &MemoryPath) -> Result<()> {
        self.refuse_if_read_only(from)?;
        let _locked = self.lock()?;
        let source_exists = match self.probe_unlinked(from)? {
            Probe::File(_) => true,
            Probe::Dir => self.has_file_below(from)?,
            _ => false,
        };
        if !source_exists {
            return Err(Error::NotFound { path: from.clone() });
        }
        if to.starts_with(from) {
            return Err(Error::RenameIntoItself {
                from: from.clone(),
                to: to.clone(),
            });
        }
        if let Some(reason) = self.unrepresentable(to) {
            return Err(Error::Refused {
                path: to.clone(),
                reason: reason.to_owned(),
            });
        }
        let to_rel = rel(to)?;
        match self.probe_unlinked(to)? {
            Probe::Link => return Err(Error::SymbolicLink { path: to.clone() }),
            Probe::File(_) | Probe::Special => {
                return Err(Error::AlreadyExists { path: to.clone() });
            }
            Probe::Dir => {
                if self.has_file_below(to)? {
                    return Err(Error::AlreadyExists { path: to.clone() });
                }
                self.remove_tree(to, &to_rel)?;
            }
            Probe::BelowFile(parent) => {
                return Err(Error::ParentIsFile {
                    path: to.clone(),
                    parent,
                });
            }
            Probe::BelowSpecial(at) => return Err(FsError::NotRegular { path: at }.into()),
            Probe::Missing => {}
        }
        // History: each moved file's revisions made ready at the new path first.
        let moves = self.before_move(from, to)?;
        let Some(created) = self.make_parents(to)? else {
            // Only our own writers change folders, and they wait for the lock.
            return Err(FsError::Vanished {
                path: to.clone(),
                attempts: 1,
            }
            .into());
        };
        if let Err(e) = self.root.rename(rel(from)?, &self.root, &to_rel) {
            self.prune_created(&created);
            return Err(FsError::io("rename", from, e).into());
        }
        self.after_move(moves);
        self.prune_empty_parents(from);
        let to_parent = to.parent().unwrap_or_else(MemoryPath::root);
        self.sync_dir(&to_parent)?;
        let from_parent = self.existing_ancestor(from);
        if from_parent != to_parent {
            self.sync_dir(&from_parent)?;
        }
        Ok(())
    }
}
