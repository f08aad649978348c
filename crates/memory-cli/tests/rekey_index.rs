//! `memory rekey --encrypt-plaintext` leaves no word of a note in any search index (issue
//! 28): a folder store's side index, a SQLite store's FTS5 table (scrubbed from the file, its
//! `-wal` and `-shm`), an S3 store's cache file; and a search of the encrypted store
//! afterwards, with the key, finds the note without writing an index again.
#![cfg(all(
    feature = "encrypted",
    feature = "fs",
    feature = "sqlite",
    feature = "s3"
))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::s3::s3_bucket;
use common::{feed_and_wait, memory_command};

const WORD: &[u8] = b"zanzibarquokka";

/// How each `memory` of one test runs: its cache folder, and the S3 variables if any.
struct Env {
    cache: PathBuf,
    s3: Option<String>,
}

impl Env {
    fn run(&self, args: &[&str], input: &[u8]) -> Output {
        let mut cmd = memory_command(args);
        cmd.env("XDG_CACHE_HOME", &self.cache);
        if let Some(endpoint) = &self.s3 {
            common::s3::point_at(&mut cmd, endpoint);
        }
        feed_and_wait(cmd.spawn().expect("start memory"), input)
    }

    fn ok(&self, args: &[&str], input: &[u8]) -> String {
        let out = self.run(args, input);
        assert!(
            out.status.success(),
            "memory {args:?}: status {:?}, stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Every file below each of `roots` (or the file itself) holding `WORD`, links not followed.
fn files_with_word(roots: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo: Vec<PathBuf> = roots.to_vec();
    while let Some(path) = todo.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).expect("read_dir") {
                todo.push(entry.expect("entry").path());
            }
        } else if meta.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            if bytes.windows(WORD.len()).any(|w| w == WORD) {
                found.push(path.display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// Writes two notes holding `WORD`, searches once (so the index exists and holds it), runs
/// `rekey --encrypt-plaintext`, then checks that none of `roots` holds the word, before and
/// after a search with the key that finds both notes. `search_store` is the store's URL for
/// the searches: `memory search` keeps a folder's or S3 store's index in memory unless the
/// URL asks for one (`search_index=auto`, the index `memory mcp` and `memory run --search`
/// keep).
fn rekey_leaves_no_word(env: &Env, store: &str, search_store: &str, key: &str, roots: &[PathBuf]) {
    for (path, text) in [
        ("/memories/a.md", "the zanzibarquokka hides here\n"),
        ("/memories/d/b.md", "another zanzibarquokka note\n"),
    ] {
        env.ok(&["put", path, "-", "--store", store], text.as_bytes());
    }
    let hits = env.ok(&["search", "zanzibarquokka", "--store", search_store], b"");
    assert!(hits.contains("/memories/a.md"), "{hits}");
    // What this fixes: the notes and, beside them, their index hold the word.
    let before = files_with_word(roots);
    assert!(
        before.len() > 2 || before.iter().any(|f| !f.contains("/memories/")),
        "no index holds the word before rekey: {before:?}"
    );

    env.ok(
        &[
            "rekey",
            "--store",
            store,
            "--encryption-key-file",
            key,
            "--encrypt-plaintext",
            "--quiet",
        ],
        b"",
    );
    assert_eq!(files_with_word(roots), Vec::<String>::new(), "after rekey");

    let hits = env.ok(
        &[
            "search",
            "zanzibarquokka",
            "--store",
            search_store,
            "--encryption-key-file",
            key,
        ],
        b"",
    );
    assert!(hits.contains("/memories/a.md"), "{hits}");
    assert!(hits.contains("/memories/d/b.md"), "{hits}");
    assert_eq!(
        files_with_word(roots),
        Vec::<String>::new(),
        "after a search of the encrypted store"
    );
}

fn keygen(env: &Env, dir: &Path) -> String {
    let file = dir.join("k.key").to_str().expect("utf-8").to_owned();
    env.ok(&["keygen", &file], b"");
    file
}

#[test]
fn a_folder_store_keeps_no_side_index_after_rekey() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = Env {
        cache: dir.path().join("cache"),
        s3: None,
    };
    let key = keygen(&env, dir.path());
    let store = dir.path().join("store");
    let url = store.to_str().expect("utf-8");
    rekey_leaves_no_word(
        &env,
        url,
        &format!("{url}?search_index=auto"),
        &key,
        &[store.clone(), env.cache.clone()],
    );
    let index = store.join(".memory-search");
    for name in ["index.sqlite3", "index.sqlite3-wal", "index.sqlite3-shm"] {
        assert!(!index.join(name).exists(), "{name} is left");
    }
}

#[test]
fn a_sqlite_store_keeps_no_word_in_its_file_after_rekey() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = Env {
        cache: dir.path().join("cache"),
        s3: None,
    };
    let key = keygen(&env, dir.path());
    let db = dir.path().join("store.sqlite3");
    let store = format!("sqlite:{}", db.display());
    let companions: Vec<PathBuf> = ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| PathBuf::from(format!("{}{suffix}", db.display())))
        .collect();
    let mut roots = companions.clone();
    roots.push(env.cache.clone());
    rekey_leaves_no_word(&env, &store, &store, &key, &roots);
}

#[test]
fn an_s3_store_keeps_no_cache_index_after_rekey() {
    let (endpoint, bucket) = s3_bucket("an_s3_store_keeps_no_cache_index_after_rekey");
    let dir = tempfile::tempdir().expect("tempdir");
    let env = Env {
        cache: dir.path().join("cache"),
        s3: Some(endpoint),
    };
    let key = keygen(&env, dir.path());
    let store = format!("s3://{bucket}/team");
    rekey_leaves_no_word(
        &env,
        &store,
        &format!("{store}?search_index=auto"),
        &key,
        std::slice::from_ref(&env.cache),
    );
}
