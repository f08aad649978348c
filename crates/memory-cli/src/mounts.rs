//! `--mount NAME=URL[:ro]` for `memory run` and `memory mcp`: several stores under one
//! `/memories`, each at `/memories/<slug of NAME>`, read-only or read-write, and the mount
//! note that tells the model (in `memory run`'s system prompt, in `memory mcp`'s tool
//! description).

use std::borrow::Cow;
use std::sync::Arc;

use memory_cli::store_url::{self, StoreUrl};
use memory_core::Storage;
use memory_runner::mounts::{Access, MAX_MOUNTS, MountSpec, Mounts, new_session_id};
use memory_runner::{OpenOptions, open_mount};

use crate::admin::Failure;
use crate::exit::Exit;
use crate::store_args::{Access as StoreAccess, StoreArgs};

/// What `--help` says about mounts.
pub(crate) const MOUNT_HELP: &str = "\
Mounts (--mount [NAME=]URL[:ro], up to 8): each store appears at /memories/<slug>,
the slug being NAME lowercased with every run of other characters than a-z and 0-9
turned into one '-' (\"Team Handbook\" -> team-handbook); without NAME= a versioned
store's display name gives the folder (any other store needs NAME=). A final :ro
makes it read-only. URL is any store URL; a versioned memory store is
store+sqlite:PATH#STORE_ID (a `memory serve` database) or
store+http://HOST:PORT#STORE_ID (a running `memory serve`; its API key from
MEMORY_STORE_API_KEY). With --mount, --store is not used. Claude is told the
mount table, and every write to a versioned store is a version by the session
(--session-id, or a new sesn_... id per run, logged at start).";

/// The `--mount` and `--session-id` options.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MountArgs {
    /// Mount a store at /memories/<slug of NAME, or of a versioned store's name> (repeat, up
    /// to 8); a final `:ro` makes it read-only. With --mount, --store is not used.
    #[arg(long = "mount", value_name = "[NAME=]URL[:ro]")]
    pub(crate) mounts: Vec<MountSpec>,

    /// The session id recorded on every version a versioned store gets from this run
    /// (default: a new `sesn_...` id).
    #[arg(long, env = "MEMORY_SESSION_ID", value_name = "ID")]
    pub(crate) session_id: Option<String>,
}

impl MountArgs {
    /// The session id: the one given, or a new one.
    pub(crate) fn session_id(&self) -> String {
        self.session_id.clone().unwrap_or_else(new_session_id)
    }

    /// Opens every mount with `options` (which should carry the session id), or `None`
    /// without `--mount`. The error is the message for standard error.
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
        let mut opened = Vec::with_capacity(self.mounts.len());
        for spec in &self.mounts {
            let failed = |text: String| format!("cannot mount `{}`: {text}", spec.label());
            let url: StoreUrl = spec
                .url
                .parse()
                .map_err(|e| failed(format!("invalid store URL `{}`: {e}", spec.url)))?;
            // As --store is: a read-only store is never created, and each one is checked.
            if spec.access == Access::ReadOnly
                && let Some(path) = store_url::local_path(&url)
                && !path.exists()
            {
                return Err(failed(format!("the store `{}` does not exist", spec.url)));
            }
            let mount = open_mount(spec, options)
                .await
                .map_err(|e| failed(crate::error_chain(&e)))?;
            store_url::check(&url, mount.storage().as_ref())
                .await
                .map_err(|e| failed(crate::error_chain(&e)))?;
            opened.push(mount);
        }
        let mounts = Mounts::new(opened).map_err(|e| e.to_string())?;
        for ((root, mount), spec) in mounts.mounts().zip(&self.mounts) {
            tracing::info!(path = %root, access = %mount.access(), store = %spec.url, "mounted");
        }
        Ok(Some(mounts))
    }
}

/// The store of `memory run` and `memory mcp`: with `--mount`, the mounts (and the mount note
/// the model is told); otherwise `--store`, opened for `access`.
pub(crate) async fn open_store_or_mounts(
    store: &StoreArgs,
    mounts: &MountArgs,
    options: &OpenOptions,
    access: StoreAccess,
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
    use clap::Parser;
    use memory_core::InMemoryStorage;
    use memory_runner::mounts::Mount;

    use super::*;

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
        assert_eq!(cli.mounts.session_id(), "sesn_1");
        let err = Cli::try_parse_from(["x", "--mount", "=./notes"]).unwrap_err();
        assert!(err.to_string().contains("[NAME=]URL[:ro]"), "{err}");
        assert!(err.to_string().contains("mount name"), "{err}");
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
