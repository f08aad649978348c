//! No fast paths outside Linux: [`Fast`] has no values, so a store's `Option<Fast>` is always
//! `None` and every operation takes its portable path. The methods exist only so that the
//! callers compile unchanged; none can ever run.

use cap_std::fs::Dir;
use memory_core::MemoryPath;

use super::{Beneath, Open};
use crate::error::FsError;
use crate::layout::FileInfo;

/// The Linux fast paths, which this platform does not have.
#[derive(Debug)]
pub(crate) enum Fast {}

impl Fast {
    /// Never any fast path here.
    pub(crate) fn detect(_root: &Dir) -> Option<Fast> {
        None
    }

    pub(crate) fn open(
        &self,
        _root: &Dir,
        _path: &MemoryPath,
        _open: Open,
    ) -> Result<Beneath, FsError> {
        match *self {}
    }

    pub(crate) fn place_new(
        &self,
        _temp_dir: &Dir,
        _temp: &str,
        _folder: &Dir,
        _name: &str,
    ) -> Option<std::io::Result<()>> {
        match *self {}
    }

    pub(crate) fn walk(
        &self,
        _folder: std::fs::File,
        _dir: &MemoryPath,
        _with_info: bool,
        _visit: &mut dyn FnMut(MemoryPath, Option<FileInfo>) -> bool,
    ) -> Result<bool, FsError> {
        match *self {}
    }
}
