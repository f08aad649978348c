//! The floor: raw durable writes with nothing on top, to judge the stores against the disk.
//!
//! One operation is what an atomic, durable file write costs at the least: write the bytes to
//! a temporary file, `fsync` it, `rename` it over the target. That is exactly what the official
//! Python and TypeScript SDKs do for an edit. [`FloorOptions::sync_dir`] adds an `fsync` of the
//! folder after the rename, which makes the rename itself survive a power cut (the folder store
//! of this workspace does it; the SDKs do not).
//!
//! ```
//! use memory_bench::floor::{FloorOptions, run};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let report = run(dir.path(), &FloorOptions { count: 5, size: 100, sync_dir: true }).unwrap();
//! assert_eq!(report.ops, 5);
//! ```

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorOptions {
    /// How many write + fsync + rename operations.
    pub count: usize,
    /// Bytes per write.
    pub size: usize,
    /// Also `fsync` the folder after each rename.
    pub sync_dir: bool,
}

/// What a floor run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorReport {
    /// Operations done.
    pub ops: usize,
    /// Time they took together.
    pub elapsed: Duration,
}

/// Runs the operations in `dir` (which must exist), cycling over 16 target files, and leaves
/// the targets behind.
pub fn run(dir: &Path, options: &FloorOptions) -> io::Result<FloorReport> {
    let contents = vec![b'm'; options.size];
    let folder = if options.sync_dir {
        Some(File::open(dir)?)
    } else {
        None
    };
    let start = Instant::now();
    for i in 0..options.count {
        let tmp = dir.join(format!(".floor-{i}.tmp"));
        let mut file = File::create(&tmp)?;
        file.write_all(&contents)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, dir.join(format!("note-{}.md", i % 16)))?;
        if let Some(folder) = &folder {
            folder.sync_all()?;
        }
    }
    Ok(FloorReport {
        ops: options.count,
        elapsed: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_targets_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let report = run(
            dir.path(),
            &FloorOptions {
                count: 20,
                size: 1000,
                sync_dir: false,
            },
        )
        .unwrap();
        assert_eq!(report.ops, 20);
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), 16);
        assert!(names.iter().all(|n| n.starts_with("note-")));
        assert_eq!(fs::read(dir.path().join("note-3.md")).unwrap().len(), 1000);
    }

    #[test]
    fn a_missing_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let options = FloorOptions {
            count: 1,
            size: 1,
            sync_dir: true,
        };
        assert!(run(&dir.path().join("nope"), &options).is_err());
    }
}
