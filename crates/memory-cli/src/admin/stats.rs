//! `memory stats`: how many files, how many bytes, which files are largest.

use std::collections::BTreeSet;

use memory_core::{FileMeta, MemoryPath};
use serde_json::{Value, json};

use super::{Failure, OpenMode, Outcome, StoreArgs, human_size, rfc3339, write_stdout};

/// Arguments of `memory stats`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = concat!("\
--json prints one object:
  {\"files\": 3, \"directories\": 1, \"bytes\": 1536,
   \"largest\": [{\"path\": \"/memories/projects/a.md\", \"size\": 1024, \"modified\": \"2025-01-31T12:00:00Z\"}, ...],
   \"oldest\": {\"path\": ..., \"size\": ..., \"modified\": ...} or null,
   \"newest\": {...} or null,
   \"skipped_entries\": 0}
Files and directories include hidden ones; \"largest\" is sorted by size, then path.
\"skipped_entries\" counts what the listing left out because it is not a memory file (an
object or row whose key is no valid /memories path, placed there by something else); each
listing that meets such entries also logs a warning. They are never deleted or moved.", "\n\n", exit_status_help!()))]
pub(crate) struct StatsArgs {
    /// How many of the largest files to show.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,

    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn run(args: StatsArgs) -> Outcome {
    let store = args.store.open(OpenMode::ReadOnly).await?;
    let root = MemoryPath::root();
    let listing = store
        .listing(&root)
        .await
        .map_err(|e| Failure::storage("list /memories", e))?;
    let mut stats = Stats::of(&listing.entries, args.top);
    stats.skipped_entries = listing.skipped;
    let text = if args.json {
        format!("{}\n", stats.to_json())
    } else {
        stats.to_text()
    };
    write_stdout(text.as_bytes())
}

struct Stats<'a> {
    files: usize,
    directories: usize,
    bytes: u64,
    largest: Vec<&'a FileMeta>,
    oldest: Option<&'a FileMeta>,
    newest: Option<&'a FileMeta>,
    /// Entries the listing left out: not memory files (see the help).
    skipped_entries: u64,
}

impl<'a> Stats<'a> {
    fn of(files: &'a [FileMeta], top: usize) -> Self {
        let directories: BTreeSet<MemoryPath> = files
            .iter()
            .flat_map(|f| f.path.ancestors())
            .filter(|dir| !dir.is_root())
            .collect();
        let mut largest: Vec<&FileMeta> = files.iter().collect();
        largest.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
        largest.truncate(top);
        let dated = || files.iter().filter(|f| f.modified.is_some());
        Stats {
            files: files.len(),
            directories: directories.len(),
            bytes: files.iter().map(|f| f.size).sum(),
            largest,
            oldest: dated().min_by_key(|f| f.modified),
            newest: dated().max_by_key(|f| f.modified),
            skipped_entries: 0,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "files": self.files,
            "directories": self.directories,
            "bytes": self.bytes,
            "largest": self.largest.iter().map(|f| super::ls::file_json(f)).collect::<Vec<_>>(),
            "oldest": self.oldest.map(super::ls::file_json),
            "newest": self.newest.map(super::ls::file_json),
            "skipped_entries": self.skipped_entries,
        })
    }

    fn to_text(&self) -> String {
        let mut out = format!(
            "files        {}\ndirectories  {}\nbytes        {} ({})\n",
            self.files,
            self.directories,
            self.bytes,
            human_size(self.bytes)
        );
        for (label, file) in [("oldest", self.oldest), ("newest", self.newest)] {
            if let Some(f) = file {
                let when = f.modified.map(rfc3339).unwrap_or_default();
                out.push_str(&format!("{label:<13}{when}  {}\n", f.path));
            }
        }
        if self.skipped_entries > 0 {
            out.push_str(&format!(
                "skipped      {} entries that are not memory files (left in place; see the log)\n",
                self.skipped_entries
            ));
        }
        if !self.largest.is_empty() {
            out.push_str("largest:\n");
            for f in &self.largest {
                out.push_str(&format!("  {:>7}  {}\n", human_size(f.size), f.path));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn meta(path: &str, size: u64, secs: Option<u64>) -> FileMeta {
        FileMeta {
            path: MemoryPath::parse(path).unwrap(),
            size,
            modified: secs.map(|s| UNIX_EPOCH + Duration::from_secs(s)),
        }
    }

    #[test]
    fn counts_sizes_and_extremes() {
        let files = [
            meta("/memories/a.md", 10, Some(100)),
            meta("/memories/d/b.md", 30, Some(50)),
            meta("/memories/d/e/c.md", 30, None),
            meta("/memories/z.md", 5, Some(200)),
        ];
        let stats = Stats::of(&files, 2);
        assert_eq!(
            stats.to_json(),
            json!({
                "files": 4, "directories": 2, "bytes": 75,
                "largest": [
                    {"path": "/memories/d/b.md", "size": 30, "modified": "1970-01-01T00:00:50Z"},
                    {"path": "/memories/d/e/c.md", "size": 30, "modified": null},
                ],
                "oldest": {"path": "/memories/d/b.md", "size": 30, "modified": "1970-01-01T00:00:50Z"},
                "newest": {"path": "/memories/z.md", "size": 5, "modified": "1970-01-01T00:03:20Z"},
                "skipped_entries": 0,
            })
        );
        let empty = Stats::of(&[], 10);
        assert_eq!(
            empty.to_json(),
            json!({"files": 0, "directories": 0, "bytes": 0, "largest": [], "oldest": null, "newest": null, "skipped_entries": 0})
        );
        assert_eq!(
            empty.to_text(),
            "files        0\ndirectories  0\nbytes        0 (0B)\n"
        );
    }
}
