//! What one file's readers and holders can see while the store changes other files: never
//! another memory's bytes, never a torn file, never a later memory through an old descriptor,
//! never removed content left on disk, and always what a mount put over a folder.
//!
//! Each test runs on the Linux fast paths and on the portable ones (`portable=true`).
//! `MEMORY_FS_SOAK_SECS` sets how long the concurrent-reader test replaces files (default 3).

use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use memory_core::history::Redaction;
use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode};
use memory_fs::{FsOptions, FsStorage, HistoryOptions, SyncMode};
use serde_json::json;

fn p(raw: &str) -> MemoryPath {
    MemoryPath::parse(raw).unwrap()
}

fn open(base: &Path, portable: bool) -> FsStorage {
    FsStorage::with_options(base, FsOptions::default().portable(portable)).unwrap()
}

/// The content of version `n` of the file named by `tag` (`x` or `y`): a header that says
/// which file and how long the whole is, then a body of the tag's letter, so that a read of
/// another file's bytes or of a torn file is told apart from a whole version.
fn version(tag: char, n: usize) -> Vec<u8> {
    let len = 64 + (n * 37) % 4000;
    let mut out = format!("{tag} {len:05}\n").into_bytes();
    out.resize(len, tag as u8);
    out
}

/// What is wrong with `bytes` read as a version of `tag`'s file, if anything.
fn wrong(tag: char, bytes: &[u8]) -> Option<String> {
    let header = format!("{tag} ");
    if !bytes.starts_with(header.as_bytes()) {
        return Some(format!(
            "another file's bytes: {:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(12)])
        ));
    }
    let len: usize = std::str::from_utf8(&bytes[2..7]).ok()?.parse().ok()?;
    if bytes.len() != len || !bytes[8..].iter().all(|&b| b == tag as u8) {
        return Some(format!("torn: {} bytes of {len}", bytes.len()));
    }
    None
}

/// Not a test of its own: the body of each short-lived reader process of
/// [`concurrent_readers_never_see_another_files_bytes_nor_a_torn_file`], which runs this test
/// binary again with `MEMORY_FS_READER_BASE` set; without it, this returns at once. Opens a
/// fresh store, reads `x.md` a few times, and prints what was wrong.
#[tokio::test]
async fn reader_child() {
    let Ok(base) = std::env::var("MEMORY_FS_READER_BASE") else {
        return;
    };
    let portable = std::env::var("MEMORY_FS_READER_PORTABLE").as_deref() == Ok("1");
    let storage = open(Path::new(&base), portable);
    let mut bad = 0;
    for _ in 0..50 {
        let file = storage.read(&p("/memories/x.md")).await.unwrap();
        if let Some(what) = wrong('x', &file.contents) {
            eprintln!("{what}");
            bad += 1;
        }
    }
    println!("READER-BAD {bad}");
}

#[test]
fn concurrent_readers_never_see_another_files_bytes_nor_a_torn_file() {
    let secs: u64 = std::env::var("MEMORY_FS_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for portable in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        let writer = open(&base, portable);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            writer
                .write(&p("/memories/x.md"), version('x', 0), WriteMode::Create)
                .await
                .unwrap();
            writer
                .write(&p("/memories/y.md"), version('y', 0), WriteMode::Create)
                .await
                .unwrap();
        });
        let stop = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicUsize::new(0));
        // Long-lived readers: one sharing the writer's store, two with stores of their own.
        let readers: Vec<_> = (0..3)
            .map(|i| {
                let storage = if i == 0 {
                    writer.clone()
                } else {
                    open(&base, portable)
                };
                let (stop, reads) = (stop.clone(), reads.clone());
                std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .unwrap();
                    let mut bad = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let file = rt.block_on(storage.read(&p("/memories/x.md"))).unwrap();
                        reads.fetch_add(1, Ordering::Relaxed);
                        if let Some(what) = wrong('x', &file.contents) {
                            bad.push(what);
                        }
                    }
                    bad
                })
            })
            .collect();
        // The writer replaces x.md and y.md in turn, with every kind of write.
        let writing = {
            let (stop, writer) = (stop.clone(), writer.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                let mut n = 1;
                while !stop.load(Ordering::Relaxed) {
                    for tag in ['x', 'y'] {
                        let path = p(&format!("/memories/{tag}.md"));
                        let mode = if n % 2 == 0 {
                            WriteMode::Overwrite
                        } else {
                            let current = rt.block_on(writer.read(&path)).unwrap();
                            WriteMode::Update(current.version)
                        };
                        rt.block_on(writer.write(&path, version(tag, n), mode))
                            .unwrap();
                    }
                    n += 1;
                }
                n
            })
        };
        // Short-lived reader processes, each a fresh store.
        let exe = std::env::current_exe().unwrap();
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut processes = 0;
        let mut bad_in_processes = 0;
        while Instant::now() < deadline {
            let out = Command::new(&exe)
                .args(["--exact", "reader_child", "--nocapture", "--test-threads=1"])
                .env("MEMORY_FS_READER_BASE", &base)
                .env(
                    "MEMORY_FS_READER_PORTABLE",
                    if portable { "1" } else { "0" },
                )
                .output()
                .unwrap();
            assert!(out.status.success(), "a reader process failed");
            let text = String::from_utf8_lossy(&out.stdout);
            let bad: usize = text
                .split("READER-BAD ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
                .unwrap_or_else(|| panic!("no outcome in {text:?}"));
            bad_in_processes += bad;
            processes += 1;
        }
        stop.store(true, Ordering::Relaxed);
        let rounds = writing.join().unwrap();
        let bad: Vec<String> = readers
            .into_iter()
            .flat_map(|r| r.join().unwrap())
            .collect();
        let reads = reads.load(Ordering::Relaxed);
        eprintln!(
            "portable={portable}: {reads} reads in threads, {processes} reader processes, {rounds} rounds of writes"
        );
        assert!(
            reads > 100 && rounds > 10 && processes > 0,
            "too little ran to tell"
        );
        assert!(bad.is_empty(), "portable={portable}: {bad:?}");
        assert_eq!(bad_in_processes, 0, "portable={portable}");
    }
}

