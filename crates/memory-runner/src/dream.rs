//! Dreams: a consolidation pass that reads one store and writes a reorganised copy into
//! another, for review, never touching the original (feature `stores`).
//!
//! [`Dream::run`] opens the source with [`OpenOptions::read_only`] (core's
//! [`ReadOnly`](memory_core::ReadOnly) wrapper refuses every change, and the backend is opened
//! so that nothing on disk changes: no lock file, no count file, no cleanup, no `-wal`), mounts
//! it read-only at `/memories/source` and the output store read-write at `/memories/output`
//! ([`Mounts`]), and runs Claude with the memory tool and instructions to consolidate: merge
//! duplicates, resolve contradictions in favour of the newest, reorganise into a clear tree.
//! The source is protected by code, not by the prompt: a write Claude aims at it is refused
//! like any write into a read-only mount. The output must be empty (or new) unless
//! [`Dream::force`]; the [`DreamReport`] lists the files the dream created, changed and
//! deleted in it. A versioned output store (`store+sqlite:`, `store+http(s):`) records each
//! write as a version by the dream's session ([`DreamReport::session_id`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use memory_runner::Client;
//! use memory_runner::dream::Dream;
//!
//! let report = Dream::new("./memory", "./memory-dreamed")
//!     .instructions("Keep the recipes folder as it is.")
//!     .run(Client::from_env()?)
//!     .await?;
//! for path in &report.created {
//!     println!("created {path}");
//! }
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use memory_core::messages::{
    EndReason, EventHandler, Message, MessageResponse, MessagesRequest, MessagesTransport,
    Observed, ToolCall, ToolRunner, Usage,
};
use memory_core::{MemoryPath, MemoryTool, Storage};
use memory_mounts::{Access, Mount, Mounts, MountsError};

use crate::{OpenError, OpenOptions, open_with};

mod overlap;

/// The model a dream asks unless [`Dream::model`] says otherwise.
pub const DEFAULT_DREAM_MODEL: &str = "claude-sonnet-4-5";

/// How many requests a dream sends at most unless [`Dream::max_iterations`] says otherwise:
/// reading a store file by file and writing its copy takes many turns.
pub const DEFAULT_DREAM_MAX_ITERATIONS: usize = 100;

/// The folder the source is mounted at.
pub const SOURCE_FOLDER: &str = "/memories/source";

/// The folder the output is mounted at.
pub const OUTPUT_FOLDER: &str = "/memories/output";

/// What Claude is told to do (the system prompt, before the mount note and any
/// [`Dream::instructions`]).
pub const DREAM_PROMPT: &str = "\
You are dreaming: a consolidation pass over a memory store, done while no one is waiting.
The memories to consolidate are in /memories/source, which is read-only. Write a consolidated \
copy of them into /memories/output, which starts empty:
- read everything in /memories/source first (view the folder, then every file);
- merge duplicates: one file per subject, each fact once;
- resolve contradictions in favour of the newest information (later dates, later \
statements, the more recent file), and drop what it supersedes;
- reorganise into a clear tree: folders by topic, short descriptive file names, a short \
README.md at the top saying what is where;
- keep every fact that is still true; invent nothing.
Never try to change /memories/source. When /memories/output holds the consolidated memory, \
stop and say in a few lines what you merged, resolved and reorganised.";

/// Why a dream did not run, or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DreamError<E: std::error::Error + 'static> {
    /// The source store could not be opened read-only.
    #[error("cannot open the dream's source: {0}")]
    Source(#[source] OpenError),
    /// The output store could not be opened.
    #[error("cannot open the dream's output: {0}")]
    Output(#[source] OpenError),
    /// The output already holds files (and [`Dream::force`] was not set).
    #[error(
        "the dream's output {url} already holds {files} files; dream into an empty or new \
         store, or pass --force to write over it"
    )]
    OutputNotEmpty {
        /// The output store's URL (without options).
        url: String,
        /// How many files it holds.
        files: usize,
    },
    /// `--from` and `--into` name the same store, or one is inside the other (the output in
    /// the source's folder, the source in the output's), however they are named (a symlink,
    /// a bind mount, a hard link, another spelling, another name of the same PostgreSQL
    /// server): the dream would write into its source.
    #[error(
        "the dream's source and output are the same store, or one is inside the other \
         ({url}); dream into another store"
    )]
    SameStore {
        /// The store's URL (without options).
        url: String,
    },
    /// Reading the output store (before or after the dream) failed.
    #[error("cannot read the dream's output: {0}")]
    Storage(#[source] memory_core::Error),
    /// The two stores could not be mounted together.
    #[error("cannot mount the dream's stores: {0}")]
    Mounts(#[source] MountsError),
    /// A request to the Messages API failed; what was written so far stays in the output.
    #[error("the dream stopped: {0}")]
    Request(#[source] E),
}

/// What a dream did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DreamReport {
    /// Files of the output the dream created, in path order.
    pub created: Vec<MemoryPath>,
    /// Files of the output whose contents the dream changed.
    pub changed: Vec<MemoryPath>,
    /// Files of the output the dream deleted (only with [`Dream::force`]).
    pub deleted: Vec<MemoryPath>,
    /// Claude's last reply (its summary).
    pub reply: Option<MessageResponse>,
    /// Why the run ended.
    pub end_reason: Option<EndReason>,
    /// How many requests were sent.
    pub requests: usize,
    /// The tokens of every request, summed.
    pub usage: Usage,
    /// The session a versioned output's versions are recorded under.
    pub session_id: String,
}

/// Something called after each memory command of a dream (e.g. to print a trace line).
pub type CallObserver = Arc<dyn Fn(&ToolCall<'_>) + Send + Sync>;

/// A dream, set up: [`Dream::new`], options, then [`Dream::run`].
#[derive(Clone)]
pub struct Dream {
    from: String,
    into: String,
    instructions: Option<String>,
    model: String,
    max_tokens: u32,
    max_iterations: usize,
    force: bool,
    from_options: OpenOptions,
    into_options: OpenOptions,
    on_event: Option<EventHandler>,
    observer: Option<CallObserver>,
}

impl fmt::Debug for Dream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dream")
            .field("from", &strip_query(&self.from))
            .field("into", &strip_query(&self.into))
            .field("model", &self.model)
            .field("max_iterations", &self.max_iterations)
            .field("force", &self.force)
            .finish_non_exhaustive()
    }
}

