// cargo run -p example-encrypted-folder -- [FOLDER [KEY_FILE]]
//! A memory folder encrypted at rest, with the key in a key file.
//!
//! The program reads a key file (or creates one with mode 0600, as `memory keygen FILE` does),
//! wraps the folder store `memory_fs::FsStorage` in `memory_encrypted::Encrypted` and answers
//! the memory tool calls Claude would send through `memory_core::MemoryTool`. Then it looks at
//! what the folder actually holds on disk: the same file names, but envelopes instead of text.
//! Last, it opens the folder with the wrong key: the application gets a precise
//! `EncryptionError`, the model only the contract's generic error.
//!
//! Without arguments the folder and the key file are made in the temporary folder and removed
//! at the end; give a folder (and a key file, by default `FOLDER.key`) to keep them between
//! runs (a second run then shows the errors Claude would get, e.g. for a `create` of a file
//! that already exists).

use std::error::Error as _;
use std::path::PathBuf;

use memory_core::{MemoryHandler, MemoryPath, MemoryTool, Storage};
use memory_encrypted::{Encrypted, EncryptionError, Key, KeyError, Keyring};
use memory_fs::FsStorage;
use serde_json::{Value, json};

type Store = Encrypted<FsStorage>;

/// Reads the key file, or creates it if it does not exist yet.
fn load_or_create_key(path: &PathBuf) -> Result<Key, KeyError> {
    match Key::from_hex_file(path) {
        Err(KeyError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let key = memory_encrypted::generate_key_file(path)?;
            println!("created key file {} (key id {})", path.display(), key.id());
            Ok(key)
        }
        other => other,
    }
}

/// Opens the encrypted folder. Reading the key file and opening the folder are blocking I/O,
/// so they run off the async runtime.
async fn open(folder: PathBuf, key_file: PathBuf) -> Result<Store, Box<dyn std::error::Error>> {
    let (inner, key) = tokio::task::spawn_blocking(move || {
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((
            FsStorage::new(&folder)?,
            load_or_create_key(&key_file)?,
        ))
    })
    .await?
    .map_err(|e| e as Box<dyn std::error::Error>)?;
    println!("using key {}", key.id());
    Ok(Encrypted::new(inner, Keyring::new(key)))
}

/// Runs one tool call and prints it with its result, as the application would log it.
async fn call(tool: &MemoryTool<Store>, input: Value) {
    let out = tool.execute(&input).await;
    println!("> {input}");
    let flag = if out.is_error { " (is_error)" } else { "" };
    println!("{}{flag}\n", out.text().unwrap_or("[image]"));
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let folder = args.next().map(PathBuf::from);
    let keep = folder.is_some();
    let folder = folder.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("encrypted-folder-{}", std::process::id()))
    });
    let key_file = args.next().map(PathBuf::from).unwrap_or_else(|| {
        let mut name = folder.clone().into_os_string();
        name.push(".key");
        PathBuf::from(name)
    });

    let store = open(folder.clone(), key_file.clone()).await?;
    println!("store: {store}\n");
    let tool = MemoryTool::new(store);

    call(&tool, json!({"command": "view", "path": "/memories"})).await;
    call(
        &tool,
        json!({"command": "create", "path": "/memories/user/health.md",
               "file_text": "# Health\n- allergic to penicillin\n- runs on Tuesdays\n"}),
    )
    .await;
    call(
        &tool,
        json!({"command": "str_replace", "path": "/memories/user/health.md",
               "old_str": "runs on Tuesdays", "new_str": "runs on Tuesdays and Fridays"}),
    )
    .await;
    call(
        &tool,
        json!({"command": "rename", "old_path": "/memories/user", "new_path": "/memories/profile"}),
    )
    .await;
    call(&tool, json!({"command": "view", "path": "/memories"})).await;
    call(
        &tool,
        json!({"command": "view", "path": "/memories/profile/health.md"}),
    )
    .await;

    // What someone reading the folder sees: the file name, and an envelope.
    let on_disk = folder.join("memories/profile/health.md");
    let stored = tokio::task::spawn_blocking({
        let on_disk = on_disk.clone();
        move || std::fs::read(on_disk)
    })
    .await??;
    let head: Vec<String> = stored.iter().take(21).map(|b| format!("{b:02x}")).collect();
    println!(
        "on disk: {} holds {} bytes (plaintext + {} bytes of envelope), starting {}",
        on_disk.display(),
        stored.len(),
        memory_encrypted::OVERHEAD,
        head.join(" ")
    );
    let visible = stored.windows(10).any(|w| w == b"penicillin");
    println!("plaintext visible on disk: {visible}\n");

    // The same folder opened with another key.
    let inner = tool.into_storage().into_inner();
    let wrong = MemoryTool::new(Encrypted::new(inner, Keyring::new(Key::generate()?)));
    call(
        &wrong,
        json!({"command": "view", "path": "/memories/profile/health.md"}),
    )
    .await;
    let path = MemoryPath::parse("/memories/profile/health.md")?;
    if let Err(err) = wrong.storage().read(&path).await
        && let Some(cause) = err
            .source()
            .and_then(|s| s.downcast_ref::<EncryptionError>())
    {
        println!("the application sees: {cause}");
    }

    if !keep {
        tokio::task::spawn_blocking(move || {
            std::fs::remove_dir_all(&folder)?;
            std::fs::remove_file(&key_file)
        })
        .await??;
    }
    Ok(())
}
