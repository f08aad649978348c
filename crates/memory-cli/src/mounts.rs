//! `--mount [NAME=]URL[:ro]` and `--mount-instructions NAME=TEXT` for `memory run` and
//! `memory mcp`: several stores under one `/memories`, each at `/memories/<slug>` (of the
//! store's display name, or of NAME), read-only or read-write, and the mount note that tells
//! the model (in `memory run`'s system prompt, in `memory mcp`'s tool description).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use memory_cli::store_url::{self, StoreUrl, compiled_schemes};
use memory_core::{InMemoryStorage, Storage};
use memory_runner::mounts::memory_store::Actor;
use memory_runner::mounts::{
    Access, MAX_INSTRUCTIONS_CHARS, MAX_MOUNTS, Mount, MountInstructions, MountSpec,
    MountSpecError, Mounts, new_session_id,
};
use memory_runner::{OpenOptions, STORE_API_KEY_VAR, open_mount};

use crate::exit::Exit;
use crate::failure::Failure;
use crate::store_args::{OpenMode, StoreArgs};

/// What `--help` of `memory run` and `memory mcp` says about mounts, with the versioned-store
/// URL forms this build opens (from memory-runner's list of compiled schemes).
pub(crate) fn mount_help() -> String {
    let forms: Vec<(&str, &str)> = compiled_schemes()
        .into_iter()
        .filter(|scheme| scheme.is_versioned_store())
        .map(|scheme| (scheme.form(), scheme.about()))
        .collect();
    let width = forms.iter().map(|(form, _)| form.len()).max().unwrap_or(0);
    let mut urls = String::new();
    for (form, about) in &forms {
        urls.push_str(&format!("  {form:width$}  {about}\n"));
    }
    format!(
        "\
Mounts (--mount [NAME=]URL[:ro], up to {MAX_MOUNTS}): each store appears at /memories/<folder>.
Without NAME=, a versioned store's folder is the slug of its display name: lowercased,
every run of characters other than a-z and 0-9 turned into one '-', '-' trimmed from
both ends (\"Team Handbook\" -> team-handbook); a name with nothing left gives the store
id, and a folder already taken gets -2, -3, ... NAME= sets the folder instead (slugged
the same way, a NAME with nothing left giving the store id; any store that is not a
versioned one needs it). NAME is everything before the first '=' ahead of the URL's
scheme, '/' and '?' included. A final :ro makes the
mount read-only. The folders chosen are printed on standard error at start. An
archived store cannot be mounted (exit status 2). Versioned store URLs:
{urls}A remote store's API key comes from {STORE_API_KEY_VAR}.
--mount-instructions FOLDER=TEXT (at most {MAX_INSTRUCTIONS_CHARS} characters) tells Claude how to
use the mount FOLDER; Claude is told each mount's folder, access, name, description
and instructions. With --mount, --store is not used. Every write to a versioned store
is a version by the session: --session-id (1 to 64 of [0-9A-Za-z_-]), else a new
sesn_... id per run, printed on standard error at start; other stores record the same
session in their history (memory log)."
    )
}

/// One `--mount`: memory-mounts' `[NAME=]URL[:ro]`, its URL's `~/` in the home directory as
/// for every store URL.
fn parse_mount(raw: &str) -> Result<MountSpec, String> {
    let mut spec: MountSpec = raw.parse().map_err(|e: MountSpecError| e.to_string())?;
    spec.url = crate::store_args::store_url_arg(&spec.url)?;
    Ok(spec)
}

/// `--session-id`: the rule every versioned store applies (memory-store's
/// `Actor::is_valid_session_id`), checked for every store so a bad id is a usage error.
pub(crate) fn parse_session_id(raw: &str) -> Result<String, String> {
    if Actor::is_valid_session_id(raw) {
        Ok(raw.to_owned())
    } else {
        Err("a session id is 1 to 64 characters from [0-9A-Za-z_-]".to_owned())
    }
}

/// The `--mount`, `--mount-instructions` and `--session-id` options.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MountArgs {
    /// Mount a store at /memories/<slug of a versioned store's display name, or of NAME>
    /// (repeat, up to 8); a final `:ro` makes it read-only. With --mount, --store is not used.
    #[arg(long = "mount", value_name = "[NAME=]URL[:ro]", value_parser = parse_mount)]
    pub(crate) mounts: Vec<MountSpec>,

    /// Instructions for the mount whose folder is NAME (`team-handbook` for
    /// /memories/team-handbook), shown to Claude with the store's name and description; at
    /// most 4,096 characters (repeat for several mounts).
    #[arg(
        long = "mount-instructions",
        value_name = "NAME=TEXT",
        requires = "mounts"
    )]
    pub(crate) instructions: Vec<MountInstructions>,

    /// The session id recorded on every version this run makes: a versioned store's
    /// versions, and any other store's history (`memory log` shows it); 1 to 64 characters
    /// from [0-9A-Za-z_-] (default: a new `sesn_...` id, printed at start for a versioned
    /// store).
    #[arg(long, env = "MEMORY_SESSION_ID", value_name = "ID", value_parser = parse_session_id)]
    pub(crate) session_id: Option<String>,
}

