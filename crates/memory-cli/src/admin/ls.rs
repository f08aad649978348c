//! `memory ls [PATH]`: a tree with sizes, or `--json`.

use std::collections::BTreeMap;

use memory_core::{Entry, FileMeta, MemoryPath, Storage};
use serde_json::{Value, json};

use super::{
    Exit, Failure, OpenMode, Outcome, StoreArgs, human_size, parse_path, rfc3339, write_stdout,
};

/// Arguments of `memory ls`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = concat!("\
Output (a tree; sizes as in the memory tool's view, a directory's size is the total below it):

  /memories  1.5K in 3 files
  ├── notes.md  120B
  └── projects/  1.4K
      ├── a.md  1K
      └── logo.png  400B

--json prints one object:
  {\"path\": \"/memories\", \"type\": \"directory\", \"size\": 1536, \"file_count\": 3,
   \"files\": [{\"path\": \"/memories/notes.md\", \"size\": 120, \"modified\": \"2025-01-31T12:00:00Z\"}, ...]}
(\"type\" is \"file\" when PATH is a file; \"modified\" is null where the store does not know it).", "\n\n", exit_status_help!()))]
pub(crate) struct LsArgs {
    /// The directory (or file) to list.
    #[arg(default_value = "/memories")]
    path: String,

    /// Print JSON instead of a tree.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn run(args: LsArgs) -> Outcome {
    let path = parse_path(&args.path)?;
    let store = args.store.open(OpenMode::ReadOnly).await?;
    let (is_dir, files) = collect(store.as_ref(), &path).await?;
    let text = if args.json {
        let mut text = to_json(&path, is_dir, &files).to_string();
        text.push('\n');
        text
    } else {
        render_tree(&path, is_dir, &files)
    };
    write_stdout(text.as_bytes())
}

/// What is at `path`: whether it is a directory, and the files at or below it.
pub(crate) async fn collect(
    store: &dyn Storage,
    path: &MemoryPath,
) -> Result<(bool, Vec<FileMeta>), Failure> {
    let entry = if path.is_root() {
        Some(Entry::Directory)
    } else {
        store
            .stat(path)
            .await
            .map_err(|e| Failure::storage(&format!("look up {path}"), e))?
    };
    match entry {
        None => Err(Failure::new(
            Exit::NotFound,
            format!("{path} does not exist"),
        )),
        Some(Entry::File(meta)) => Ok((false, vec![meta])),
        Some(Entry::Directory) => {
            let files = store
                .list(path)
                .await
                .map_err(|e| Failure::storage(&format!("list {path}"), e))?;
            Ok((true, files))
        }
    }
}

fn to_json(path: &MemoryPath, is_dir: bool, files: &[FileMeta]) -> Value {
    json!({
        "path": path.as_str(),
        "type": if is_dir { "directory" } else { "file" },
        "size": files.iter().map(|f| f.size).sum::<u64>(),
        "file_count": files.len(),
        "files": files.iter().map(file_json).collect::<Vec<_>>(),
    })
}

/// `{"path", "size", "modified"}` of one file.
pub(crate) fn file_json(meta: &FileMeta) -> Value {
    json!({
        "path": meta.path.as_str(),
        "size": meta.size,
        "modified": meta.modified.map(rfc3339),
    })
}

enum Node {
    File(u64),
    Dir(Dir),
}

#[derive(Default)]
struct Dir {
    size: u64,
    children: BTreeMap<String, Node>,
}

impl Dir {
    fn insert(&mut self, segments: &[&str], size: u64) {
        self.size += size;
        match segments {
            [] => {}
            [name] => {
                self.children.insert((*name).to_owned(), Node::File(size));
            }
            [name, rest @ ..] => {
                let child = self
                    .children
                    .entry((*name).to_owned())
                    .or_insert_with(|| Node::Dir(Dir::default()));
                if let Node::Dir(dir) = child {
                    dir.insert(rest, size);
                }
            }
        }
    }

    fn render(&self, prefix: &str, out: &mut String) {
        let count = self.children.len();
        for (i, (name, node)) in self.children.iter().enumerate() {
            let last = i + 1 == count;
            let (branch, indent) = if last {
                ("└── ", "    ")
            } else {
                ("├── ", "│   ")
            };
            match node {
                Node::File(size) => {
                    out.push_str(&format!("{prefix}{branch}{name}  {}\n", human_size(*size)));
                }
                Node::Dir(dir) => {
                    out.push_str(&format!(
                        "{prefix}{branch}{name}/  {}\n",
                        human_size(dir.size)
                    ));
                    dir.render(&format!("{prefix}{indent}"), out);
                }
            }
        }
    }
}

fn render_tree(path: &MemoryPath, is_dir: bool, files: &[FileMeta]) -> String {
    if !is_dir {
        let size = files.first().map_or(0, |f| f.size);
        return format!("{path}  {}\n", human_size(size));
    }
    let mut root = Dir::default();
    for meta in files {
        let relative = meta.path.as_str()[path.as_str().len()..].trim_start_matches('/');
        let segments: Vec<&str> = relative.split('/').filter(|s| !s.is_empty()).collect();
        root.insert(&segments, meta.size);
    }
    let count = files.len();
    let mut out = format!(
        "{path}  {} in {count} file{}\n",
        human_size(root.size),
        if count == 1 { "" } else { "s" }
    );
    root.render("", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(path: &str, size: u64) -> FileMeta {
        FileMeta {
            path: MemoryPath::parse(path).unwrap(),
            size,
            modified: None,
        }
    }

    #[test]
    fn tree_with_directory_totals() {
        let files = [
            meta("/memories/.hidden", 0),
            meta("/memories/notes.md", 120),
            meta("/memories/projects/a.md", 1024),
            meta("/memories/projects/deep/b.png", 400),
        ];
        let root = MemoryPath::root();
        assert_eq!(
            render_tree(&root, true, &files),
            "/memories  1.5K in 4 files\n\
             ├── .hidden  0B\n\
             ├── notes.md  120B\n\
             └── projects/  1.4K\n\
             \x20   ├── a.md  1K\n\
             \x20   └── deep/  400B\n\
             \x20       └── b.png  400B\n"
        );
        let projects = MemoryPath::parse("/memories/projects").unwrap();
        assert_eq!(
            render_tree(&projects, true, &files[2..]),
            "/memories/projects  1.4K in 2 files\n├── a.md  1K\n└── deep/  400B\n    └── b.png  400B\n"
        );
        assert_eq!(render_tree(&root, true, &[]), "/memories  0B in 0 files\n");
        assert_eq!(
            render_tree(&files[1].path, false, &files[1..2]),
            "/memories/notes.md  120B\n"
        );
    }

    #[test]
    fn json_shape() {
        let files = [meta("/memories/a.md", 3)];
        assert_eq!(
            to_json(&MemoryPath::root(), true, &files),
            json!({"path": "/memories", "type": "directory", "size": 3, "file_count": 1,
                   "files": [{"path": "/memories/a.md", "size": 3, "modified": null}]})
        );
    }
}
