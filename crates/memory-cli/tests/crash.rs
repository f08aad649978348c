//! Kill a writing `memory exec` with SIGKILL at random moments: every file is whole afterwards
//! (some content the writer meant it to have, never torn or empty), no temp file shows up in a
//! listing, and the store keeps working.
//!
//! Replay a failure with the `MEMORY_TEST_SEED` printed on standard error.

#![cfg(feature = "fs")]

mod common;

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use common::{Rng, exec_command, exec_lines, line, listing};
use serde_json::json;

const ROUNDS: usize = 6;
const FILES: usize = 4;
const COMMANDS_PER_ROUND: usize = 80;

/// Content that names its file and generation and is long enough for a torn write to show.
fn content(rng: &mut Rng, file: usize, generation: usize) -> String {
    let lines = rng.range(300, 1200) as usize;
    let mut s = format!("file {file} generation {generation}\n");
    for i in 0..lines {
        s.push_str(&format!("{file}:{generation}:{i:05} the quick brown fox\n"));
    }
    s
}

/// The commands of one round and, for each path, every content the writer ever meant it to have.
fn plan(rng: &mut Rng, round: usize) -> (Vec<String>, BTreeMap<String, HashSet<String>>) {
    let mut current: Vec<Option<String>> = vec![None; FILES];
    let mut states: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    let mut commands = Vec::new();
    for generation in 0..COMMANDS_PER_ROUND {
        let file = rng.range(0, FILES as u64) as usize;
        let path = format!("/memories/r{round}/f{file}.md");
        let (command, next) = match current[file].take() {
            None => {
                let text = content(rng, file, generation);
                let cmd = json!({"command": "create", "path": path, "file_text": text});
                (cmd, Some(text))
            }
            Some(old) => match rng.range(0, 10) {
                0 => (json!({"command": "delete", "path": path}), None),
                1..=4 if old.len() < 90_000 => {
                    let text = format!("inserted {generation}");
                    let cmd = json!({"command": "insert", "path": path, "insert_line": 1, "insert_text": text});
                    let (head, tail) = old.split_once('\n').expect("a header line");
                    (cmd, Some(format!("{head}\n{text}\n{tail}")))
                }
                _ => {
                    let text = content(rng, file, generation);
                    let cmd = json!({"command": "str_replace", "path": path, "old_str": old, "new_str": text});
                    (cmd, Some(text))
                }
            },
        };
        if let Some(text) = &next {
            states.entry(path).or_default().insert(text.clone());
        }
        current[file] = next;
        commands.push(line(command));
    }
    (commands, states)
}

/// Every visible file below `base/memories/rROUND`, as (tool path, content).
fn files_on_disk(base: &Path, round: usize) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let dir = base.join("memories").join(format!("r{round}"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for entry in entries {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if name.starts_with('.') {
            continue; // a temp file left by the crash: hidden, and must never be listed
        }
        assert!(entry.file_type().unwrap().is_file(), "unexpected {name}");
        out.insert(
            format!("/memories/r{round}/{name}"),
            std::fs::read(entry.path()).unwrap(),
        );
    }
    out
}

#[test]
fn sigkill_mid_write_leaves_every_file_whole() {
    for (dir, url) in common::dir_stores() {
        eprintln!("store {url}");
        sigkill_mid_write_leaves_every_file_whole_on(dir, url);
    }
}

fn sigkill_mid_write_leaves_every_file_whole_on(dir: tempfile::TempDir, url: String) {
    let mut rng = Rng::from_env("crash");
    let mut settled: Vec<BTreeMap<String, Vec<u8>>> = Vec::new();
    for round in 0..ROUNDS {
        let (commands, states) = plan(&mut rng, round);
        let mut child = exec_command(&url).spawn().expect("start memory");
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            for c in commands {
                if stdin
                    .write_all(c.as_bytes())
                    .and_then(|()| stdin.write_all(b"\n"))
                    .is_err()
                {
                    return; // killed
                }
            }
            // Keep stdin open: the process must die by the kill, not by end of input.
            std::thread::sleep(Duration::from_secs(5));
        });
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            buf
        });
        let delay = rng.range(20, 400);
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        let answered = reader.join().unwrap();
        let answers: Vec<serde_json::Value> = answered
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect();
        for a in &answers {
            assert_eq!(a["is_error"], json!(false), "round {round}: {a}");
        }
        eprintln!(
            "round {round}: killed after {delay} ms, {} commands answered",
            answers.len()
        );
        drop(writer); // it ends on the broken pipe or after its sleep

        // Every visible file is one of the contents the writer meant it to have.
        let on_disk = files_on_disk(dir.path(), round);
        for (path, bytes) in &on_disk {
            let text = String::from_utf8(bytes.clone())
                .unwrap_or_else(|_| panic!("round {round}: {path} is not UTF-8: torn"));
            let known = states
                .get(path)
                .unwrap_or_else(|| panic!("round {round}: stray {path}"));
            assert!(
                known.contains(&text),
                "round {round}: {path} is torn or empty ({} bytes)",
                text.len()
            );
        }
        // Files of earlier rounds are untouched.
        for (earlier, files) in settled.iter().enumerate() {
            assert_eq!(
                &files_on_disk(dir.path(), earlier),
                files,
                "round {earlier} changed"
            );
        }

        // A new process lists exactly those files (no temp file), reads them whole, and can
        // still write to every one of them (no stale lock).
        let mut lines = vec![line(json!({"command": "view", "path": "/memories"}))];
        for path in on_disk.keys() {
            lines.push(line(json!({"command": "insert", "path": path, "insert_line": 0, "insert_text": "after the crash"})));
            lines.push(line(json!({"command": "str_replace", "path": path, "old_str": "after the crash\n", "new_str": ""})));
        }
        let answers = exec_lines(&url, &lines);
        let listed: HashSet<String> = listing(&answers[0])
            .into_iter()
            .map(|(_, p)| p)
            .filter(|p| !p.ends_with('/') && p.starts_with(&format!("/memories/r{round}/")))
            .collect();
        let expected: HashSet<String> = on_disk.keys().cloned().collect();
        assert_eq!(
            listed, expected,
            "round {round}: the listing differs from the files"
        );
        for a in &answers[1..] {
            assert_eq!(
                a["is_error"],
                json!(false),
                "round {round} after the crash: {a}"
            );
        }
        assert_eq!(
            files_on_disk(dir.path(), round),
            on_disk,
            "the edits after the crash undid themselves"
        );
        settled.push(on_disk);
    }
}