fn strip_query(url: &str) -> &str {
    url.split_once('?').map_or(url, |(base, _)| base)
}

impl Dream {
    /// A dream reading the store at URL `from` and writing into the store at URL `into`
    /// (any store URL: see [`crate::store`]).
    pub fn new(from: impl Into<String>, into: impl Into<String>) -> Self {
        Dream {
            from: from.into(),
            into: into.into(),
            instructions: None,
            model: DEFAULT_DREAM_MODEL.to_owned(),
            max_tokens: 8192,
            max_iterations: DEFAULT_DREAM_MAX_ITERATIONS,
            force: false,
            from_options: OpenOptions::new(),
            into_options: OpenOptions::new(),
            on_event: None,
            observer: None,
        }
    }

    /// Adds instructions of your own (after the dream's).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Sets the most tokens Claude may write per reply (default 8192).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets how many requests the dream sends at most.
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations.max(1);
        self
    }

    /// Dreams into an output that already holds files (they may be changed or deleted).
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    /// How the source is opened (its encryption key file, the environment...); it is always
    /// opened read-only on top of these. A source that holds encrypted files but is given no
    /// key is refused before any request (Claude would read ciphertext).
    pub fn source_options(mut self, options: OpenOptions) -> Self {
        self.from_options = options;
        self
    }

    /// How the output is opened (its own encryption key file, which may differ from the
    /// source's); a versioned output records its versions under [`OpenOptions::session_id`]
    /// (a new `sesn_…` id when unset). An output that holds encrypted files but is given no
    /// key is refused, so that no plaintext is mixed into it.
    pub fn output_options(mut self, options: OpenOptions) -> Self {
        self.into_options = options;
        self
    }

    /// Streams the requests, calling `handler` with each event (e.g. to print Claude's text
    /// as it is written).
    pub fn on_event(
        mut self,
        handler: impl Fn(&memory_core::messages::StreamEvent) + Send + Sync + 'static,
    ) -> Self {
        self.on_event = Some(Arc::new(handler));
        self
    }

    /// Calls `observer` after each memory command.
    pub fn observe(mut self, observer: impl Fn(&ToolCall<'_>) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Runs the dream with `transport` (memory-runner's [`Client`](crate::Client), or any
    /// other).
    ///
    /// # Errors
    /// [`DreamError`]: a store that does not open (the source read-only, the output as
    /// asked), an output holding files without [`force`](Self::force), a failed request
    /// (the output keeps what was written until then).
    pub async fn run<T>(self, transport: T) -> Result<DreamReport, DreamError<T::Error>>
    where
        T: MessagesTransport,
    {
        if same_store(&self.from, &self.into)
            || same_postgres(
                &self.from,
                &self.from_options,
                &self.into,
                &self.into_options,
            )
            .await
        {
            return Err(DreamError::SameStore {
                url: strip_query(&self.into).to_owned(),
            });
        }
        // Opening refuses an encrypted store given no key (OpenError::Encrypted).
        let source = open_with(&self.from, &self.from_options.clone().with_read_only())
            .await
            .map_err(DreamError::Source)?;
        let session_id = self
            .into_options
            .session_id
            .clone()
            .unwrap_or_else(memory_mounts::new_session_id);
        let into_options = self.into_options.clone().with_session_id(&session_id);
        let output = open_with(&self.into, &into_options)
            .await
            .map_err(DreamError::Output)?;
        let before = contents(&*output).await.map_err(DreamError::Storage)?;
        if !before.is_empty() && !self.force {
            return Err(DreamError::OutputNotEmpty {
                url: strip_query(&self.into).to_owned(),
                files: before.len(),
            });
        }
        tracing::info!(
            source = %source, output = %output, session_id, model = %self.model,
            "dreaming"
        );
        let mounts = Mounts::new([
            Mount::new("Source", source, Access::ReadOnly).with_description(
                "The memories to consolidate, read-only: the original is never changed.",
            ),
            Mount::new("Output", Arc::clone(&output), Access::ReadWrite)
                .with_description("Where the consolidated copy goes, for a person to review."),
        ])
        .map_err(DreamError::Mounts)?;
        let mut system = format!("{DREAM_PROMPT}\n\n{}", mounts.note());
        if let Some(instructions) = &self.instructions {
            system.push_str("\n\nMore instructions for this dream:\n");
            system.push_str(instructions);
        }
        let request = MessagesRequest::new(&self.model, self.max_tokens)
            .system(system)
            .message(Message::user(format!(
                "Consolidate the memories in {SOURCE_FOLDER} into {OUTPUT_FOLDER}."
            )));
        let tool = MemoryTool::new(mounts);
        let observer = self.observer.clone();
        let traced = Observed::new(tool, move |call: &ToolCall<'_>| {
            if let Some(observer) = &observer {
                observer(call);
            }
        });
        let mut runner = ToolRunner::new(transport, request)
            .tool(traced)
            .max_iterations(self.max_iterations);
        if let Some(handler) = self.on_event.clone() {
            runner = runner.on_event(move |event| handler(event));
        }
        let mut run = runner.run();
        let mut failed = None;
        while let Some(reply) = run.next().await {
            if let Err(e) = reply {
                failed = Some(e);
            }
        }
        if let Some(e) = failed {
            return Err(DreamError::Request(e));
        }
        let after = contents(&*output).await.map_err(DreamError::Storage)?;
        let (created, changed, deleted) = changes(&before, &after);
        Ok(DreamReport {
            created,
            changed,
            deleted,
            reply: run.last_reply().cloned(),
            end_reason: run.end_reason().cloned(),
            requests: run.iterations(),
            usage: run.usage().clone(),
            session_id,
        })
    }
}