/// Inode number of a path or an open file (Unix), to tell files apart.
#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

/// A program holding a memory open (a logger with `log.md`) reads only that file's old bytes
/// after the store replaces it, and its writes land in no later memory: every new file is a
/// fresh one, never the replaced file reused.
#[tokio::test]
async fn a_descriptor_held_elsewhere_never_sees_a_later_memory() {
    for portable in [false, true] {
        for sync in [SyncMode::Full, SyncMode::Data, SyncMode::None] {
            let dir = tempfile::tempdir().unwrap();
            let options = FsOptions::default().portable(portable).sync(sync);
            let storage = Arc::new(FsStorage::with_options(dir.path(), options).unwrap());
            let tool = MemoryTool::new(storage.clone());
            let log = dir.path().join("memories/log.md");
            storage
                .write(
                    &p("/memories/log.md"),
                    b"line one\n".to_vec(),
                    WriteMode::Create,
                )
                .await
                .unwrap();
            let mut held = std::fs::OpenOptions::new()
                .read(true)
                .append(true)
                .open(&log)
                .unwrap();
            let out = tool
                .execute(
                    &json!({"command": "str_replace", "path": "/memories/log.md",
                    "old_str": "one", "new_str": "two"}),
                )
                .await;
            assert!(!out.is_error, "{out:?}");
            let mut secrets = Vec::new();
            for i in 0..8 {
                let path = format!("/memories/secret-{i}.md");
                let out = tool
                    .execute(&json!({"command": "create", "path": path,
                        "file_text": format!("PASSWORD={i}\n")}))
                    .await;
                assert!(!out.is_error, "{out:?}");
                secrets.push(dir.path().join(format!("memories/secret-{i}.md")));
            }
            let mut seen = String::new();
            held.rewind().unwrap();
            held.read_to_string(&mut seen).unwrap();
            assert_eq!(seen, "line one\n", "portable={portable} {sync:?}");
            held.write_all(b"appended by the logger\n").unwrap();
            #[cfg(unix)]
            for secret in &secrets {
                assert_ne!(
                    inode(&held.metadata().unwrap()),
                    inode(&std::fs::metadata(secret).unwrap()),
                    "a new memory is the replaced file"
                );
            }
            for (i, secret) in secrets.iter().enumerate() {
                assert_eq!(
                    std::fs::read_to_string(secret).unwrap(),
                    format!("PASSWORD={i}\n")
                );
            }
            let current = storage.read(&p("/memories/log.md")).await.unwrap();
            assert_eq!(current.contents, b"line two\n");
        }
    }
}