impl MountArgs {
    /// The session id: the one given, or a new one, which is printed on standard error when
    /// this run writes to a versioned store (`--store` or a `--mount` of one), so its
    /// versions can be found afterwards.
    pub(crate) fn session_id(&self, store: &StoreArgs) -> String {
        if let Some(id) = &self.session_id {
            return id.clone();
        }
        let id = new_session_id();
        if self.uses_versioned_store(store) {
            eprintln!("memory: session id {id} (recorded on every version this run writes)");
        }
        id
    }

    /// Whether any store of this run is a versioned one (`store+…`).
    fn uses_versioned_store(&self, store: &StoreArgs) -> bool {
        let versioned = |url: &str| {
            url.parse::<StoreUrl>()
                .is_ok_and(|url| url.scheme().is_versioned_store())
        };
        if self.mounts.is_empty() {
            versioned(store.url())
        } else {
            self.mounts.iter().any(|spec| versioned(&spec.url))
        }
    }

    /// Opens every mount with `options` (which should carry the session id) and gives each its
    /// `--mount-instructions`, or `None` without `--mount`. Each mount's folder is printed on
    /// standard error. The error is the message for standard error.
    pub(crate) async fn open(&self, options: &OpenOptions) -> Result<Option<Mounts>, String> {
        if self.mounts.is_empty() {
            return Ok(None);
        }
        if self.mounts.len() > MAX_MOUNTS {
            return Err(format!(
                "at most {MAX_MOUNTS} --mount options, got {}",
                self.mounts.len()
            ));
        }
        let mut folders = BTreeSet::new();
        for given in &self.instructions {
            if !folders.insert(given.folder.as_str()) {
                return Err(format!(
                    "--mount-instructions for `{}` given twice",
                    given.folder
                ));
            }
        }
        // Versioned stores first: fetching one creates nothing, and gives the display name
        // its folder comes from. Then the instructions are checked against the folders, and
        // only then are the other stores opened (which may create them).
        let mut opened = Vec::with_capacity(self.mounts.len());
        for spec in &self.mounts {
            let url = parse(spec)?;
            if url.scheme().is_versioned_store() || spec.name.is_none() {
                opened.push(Some(open_one(spec, &url, options).await?));
            } else {
                opened.push(None);
            }
        }
        if !self.instructions.is_empty() {
            let planned = self.mounts.iter().zip(&opened).map(|(spec, mount)| {
                mount.clone().unwrap_or_else(|| {
                    let name = spec.name.clone().unwrap_or_default();
                    Mount::new(name, Arc::new(InMemoryStorage::new()), spec.access)
                })
            });
            self.with_instructions(Mounts::new(planned).map_err(|e| e.to_string())?)?;
        }
        let mut mounts = Vec::with_capacity(opened.len());
        for (spec, mount) in self.mounts.iter().zip(opened) {
            mounts.push(match mount {
                Some(mount) => mount,
                None => open_one(spec, &parse(spec)?, options).await?,
            });
        }
        let mounts = self.with_instructions(Mounts::new(mounts).map_err(|e| e.to_string())?)?;
        for (root, mount) in mounts.mounts() {
            let store = match mount.id() {
                Some(id) => format!(" (store {id})"),
                None => String::new(),
            };
            let access = match mount.access() {
                Access::ReadOnly => "read-only",
                Access::ReadWrite => "read-write",
            };
            eprintln!(
                "memory: mounted {:?}{store} at {root}, {access}",
                mount.name()
            );
        }
        Ok(Some(mounts))
    }

