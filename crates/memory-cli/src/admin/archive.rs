//! `memory export` and `memory import`: a portable archive of a whole store.
//!
//! The archive is JSON Lines, readable with any JSON tool:
//!
//! ```text
//! {"type":"header","format":"memory-archive","version":1,"created":"2025-01-31T12:00:00Z"}
//! {"type":"file","path":"/memories/notes.md","size":6,"sha256":"<64 hex>","modified":"2025-01-30T09:00:00Z","encoding":"utf-8","data":"hello\n"}
//! {"type":"file","path":"/memories/logo.png","size":68,"sha256":"<64 hex>","modified":null,"encoding":"base64","data":"iVBORw0..."}
//! {"type":"end","files":2,"bytes":74}
//! ```
//!
//! The format is written and checked by [`memory_store::archive`] (the web console of `memory
//! serve` uses the same module). Import checks the whole archive before it writes anything:
//! the header and version, every path (here also against the memory tool's path rules), every
//! size and SHA-256, duplicate paths, and the end line's counts (so a truncated archive is
//! refused). Import gives each file the modification time its line records (an RFC 3339
//! time; `null` or anything else leaves the time of the import), through
//! [`Storage::set_modified`]; S3 and versioned stores keep their own times.

use std::collections::HashMap;
use std::path::PathBuf;

use memory_core::{Entry, Error, FileMeta, MemoryPath, Storage, WriteMode};
use memory_store::archive;
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::modified::keep_modified;
use super::progress::Progress;
use super::{
    Exit, Failure, OpenMode, Outcome, SessionArgs, StoreArgs, human_size, parse_rfc3339, rfc3339,
};

