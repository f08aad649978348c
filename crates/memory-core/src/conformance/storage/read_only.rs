//! A read-only store refuses every change (not part of `run_all`).

use super::*;

/// For a store that must refuse every change (a [`ReadOnly`](crate::ReadOnly) stack, a
/// read-only mount): every write mode, `create_within`, `delete` (of `file` and of
/// `/memories`) and `rename` (from and onto `file`) is [`Error::Refused`], and `file` (which
/// the caller put there) is unchanged afterwards, still listed and counted. Not part of
/// [`run_all`]: call it from the read-only store's own tests.
pub async fn refuses_every_change(storage: &dyn Storage, file: &MemoryPath) {
    let before = ok(storage, "read the existing file", storage.read(file).await);
    let count = ok(storage, "file_count", storage.file_count().await);
    let elsewhere = p("/memories/refused-new-file.md");
    let attempts: Vec<(&str, Result<()>)> = vec![
        (
            "write(Create) of a new file",
            storage
                .write(&elsewhere, b"x".to_vec(), WriteMode::Create)
                .await
                .map(drop),
        ),
        (
            "write(Overwrite) of the file",
            storage
                .write(file, b"x".to_vec(), WriteMode::Overwrite)
                .await
                .map(drop),
        ),
        (
            "write(Update) of the file at its version",
            storage
                .write(
                    file,
                    b"x".to_vec(),
                    WriteMode::Update(before.version.clone()),
                )
                .await
                .map(drop),
        ),
        (
            "create_within of a new file",
            storage
                .create_within(&elsewhere, b"x".to_vec(), usize::MAX)
                .await
                .map(drop),
        ),
        ("delete of the file", storage.delete(file).await),
        (
            "delete of /memories",
            storage.delete(&MemoryPath::root()).await,
        ),
        ("rename of the file", storage.rename(file, &elsewhere).await),
    ];
    for (what, result) in attempts {
        let e = err(storage, what, result);
        assert!(
            matches!(e, Error::Refused { .. }),
            "{storage}: a read-only store refuses {what} with Error::Refused, got {e:?}"
        );
    }
    let after = ok(storage, "read the file again", storage.read(file).await);
    assert_eq!(
        after, before,
        "{storage}: refused changes leave the file as it was"
    );
    assert_eq!(
        ok(storage, "file_count again", storage.file_count().await),
        count,
        "{storage}: refused changes add or remove no file"
    );
    assert_eq!(
        ok(storage, "stat the new path", storage.stat(&elsewhere).await),
        None,
        "{storage}: a refused create leaves nothing behind"
    );
}
