//! `memory store ...`: administer the versioned memory stores of a `memory serve` database
//! directly (list, history, redact, restore, export). Output is JSON, one object per line
//! (`export` prints one document).

use std::io::Write;
use std::process::ExitCode;

use memory_store::{
    Actor, ListMemories, ListStores, ListVersions, MemoryStores, Page, Precondition, StoreError,
    UpdateMemory, View,
};
use serde::Serialize;

use crate::exit::Exit;
use crate::store_args::DbArgs;

/// Arguments of `memory store`.
#[derive(Debug, clap::Args)]
pub(crate) struct StoreAdminArgs {
    #[command(flatten)]
    db: DbArgs,

    /// Record writes (redact, restore) as this user (`user_...`); otherwise no actor.
    #[arg(long, global = true, value_name = "USER_ID")]
    as_user: Option<String>,

    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, clap::Subcommand)]
enum StoreCommand {
    /// List the stores, newest first.
    List {
        /// Include archived stores.
        #[arg(long)]
        include_archived: bool,
    },
    /// List a store's memories in path order.
    Memories {
        /// The store id (`memstore_...`).
        store: String,
        /// Only below this directory (ends with `/`).
        #[arg(long)]
        path_prefix: Option<String>,
        /// 0: the whole subtree; 1: direct children, deeper ones rolled up.
        #[arg(long)]
        depth: Option<i64>,
    },
    /// Show a memory's versions, newest first (works after the memory was deleted).
    History {
        /// The store id.
        store: String,
        /// The memory id (`mem_...`).
        memory: String,
        /// Include each version's content.
        #[arg(long)]
        full: bool,
    },
    /// Redact a version: wipe its content and path, keep who and when.
    Redact {
        /// The store id.
        store: String,
        /// The version id (`memver_...`).
        version: String,
    },
    /// Write an earlier version's content back (the memory is recreated at the version's
    /// path if it was deleted). The write is a new version; history is never rewritten.
    Restore {
        /// The store id.
        store: String,
        /// The version id whose content to restore.
        version: String,
    },
    /// Print a store with all its memories and versions (with content) as one JSON document.
    Export {
        /// The store id.
        store: String,
    },
}

fn print_line(value: &impl Serialize) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)
}

/// Fetches every page of a listing.
async fn all<T, F, Fut>(mut page_of: F) -> Result<Vec<T>, StoreError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Page<T>, StoreError>>,
{
    let mut items = Vec::new();
    let mut page = None;
    loop {
        let p = page_of(page).await?;
        items.extend(p.data);
        match p.next_page {
            Some(next) => page = Some(next),
            None => return Ok(items),
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum AdminError {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
    #[error("version {0} has no content to restore (a deletion or a redacted version)")]
    NothingToRestore(String),
    #[error("store {store} has no memory {memory}")]
    NoSuchMemory { store: String, memory: String },
}

impl AdminError {
    /// The exit status: 3 for what does not exist, 1 for the rest.
    fn exit(&self) -> Exit {
        match self {
            AdminError::Store(StoreError::NotFound { .. }) | AdminError::NoSuchMemory { .. } => {
                Exit::NotFound
            }
            _ => Exit::Failed,
        }
    }
}

/// Runs a `memory store` subcommand. Exit 0 on success, 1 when the operation fails, 2 when
/// the database cannot be opened, 3 when the store, memory or version does not exist.
pub(crate) async fn run(args: StoreAdminArgs) -> ExitCode {
    let engine = match args.db.open(memory_store::EngineOptions::default()).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("memory store: {e}");
            return Exit::Usage.into();
        }
    };
    let actor = args.as_user.clone().map(Actor::user);
    match dispatch(&engine, args.command, actor).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memory store: {e}");
            e.exit().into()
        }
    }
}

async fn dispatch(
    engine: &MemoryStores,
    command: StoreCommand,
    actor: Option<Actor>,
) -> Result<(), AdminError> {
    match command {
        StoreCommand::List { include_archived } => {
            let stores = all(|page| {
                engine.list_stores(ListStores {
                    include_archived,
                    limit: Some(100),
                    page,
                    ..Default::default()
                })
            })
            .await?;
            for s in stores {
                print_line(&s)?;
            }
        }
        StoreCommand::Memories {
            store,
            path_prefix,
            depth,
        } => {
            let items = all(|page| {
                engine.list_memories(
                    &store,
                    ListMemories {
                        path_prefix: path_prefix.clone(),
                        depth,
                        limit: Some(100),
                        page,
                        view: View::Basic,
                    },
                )
            })
            .await?;
            for item in items {
                print_line(&item)?;
            }
        }
        StoreCommand::History {
            store,
            memory,
            full,
        } => {
            let view = if full { View::Full } else { View::Basic };
            let versions = all(|page| {
                engine.list_versions(
                    &store,
                    ListVersions {
                        memory_id: Some(memory.clone()),
                        limit: Some(if full { 20 } else { 100 }),
                        page,
                        view,
                        ..Default::default()
                    },
                )
            })
            .await?;
            // Every memory has a version from its creation on, kept after it is deleted: no
            // version at all means no such memory.
            if versions.is_empty() {
                return Err(AdminError::NoSuchMemory { store, memory });
            }
            for v in versions {
                print_line(&v)?;
            }
        }
        StoreCommand::Redact { store, version } => {
            print_line(&engine.redact_version(&store, &version, actor).await?)?;
        }
        StoreCommand::Restore { store, version } => {
            let v = engine.retrieve_version(&store, &version).await?;
            let (Some(content), Some(path)) = (v.content, v.path) else {
                return Err(AdminError::NothingToRestore(version));
            };
            let memory = match engine.retrieve_memory(&store, &v.memory_id).await {
                Ok(current) => {
                    let update = UpdateMemory {
                        content: Some(content),
                        path: None,
                        precondition: Some(Precondition::content_sha256(current.content_sha256)),
                    };
                    engine
                        .update_memory(&store, &v.memory_id, update, actor)
                        .await?
                }
                Err(StoreError::NotFound { .. }) => {
                    engine.create_memory(&store, &path, &content, actor).await?
                }
                Err(e) => return Err(e.into()),
            };
            print_line(&memory.with_view(View::Basic))?;
        }
        StoreCommand::Export { store } => {
            let s = engine.retrieve_store(&store).await?;
            let memories = all(|page| {
                engine.list_memories(
                    &store,
                    ListMemories {
                        limit: Some(20),
                        page,
                        view: View::Full,
                        ..Default::default()
                    },
                )
            })
            .await?;
            let versions = all(|page| {
                engine.list_versions(
                    &store,
                    ListVersions {
                        limit: Some(20),
                        page,
                        view: View::Full,
                        ..Default::default()
                    },
                )
            })
            .await?;
            let doc = serde_json::json!({
                "memory_store": s,
                "memories": memories,
                "memory_versions": versions,
            });
            print_line(&doc)?;
        }
    }
    Ok(())
}
