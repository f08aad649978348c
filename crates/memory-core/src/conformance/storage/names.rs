//! Names and content every operation must carry: Unicode, empty and binary files, deep paths.

use super::*;

/// Unicode (including NFC/NFD look-alikes, kept distinct), spaces and punctuation in names.
pub async fn unicode_and_spaces_in_names(storage: &dyn Storage) {
    unicode_and_spaces_in_names_with(storage, true).await;
}

/// [`unicode_and_spaces_in_names`], with the name that is not in Unicode NFC
/// (`cafe\u{301}.md` beside `caf\u{e9}.md`) only when `non_nfc_names` is set.
pub async fn unicode_and_spaces_in_names_with(storage: &dyn Storage, non_nfc_names: bool) {
    let mut names = vec![
        "/memories/notes with spaces/my file.md",
        "/memories/日本語/メモ.md",
        "/memories/emoji 🧠/🚀 launch.txt",
        "/memories/caf\u{e9}.md",
        "/memories/Case.md",
        "/memories/case.md",
        "/memories/odd/a'b\"c;d$e&f(g)#h!.md",
        "/memories/odd/ trailing space ",
        "/memories/odd/100%.md",
    ];
    if non_nfc_names {
        names.push("/memories/cafe\u{301}.md");
    }
    for (i, path) in names.iter().enumerate() {
        ok(
            storage,
            &format!("create {path}"),
            storage
                .write(
                    &p(path),
                    format!("file {i}").into_bytes(),
                    WriteMode::Create,
                )
                .await,
        );
    }
    for (i, path) in names.iter().enumerate() {
        assert_eq!(
            get(storage, path).await,
            format!("file {i}").into_bytes(),
            "{storage}: {path:?} reads back its own content (names are exact, case-sensitive \
             and not Unicode-normalized)"
        );
    }
    let mut expected: Vec<String> = strings(&names);
    expected.sort();
    assert_eq!(
        list_paths(storage, "/memories").await,
        expected,
        "{storage}: unicode and spaces in names list exactly"
    );
    ok(
        storage,
        "rename a unicode directory",
        storage
            .rename(&p("/memories/日本語"), &p("/memories/emoji 🧠/日本語 2"))
            .await,
    );
    assert_eq!(
        get(storage, "/memories/emoji 🧠/日本語 2/メモ.md").await,
        b"file 1",
        "{storage}: rename works with unicode and spaces in names"
    );
    ok(
        storage,
        "delete a directory with spaces",
        storage.delete(&p("/memories/notes with spaces")).await,
    );
    assert!(
        stat(storage, "/memories/notes with spaces").await.is_none(),
        "{storage}: delete works with spaces in names"
    );
}

/// 0-byte files exist, list with size 0, read back empty and can be updated.
pub async fn empty_files(storage: &dyn Storage) {
    let path = p("/memories/empty/zero.md");
    let v = ok(
        storage,
        "create an empty file",
        storage.write(&path, Vec::new(), WriteMode::Create).await,
    );
    let file = ok(storage, "read an empty file", storage.read(&path).await);
    assert!(
        file.contents.is_empty(),
        "{storage}: an empty file reads back empty"
    );
    assert_eq!(
        file_size(&stat(storage, "/memories/empty/zero.md").await),
        Some(0),
        "{storage}: stat of an empty file is a file of size 0"
    );
    assert!(
        is_dir(&stat(storage, "/memories/empty").await),
        "{storage}: an empty file keeps its directory alive"
    );
    let listed = ok(storage, "list", storage.list(&p("/memories/empty")).await);
    assert_eq!(
        listed
            .iter()
            .map(|m| (m.path.as_str(), m.size))
            .collect::<Vec<_>>(),
        vec![("/memories/empty/zero.md", 0)],
        "{storage}: an empty file is listed with size 0"
    );
    let e = err(
        storage,
        "create over an empty file",
        storage.write(&path, b"x".to_vec(), WriteMode::Create).await,
    );
    assert!(
        matches!(e, Error::AlreadyExists { .. }),
        "{storage}: an empty file exists (Create over it is AlreadyExists), got {e:?}"
    );
    ok(
        storage,
        "update an empty file",
        storage
            .write(&path, b"now full".to_vec(), WriteMode::Update(v))
            .await,
    );
    let v = ok(
        storage,
        "overwrite with nothing",
        storage.write(&path, Vec::new(), WriteMode::Overwrite).await,
    );
    assert_eq!(
        ok(storage, "read emptied", storage.read(&path).await).version,
        v,
        "{storage}: a file emptied by a write reads back with the new version"
    );
    assert!(
        get(storage, "/memories/empty/zero.md").await.is_empty(),
        "{storage}: a file can be emptied"
    );
}