    /// `mounts` with every `--mount-instructions` given to its folder.
    fn with_instructions(&self, mut mounts: Mounts) -> Result<Mounts, String> {
        for given in &self.instructions {
            mounts = mounts
                .with_instructions_for(&given.folder, given.text.clone())
                .map_err(|e| format!("--mount-instructions: {e}"))?;
        }
        Ok(mounts)
    }
}

/// The message for a mount that fails.
fn failed(spec: &MountSpec, text: String) -> String {
    format!("cannot mount `{}`: {text}", spec.label())
}

/// A mount's store URL.
fn parse(spec: &MountSpec) -> Result<StoreUrl, String> {
    spec.url
        .parse()
        .map_err(|e| failed(spec, format!("invalid store URL `{}`: {e}", spec.url)))
}

/// Opens one mount and checks its store, as --store is checked (a read-only store is never
/// created).
async fn open_one(
    spec: &MountSpec,
    url: &StoreUrl,
    options: &OpenOptions,
) -> Result<Mount, String> {
    if spec.access == Access::ReadOnly
        && let Some(path) = store_url::local_path(url)
        && !path.exists()
    {
        return Err(failed(
            spec,
            format!("the store `{}` does not exist", spec.url),
        ));
    }
    let mount = open_mount(spec, options)
        .await
        .map_err(|e| failed(spec, crate::failure::error_chain(&e)))?;
    store_url::check(url, mount.storage().as_ref())
        .await
        .map_err(|e| failed(spec, crate::failure::error_chain(&e)))?;
    Ok(mount)
}

/// The store of `memory run` and `memory mcp`: with `--mount`, the mounts (and the mount note
/// the model is told); otherwise `--store`, opened for `access`.
pub(crate) async fn open_store_or_mounts(
    store: &StoreArgs,
    mounts: &MountArgs,
    options: &OpenOptions,
    access: OpenMode,
) -> Result<(Arc<dyn Storage>, Option<String>), Failure> {
    match mounts.open(options).await {
        Ok(Some(mounts)) => {
            let note = mounts.note();
            Ok((Arc::new(mounts), Some(note)))
        }
        Ok(None) => Ok((store.open_with(options, access).await?, None)),
        Err(message) => Err(Failure::new(Exit::Usage, message)),
    }
}

/// `text` with the mount note after it (a blank line between), or the note alone.
pub(crate) fn with_note(text: Option<&str>, note: &str) -> String {
    match text {
        Some(text) if !text.trim().is_empty() => format!("{}\n\n{note}", text.trim_end()),
        _ => note.to_owned(),
    }
}

