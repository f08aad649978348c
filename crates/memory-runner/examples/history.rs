//! Each file's earlier versions from Rust: open a store, change a file a few times, list its
//! versions, read an old one and write it back.
//!
//! ```text
//! cargo run -p memory-layer-runner --example history            # a folder in a temp dir
//! cargo run -p memory-layer-runner --example history -- mem:    # any store URL
//! ```
//!
//! Every store keeps history by default (store options `history=on|off`, `history_days=N`,
//! `history_max=N`); the API is `memory_core::history` and four `Storage` methods.

use memory_runner::memory_core::history::{self, Change};
use memory_runner::memory_core::{MemoryPath, Storage, WriteMode};
use memory_runner::{OpenOptions, open_with};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The store: the URL given, else a folder that is removed at the end.
    let temp = tempfile::tempdir()?;
    let url = match std::env::args().nth(1) {
        Some(url) => url,
        None => temp.path().join("memory").display().to_string(),
    };
    // Every change is recorded with this session (`history_session`).
    let options = OpenOptions::new().with_session_id("example-session");
    let store = open_with(&url, &options).await?;

    // A create, an edit that loses the notes, a delete.
    let path = MemoryPath::parse("/memories/notes.md")?;
    store
        .write(
            &path,
            b"- likes metric units\n- lives in Lyon\n".to_vec(),
            WriteMode::Create,
        )
        .await?;
    store
        .write(&path, b"(placeholder)\n".to_vec(), WriteMode::Overwrite)
        .await?;
    store.delete(&path).await?;

    // Its versions, newest first: deleted, modified, created.
    let versions = store.history(&path).await?;
    for version in &versions {
        println!(
            "version {} {:<8} {:>3} bytes  session {}",
            version.number,
            version.change.as_str(),
            version.size,
            version.session.as_deref().unwrap_or("-"),
        );
    }
    let first = versions
        .iter()
        .find(|v| v.change == Change::Created)
        .ok_or("no created version")?;

    // What the file held then.
    let original = store.read_revision(&path, first.number).await?;
    print!(
        "version {}:\n{}",
        first.number,
        String::from_utf8_lossy(&original)
    );

    // What changed between the first version and the one after it.
    let change = memory_runner::history::diff(
        store.as_ref(),
        &path,
        Some(first.number),
        Some(first.number + 1),
    )
    .await?;
    print!("{}", change.unified().unwrap_or_default());

    // Back as the current file (it had been deleted); the restore is a version of its own.
    history::restore(store.as_ref(), &path, first.number).await?;
    assert_eq!(store.read(&path).await?.contents, original);
    let newest = &store.history(&path).await?[0];
    println!("restored as version {} ({})", newest.number, newest.change);
    Ok(())
}