/// Every file below `dir`, with its bytes.
fn every_file(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            out.extend(every_file(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// Once a command that took a secret out of a memory (or deleted it) returns, no file in the
/// store's folder holds it: not the temporary files, not the lock or count files. With history
/// on (the default) the replaced content is kept on purpose, as a past version: once that is
/// redacted, again no file holds it.
#[tokio::test]
async fn a_removed_secret_is_on_no_file_after_the_command() {
    const SECRET: &str = "PASSWORD=correct-horse-battery";
    for (portable, history) in [(false, false), (true, false), (false, true), (true, true)] {
        for sync in [SyncMode::Full, SyncMode::Data, SyncMode::None] {
            let dir = tempfile::tempdir().unwrap();
            let options = FsOptions::default()
                .portable(portable)
                .sync(sync)
                .history(if history {
                    HistoryOptions::default()
                } else {
                    HistoryOptions::off()
                });
            let storage = Arc::new(FsStorage::with_options(dir.path(), options).unwrap());
            let tool = MemoryTool::new(storage.clone());
            let holds_secret = || {
                every_file(dir.path())
                    .into_iter()
                    .filter(|(_, bytes)| {
                        bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes())
                    })
                    .map(|(path, _)| path)
                    .collect::<Vec<_>>()
            };
            let batches = [
                (
                    "str_replace",
                    vec![
                        json!({"command": "create", "path": "/memories/a.md",
                            "file_text": format!("keep\n{SECRET}\n")}),
                        json!({"command": "str_replace", "path": "/memories/a.md",
                            "old_str": SECRET, "new_str": "(removed)"}),
                    ],
                ),
                (
                    "delete",
                    vec![
                        json!({"command": "create", "path": "/memories/b/c.md", "file_text": SECRET}),
                        json!({"command": "create", "path": "/memories/b/d.md", "file_text": "d"}),
                        json!({"command": "delete", "path": "/memories/b/c.md"}),
                    ],
                ),
                (
                    "rename, str_replace and delete",
                    vec![
                        json!({"command": "create", "path": "/memories/e.md", "file_text": SECRET}),
                        json!({"command": "create", "path": "/memories/f.md", "file_text": "f"}),
                        json!({"command": "rename", "old_path": "/memories/f.md",
                            "new_path": "/memories/g.md"}),
                        json!({"command": "str_replace", "path": "/memories/e.md",
                            "old_str": SECRET, "new_str": "gone"}),
                        json!({"command": "delete", "path": "/memories/e.md"}),
                    ],
                ),
            ];
            for (what, commands) in batches {
                for command in &commands {
                    let out = tool.execute(command).await;
                    assert!(!out.is_error, "{command}: {out:?}");
                }
                if history {
                    assert!(!holds_secret().is_empty(), "history keeps it, after {what}");
                    for path in ["/memories/a.md", "/memories/b/c.md", "/memories/e.md"] {
                        storage
                            .redact_revisions(&p(path), Redaction::AllPast)
                            .await
                            .unwrap();
                    }
                }
                assert!(
                    holds_secret().is_empty(),
                    "portable={portable} history={history} {sync:?}, after {what}: {:?}",
                    holds_secret()
                );
            }
        }
    }
}

/// Runs `mount`/`umount` with `args`; `Err` with its words when it cannot.
fn mount(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A long-lived store that read a file many times sees what a mount put over its folder (and
/// what is there again once it is unmounted) at the next read: nothing is cached.
#[test]
fn a_mount_over_a_folder_is_seen_by_the_next_read() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for portable in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let storage = open(dir.path(), portable);
        let path = p("/memories/sub/a.md");
        rt.block_on(storage.write(&path, b"on disk".to_vec(), WriteMode::Create))
            .unwrap();
        for _ in 0..32 {
            assert_eq!(
                rt.block_on(storage.read(&path)).unwrap().contents,
                b"on disk"
            );
        }
        let sub = dir.path().join("memories/sub");
        let sub_text = sub.to_str().unwrap();
        if let Err(why) = mount(&["mount", "-t", "tmpfs", "tmpfs", sub_text]) {
            // Only root may mount: elsewhere say so, loudly; as root it must work.
            let root = Command::new("id")
                .arg("-u")
                .output()
                .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
            assert!(!root, "running as root, yet cannot mount a tmpfs: {why}");
            eprintln!("NOT CHECKED: cannot mount here (not root): {why}");
            return;
        }
        std::fs::write(sub.join("a.md"), b"on the mount").unwrap();
        let seen = rt.block_on(storage.read(&path));
        let listed = rt.block_on(storage.list(&p("/memories/sub")));
        mount(&["umount", "-l", sub_text]).unwrap();
        assert_eq!(
            seen.unwrap().contents,
            b"on the mount",
            "portable={portable}"
        );
        assert_eq!(listed.unwrap().len(), 1);
        assert_eq!(
            rt.block_on(storage.read(&path)).unwrap().contents,
            b"on disk",
            "after umount -l"
        );
    }
}
