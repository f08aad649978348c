//! [`Mounts`]: several storages under one `/memories`, each at `/memories/<slug>`, read-only or
//! read-write; the mount table and the note that tells the model about it.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use memory_core::search::{SearchHit, SearchQuery, sort_hits};
use memory_core::{
    Capabilities, Entry, Error, FileMeta, Listing, MemoryPath, ReadOnly, Result, Storage,
    StoredFile, Version, WriteMode, copy_then_delete, read_only_refusal,
};
use memory_store::StoreError;

use crate::store::StoreStorage;

/// The most mounts one [`Mounts`] holds (the hosted product attaches at most 8 stores to a
/// session).
pub const MAX_MOUNTS: usize = 8;

/// The most characters of one mount's instructions (the hosted attachment's limit).
pub const MAX_INSTRUCTIONS_CHARS: usize = 4096;

/// The hidden name [`Mounts`] lists in an empty mount's folder, so that the tool's views (which
/// show directories that hold files) show the folder.
pub const EMPTY_MARK: &str = ".mount";

/// What the model may do in a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Access {
    /// Read and change (the hosted default).
    #[default]
    ReadWrite,
    /// Read only: every change is refused and nothing is written.
    ReadOnly,
}

impl Access {
    /// `read_write` or `read_only`, as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadWrite => "read_write",
            Access::ReadOnly => "read_only",
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The mount slug of a store name (STORES.md): lowercased, each run of characters other than
/// `a-z0-9` turned into one `-`, leading and trailing `-` trimmed. Empty when nothing is left
/// (then [`Mounts`] uses the store id).
///
/// ```
/// use memory_mounts::slug;
///
/// assert_eq!(slug("Demo Memory"), "demo-memory");
/// assert_eq!(slug("  Team  Handbook (v2)! "), "team-handbook-v2");
/// assert_eq!(slug("Café Notes"), "caf-notes");
/// assert_eq!(slug("???"), "");
/// ```
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// One storage to mount: its name, description and instructions for the model, its access,
/// and the storage itself.
#[derive(Debug, Clone)]
pub struct Mount {
    name: String,
    folder: Option<String>,
    id: Option<String>,
    description: String,
    instructions: Option<String>,
    access: Access,
    storage: Arc<dyn Storage>,
}

impl Mount {
    /// Mounts `storage` under the slug of `name`.
    pub fn new(name: impl Into<String>, storage: Arc<dyn Storage>, access: Access) -> Self {
        Mount {
            name: name.into(),
            folder: None,
            id: None,
            description: String::new(),
            instructions: None,
            access,
            storage,
        }
    }

    /// Mounts a store with its own name, id and description, fetched from the store: the one
    /// place that checks that a mounted store exists and is not archived (an archived store
    /// cannot be attached to new sessions).
    ///
    /// # Errors
    /// [`MountError::Store`] when it cannot be fetched (`NotFound` for an unknown store),
    /// [`MountError::Archived`] for an archived store.
    pub async fn store(
        storage: StoreStorage,
        access: Access,
    ) -> std::result::Result<Self, MountError> {
        let store = storage.retrieve().await?;
        Self::from_store(storage, store, access)
    }

    /// [`Mount::store`] with the store already fetched (`store` must be the one `storage`
    /// names): its display name gives the folder, its description reaches the note.
    ///
    /// # Errors
    /// [`MountError::Archived`] for an archived store.
    pub fn from_store(
        storage: StoreStorage,
        store: memory_store::Store,
        access: Access,
    ) -> std::result::Result<Self, MountError> {
        if store.archived_at.is_some() {
            return Err(MountError::Archived {
                id: store.id,
                name: store.name,
            });
        }
        Ok(Mount::new(store.name, Arc::new(storage), access)
            .with_id(store.id)
            .with_description(store.description))
    }

    /// The folder name to use instead of the name's (`--mount NAME=URL`): the slug comes from
    /// it; the note still shows the mount's name.
    pub fn with_folder(mut self, folder: impl Into<String>) -> Self {
        self.folder = Some(folder.into());
        self
    }

    /// The store's id: the slug when the name leaves none.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// What the store holds, for the model (the store's `description`).
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// How to use the store, for the model (the attachment's `instructions`, at most
    /// [`MAX_INSTRUCTIONS_CHARS`]; [`Mounts::new`] refuses longer ones).
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The folder name given with [`with_folder`](Self::with_folder), if any.
    pub fn folder(&self) -> Option<&str> {
        self.folder.as_deref()
    }

    /// The store's id, for a store mounted with [`Mount::store`] or [`Mount::with_id`].
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Its description (empty when unset).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Its instructions.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Its access.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The storage.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }
}

