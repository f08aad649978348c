// cargo run -p example-encrypted-folder -- [KEY_FILE]
//! A memory store encrypted at rest, with the key in a key file.
//!
//! The program reads a key file (or creates one with mode 0600, as `memory keygen FILE` does),
//! wraps a store in `memory_encrypted::Encrypted` and answers the memory tool calls Claude would
//! send through `memory_core::MemoryTool`. Then it looks underneath, at what the inner store
//! actually holds: envelopes, no plaintext. Last, it shows what happens with the wrong key: the
//! application gets a precise `EncryptionError`, the model only the contract's generic error.
//!
//! Without an argument the key file is created in the temporary folder and removed at the end;
//! give a path to keep (or reuse) a key.

use std::error::Error as _;
use std::path::PathBuf;

use memory_core::{InMemoryStorage, MemoryHandler, MemoryPath, MemoryTool, Storage};
use memory_encrypted::{Encrypted, EncryptionError, Key, KeyError, Keyring};
use serde_json::{Value, json};

type Store = Encrypted<InMemoryStorage>;

/// Reads the key file, or creates it if it does not exist yet. Key files are small and read
/// once, but it is still blocking I/O, so it runs off the async runtime.
async fn load_or_create_key(path: PathBuf) -> Result<Key, Box<dyn std::error::Error>> {
    let key = tokio::task::spawn_blocking(move || match Key::from_hex_file(&path) {
        Err(KeyError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let key = memory_encrypted::generate_key_file(&path)?;
            println!("created key file {} (key id {})", path.display(), key.id());
            Ok(key)
        }
        other => other,
    })
    .await??;
    Ok(key)
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
    let arg = std::env::args_os().nth(1);
    let keep = arg.is_some();
    let key_file = match arg {
        Some(path) => PathBuf::from(path),
        None => std::env::temp_dir().join(format!("encrypted-folder-{}.key", std::process::id())),
    };
    let key = load_or_create_key(key_file.clone()).await?;
    println!("using key {}\n", key.id());

    let store = Encrypted::new(InMemoryStorage::new(), Keyring::new(key));
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

    // What someone reading the inner store sees: the path, and an envelope.
    let path = MemoryPath::parse("/memories/profile/health.md")?;
    let stored = tool.storage().inner().read(&path).await?.contents;
    let head: Vec<String> = stored.iter().take(21).map(|b| format!("{b:02x}")).collect();
    println!(
        "inner store: {path} holds {} bytes (plaintext + {} bytes of envelope), starting {}",
        stored.len(),
        memory_encrypted::OVERHEAD,
        head.join(" ")
    );
    let visible = stored.windows(10).any(|w| w == b"penicillin");
    println!("plaintext visible in the inner store: {visible}\n");

    // The same store opened with another key.
    let inner = tool.into_storage().into_inner();
    let wrong = MemoryTool::new(Encrypted::new(inner, Keyring::new(Key::generate()?)));
    call(
        &wrong,
        json!({"command": "view", "path": "/memories/profile/health.md"}),
    )
    .await;
    if let Err(err) = wrong.storage().read(&path).await
        && let Some(cause) = err
            .source()
            .and_then(|s| s.downcast_ref::<EncryptionError>())
    {
        println!("the application sees: {cause}");
    }

    if !keep {
        std::fs::remove_file(&key_file)?;
    }
    Ok(())
}
