//! The memory tool's commands over the wrapper: the model sees exactly what it sees without
//! encryption, and a decrypt failure only as the contract's generic error.

use memory_core::{InMemoryStorage, MemoryHandler, MemoryPath, MemoryTool, Storage, WriteMode};
use memory_encrypted::{Encrypted, Key, Keyring};
use serde_json::{Value, json};

fn commands() -> Vec<Value> {
    vec![
        json!({"command": "view", "path": "/memories"}),
        json!({"command": "create", "path": "/memories/user/prefs.md", "file_text": "# Preferences\n- tea, no sugar\n- dark mode\n"}),
        json!({"command": "create", "path": "/memories/user/prefs.md", "file_text": "again"}),
        json!({"command": "create", "path": "/memories/projects/atlas/notes.md", "file_text": "deadline: Friday\n".repeat(70)}),
        json!({"command": "create", "path": "/memories/.hidden", "file_text": "x"}),
        json!({"command": "view", "path": "/memories"}),
        json!({"command": "view", "path": "/memories/user/prefs.md", "view_range": [2, -1]}),
        json!({"command": "str_replace", "path": "/memories/user/prefs.md", "old_str": "dark mode", "new_str": "light mode"}),
        json!({"command": "str_replace", "path": "/memories/user/prefs.md", "old_str": "absent", "new_str": "x"}),
        json!({"command": "insert", "path": "/memories/user/prefs.md", "insert_line": 1, "insert_text": "- speaks French"}),
        json!({"command": "view", "path": "/memories/user/prefs.md"}),
        json!({"command": "rename", "old_path": "/memories/projects", "new_path": "/memories/archive/projects"}),
        json!({"command": "rename", "old_path": "/memories/user/prefs.md", "new_path": "/memories/archive"}),
        json!({"command": "view", "path": "/memories"}),
        json!({"command": "view", "path": "/memories/archive/projects/atlas/notes.md", "view_range": [1, 2]}),
        json!({"command": "delete", "path": "/memories/archive"}),
        json!({"command": "delete", "path": "/memories/archive"}),
        json!({"command": "view", "path": "/memories"}),
    ]
}

/// Every command gives the same answer (text and `is_error`) with and without encryption:
/// listings show plaintext sizes, renames keep content, errors are the contract's.
#[tokio::test]
async fn commands_answer_exactly_as_without_encryption() {
    let plain = MemoryTool::new(InMemoryStorage::new());
    let encrypted = MemoryTool::new(Encrypted::new(
        InMemoryStorage::new(),
        Keyring::new(Key::generate().unwrap()),
    ));
    for input in commands() {
        let want = plain.execute(&input).await;
        let got = encrypted.execute(&input).await;
        assert_eq!(got.is_error, want.is_error, "{input}");
        assert_eq!(got.text(), want.text(), "{input}");
    }
    // The listing sizes really came from the envelope arithmetic: the inner files are larger.
    let inner = encrypted
        .storage()
        .inner()
        .list(&MemoryPath::root())
        .await
        .unwrap();
    let outer = encrypted.storage().list(&MemoryPath::root()).await.unwrap();
    // The inner store also holds the key check record, which the wrapper never shows.
    let (record, inner): (Vec<_>, Vec<_>) = inner
        .into_iter()
        .partition(|m| m.path.as_str() == memory_encrypted::KEY_CHECK_PATH);
    assert_eq!(record.len(), 1);
    assert_eq!(inner.len(), 2);
    assert_eq!(outer.len(), 2);
    for (i, o) in inner.iter().zip(&outer) {
        assert_eq!(i.size, o.size + memory_encrypted::OVERHEAD);
    }
}

/// A file that fails to decrypt reaches the model as the generic storage error: no decrypted
/// bytes, no key id, no hint of what failed.
#[tokio::test]
async fn decrypt_failures_reach_the_model_as_the_generic_error() {
    let key = Key::generate().unwrap();
    let tool = MemoryTool::new(Encrypted::new(InMemoryStorage::new(), Keyring::new(key)));
    let path = MemoryPath::parse("/memories/secret.md").unwrap();
    let out = tool
        .execute(
            &json!({"command": "create", "path": "/memories/secret.md", "file_text": "PIN 4921\n"}),
        )
        .await;
    assert!(!out.is_error);

    let inner = tool.storage().inner();
    let mut bytes = inner.read(&path).await.unwrap().contents;
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    inner
        .write(&path, bytes.clone(), WriteMode::Overwrite)
        .await
        .unwrap();

    let generic = |command: &str| {
        format!(
            "Error: The memory store could not complete {command} on /memories/secret.md. The store may be unavailable; the application's log has the details."
        )
    };
    for (command, input) in [
        (
            "view",
            json!({"command": "view", "path": "/memories/secret.md"}),
        ),
        (
            "str_replace",
            json!({"command": "str_replace", "path": "/memories/secret.md", "old_str": "PIN", "new_str": "pin"}),
        ),
        (
            "insert",
            json!({"command": "insert", "path": "/memories/secret.md", "insert_line": 0, "insert_text": "x"}),
        ),
    ] {
        let out = tool.execute(&input).await;
        assert!(out.is_error, "{input}");
        let text = out.text().unwrap();
        assert_eq!(text, generic(command), "{input}");
        for leak in ["4921", "tamper", "authentic", "key", "encrypt"] {
            assert!(
                !text.to_lowercase().contains(leak),
                "{text:?} mentions {leak:?}"
            );
        }
    }
    // The failed edits wrote nothing over the damaged file.
    assert_eq!(inner.read(&path).await.unwrap().contents, bytes);
}