/// An MCP tool definition whose description ends with the mount note.
pub(crate) fn describe(mut tool: rmcp::model::Tool, note: Option<&str>) -> rmcp::model::Tool {
    if let Some(note) = note {
        let description = tool.description.take().unwrap_or_default();
        tool.description = Some(Cow::Owned(format!("{}\n\n{note}", description.trim_end())));
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        mounts: MountArgs,
    }

    #[test]
    fn mount_options_parse() {
        let cli = Cli::try_parse_from([
            "x",
            "--mount",
            "Team Handbook=store+sqlite:s.db#memstore_1:ro",
            "--mount",
            "notes=./notes",
            "--session-id",
            "sesn_1",
        ])
        .unwrap();
        assert_eq!(cli.mounts.mounts.len(), 2);
        assert_eq!(cli.mounts.mounts[0].access, Access::ReadOnly);
        assert_eq!(cli.mounts.mounts[1].url, "./notes");
        assert_eq!(cli.mounts.session_id(&StoreArgs::default()), "sesn_1");
        let err = Cli::try_parse_from(["x", "--mount", "=./notes"]).unwrap_err();
        assert!(err.to_string().contains("[NAME=]URL[:ro]"), "{err}");
        assert!(err.to_string().contains("mount name"), "{err}");
    }

    #[test]
    fn session_ids_follow_the_one_rule_for_every_store() {
        for bad in ["bad id!", "", &"x".repeat(65), "sesn/1"] {
            let err = Cli::try_parse_from(["x", "--session-id", bad]).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
            assert!(err.to_string().contains("[0-9A-Za-z_-]"), "{err}");
        }
        let cli = Cli::try_parse_from(["x", "--session-id", &"a-_Z9".repeat(12)]).unwrap();
        assert_eq!(cli.mounts.session_id.as_deref().map(str::len), Some(60));
    }

    #[test]
    fn instructions_parse_and_need_a_mount() {
        let cli = Cli::try_parse_from([
            "x",
            "--mount",
            "notes=mem:",
            "--mount-instructions",
            "notes=Keep it short = always.",
        ])
        .unwrap();
        assert_eq!(cli.mounts.instructions[0].folder, "notes");
        assert_eq!(cli.mounts.instructions[0].text, "Keep it short = always.");
        let err = Cli::try_parse_from(["x", "--mount-instructions", "notes=x"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let long = format!("notes={}", "é".repeat(MAX_INSTRUCTIONS_CHARS + 1));
        let err =
            Cli::try_parse_from(["x", "--mount", "notes=mem:", "--mount-instructions", &long])
                .unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("4097 characters"), "{err}");
        let exact = format!("notes={}", "é".repeat(MAX_INSTRUCTIONS_CHARS));
        Cli::try_parse_from(["x", "--mount", "notes=mem:", "--mount-instructions", &exact])
            .unwrap();
    }

    #[tokio::test]
    async fn instructions_reach_the_note_and_unknown_folders_are_named() {
        let cli = Cli::try_parse_from([
            "x",
            "--mount",
            "Team Handbook=mem:",
            "--mount",
            "notes=mem:",
            "--mount-instructions",
            "team-handbook=Read it first.",
        ])
        .unwrap();
        let mounts = cli.mounts.open(&OpenOptions::new()).await.unwrap().unwrap();
        assert!(
            mounts.note().contains(
                "- /memories/team-handbook (read-write): \"Team Handbook\". Instructions: Read it first.\n"
            ),
            "{}",
            mounts.note()
        );
        let cli = Cli::try_parse_from([
            "x",
            "--mount",
            "notes=mem:",
            "--mount-instructions",
            "Notes=x",
        ])
        .unwrap();
        let err = cli.mounts.open(&OpenOptions::new()).await.unwrap_err();
        assert_eq!(
            err,
            "--mount-instructions: no mount has the folder name `Notes` (the folders are: notes)"
        );
        let cli = Cli::try_parse_from([
            "x",
            "--mount",
            "notes=mem:",
            "--mount-instructions",
            "notes=x",
            "--mount-instructions",
            "notes=y",
        ])
        .unwrap();
        let err = cli.mounts.open(&OpenOptions::new()).await.unwrap_err();
        assert_eq!(err, "--mount-instructions for `notes` given twice");
    }

    #[test]
    fn the_help_lists_the_versioned_store_urls_of_this_build() {
        let help = mount_help();
        let versioned: Vec<_> = compiled_schemes()
            .into_iter()
            .filter(|scheme| scheme.is_versioned_store())
            .collect();
        assert!(!versioned.is_empty());
        for scheme in versioned {
            assert!(
                help.contains(&format!("  {}  ", scheme.form())),
                "{scheme:?}: {help}"
            );
        }
        assert!(help.contains(STORE_API_KEY_VAR), "{help}");
        assert!(help.contains("team-handbook"), "{help}");
    }

    #[tokio::test]
    async fn nine_mounts_are_too_many() {
        let args: Vec<String> = (0..9).map(|i| format!("--mount=m{i}=mem:")).collect();
        let cli = Cli::try_parse_from(std::iter::once("x".to_owned()).chain(args)).unwrap();
        let err = cli.mounts.open(&OpenOptions::new()).await.unwrap_err();
        assert_eq!(err, "at most 8 --mount options, got 9");
    }

    #[test]
    fn notes_follow_the_text() {
        let mounts = Mounts::new([Mount::new(
            "Notes",
            Arc::new(InMemoryStorage::new()),
            Access::ReadWrite,
        )])
        .unwrap();
        let note = mounts.note();
        assert_eq!(with_note(None, &note), note);
        assert_eq!(with_note(Some("  "), &note), note);
        assert_eq!(
            with_note(Some("Be brief.\n"), &note),
            format!("Be brief.\n\n{note}")
        );
        let tool = rmcp::model::Tool::new("memory", "Your memory.", Arc::new(Default::default()));
        let described = describe(tool.clone(), Some(&note));
        assert_eq!(
            described.description.as_deref(),
            Some(format!("Your memory.\n\n{note}").as_str())
        );
        assert_eq!(
            describe(tool, None).description.as_deref(),
            Some("Your memory.")
        );
    }
}