pub(crate) const EXPORT_LONG_ABOUT: &str = "\
Write the whole store as a portable archive: JSON Lines, one line per file, with its
SHA-256, so that `memory import` can verify every byte (into any kind of store).

  {\"type\":\"header\",\"format\":\"memory-archive\",\"version\":1,\"created\":\"...\"}
  {\"type\":\"file\",\"path\":\"/memories/notes.md\",\"size\":6,\"sha256\":\"...\",
   \"modified\":\"2025-01-30T09:00:00Z\",\"encoding\":\"utf-8\",\"data\":\"hello\\n\"}
  {\"type\":\"end\",\"files\":1,\"bytes\":6}

Text files are stored as text (\"encoding\": \"utf-8\"), other files as \"base64\".
Hidden files are included. With --out the archive appears only once it is complete.";

/// Arguments of `memory export`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// Write the archive to FILE (replaced only once the export is complete) instead of
    /// standard output.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,

    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// Arguments of `memory import`.
#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// The archive written by `memory export`, or `-` for standard input.
    file: PathBuf,

    /// Replace files that already exist in the store (without it, any existing file makes
    /// the import stop, exit 4, before anything is written).
    #[arg(long)]
    overwrite: bool,

    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,

    #[command(flatten)]
    store: StoreArgs,

    #[command(flatten)]
    session: SessionArgs,
}

pub(crate) async fn export(args: ExportArgs) -> Outcome {
    let store = args.store.open(OpenMode::ReadOnly).await?;
    let files = store
        .list(&MemoryPath::root())
        .await
        .map_err(|e| Failure::storage("list /memories", e))?;
    let summary = match &args.out {
        None => {
            let mut out = tokio::io::stdout();
            match write_archive(store.as_ref(), &files, &mut out, args.quiet).await {
                Err(WriteFailure::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Ok(());
                }
                other => other.map_err(|e| e.into_failure("standard output"))?,
            }
        }
        Some(path) => export_to_file(store.as_ref(), &files, path, args.quiet).await?,
    };
    if !args.quiet {
        eprintln!(
            "memory: exported {} file{} ({})",
            summary.files,
            plural(summary.files),
            human_size(summary.bytes)
        );
    }
    Ok(())
}

/// Writes next to `path` and renames into place at the end, so a failed export never leaves
/// a partial archive under the name asked for.
async fn export_to_file(
    store: &dyn Storage,
    files: &[FileMeta],
    path: &std::path::Path,
    quiet: bool,
) -> Result<Written, Failure> {
    let shown = path.display().to_string();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Failure::new(Exit::Usage, format!("--out {shown} is not a file name")))?;
    let partial = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let file = create_private(&partial)
        .await
        .map_err(|e| Failure::new(Exit::Failed, format!("cannot create {shown}: {e}")))?;
    let mut out = tokio::io::BufWriter::new(file);
    let result = match write_archive(store, files, &mut out, quiet).await {
        Ok(summary) => match out.into_inner().sync_all().await {
            Ok(()) => tokio::fs::rename(&partial, path)
                .await
                .map(|()| summary)
                .map_err(|e| Failure::new(Exit::Failed, format!("cannot write {shown}: {e}"))),
            Err(e) => Err(Failure::new(
                Exit::Failed,
                format!("cannot write {shown}: {e}"),
            )),
        },
        Err(e) => Err(e.into_failure(&shown)),
    };
    if result.is_err() {
        let _ = tokio::fs::remove_file(&partial).await;
    }
    result
}

/// Creates `path` new, readable and writable by its owner only (0600 whatever the umask: an
/// archive holds every memory), never through a link left at that name. On Windows the file
/// gets the platform's default permissions (inherited from its folder): there is no mode to set.
async fn create_private(path: &std::path::Path) -> std::io::Result<tokio::fs::File> {
    // A partial file of an earlier run that had this process id: ours to replace.
    match tokio::fs::remove_file(path).await {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let file = options.open(path).await?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The umask may have taken bits off the mode: set it exactly.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .await?;
    }
    Ok(file)
}

/// How much an export or import moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) files: u64,
    pub(crate) bytes: u64,
}

enum WriteFailure {
    Store(Failure),
    Output(std::io::Error),
}

impl WriteFailure {
    fn into_failure(self, target: &str) -> Failure {
        match self {
            WriteFailure::Store(failure) => failure,
            WriteFailure::Output(e) => {
                Failure::new(Exit::Failed, format!("cannot write to {target}: {e}"))
            }
        }
    }
}

async fn write_archive<W: AsyncWrite + Unpin>(
    store: &dyn Storage,
    files: &[FileMeta],
    out: &mut W,
    quiet: bool,
) -> Result<Written, WriteFailure> {
    let mut progress = Progress::stderr("export", files.len() as u64, quiet);
    let header = archive::header_line(&rfc3339(std::time::SystemTime::now()));
    write_line(out, &header).await?;
    let mut written = Written::default();
    for meta in files {
        let contents = match store.read(&meta.path).await {
            Ok(file) => file.contents,
            // Deleted since the listing: the archive holds what is there now.
            Err(Error::NotFound { .. }) => {
                progress.inc();
                continue;
            }
            Err(e) => {
                return Err(WriteFailure::Store(Failure::storage(
                    &format!("read {}", meta.path),
                    e,
                )));
            }
        };
        let modified = meta.modified.map(rfc3339);
        let line = archive::file_line(meta.path.as_str(), &contents, modified.as_deref());
        write_line(out, &line).await?;
        written.files += 1;
        written.bytes += contents.len() as u64;
        progress.inc();
    }
    write_line(out, &archive::end_line(written.files, written.bytes)).await?;
    out.flush().await.map_err(WriteFailure::Output)?;
    progress.finish();
    Ok(written)
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, line: &str) -> Result<(), WriteFailure> {
    out.write_all(line.as_bytes())
        .await
        .map_err(WriteFailure::Output)
}

/// Parses and verifies a whole archive ([`archive::parse`]: format, path rules, sizes,
/// checksums, counts), so nothing is written unless every file can be.
pub(crate) fn parse_archive(bytes: &[u8]) -> Result<Vec<archive::ArchivedFile>, Failure> {
    archive::parse(bytes).map_err(|e| {
        Failure::new(
            Exit::BadArchive,
            format!("the archive is not valid: {e}; nothing was imported"),
        )
    })
}

pub(crate) async fn import(args: ImportArgs) -> Outcome {
    let shown = args.file.display().to_string();
    let bytes = if shown == "-" {
        let mut buf = Vec::new();
        tokio::io::stdin()
            .read_to_end(&mut buf)
            .await
            .map_err(|e| Failure::new(Exit::Failed, format!("cannot read standard input: {e}")))?;
        buf
    } else {
        tokio::fs::read(&args.file).await.map_err(|e| {
            let exit = if e.kind() == std::io::ErrorKind::NotFound {
                Exit::NotFound
            } else {
                Exit::Failed
            };
            Failure::new(exit, format!("cannot read {shown}: {e}"))
        })?
    };
    let files = parse_archive(&bytes)?;
    drop(bytes);
    let store = args
        .store
        .open_as(args.session.id(), OpenMode::CreateIfMissing)
        .await?;
    let paths: Vec<MemoryPath> = files.iter().map(|f| f.path.clone()).collect();
    check_targets(store.as_ref(), &paths, args.overwrite, "import").await?;
    let mut progress = Progress::stderr("import", files.len() as u64, args.quiet);
    let mode = write_mode(args.overwrite);
    let mut written = Written::default();
    for file in files {
        let size = file.contents.len() as u64;
        store
            .write(&file.path, file.contents, mode.clone())
            .await
            .map_err(|e| partial_failure(&format!("write {}", file.path), e, written))?;
        // Each file keeps the time the archive gives it (a time that is not RFC 3339 is
        // left out: the file has the time of the import).
        if let Some(modified) = file.modified.as_deref().and_then(parse_rfc3339) {
            keep_modified(store.as_ref(), &file.path, modified).await?;
        }
        written.files += 1;
        written.bytes += size;
        progress.inc();
    }
    progress.finish();
    if !args.quiet {
        eprintln!(
            "memory: imported {} file{} ({})",
            written.files,
            plural(written.files),
            human_size(written.bytes)
        );
    }
    Ok(())
}

/// `Create`, or `Overwrite` when asked.
pub(crate) fn write_mode(overwrite: bool) -> WriteMode {
    if overwrite {
        WriteMode::Overwrite
    } else {
        WriteMode::Create
    }
}

/// A store failure part-way through writing many files, saying how far it got.
pub(crate) fn partial_failure(doing: &str, err: Error, written: Written) -> Failure {
    let mut failure = Failure::storage(doing, err);
    failure.message = format!(
        "{} (after writing {} file{})",
        failure.message,
        written.files,
        plural(written.files)
    );
    failure
}

pub(crate) fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Checks, before anything is written, that every path can be written into `store`: nothing
/// is there (or, with `overwrite`, a file is), no directory is in the way and no ancestor is
/// a file. Exit 4 listing the first conflicts otherwise.
pub(crate) async fn check_targets(
    store: &dyn Storage,
    paths: &[MemoryPath],
    overwrite: bool,
    what: &str,
) -> Outcome {
    let mut known: HashMap<MemoryPath, Option<Entry>> = HashMap::new();
    let mut existing = Vec::new();
    let mut blocked = Vec::new();
    for path in paths {
        let entry = store
            .stat(path)
            .await
            .map_err(|e| Failure::storage(&format!("look up {path}"), e))?;
        match entry {
            Some(Entry::File(_)) if overwrite => {}
            Some(Entry::File(_)) => existing.push(path.to_string()),
            Some(Entry::Directory) => blocked.push(format!("{path} is a directory in the store")),
            None => {
                for ancestor in path.ancestors() {
                    let entry = match known.get(&ancestor) {
                        Some(entry) => entry.clone(),
                        None => {
                            let entry = store
                                .stat(&ancestor)
                                .await
                                .map_err(|e| Failure::storage(&format!("look up {ancestor}"), e))?;
                            known.insert(ancestor.clone(), entry.clone());
                            entry
                        }
                    };
                    if let Some(Entry::File(_)) = entry {
                        blocked.push(format!(
                            "{ancestor} is a file in the store (needed as a directory for {path})"
                        ));
                        break;
                    }
                }
            }
        }
    }
    if !blocked.is_empty() {
        return Err(Failure::new(
            Exit::Exists,
            format!(
                "cannot {what}: {}; nothing was written",
                first_few(&blocked)
            ),
        ));
    }
    if !existing.is_empty() {
        return Err(Failure::new(
            Exit::Exists,
            format!(
                "{what} would overwrite {} file{} already in the store ({}); nothing was written. \
                 Pass --overwrite to replace them",
                existing.len(),
                plural(existing.len() as u64),
                first_few(&existing)
            ),
        ));
    }
    Ok(())
}

fn first_few(items: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = items[..items.len().min(SHOWN)].join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(", and {} more", items.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_core::InMemoryStorage;

    fn path(raw: &str) -> MemoryPath {
        MemoryPath::parse(raw).unwrap()
    }

    async fn archive_of(store: &dyn Storage) -> Vec<u8> {
        let files = store.list(&MemoryPath::root()).await.unwrap();
        let mut out = Vec::new();
        let written = write_archive(store, &files, &mut out, true).await;
        assert!(written.is_ok());
        out
    }

    async fn sample() -> InMemoryStorage {
        let store = InMemoryStorage::new();
        for (p, bytes) in [
            ("/memories/notes.md", b"hello\n".to_vec()),
            ("/memories/.hidden", Vec::new()),
            (
                "/memories/img/logo.png",
                vec![0x89, b'P', b'N', b'G', 0xff, 0x00, 0xfe],
            ),
        ] {
            store
                .write(&path(p), bytes, WriteMode::Create)
                .await
                .unwrap();
        }
        store
    }

    #[tokio::test]
    async fn round_trip_keeps_every_byte() {
        let store = sample().await;
        let archive = archive_of(&store).await;
        let text = String::from_utf8(archive.clone()).unwrap();
        assert!(text.contains(r#""encoding":"base64""#), "{text}");
        assert!(text.contains(r#""data":"hello\n""#), "{text}");
        let files = parse_archive(&archive).unwrap();
        assert_eq!(files.len(), 3);
        for file in files {
            assert_eq!(
                store.read(&file.path).await.unwrap().contents,
                file.contents
            );
        }
    }

    #[tokio::test]
    async fn damaged_archives_are_refused() {
        let archive = String::from_utf8(archive_of(&sample().await).await).unwrap();
        let lines: Vec<&str> = archive.lines().collect();
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "empty"),
            (lines[1..].join("\n"), "no memory-archive header"),
            (lines[..lines.len() - 1].join("\n"), "truncated"),
            (
                archive.replace("hello", "jello"),
                "SHA-256 of /memories/notes.md",
            ),
            (
                archive.replace(r#""size":6"#, r#""size":7"#),
                "should be 7 bytes",
            ),
            (
                archive.replace(r#""version":1"#, r#""version":9"#),
                "newer memory",
            ),
            (
                archive.replace("/memories/notes.md", "/etc/passwd"),
                "must start with /memories",
            ),
            (
                format!("{archive}{}\n", lines[1]),
                "data after the end line",
            ),
            (
                [lines[0], lines[1], lines[1], lines[lines.len() - 1]].join("\n"),
                "appears twice",
            ),
            (
                archive.replace(r#""files":3"#, r#""files":4"#),
                "counts do not match",
            ),
            (archive.replacen("{", "[", 2), "not"),
        ];
        for (text, expected) in cases {
            let Err(failure) = parse_archive(text.as_bytes()) else {
                panic!("accepted ({expected}): {text}");
            };
            assert_eq!(failure.exit, Exit::BadArchive, "{expected}: {failure}");
            assert!(failure.message.contains(expected), "{expected}: {failure}");
        }
    }

    #[tokio::test]
    async fn targets_in_the_way_are_listed_before_writing() {
        let store = sample().await;
        let taken = [path("/memories/notes.md")];
        let failure = check_targets(&store, &taken, false, "import")
            .await
            .unwrap_err();
        assert_eq!(failure.exit, Exit::Exists);
        assert!(failure.message.contains("/memories/notes.md"), "{failure}");
        assert!(check_targets(&store, &taken, true, "import").await.is_ok());
        let under_file = [path("/memories/notes.md/x")];
        let failure = check_targets(&store, &under_file, true, "copy")
            .await
            .unwrap_err();
        assert!(
            failure.message.contains("/memories/notes.md is a file"),
            "{failure}"
        );
        let dir = [path("/memories/img")];
        let failure = check_targets(&store, &dir, true, "copy").await.unwrap_err();
        assert!(failure.message.contains("is a directory"), "{failure}");
        let free = [path("/memories/new/a.md"), path("/memories/new/b.md")];
        assert!(check_targets(&store, &free, false, "import").await.is_ok());
    }
}