/// Why a store cannot be mounted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MountError {
    /// The store could not be fetched (unknown, unreachable...).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store is archived: it can still be read through the API, but not mounted.
    #[error("the memory store {id} (\"{name}\") is archived and cannot be mounted")]
    Archived {
        /// The store's id.
        id: String,
        /// Its name.
        name: String,
    },
}

/// Why a mount table cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MountsError {
    /// More than [`MAX_MOUNTS`] mounts.
    #[error("at most {MAX_MOUNTS} stores can be mounted at once, got {0}")]
    TooMany(usize),
    /// A mount's instructions are longer than [`MAX_INSTRUCTIONS_CHARS`].
    #[error(
        "the instructions of the mount `{folder}` are {chars} characters; at most {MAX_INSTRUCTIONS_CHARS} are allowed"
    )]
    InstructionsTooLong {
        /// The mount's folder name.
        folder: String,
        /// Their length in characters.
        chars: usize,
    },
    /// Instructions for a folder name that no mount has.
    #[error("no mount has the folder name `{folder}` (the folders are: {known})")]
    NoSuchFolder {
        /// The name given.
        folder: String,
        /// The mounts' folder names, comma-separated.
        known: String,
    },
}

/// A mount and where it is.
#[derive(Debug, Clone)]
struct Mounted {
    slug: String,
    root: MemoryPath,
    mount: Mount,
    /// The mount's storage as routed to: read-only mounts behind core's [`ReadOnly`], so a
    /// refused change has the one read-only text.
    storage: Arc<dyn Storage>,
}

/// Where a path falls.
enum Route<'a> {
    /// `/memories` itself.
    Root,
    /// In a mount: the mount and the path inside its storage (`/memories/x` for
    /// `/memories/<slug>/x`, `/memories` for the mount's own folder).
    In(&'a Mounted, MemoryPath),
    /// Below `/memories` but in no mount.
    Outside,
}

/// Several storages under one `/memories`, each at `/memories/<slug>` with its access: one
/// [`Storage`] for one [`MemoryTool`](memory_core::MemoryTool).
///
/// - Slugs follow STORES.md: [`slug`] of the name, the store id when that is empty, and `-2`,
///   `-3`, ... for a slug already taken. [`Mounts::note`] tells the model the table.
/// - Mount folders always exist (an empty store still shows), cannot be written, moved or
///   renamed; deleting one deletes every file in it (read-write only), as deleting
///   `/memories` does in a single store.
/// - `view /memories` lists every mount's folder with its files. The listing of `/memories`
///   or of a mount's folder holds, for each empty mount, a 0-byte hidden entry
///   `/memories/<slug>/.mount` ([`EMPTY_MARK`]) so that the folder shows and views as one
///   (the tool shows directories that hold files, and skips hidden names); it is in no other
///   listing and cannot be read.
/// - Every change in a read-only mount, and every write outside all mounts, is
///   [`Error::Refused`] (the tool answers `Error: Cannot change {path}: {reason}`) and changes
///   nothing. Deleting `/memories` is refused while any mount is read-only.
/// - A rename within one mount is that storage's rename (atomic where it is; a store keeps
///   the memory's id and history). **A rename across mounts is copy-then-delete**, as `mv`
///   between filesystems: the destination store gets new memories (`created` versions), the
///   source records `deleted` versions, and a failure part-way leaves every file present at
///   least once. Both mounts must be read-write.
///
/// ```
/// use std::sync::Arc;
/// use memory_core::{InMemoryStorage, MemoryHandler, MemoryTool};
/// use memory_mounts::{Access, Mount, Mounts};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mounts = Mounts::new([
///     Mount::new("Team Handbook", Arc::new(InMemoryStorage::new()), Access::ReadOnly),
///     Mount::new("User Notes", Arc::new(InMemoryStorage::new()), Access::ReadWrite),
/// ])
/// .unwrap();
/// let tool = MemoryTool::new(mounts);
/// let out = tool.execute(&json!({"command": "create", "path": "/memories/user-notes/a.md", "file_text": "hi"})).await;
/// assert!(!out.is_error);
/// let out = tool.execute(&json!({"command": "create", "path": "/memories/team-handbook/a.md", "file_text": "hi"})).await;
/// assert_eq!(
///     out.text(),
///     Some("Error: Cannot change /memories/team-handbook/a.md: /memories/team-handbook is read-only")
/// );
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Mounts {
    mounts: Vec<Mounted>,
}

