//! The objects of the API (stores, memories, versions, actors) and the parameters of each call.
//!
//! Serialized with serde, they are exactly the JSON of the hosted API (field names, the `type`
//! discriminators, `null`s).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Timestamp;

/// A memory store (`BetaManagedAgentsMemoryStore`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "memory_store")]
pub struct Store {
    /// `memstore_…`.
    pub id: String,
    /// The workspace it belongs to: that of the request that created it (the
    /// `anthropic-workspace-id` header); `None` (and absent from the JSON) for the default
    /// workspace. An extension field of this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// 1–255 characters; need not be unique.
    pub name: String,
    /// At most 1,024 characters; `""` when unset.
    pub description: String,
    /// At most 16 pairs; never shown to the agent.
    pub metadata: BTreeMap<String, String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// Last change of name, description or metadata, or the archive.
    pub updated_at: Timestamp,
    /// When it was archived, if it was (set once, never cleared).
    pub archived_at: Option<Timestamp>,
}

/// What [`delete_store`](crate::MemoryStores::delete_store) returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "memory_store_deleted")]
pub struct DeletedStore {
    /// The deleted store's id.
    pub id: String,
}

/// How much of a memory or version to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// Without `content` (hash and size are still set).
    #[default]
    Basic,
    /// With `content`.
    Full,
}

impl View {
    /// Parses `basic` or `full`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "basic" => Some(View::Basic),
            "full" => Some(View::Full),
            _ => None,
        }
    }
}

/// A memory (`BetaManagedAgentsMemory`): a text document at a path in a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "memory")]
pub struct Memory {
    /// `mem_…`; stable across renames.
    pub id: String,
    /// The store it lives in.
    pub memory_store_id: String,
    /// Its path (starts with `/`).
    pub path: String,
    /// The content; `None` in the `basic` view.
    pub content: Option<String>,
    /// Lowercase hex SHA-256 of the content's UTF-8 bytes.
    pub content_sha256: String,
    /// Length of the content in bytes.
    pub content_size_bytes: u64,
    /// The version that holds the current content (the head).
    pub memory_version_id: String,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

impl Memory {
    /// This memory as `view` shows it (`basic` drops the content).
    pub fn with_view(mut self, view: View) -> Self {
        if view == View::Basic {
            self.content = None;
        }
        self
    }
}

/// What [`delete_memory`](crate::MemoryStores::delete_memory) returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "memory_deleted")]
pub struct DeletedMemory {
    /// The deleted memory's id.
    pub id: String,
}

/// A roll-up of the memories below a directory in a `depth = 1` listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "memory_prefix")]
pub struct MemoryPrefix {
    /// The directory, with a trailing `/`; pass it back as `path_prefix` to drill in.
    pub path: String,
}

/// One item of a memory listing (`BetaManagedAgentsMemoryListItem`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MemoryListItem {
    /// A memory.
    Memory(Memory),
    /// A directory rolled up.
    Prefix(MemoryPrefix),
}

/// What a version records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// The memory was created.
    Created,
    /// Its content and/or path changed.
    Modified,
    /// It was deleted.
    Deleted,
}

impl Operation {
    /// `created`, `modified` or `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Created => "created",
            Operation::Modified => "modified",
            Operation::Deleted => "deleted",
        }
    }

    /// Parses [`as_str`](Self::as_str)'s names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "created" => Some(Operation::Created),
            "modified" => Some(Operation::Modified),
            "deleted" => Some(Operation::Deleted),
            _ => None,
        }
    }
}

/// Who made a change (`BetaManagedAgentsActor`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Actor {
    /// An agent session writing through its mount (or the memory tool).
    #[serde(rename = "session_actor")]
    Session {
        /// `sesn_…`, or whatever id the application gives its sessions.
        session_id: String,
        /// Extension (the hosted `session_actor` has no such field): the API key that sent
        /// the session's write to `memory serve`, so naming a session never hides which key
        /// made the change. Absent when no key was used.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_key_id: Option<String>,
    },
    /// An API key (its id, never the secret).
    #[serde(rename = "api_actor")]
    Api {
        /// `apikey_…`.
        api_key_id: String,
    },
    /// A person (the Console, an admin command).
    #[serde(rename = "user_actor")]
    User {
        /// `user_…`.
        user_id: String,
    },
    /// A service account.
    #[serde(rename = "service_account_actor")]
    ServiceAccount {
        /// `svac_…`.
        service_account_id: String,
    },
}

