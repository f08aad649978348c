//! The search side index over folder and S3 stores (feature `search-index`): which stores get
//! one, where it lives, and the `search_index` store option.
//!
//! Folder stores (`PATH`, `file:PATH`) and S3 stores (`s3://…`) have no index of their own, so
//! [`open_url`](crate::store::open_url) wraps them in [`memory_search::Indexed`], which answers
//! `Storage::search` from an SQLite FTS5 file outside `memories/`. Nothing is opened until the
//! first search. An encrypted store is never wrapped (its search scans its own decrypted reads
//! in memory): no index of an encrypted store's plaintext is ever written, and an index file
//! named for an encrypted store is refused.
//!
//! | `search_index=` | folder store | S3 store |
//! |---|---|---|
//! | unset (`auto`) | `PATH/.memory-search/index.sqlite3` | with [`OpenOptions::with_environment`]: `$XDG_CACHE_HOME/memory/search/<hash>.sqlite3` (else `~/.cache/…`); without: in memory |
//! | `memory` | in memory | in memory |
//! | `off` | no index: the provided scan | no index: the provided scan |
//! | an absolute path | that file | that file |
//!
//! With feature `semantic`, `semantic_model=DIR` ranks hits by fusing the keyword list with the
//! files nearest in meaning by the embedding model in `DIR` (see `memory_search::semantic`),
//! read on the first search; the folder must exist when the store opens.

use std::path::PathBuf;
use std::sync::Arc;

use memory_core::Storage;
use memory_core::options::{OptionsError, StoreOptions};
use memory_search::{IndexLocation, IndexOptions, Indexed};

use crate::options::{OpenError, OpenOptions};
use crate::url::{Scheme, StoreUrl};

/// The store option naming where the index lives.
pub(crate) const OPTION: &str = "search_index";
/// The store option naming an embedding model folder for hybrid ranking (feature `semantic`).
pub(crate) const SEMANTIC_OPTION: &str = "semantic_model";
/// What it accepts, for its error.
const EXPECTED: &str = "auto, memory, off or an absolute path to an index file";

/// What `search_index` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    Auto,
    Memory,
    Off,
    File(PathBuf),
}

/// `search_index` and, with feature `semantic`, `semantic_model`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    choice: Choice,
    semantic: Option<PathBuf>,
}

/// Whether stores of this scheme get a side index.
fn indexed_scheme(scheme: Scheme) -> bool {
    match scheme {
        #[cfg(feature = "fs")]
        Scheme::Dir => true,
        #[cfg(feature = "s3")]
        Scheme::S3 => true,
        _ => false,
    }
}