/// Binary content (every byte value, invalid UTF-8, NULs, CR/LF) round-trips exactly, through
/// write, read, list sizes and rename.
pub async fn binary_content_round_trip(storage: &dyn Storage) {
    let mut body: Vec<u8> = (0..=255u8).collect();
    body.extend_from_slice(&[0xff, 0xfe, 0x00, 0xc3, 0x28, b'\r', b'\n', b'\r', 0x80]);
    body.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    assert!(std::str::from_utf8(&body).is_err());
    put(storage, "/memories/bin/image.png", body.clone()).await;
    assert_eq!(
        get(storage, "/memories/bin/image.png").await,
        body,
        "{storage}: binary (non-UTF-8) content reads back byte for byte"
    );
    assert_eq!(
        file_size(&stat(storage, "/memories/bin/image.png").await),
        Some(body.len() as u64),
        "{storage}: stat gives the byte length of binary content"
    );
    ok(
        storage,
        "rename a binary file",
        storage
            .rename(&p("/memories/bin/image.png"), &p("/memories/bin/moved.png"))
            .await,
    );
    assert_eq!(
        get(storage, "/memories/bin/moved.png").await,
        body,
        "{storage}: rename keeps binary content byte for byte"
    );
}

/// The deepest and longest paths [`MemoryPath`] allows work like any other.
pub async fn deep_nesting(storage: &dyn Storage) {
    deep_nesting_to(storage, crate::MAX_SEGMENTS, crate::MAX_PATH_BYTES).await;
}

/// [`deep_nesting`] for a store that holds paths `max_depth` levels deep and `max_path_bytes`
/// long (less than the path limits when the store itself lives below `/memories`, as a
/// mounted store does).
pub async fn deep_nesting_to(storage: &dyn Storage, max_depth: usize, max_path_bytes: usize) {
    let segments: Vec<String> = (0..max_depth).map(|i| format!("d{i}")).collect();
    let deepest = format!("/memories/{}", segments.join("/"));
    put(storage, &deepest, "deep").await;
    assert_eq!(
        get(storage, &deepest).await,
        b"deep",
        "{storage}: a file {} levels deep reads back",
        max_depth
    );
    for depth in 1..max_depth {
        let dir = format!("/memories/{}", segments[..depth].join("/"));
        assert!(
            is_dir(&stat(storage, &dir).await),
            "{storage}: every ancestor of a deep file is a directory ({dir})"
        );
        assert_eq!(
            list_paths(storage, &dir).await,
            vec![deepest.clone()],
            "{storage}: list of {dir} finds the deep file"
        );
    }
    // Three 255-byte names and a last one that makes the path exactly 1,024 bytes long.
    let long_name = "n".repeat(crate::MAX_SEGMENT_BYTES);
    let head = format!("/memories/{long_name}/{long_name}/{long_name}/");
    let last = "f".repeat(max_path_bytes - head.len());
    let long = format!("{head}{last}");
    assert_eq!(long.len(), max_path_bytes);
    put(storage, &long, "long").await;
    assert_eq!(
        get(storage, &long).await,
        b"long",
        "{storage}: a 1,024-byte path with 255-byte names reads back"
    );
    ok(
        storage,
        "rename a file with a 255-byte name",
        storage
            .rename(&p(&long), &p(&format!("/memories/{}", "m".repeat(255))))
            .await,
    );
    assert_eq!(
        get(storage, &format!("/memories/{}", "m".repeat(255))).await,
        b"long",
        "{storage}: a file renamed to a 255-byte name reads back"
    );
    ok(
        storage,
        "delete the top of a deep tree",
        storage.delete(&p("/memories/d0")).await,
    );
    assert!(
        stat(storage, "/memories/d0").await.is_none(),
        "{storage}: delete of the top of a deep tree removes it all"
    );
}