/// Whether two store URLs name the same store, or one store inside the other: the same URL,
/// or two local stores (folders, SQLite files, versioned stores' databases) that are one
/// entry on disk or nested, however their paths are spelt ([`overlap`]).
fn same_store(from: &str, into: &str) -> bool {
    let (from, into) = (strip_query(from), strip_query(into));
    if from == into {
        return true;
    }
    let (Ok(a), Ok(b)) = (
        from.parse::<crate::StoreUrl>(),
        into.parse::<crate::StoreUrl>(),
    ) else {
        return false;
    };
    overlap::overlap(&a, &b)
}

/// Whether two PostgreSQL store URLs name one store on one server, however named
/// ([`overlap::same_postgres`]); `false` without feature `postgres`.
async fn same_postgres(
    from: &str,
    from_options: &OpenOptions,
    into: &str,
    into_options: &OpenOptions,
) -> bool {
    #[cfg(feature = "postgres")]
    if let (Ok(a), Ok(b)) = (
        from.parse::<crate::StoreUrl>(),
        into.parse::<crate::StoreUrl>(),
    ) {
        return overlap::same_postgres(&a, from_options, &b, into_options).await;
    }
    let _ = (from, from_options, into, into_options);
    false
}

/// Every file of `store` and its bytes.
async fn contents(store: &dyn Storage) -> memory_core::Result<BTreeMap<MemoryPath, Vec<u8>>> {
    let mut files = BTreeMap::new();
    for meta in store.list(&MemoryPath::root()).await? {
        let file = store.read(&meta.path).await?;
        files.insert(meta.path, file.contents);
    }
    Ok(files)
}

type Changes = (Vec<MemoryPath>, Vec<MemoryPath>, Vec<MemoryPath>);

/// (created, changed, deleted) from `before` to `after`, each in path order.
fn changes(
    before: &BTreeMap<MemoryPath, Vec<u8>>,
    after: &BTreeMap<MemoryPath, Vec<u8>>,
) -> Changes {
    let mut created = Vec::new();
    let mut changed = Vec::new();
    for (path, bytes) in after {
        match before.get(path) {
            None => created.push(path.clone()),
            Some(old) if old != bytes => changed.push(path.clone()),
            Some(_) => {}
        }
    }
    let deleted = before
        .keys()
        .filter(|path| !after.contains_key(*path))
        .cloned()
        .collect();
    (created, changed, deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(path: &str) -> MemoryPath {
        MemoryPath::parse(path).unwrap()
    }

    #[test]
    fn changes_are_sorted_into_created_changed_and_deleted() {
        let before = BTreeMap::from([
            (p("/memories/a.md"), b"a".to_vec()),
            (p("/memories/b.md"), b"b".to_vec()),
            (p("/memories/c.md"), b"c".to_vec()),
        ]);
        let after = BTreeMap::from([
            (p("/memories/a.md"), b"a".to_vec()),
            (p("/memories/b.md"), b"B".to_vec()),
            (p("/memories/d/e.md"), b"e".to_vec()),
        ]);
        let (created, changed, deleted) = changes(&before, &after);
        assert_eq!(created, [p("/memories/d/e.md")]);
        assert_eq!(changed, [p("/memories/b.md")]);
        assert_eq!(deleted, [p("/memories/c.md")]);
    }
}