/// Takes `search_index` out of the URL's query and the program's options (the program's wins,
/// as the folder and S3 backends treat their own options), so that the backend never sees it.
/// Returns the URL and options to open the backend with, and the choice. Stores of other
/// schemes are returned untouched (the option is then unknown to their backend).
pub(crate) fn take(
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<(StoreUrl, OpenOptions, Asked), OpenError> {
    if !indexed_scheme(url.scheme()) {
        let asked = Asked {
            choice: Choice::Off,
            semantic: None,
        };
        return Ok((url.clone(), options.clone(), asked));
    }
    let invalid = |source| OpenError::Options {
        url: url.to_string(),
        source,
    };
    let (base, from_query) = StoreOptions::from_url(url.as_str()).map_err(invalid)?;
    let mut merged = from_query.overridden_by(options.store_options.clone());
    let choice = match merged.take(OPTION) {
        None => Choice::Auto,
        Some(value) => parse(&value).ok_or_else(|| {
            invalid(OptionsError::InvalidValue {
                key: OPTION.to_owned(),
                value,
                expected: EXPECTED,
            })
        })?,
    };
    #[cfg(feature = "semantic")]
    let semantic = match merged.take(SEMANTIC_OPTION) {
        None => None,
        Some(folder) if std::path::Path::new(&folder).is_dir() => Some(PathBuf::from(folder)),
        Some(folder) => {
            return Err(invalid(OptionsError::InvalidValue {
                key: SEMANTIC_OPTION.to_owned(),
                value: folder,
                expected: "the folder of an embedding model (tokenizer.json or vocab.txt, and model.safetensors)",
            }));
        }
    };
    #[cfg(not(feature = "semantic"))]
    let semantic = None;
    let base: StoreUrl = base.parse().map_err(|source| OpenError::InvalidUrl {
        url: base.clone(),
        source,
    })?;
    let mut rest = options.clone();
    rest.store_options = merged;
    Ok((base, rest, Asked { choice, semantic }))
}

fn parse(value: &str) -> Option<Choice> {
    match value {
        "auto" => Some(Choice::Auto),
        "memory" => Some(Choice::Memory),
        "off" => Some(Choice::Off),
        path if PathBuf::from(path).is_absolute() => Some(Choice::File(PathBuf::from(path))),
        _ => None,
    }
}

/// Adds `search_index` to the options a backend's "unknown option" error lists as accepted.
pub(crate) fn with_option_accepted(url: &StoreUrl, e: OpenError) -> OpenError {
    match e {
        OpenError::Options {
            url: shown,
            source: OptionsError::UnknownOption { key, mut accepted },
        } if indexed_scheme(url.scheme()) => {
            accepted.push(OPTION.to_owned());
            if cfg!(feature = "semantic") {
                accepted.push(SEMANTIC_OPTION.to_owned());
            }
            OpenError::Options {
                url: shown,
                source: OptionsError::UnknownOption { key, accepted },
            }
        }
        other => other,
    }
}

/// Wraps an unencrypted folder or S3 store in [`Indexed`] as `choice` says.
pub(crate) fn wrap(
    store: Arc<dyn Storage>,
    url: &StoreUrl,
    options: &OpenOptions,
    asked: Asked,
) -> Result<Arc<dyn Storage>, OpenError> {
    let Asked { choice, semantic } = asked;
    if !indexed_scheme(url.scheme()) {
        return Ok(store);
    }
    if options.wants_encryption() {
        // The index would hold the plaintext: an encrypted store searches in memory instead.
        return match choice {
            Choice::File(_) => Err(OpenError::unavailable(
                url,
                crate::options::Refusal::IndexFileEncrypted { option: OPTION },
            )),
            Choice::Auto | Choice::Memory | Choice::Off => Ok(store),
        };
    }
    let identity = identity(url, options)?;
    let location = match choice {
        Choice::Off => return Ok(store),
        Choice::Memory => IndexLocation::Memory,
        Choice::File(path) => IndexLocation::File(path),
        Choice::Auto => auto_location(url, options, &identity)?,
    };
    #[allow(unused_mut)]
    let mut index = IndexOptions::new(location).identity(identity);
    #[cfg(feature = "semantic")]
    if let Some(folder) = semantic {
        index = index.semantic_folder(folder);
    }
    #[cfg(not(feature = "semantic"))]
    let _: Option<PathBuf> = semantic;
    Ok(Arc::new(Indexed::new(store, index)))
}

/// Deletes the index files a folder or S3 store may have: at the automatic location and at
/// the one `search_index` names (the store may have been opened either way before).
pub(crate) fn discard(url: &StoreUrl, options: &OpenOptions) -> Result<(), OpenError> {
    if !indexed_scheme(url.scheme()) {
        return Ok(());
    }
    let (url, options, asked) = take(url, options)?;
    let identity = identity(&url, &options)?;
    let mut locations = vec![auto_location(&url, &options, &identity)?];
    if let Choice::File(path) = asked.choice {
        locations.push(IndexLocation::File(path));
    }
    for location in locations {
        location
            .discard()
            .map_err(|source| OpenError::IndexNotDiscarded {
                url: url.to_string(),
                source,
            })?;
    }
    Ok(())
}

/// The store's identity, recorded in the index: empty for a folder store (its index lies in
/// its own folder), `endpoint|bucket|prefix` for S3.
fn identity(url: &StoreUrl, options: &OpenOptions) -> Result<String, OpenError> {
    match url.scheme() {
        #[cfg(feature = "s3")]
        Scheme::S3 => {
            let parsed = if options.environment {
                memory_s3::S3Options::from_env(url.as_str(), options.store_options.clone())
            } else {
                memory_s3::S3Options::parse(url.as_str(), options.store_options.clone())
            };
            let s3 = parsed.map_err(|e| OpenError::Open {
                url: url.to_string(),
                source: Box::new(e),
            })?;
            Ok(format!(
                "s3|{}|{}|{}",
                s3.endpoint.as_deref().unwrap_or(""),
                s3.bucket,
                s3.prefix
            ))
        }
        _ => {
            let _ = options;
            Ok(String::new())
        }
    }
}

/// Where the index lives when the option is unset.
fn auto_location(
    url: &StoreUrl,
    options: &OpenOptions,
    identity: &str,
) -> Result<IndexLocation, OpenError> {
    match url.scheme() {
        #[cfg(feature = "fs")]
        Scheme::Dir => {
            let base = memory_fs::fs_url_path(url.as_str()).map_err(|e| OpenError::Open {
                url: url.to_string(),
                source: Box::new(e),
            })?;
            Ok(IndexLocation::beside(&base))
        }
        #[cfg(feature = "s3")]
        Scheme::S3 => Ok(
            match options
                .environment
                .then(memory_search::user_cache_dir)
                .flatten()
            {
                Some(cache) => IndexLocation::in_cache(&cache, identity),
                None => IndexLocation::Memory,
            },
        ),
        _ => {
            let _ = (options, identity);
            Ok(IndexLocation::Memory)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_parses() {
        assert_eq!(parse("auto"), Some(Choice::Auto));
        assert_eq!(parse("memory"), Some(Choice::Memory));
        assert_eq!(parse("off"), Some(Choice::Off));
        assert_eq!(
            parse("/var/cache/i.sqlite3"),
            Some(Choice::File(PathBuf::from("/var/cache/i.sqlite3")))
        );
        assert_eq!(parse("relative/i.sqlite3"), None);
        assert_eq!(parse("yes"), None);
    }
}