impl Actor {
    /// Whether `id` can name a session sent by a client (`memory serve`'s
    /// `x-memory-session-id` header): 1 to 64 characters from `[0-9A-Za-z_-]`.
    pub fn is_valid_session_id(id: &str) -> bool {
        !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    /// A session actor.
    pub fn session(id: impl Into<String>) -> Self {
        Actor::Session {
            session_id: id.into(),
            api_key_id: None,
        }
    }

    /// A session actor whose write was sent with the API key `api_key_id`.
    pub fn session_via_key(id: impl Into<String>, api_key_id: impl Into<String>) -> Self {
        Actor::Session {
            session_id: id.into(),
            api_key_id: Some(api_key_id.into()),
        }
    }

    /// The API key behind this actor: an `api_actor`'s own, or the one a session's write was
    /// sent with.
    pub fn api_key_id(&self) -> Option<&str> {
        match self {
            Actor::Api { api_key_id } => Some(api_key_id),
            Actor::Session { api_key_id, .. } => api_key_id.as_deref(),
            _ => None,
        }
    }

    /// An API-key actor.
    pub fn api_key(id: impl Into<String>) -> Self {
        Actor::Api {
            api_key_id: id.into(),
        }
    }

    /// A user actor.
    pub fn user(id: impl Into<String>) -> Self {
        Actor::User { user_id: id.into() }
    }

    /// The discriminator (`session_actor`...) and the id, as stored.
    pub(crate) fn parts(&self) -> (&'static str, &str) {
        match self {
            Actor::Session { session_id, .. } => ("session_actor", session_id),
            Actor::Api { api_key_id } => ("api_actor", api_key_id),
            Actor::User { user_id } => ("user_actor", user_id),
            Actor::ServiceAccount { service_account_id } => {
                ("service_account_actor", service_account_id)
            }
        }
    }

    /// The inverse of [`parts`](Self::parts), with the session's API key.
    pub(crate) fn from_parts(kind: &str, id: String, session_key: Option<String>) -> Option<Self> {
        Some(match kind {
            "session_actor" => Actor::Session {
                session_id: id,
                api_key_id: session_key,
            },
            "api_actor" => Actor::Api { api_key_id: id },
            "user_actor" => Actor::User { user_id: id },
            "service_account_actor" => Actor::ServiceAccount {
                service_account_id: id,
            },
            _ => return None,
        })
    }
}

/// An immutable record of one change to a memory (`BetaManagedAgentsMemoryVersion`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "memory_version")]
pub struct MemoryVersion {
    /// `memver_…`.
    pub id: String,
    /// The store it belongs to.
    pub memory_store_id: String,
    /// The memory it records (still valid after the memory is deleted).
    pub memory_id: String,
    /// What happened.
    pub operation: Operation,
    /// When.
    pub created_at: Timestamp,
    /// Who, if recorded.
    pub created_by: Option<Actor>,
    /// The memory's path at that write; `None` once redacted.
    pub path: Option<String>,
    /// The content written; `None` in the basic view, for `deleted` and once redacted.
    pub content: Option<String>,
    /// Hash of that content; `None` for `deleted` and once redacted.
    pub content_sha256: Option<String>,
    /// Size of that content; `None` for `deleted` and once redacted.
    pub content_size_bytes: Option<u64>,
    /// When it was redacted.
    pub redacted_at: Option<Timestamp>,
    /// Who redacted it.
    pub redacted_by: Option<Actor>,
}

impl MemoryVersion {
    /// This version as `view` shows it (`basic` drops the content).
    pub fn with_view(mut self, view: View) -> Self {
        if view == View::Basic {
            self.content = None;
        }
        self
    }
}

/// A page of a listing: the items and the token of the next page (`None` on the last page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// Pass it as `page` to get the next page; `None` when there is none.
    pub next_page: Option<String>,
}

/// The `content_sha256` precondition of an update (`BetaManagedAgentsPreconditionParam`).
///
/// Deserializing is strict: `type` is required and must be `"content_sha256"`, and no other
/// key than `type` and `content_sha256` is accepted, each refusal with a message naming what
/// is wrong.
///
/// ```
/// use memory_store::Precondition;
///
/// let sha = "a".repeat(64);
/// let ok: Precondition =
///     serde_json::from_str(&format!(r#"{{"type":"content_sha256","content_sha256":"{sha}"}}"#)).unwrap();
/// assert_eq!(ok.content_sha256, sha);
/// let e = serde_json::from_str::<Precondition>(r#"{"content_sha256":"x"}"#).unwrap_err();
/// assert!(e.to_string().contains("precondition.type is required"));
/// let e = serde_json::from_str::<Precondition>(r#"{"type":"etag","content_sha256":"x"}"#).unwrap_err();
/// assert!(e.to_string().contains("precondition.type must be \"content_sha256\""));
/// let e = serde_json::from_str::<Precondition>(r#"{"type":"content_sha256","content_sha256":"x","if":1}"#).unwrap_err();
/// assert!(e.to_string().contains("unknown field `if`"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "content_sha256")]
pub struct Precondition {
    /// The hash the memory's current content must have (64 lowercase hex digits).
    pub content_sha256: String,
}