impl Mounts {
    /// The mount table, in the order given (slugs are assigned in that order).
    ///
    /// # Errors
    /// [`MountsError::TooMany`] beyond [`MAX_MOUNTS`].
    pub fn new(mounts: impl IntoIterator<Item = Mount>) -> std::result::Result<Self, MountsError> {
        let mounts: Vec<Mount> = mounts.into_iter().collect();
        if mounts.len() > MAX_MOUNTS {
            return Err(MountsError::TooMany(mounts.len()));
        }
        let mut taken = BTreeSet::new();
        let mut out = Vec::with_capacity(mounts.len());
        for mount in mounts {
            let mut base = slug(mount.folder.as_deref().unwrap_or(&mount.name));
            if base.is_empty() {
                base = mount
                    .id
                    .as_deref()
                    .map(slug_of_id)
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "store".to_owned());
            }
            let mut candidate = base.clone();
            let mut n = 2;
            while taken.contains(&candidate) {
                candidate = format!("{base}-{n}");
                n += 1;
            }
            taken.insert(candidate.clone());
            let root = MemoryPath::root()
                .join(&candidate)
                .expect("slugs are short names of [a-z0-9_-]");
            if let Some(chars) = mount
                .instructions
                .as_deref()
                .map(|i| i.chars().count())
                .filter(|n| *n > MAX_INSTRUCTIONS_CHARS)
            {
                return Err(MountsError::InstructionsTooLong {
                    folder: candidate,
                    chars,
                });
            }
            let storage: Arc<dyn Storage> = match mount.access {
                Access::ReadWrite => Arc::clone(&mount.storage),
                Access::ReadOnly => {
                    Arc::new(ReadOnly::at(Arc::clone(&mount.storage), root.clone()))
                }
            };
            out.push(Mounted {
                slug: candidate,
                root,
                mount,
                storage,
            });
        }
        Ok(Mounts { mounts: out })
    }

    /// Each mount's folder (`/memories/<slug>`) and the mount, in table order (the order
    /// given to [`Mounts::new`]), so a caller learns where each of its mounts landed.
    pub fn mounts(&self) -> impl Iterator<Item = (&MemoryPath, &Mount)> {
        self.mounts.iter().map(|m| (&m.root, &m.mount))
    }

    /// The slug of each mount, in table order.
    pub fn slugs(&self) -> impl Iterator<Item = &str> {
        self.mounts.iter().map(|m| m.slug.as_str())
    }

    /// The folder of the mount whose folder name is `slug` (`/memories/<slug>`), like the
    /// hosted API's `mount_path`.
    pub fn mount_path(&self, slug: &str) -> Option<&MemoryPath> {
        self.mounts.iter().find(|m| m.slug == slug).map(|m| &m.root)
    }

    /// The folder of the mount of the store `store_id` (the first, if it is mounted twice):
    /// the path to tell a program, like the hosted API's `mount_path`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use memory_core::InMemoryStorage;
    /// use memory_mounts::{Access, Mount, Mounts};
    ///
    /// let mounts = Mounts::new([
    ///     Mount::new("Team Handbook", Arc::new(InMemoryStorage::new()), Access::ReadOnly)
    ///         .with_id("memstore_01"),
    ///     Mount::new("Team Handbook", Arc::new(InMemoryStorage::new()), Access::ReadWrite)
    ///         .with_id("memstore_02"),
    /// ])
    /// .unwrap();
    /// assert_eq!(mounts.store_mount_path("memstore_02").unwrap().as_str(), "/memories/team-handbook-2");
    /// assert_eq!(mounts.mount_path("team-handbook").unwrap().as_str(), "/memories/team-handbook");
    /// assert!(mounts.store_mount_path("memstore_03").is_none());
    /// ```
    pub fn store_mount_path(&self, store_id: &str) -> Option<&MemoryPath> {
        self.mounts
            .iter()
            .find(|m| m.mount.id.as_deref() == Some(store_id))
            .map(|m| &m.root)
    }

    /// Sets the instructions of the mount whose folder name is `folder` (`--mount-instructions
    /// NAME=TEXT`), so that they reach [`note`](Self::note).
    ///
    /// # Errors
    /// [`MountsError::NoSuchFolder`] for a folder name no mount has;
    /// [`MountsError::InstructionsTooLong`] over [`MAX_INSTRUCTIONS_CHARS`].
    pub fn with_instructions_for(
        mut self,
        folder: &str,
        text: impl Into<String>,
    ) -> std::result::Result<Self, MountsError> {
        let text = text.into();
        let known = self
            .mounts
            .iter()
            .map(|m| m.slug.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let Some(m) = self.mounts.iter_mut().find(|m| m.slug == folder) else {
            return Err(MountsError::NoSuchFolder {
                folder: folder.to_owned(),
                known,
            });
        };
        let chars = text.chars().count();
        if chars > MAX_INSTRUCTIONS_CHARS {
            return Err(MountsError::InstructionsTooLong {
                folder: folder.to_owned(),
                chars,
            });
        }
        m.mount.instructions = Some(text);
        Ok(self)
    }

    /// The note for the system prompt (or an MCP tool description): a line on where the
    /// stores are, one line per mount with its path, access, name, description and
    /// instructions, and a line on what can be changed. The one function `memory run` and
    /// `memory mcp` both use.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use memory_core::InMemoryStorage;
    /// use memory_mounts::{Access, Mount, Mounts};
    ///
    /// let mounts = Mounts::new([
    ///     Mount::new("Team Handbook", Arc::new(InMemoryStorage::new()), Access::ReadOnly)
    ///         .with_description("How the team works.")
    ///         .with_instructions("Check it before answering process questions."),
    ///     Mount::new("User Notes", Arc::new(InMemoryStorage::new()), Access::ReadWrite),
    /// ])
    /// .unwrap();
    /// assert_eq!(
    ///     mounts.note(),
    ///     "Memory stores are mounted in the memory tool's /memories directory, one folder per store:\n\
    ///      - /memories/team-handbook (read-only): \"Team Handbook\". How the team works. Instructions: Check it before answering process questions.\n\
    ///      - /memories/user-notes (read-write): \"User Notes\".\n\
    ///      Files can be created and changed only inside the read-write folders; the read-only ones can be viewed."
    /// );
    /// ```
    pub fn note(&self) -> String {
        let mut note = String::from(
            "Memory stores are mounted in the memory tool's /memories directory, one folder per store:",
        );
        for m in &self.mounts {
            let access = match m.mount.access {
                Access::ReadOnly => "read-only",
                Access::ReadWrite => "read-write",
            };
            note.push_str(&format!(
                "\n- {} ({access}): \"{}\".",
                m.root,
                one_line(&m.mount.name)
            ));
            let description = one_line(&m.mount.description);
            if !description.is_empty() {
                note.push(' ');
                note.push_str(&description);
                if !description.ends_with(['.', '!', '?']) {
                    note.push('.');
                }
            }
            if let Some(instructions) = m.mount.instructions.as_deref().map(one_line)
                && !instructions.is_empty()
            {
                note.push_str(" Instructions: ");
                note.push_str(&instructions);
            }
        }
        let writable = self
            .mounts
            .iter()
            .any(|m| m.mount.access == Access::ReadWrite);
        note.push('\n');
        note.push_str(if writable {
            "Files can be created and changed only inside the read-write folders; the read-only ones can be viewed."
        } else {
            "Every folder is read-only: files can be viewed but not created or changed."
        });
        note
    }

    fn route(&self, path: &MemoryPath) -> Route<'_> {
        if path.is_root() {
            return Route::Root;
        }
        for m in &self.mounts {
            if let Some(inner) = path.rebase(&m.root, &MemoryPath::root()) {
                return Route::In(m, inner);
            }
        }
        Route::Outside
    }

    fn read_only(m: &Mounted, path: &MemoryPath) -> Error {
        read_only_refusal(&m.root, path)
    }

    fn outside(&self, path: &MemoryPath) -> Error {
        let writable: Vec<String> = self
            .mounts
            .iter()
            .filter(|m| m.mount.access == Access::ReadWrite)
            .map(|m| m.root.to_string())
            .collect();
        let reason = if writable.is_empty() {
            "it is outside every mounted folder, and every mounted folder is read-only".to_owned()
        } else {
            format!(
                "it is outside every mounted folder; files can be created inside {}",
                writable.join(" or ")
            )
        };
        Error::Refused {
            path: path.clone(),
            reason,
        }
    }
}

/// Folds line breaks and runs of spaces, so each mount stays on one line of the note.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A store id as a slug: its `[0-9A-Za-z_]` characters (ids hold nothing else).
fn slug_of_id(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(64)
        .collect()
}

/// A path inside a mount's storage as the path the model sees.
fn outer(m: &Mounted, inner: &MemoryPath) -> Option<MemoryPath> {
    inner.rebase(&MemoryPath::root(), &m.root)
}

/// An error of a mount's storage, with its paths as the model sees them.
fn outer_error(m: &Mounted, e: Error) -> Error {
    e.map_paths(|p| outer(m, &p).unwrap_or_else(|| m.root.clone()))
}

impl fmt::Display for Mounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Mounts(")?;
        for (i, m) in self.mounts.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let ro = if m.mount.access == Access::ReadOnly {
                ":ro"
            } else {
                ""
            };
            write!(f, "{}={}{ro}", m.slug, m.mount.storage)?;
        }
        f.write_str(")")
    }
}

mod storage;
