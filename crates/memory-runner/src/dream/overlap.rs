//! Whether a dream's source and output are one store, or one is inside the other, whatever
//! names them: a folder or database file is known by what it is on disk (its device and
//! inode on Unix, its canonical path elsewhere), never by how its URL spells it, so a bind
//! mount, a symlink, a hard link or a nested path are seen through.
//!
//! A local store (a folder, an SQLite file, a versioned store's SQLite database) is its
//! entry on disk and the chain of folders above it. Two local stores overlap when either's
//! entry is in the other's chain: the same folder or file, the output inside the source, or
//! the source inside the output. An output that does not exist yet is placed at its nearest
//! existing folder, the one it would be created in.

use std::path::{Path, PathBuf};

use crate::{Scheme, StoreUrl};

/// What a file-system entry is, independent of its name.
#[cfg(unix)]
type Identity = (u64, u64);
#[cfg(not(unix))]
type Identity = PathBuf;

/// A local store on disk: its own entry (`None` when it does not exist yet) and the entries
/// of every folder above it, nearest first (its own entry first when it exists).
#[derive(Debug)]
struct Place {
    own: Option<Identity>,
    chain: Vec<Identity>,
}

#[cfg(unix)]
fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<Identity> {
    std::fs::canonicalize(path).ok()
}

/// Where `path` is: the nearest existing entry at or above it, resolved (symlinks followed),
/// and the identities of it and each folder above it.
fn place(path: &Path) -> Option<Place> {
    let mut at = std::path::absolute(path).ok()?;
    let mut exists = true;
    let resolved = loop {
        match std::fs::canonicalize(&at) {
            Ok(resolved) => break resolved,
            Err(_) => {
                exists = false;
                at = at.parent()?.to_path_buf();
            }
        }
    };
    // The resolved path holds no symlink, so its lexical parents are its folders.
    let chain: Vec<Identity> = resolved.ancestors().filter_map(identity).collect();
    let own = if exists { chain.first().cloned() } else { None };
    Some(Place { own, chain })
}

/// The local entry a store URL keeps its data in, and (for a versioned store) the store id
/// within it; `None` for a store that is not a local file or folder.
fn local(url: &StoreUrl) -> Option<(PathBuf, Option<String>)> {
    match url.scheme() {
        #[cfg(feature = "fs")]
        Scheme::Dir => memory_fs::fs_url_path(url.as_str())
            .ok()
            .map(|path| (path, None)),
        #[cfg(feature = "sqlite")]
        Scheme::Sqlite => memory_sqlite::sqlite_url_path(url.as_str())
            .ok()
            .map(|path| (path, None)),
        // memory-mounts reads the URL; a URL it refuses does not open, so it overlaps nothing.
        #[cfg(feature = "stores")]
        Scheme::StoreSqlite => {
            let parsed = memory_mounts::VersionedStoreUrl::from_url(
                url.as_str(),
                memory_core::options::StoreOptions::new(),
            )
            .ok()?;
            match parsed.into_parts() {
                (memory_mounts::StoreLocation::Sqlite { path }, id) => Some((path, Some(id))),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether the stores `from` and `into` name are one store, or one holds the other.
pub(super) fn overlap(from: &StoreUrl, into: &StoreUrl) -> bool {
    let (Some((from_path, from_id)), Some((into_path, into_id))) = (local(from), local(into))
    else {
        return false;
    };
    let (Some(from_place), Some(into_place)) = (place(&from_path), place(&into_path)) else {
        return false;
    };
    let inside = |a: &Place, b: &Place| a.own.as_ref().is_some_and(|own| b.chain.contains(own));
    let nested = inside(&from_place, &into_place) || inside(&into_place, &from_place);
    if !nested {
        return false;
    }
    // Two versioned stores of one database are different stores unless their ids match.
    match (from.scheme(), into.scheme()) {
        (Scheme::StoreSqlite, Scheme::StoreSqlite) => {
            from_place.own == into_place.own && from_id == into_id
        }
        _ => true,
    }
}

/// Whether `from` and `into` are one PostgreSQL store however the server is named
/// (`localhost`, `127.0.0.1`, another name or address): the same server (its system
/// identifier, `pg_control_system()`), database and schema, and the same root (`postgres://`)
/// or store id (`store+postgres://`). Each server is asked with a read-only session that
/// changes nothing; a server that cannot be asked is not the other store (opening it will say
/// what is wrong).
#[cfg(feature = "postgres")]
pub(super) async fn same_postgres(
    from: &StoreUrl,
    from_options: &crate::OpenOptions,
    into: &StoreUrl,
    into_options: &crate::OpenOptions,
) -> bool {
    /// The URL memory-postgres reads, its options, and the versioned store's id.
    fn target(
        url: &StoreUrl,
        options: &crate::OpenOptions,
    ) -> Option<(String, StoreOptions, Option<String>)> {
        match url.scheme() {
            Scheme::Postgres => {
                Some((url.as_str().to_owned(), options.store_options.clone(), None))
            }
            // memory-mounts reads the URL.
            #[cfg(feature = "stores")]
            Scheme::StorePostgres => {
                let parsed = memory_mounts::VersionedStoreUrl::from_url(
                    url.as_str(),
                    options.store_options.clone(),
                )
                .ok()?;
                match parsed.into_parts() {
                    (memory_mounts::StoreLocation::Postgres { url, options }, id) => {
                        Some((url, options, Some(id)))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
    use memory_core::options::StoreOptions;

    async fn identity(
        url: &str,
        versioned: bool,
        options: StoreOptions,
    ) -> Option<memory_postgres::StoreIdentity> {
        #[cfg(feature = "stores")]
        if versioned {
            return memory_postgres::engine_identity(url, options).await.ok();
        }
        let _ = versioned;
        memory_postgres::store_identity(url, options).await.ok()
    }
    let (Some((from_url, from_given, from_id)), Some((into_url, into_given, into_id))) =
        (target(from, from_options), target(into, into_options))
    else {
        return false;
    };
    if from_id.is_some() != into_id.is_some() || from_id != into_id {
        return false;
    }
    let versioned = from_id.is_some();
    let (a, b) = tokio::join!(
        identity(&from_url, versioned, from_given),
        identity(&into_url, versioned, into_given)
    );
    matches!((a, b), (Some(a), Some(b)) if a == b)
}