impl<'de> Deserialize<'de> for Precondition {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        if let Some(extra) = map.keys().find(|k| *k != "type" && *k != "content_sha256") {
            return Err(D::Error::custom(format!(
                "precondition has an unknown field `{extra}`; it takes `type` and `content_sha256`"
            )));
        }
        match map.remove("type") {
            None => {
                return Err(D::Error::custom(
                    "precondition.type is required; the only type is \"content_sha256\"",
                ));
            }
            Some(serde_json::Value::String(t)) if t == "content_sha256" => {}
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "precondition.type must be \"content_sha256\", not {other}"
                )));
            }
        }
        match map.remove("content_sha256") {
            Some(serde_json::Value::String(sha)) => Ok(Precondition {
                content_sha256: sha,
            }),
            Some(_) => Err(D::Error::custom(
                "precondition.content_sha256 must be a string of 64 lowercase hexadecimal characters",
            )),
            None => Err(D::Error::custom(
                "precondition.content_sha256 is required with type \"content_sha256\"",
            )),
        }
    }
}

impl Precondition {
    /// A precondition on `sha256` (64 lowercase hex digits).
    pub fn content_sha256(sha256: impl Into<String>) -> Self {
        Precondition {
            content_sha256: sha256.into(),
        }
    }
}

/// Parameters of [`create_store`](crate::MemoryStores::create_store).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateStore {
    /// 1–255 characters, no control characters.
    pub name: String,
    /// At most 1,024 characters.
    #[serde(default)]
    pub description: Option<String>,
    /// At most 16 pairs; keys 1–64 characters, values at most 512.
    #[serde(default)]
    pub metadata: Option<BTreeMap<String, String>>,
}

/// Parameters of [`update_store`](crate::MemoryStores::update_store). `None` keeps a field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateStore {
    /// A new name.
    #[serde(default)]
    pub name: Option<String>,
    /// A new description (`""` clears it).
    #[serde(default)]
    pub description: Option<String>,
    /// A patch: a key with a value upserts, a key with `None` deletes, other keys stay.
    #[serde(default)]
    pub metadata: Option<BTreeMap<String, Option<String>>>,
}

/// Parameters of [`list_stores`](crate::MemoryStores::list_stores).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListStores {
    /// Only stores created at or after this time.
    pub created_at_gte: Option<Timestamp>,
    /// Only stores created at or before this time.
    pub created_at_lte: Option<Timestamp>,
    /// Include archived stores.
    pub include_archived: bool,
    /// Page size, 1–100 (default 20).
    pub limit: Option<i64>,
    /// A `next_page` token of an earlier page.
    pub page: Option<String>,
}

/// Parameters of [`update_memory`](crate::MemoryStores::update_memory), and the body of
/// `POST …/memories/{id}`. At least one of `content` and `path` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateMemory {
    /// New content (`None`: unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// New path, a rename (`None`: unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Apply only if the current content has this hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<Precondition>,
}

/// Parameters of [`list_memories`](crate::MemoryStores::list_memories).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListMemories {
    /// Only memories below this directory (must end with `/`; matches whole segments).
    pub path_prefix: Option<String>,
    /// `0` (or `None`): the whole subtree; `1`: direct children, deeper ones rolled up into
    /// [`MemoryPrefix`] items. Anything else is refused.
    pub depth: Option<i64>,
    /// Page size, 1–100 (default 20; at most 20 with [`View::Full`]).
    pub limit: Option<i64>,
    /// A `next_page` token of an earlier page of the same listing.
    pub page: Option<String>,
    /// Whether items carry their content.
    pub view: View,
}

/// Parameters of [`list_versions`](crate::MemoryStores::list_versions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListVersions {
    /// Only versions of this memory (works after it was deleted).
    pub memory_id: Option<String>,
    /// Only versions with this operation.
    pub operation: Option<Operation>,
    /// Only versions written by this session.
    pub session_id: Option<String>,
    /// Only versions written with this API key (its `api_actor` versions and the session
    /// versions it sent).
    pub api_key_id: Option<String>,
    /// Only versions written by this service account.
    pub service_account_id: Option<String>,
    /// Only versions created at or after this time.
    pub created_at_gte: Option<Timestamp>,
    /// Only versions created at or before this time.
    pub created_at_lte: Option<Timestamp>,
    /// Page size, 1–100 (default 20; at most 20 with [`View::Full`]).
    pub limit: Option<i64>,
    /// A `next_page` token of an earlier page of the same listing.
    pub page: Option<String>,
    /// Whether items carry their content.
    pub view: View,
}
