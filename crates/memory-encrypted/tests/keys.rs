//! Keys, key files and the keyring.

use memory_encrypted::{Key, KeyError, Keyring, generate_key_file};

const HEX: &str = "00112233445566778899aabbccddeeff0f1e2d3c4b5a69788796a5b4c3d2e1f0";

#[test]
fn debug_and_errors_never_show_key_material() {
    let key = Key::from_hex(HEX).unwrap();
    let ring = Keyring::new(key.clone()).with_decryption_key(Key::generate().unwrap());
    for shown in [
        format!("{key:?}"),
        format!("{ring:?}"),
        format!("{ring:#?}"),
    ] {
        assert!(!shown.contains(&HEX[..16]), "{shown}");
        assert!(!shown.to_lowercase().contains("8899aabb"), "{shown}");
    }
    assert!(format!("{key:?}").contains(&key.id().to_string()));
    // A malformed key is not echoed.
    let bad = format!("{}zz", &HEX[..62]);
    let err = Key::from_hex(&bad).unwrap_err();
    assert!(matches!(err, KeyError::Malformed { .. }));
    assert!(!err.to_string().contains(&HEX[..20]), "{err}");
}

#[test]
fn hex_parsing_accepts_only_64_hex_digits() {
    let lower = Key::from_hex(HEX).unwrap();
    let upper = Key::from_hex(&format!("  {}\n", HEX.to_uppercase())).unwrap();
    assert_eq!(lower.id(), upper.id());
    for bad in [
        "",
        &HEX[..62],
        &format!("{HEX}00"),
        &format!("{}g", &HEX[..63]),
    ] {
        assert!(Key::from_hex(bad).is_err(), "{bad:?}");
    }
    assert_ne!(
        Key::generate().unwrap().id(),
        Key::generate().unwrap().id(),
        "generated keys differ"
    );
}

#[test]
fn keyring_rotation_bookkeeping() {
    let old = Key::generate().unwrap();
    let new = Key::generate().unwrap();
    let mut ring = Keyring::new(new.clone()).with_decryption_key(old.clone());
    ring.add_decryption_key(old.clone());
    ring.add_decryption_key(new.clone());
    assert_eq!(
        ring.key_ids(),
        [new.id(), old.id()],
        "no duplicates, active first"
    );
    assert_eq!(ring.active_id(), new.id());
    assert!(ring.contains(old.id()));
    assert!(!ring.contains(Key::generate().unwrap().id()));
}

#[test]
fn generated_key_files_round_trip_and_are_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.key");
    let key = generate_key_file(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.len(), 65);
    assert!(text.ends_with('\n'));
    assert!(
        text[..64]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    assert_eq!(Key::from_hex_file(&path).unwrap().id(), key.id());

    let err = generate_key_file(&path).unwrap_err();
    assert!(matches!(err, KeyError::Exists { .. }), "{err:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "key kept");

    let ring = Keyring::from_key_files(&path, [&path]).unwrap();
    assert_eq!(ring.key_ids(), [key.id()]);

    let missing = Key::from_hex_file(dir.path().join("absent.key")).unwrap_err();
    assert!(matches!(missing, KeyError::Read { .. }), "{missing:?}");
    let not_file = Key::from_hex_file(dir.path()).unwrap_err();
    assert!(
        matches!(not_file, KeyError::MalformedFile { .. }),
        "{not_file:?}"
    );
}

#[test]
fn malformed_key_files_are_refused_without_echoing_them() {
    let dir = tempfile::tempdir().unwrap();
    for (name, contents) in [
        ("short", HEX.as_bytes()[..40].to_vec()),
        ("long", vec![b'a'; 5000]),
        ("binary", vec![0xff, 0xfe, 0x00, 0x01]),
        ("two-keys", format!("{HEX}\n{HEX}\n").into_bytes()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &contents).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let err = Key::from_hex_file(&path).unwrap_err();
        assert!(
            matches!(err, KeyError::MalformedFile { .. }),
            "{name}: {err:?}"
        );
        assert!(!err.to_string().contains(&HEX[..20]), "{name}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn key_files_readable_by_others_are_refused() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.key");
    let key = generate_key_file(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "keygen writes 0600");

    for bad in [0o644, 0o640, 0o604, 0o620, 0o602, 0o610] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(bad)).unwrap();
        match Key::from_hex_file(&path) {
            Err(KeyError::Permissions { mode, .. }) => assert_eq!(mode, bad),
            other => panic!("mode {bad:o}: {other:?}"),
        }
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let message = Key::from_hex_file(&path).unwrap_err().to_string();
    assert!(
        message.contains("0644") && message.contains("chmod 600"),
        "{message}"
    );

    for good in [0o600, 0o400] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(good)).unwrap();
        assert_eq!(
            Key::from_hex_file(&path).unwrap().id(),
            key.id(),
            "mode {good:o}"
        );
    }
}
