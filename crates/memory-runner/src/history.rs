//! Comparing two versions of a file: [`diff`] reads them from any store's history
//! ([`memory_core::history`]) and [`VersionDiff::unified`] shows what changed as a unified
//! diff, as `memory diff` prints it.
//!
//! Listing, reading and restoring versions are the store's own methods
//! ([`Storage::history`], [`Storage::read_revision`], [`memory_core::history::restore`]).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use memory_core::{InMemoryStorage, MemoryPath, Storage, WriteMode};
//!
//! let store = InMemoryStorage::new();
//! let path = MemoryPath::parse("/memories/notes.md").unwrap();
//! store.write(&path, b"tea\ncoffee\n".to_vec(), WriteMode::Create).await.unwrap();
//! store.write(&path, b"tea\nwater\n".to_vec(), WriteMode::Overwrite).await.unwrap();
//! // The version before the current one against the current file.
//! let diff = memory_runner::history::diff(&store, &path, None, None).await.unwrap();
//! assert!(diff.differ());
//! assert!(diff.unified().unwrap().contains("-coffee\n+water\n"));
//! # });
//! ```

use std::time::Duration;

use memory_core::history::{Change, Revision};
use memory_core::{Error, MemoryPath, Result, Storage};

/// One side of a comparison: which version, a label for the diff's header, and its bytes (a
/// deletion's, and what comes before version 1, are empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffSide {
    /// The version's number; `None` for the empty file before version 1.
    pub number: Option<u64>,
    /// `PATH (version N)`, with `, current` or `, deleted` where that applies.
    pub label: String,
    /// Its content.
    pub contents: Vec<u8>,
}

/// Two versions of one file, older first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionDiff {
    /// The older side.
    pub from: DiffSide,
    /// The newer side.
    pub to: DiffSide,
}

/// How long the diff may search for the smallest edit; past it a larger (still correct) one
/// is shown.
const DEADLINE: Duration = Duration::from_secs(2);

impl VersionDiff {
    /// Whether the two sides' bytes differ.
    pub fn differ(&self) -> bool {
        self.from.contents != self.to.contents
    }

    /// The unified diff (three lines of context, headed by the sides' labels; empty when
    /// they are the same), or `None` when either side is not text (not UTF-8, or holding a
    /// NUL byte, as diff(1) tells binary files).
    pub fn unified(&self) -> Option<String> {
        let (old, new) = (text_of(&self.from.contents)?, text_of(&self.to.contents)?);
        if old == new {
            return Some(String::new());
        }
        Some(
            similar::TextDiff::configure()
                .timeout(DEADLINE)
                .diff_lines(old, new)
                .unified_diff()
                .context_radius(3)
                .header(&self.from.label, &self.to.label)
                .to_string(),
        )
    }
}

fn text_of(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

/// Versions `from` and `to` of the file at `path`: `to` by default the current file (the
/// newest version), `from` by default the version just before `to`.
///
/// # Errors
/// [`Error::NoRevision`] for a number the file does not have (or a file without versions),
/// [`Error::RevisionWithoutContent`] for a redacted one, [`Error::HistoryOff`], and the
/// store's own errors.
pub async fn diff<S: Storage + ?Sized>(
    store: &S,
    path: &MemoryPath,
    from: Option<u64>,
    to: Option<u64>,
) -> Result<VersionDiff> {
    let revisions = store.history(path).await?;
    diff_of(store, path, &revisions, from, to).await
}

/// [`diff`] over `revisions`, the file's versions as [`Storage::history`] returned them
/// (for a caller that has listed them already).
///
/// # Errors
/// As [`diff`].
pub async fn diff_of<S: Storage + ?Sized>(
    store: &S,
    path: &MemoryPath,
    revisions: &[Revision],
    from: Option<u64>,
    to: Option<u64>,
) -> Result<VersionDiff> {
    let Some(newest) = revisions.iter().max_by_key(|r| r.number) else {
        return Err(Error::NoRevision {
            path: path.clone(),
            number: to.or(from).unwrap_or(1),
        });
    };
    let to_number = to.unwrap_or(newest.number);
    let to = if to.is_none() && newest.change != Change::Deleted {
        DiffSide {
            number: Some(to_number),
            label: format!("{path} (version {to_number}, current)"),
            contents: store.read(path).await?.contents,
        }
    } else {
        side(store, path, revisions, to_number).await?
    };
    let from = match from.or(to_number.checked_sub(1).filter(|&n| n > 0)) {
        Some(number) => side(store, path, revisions, number).await?,
        None => DiffSide {
            number: None,
            label: format!("{path} (nothing before version 1)"),
            contents: Vec::new(),
        },
    };
    Ok(VersionDiff { from, to })
}

/// Version `number` of `path`: its content, or nothing for a deletion.
async fn side<S: Storage + ?Sized>(
    store: &S,
    path: &MemoryPath,
    revisions: &[Revision],
    number: u64,
) -> Result<DiffSide> {
    let Some(revision) = revisions.iter().find(|r| r.number == number) else {
        return Err(Error::NoRevision {
            path: path.clone(),
            number,
        });
    };
    if revision.change == Change::Deleted {
        return Ok(DiffSide {
            number: Some(number),
            label: format!("{path} (version {number}, deleted)"),
            contents: Vec::new(),
        });
    }
    Ok(DiffSide {
        number: Some(number),
        label: format!("{path} (version {number})"),
        contents: store.read_revision(path, number).await?,
    })
}

#[cfg(test)]
mod tests {
    use memory_core::{InMemoryStorage, WriteMode};

    use super::*;

    #[test]
    fn a_change_is_a_unified_diff_with_the_labels() {
        let side = |label: &str, text: &str| DiffSide {
            number: Some(1),
            label: label.to_owned(),
            contents: text.as_bytes().to_vec(),
        };
        let diff = VersionDiff {
            from: side("x (version 1)", "a\nb\nc\n"),
            to: side("x (version 2)", "a\nB\nc\n"),
        };
        assert_eq!(
            diff.unified().unwrap(),
            "--- x (version 1)\n+++ x (version 2)\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        let binary = VersionDiff {
            from: side("x", "a\0"),
            to: side("y", "b"),
        };
        assert!(binary.differ() && binary.unified().is_none());
    }

    #[tokio::test]
    async fn defaults_compare_the_previous_version_with_the_current_file() {
        let store = InMemoryStorage::new();
        let path = MemoryPath::parse("/memories/a.md").unwrap();
        store
            .write(&path, b"1\n".to_vec(), WriteMode::Create)
            .await
            .unwrap();
        store
            .write(&path, b"2\n".to_vec(), WriteMode::Overwrite)
            .await
            .unwrap();
        store.delete(&path).await.unwrap();
        let diff = diff(&store, &path, None, None).await.unwrap();
        assert_eq!((diff.from.number, diff.to.number), (Some(2), Some(3)));
        assert!(diff.to.label.ends_with("deleted)") && diff.to.contents.is_empty());
        let first = super::diff(&store, &path, None, Some(1)).await.unwrap();
        assert_eq!(first.from.number, None);
        let e = super::diff(&store, &path, Some(9), None).await.unwrap_err();
        assert!(matches!(e, Error::NoRevision { number: 9, .. }), "{e:?}");
    }
}
