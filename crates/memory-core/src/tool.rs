//! [`MemoryTool`]: the six commands of the contract over any [`Storage`].

use std::fmt;

use async_trait::async_trait;
use base64::Engine as _;

use crate::backoff::pause_before_retry;
use crate::render::{self, MAX_LINES};
use crate::{
    CreateMode, Entry, Error, Limits, MemoryHandler, MemoryPath, Storage, ToolOutput, ViewRange,
    WriteMode,
};

/// The memory tool (`memory_20250818`) over a [`Storage`]: every command, string for string.
///
/// Everything the model sees is computed here, once, for every backend: listings, line
/// numbers, truncation, error texts. Storage errors are turned into the contract's texts in
/// one place ([`MemoryTool`]'s private `storage_failure`), which logs the detail with
/// `tracing` and never shows a host path or a backend message to the model.
///
/// ```
/// use memory_core::{InMemoryStorage, MemoryHandler, MemoryTool};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let tool = MemoryTool::new(InMemoryStorage::new());
/// tool.execute(&json!({"command": "create", "path": "/memories/notes.md", "file_text": "- likes tea\n"})).await;
/// let out = tool.execute(&json!({"command": "view", "path": "/memories/notes.md"})).await;
/// assert_eq!(
///     out.text().unwrap(),
///     "Here's the content of /memories/notes.md with line numbers:\n     1\t- likes tea\n     2\t"
/// );
/// # });
/// ```
pub struct MemoryTool<S> {
    storage: S,
    limits: Limits,
    create_mode: CreateMode,
}

impl<S: Storage> MemoryTool<S> {
    /// A tool over `storage` with the default [`Limits`] and [`CreateMode::Reject`].
    pub fn new(storage: S) -> Self {
        MemoryTool {
            storage,
            limits: Limits::default(),
            create_mode: CreateMode::default(),
        }
    }

    /// Sets the limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets what `create` does with an existing file.
    pub fn with_create_mode(mut self, mode: CreateMode) -> Self {
        self.create_mode = mode;
        self
    }

    /// The storage underneath.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Gives the storage back.
    pub fn into_storage(self) -> S {
        self.storage
    }

    /// The error the model sees when the storage failed or refused; the detail of a failure
    /// goes to the log, a refusal's reason (written for the model) is shown.
    fn storage_failure(&self, command: &str, path: &MemoryPath, err: &Error) -> ToolOutput {
        if let Error::Refused {
            path: refused,
            reason,
        } = err
        {
            tracing::debug!(storage = %self.storage, command, path = %refused, reason, "storage refused the change");
            return ToolOutput::error(format!("Error: Cannot change {refused}: {reason}"));
        }
        if let Error::SymbolicLink { path: linked } = err {
            tracing::debug!(storage = %self.storage, command, path = %linked, "the path passes through a symbolic link");
            return ToolOutput::error(format!(
                "Error: Path {linked} would escape /memories directory: it passes through a symbolic link, which this store never follows"
            ));
        }
        tracing::error!(
            storage = %self.storage,
            command,
            path = %path,
            error = %err,
            error_debug = ?err,
            "memory storage failed"
        );
        let hint = if err.is_retryable() {
            "Try again in a moment."
        } else {
            "The store may be unavailable; the application's log has the details."
        };
        ToolOutput::error(format!(
            "Error: The memory store could not complete {command} on {path}. {hint}"
        ))
    }

    fn too_large(&self, path: &MemoryPath, bytes: usize) -> Option<ToolOutput> {
        (bytes > self.limits.max_file_bytes).then(|| {
            ToolOutput::error(format!(
                "Error: {path} would be {bytes} bytes, over the limit of {} bytes",
                self.limits.max_file_bytes
            ))
        })
    }

    /// Reads a text file for an edit. `Err` carries the finished error output.
    async fn read_text(
        &self,
        command: &str,
        path: &MemoryPath,
        missing: &str,
    ) -> Result<(String, crate::Version), ToolOutput> {
        match self.storage.read(path).await {
            Ok(file) => match String::from_utf8(file.contents) {
                Ok(text) => Ok((text, file.version)),
                Err(_) => Err(ToolOutput::error(format!(
                    "Error: {path} is not a UTF-8 text file"
                ))),
            },
            Err(Error::NotFound { .. }) => Err(ToolOutput::error(missing.to_owned())),
            Err(err) => Err(self.storage_failure(command, path, &err)),
        }
    }

    /// Read-modify-write under compare-and-swap: `edit` computes the new text from the current
    /// one (or returns the error to show), and a conflicting writer makes it run again on fresh
    /// content, up to `max_edit_retries` times, after a short random pause that grows with each
    /// lost round (see [`pause_before_retry`]).
    async fn edit(
        &self,
        command: &str,
        path: &MemoryPath,
        missing: &str,
        edit: impl Fn(&str) -> Result<(String, ToolOutput), ToolOutput> + Send + Sync,
    ) -> ToolOutput {
        for attempt in 0..=self.limits.max_edit_retries {
            if attempt > 0 {
                pause_before_retry(attempt).await;
            }
            let (text, version) = match self.read_text(command, path, missing).await {
                Ok(found) => found,
                Err(out) => return out,
            };
            let (new_text, success) = match edit(&text) {
                Ok(done) => done,
                Err(out) => return out,
            };
            if let Some(out) = self.too_large(path, new_text.len()) {
                return out;
            }
            match self
                .storage
                .write(path, new_text.into_bytes(), WriteMode::Update(version))
                .await
            {
                Ok(_) => return success,
                Err(Error::Conflict { .. }) => {
                    tracing::debug!(command, path = %path, "edit conflicted; retrying on fresh content");
                }
                Err(Error::NotFound { .. }) => return ToolOutput::error(missing.to_owned()),
                Err(err) => return self.storage_failure(command, path, &err),
            }
        }
        ToolOutput::error(format!(
            "Error: {path} was modified concurrently; view it and retry"
        ))
    }

    async fn view_directory(&self, path: &MemoryPath) -> ToolOutput {
        match self.storage.list(path).await {
            Ok(files) => ToolOutput::success(render::listing(path, &files)),
            Err(err) => self.storage_failure("view", path, &err),
        }
    }

    fn view_text(path: &MemoryPath, text: &str, view_range: Option<ViewRange>) -> ToolOutput {
        let lines: Vec<&str> = text.split('\n').collect();
        let total = lines.len();
        if total > MAX_LINES {
            return ToolOutput::error(format!(
                "File {path} exceeds maximum line limit of 999,999 lines."
            ));
        }
        let (first, last) = match view_range {
            None => (1, total),
            Some(ViewRange { start, end }) => {
                let n = total as i64;
                if start < 1 || start > n || (end != -1 && end < start) {
                    return ToolOutput::error(format!(
                        "Error: Invalid `view_range` parameter: [{start}, {end}]. The file has {total} lines; use 1 <= start <= {total}, and end >= start or end = -1"
                    ));
                }
                let end = if end == -1 { n } else { end.min(n) };
                (start as usize, end as usize)
            }
        };
        let mut text = String::new();
        text.push_str("Here's the content of ");
        text.push_str(path.as_str());
        text.push_str(" with line numbers:\n");
        render::push_numbered(&mut text, &lines[first - 1..last], first, total);
        ToolOutput::success(text)
    }

    /// `create` of a path that holds a file, in [`CreateMode::Overwrite`].
    async fn overwrite(&self, path: &MemoryPath, bytes: Vec<u8>) -> ToolOutput {
        match self.storage.write(path, bytes, WriteMode::Overwrite).await {
            Ok(_) => ToolOutput::success(format!("File created successfully at: {path}")),
            Err(Error::AlreadyExists { .. }) => {
                ToolOutput::error(format!("Error: File {path} already exists"))
            }
            Err(Error::ParentIsFile { parent, .. }) => parent_is_file(path, &parent),
            Err(err) => self.storage_failure("create", path, &err),
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for MemoryTool<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTool")
            .field("storage", &self.storage)
            .field("limits", &self.limits)
            .field("create_mode", &self.create_mode)
            .finish()
    }
}

fn does_not_exist(path: &MemoryPath) -> String {
    format!("Error: The path {path} does not exist")
}

fn does_not_exist_please(path: &MemoryPath) -> String {
    format!("Error: The path {path} does not exist. Please provide a valid path.")
}

fn parent_is_file(path: &MemoryPath, parent: &MemoryPath) -> ToolOutput {
    ToolOutput::error(format!("Error: Cannot create {path}: {parent} is a file"))
}

/// Line numbers (1-based) where each non-overlapping occurrence of `needle` starts.
fn occurrence_lines(haystack: &str, needle: &str) -> Vec<usize> {
    haystack
        .match_indices(needle)
        .map(|(at, _)| haystack[..at].matches('\n').count() + 1)
        .collect()
}

#[async_trait]
impl<S: Storage> MemoryHandler for MemoryTool<S> {
    async fn view(&self, path: &MemoryPath, view_range: Option<ViewRange>) -> ToolOutput {
        let missing = || {
            ToolOutput::error(format!(
                "The path {path} does not exist. Please provide a valid path."
            ))
        };
        if path.is_root() {
            return self.view_directory(path).await;
        }
        // Files are read in one call; only a path that is not a file costs a listing too.
        let file = match self.storage.read(path).await {
            Ok(file) => file,
            Err(Error::NotFound { .. }) => {
                return match self.storage.list(path).await {
                    Ok(files) if files.is_empty() => missing(),
                    Ok(files) => ToolOutput::success(render::listing(path, &files)),
                    Err(err) => self.storage_failure("view", path, &err),
                };
            }
            Err(err) => return self.storage_failure("view", path, &err),
        };
        if let Some(media_type) = render::image_media_type(path) {
            let data = base64::engine::general_purpose::STANDARD.encode(&file.contents);
            return ToolOutput::image(media_type, data);
        }
        match std::str::from_utf8(&file.contents) {
            Ok(text) => Self::view_text(path, text, view_range),
            Err(_) => ToolOutput::error(format!("Error: {path} is not a UTF-8 text file")),
        }
    }

    async fn create(&self, path: &MemoryPath, file_text: &str) -> ToolOutput {
        let exists = || ToolOutput::error(format!("Error: File {path} already exists"));
        if path.is_root() {
            return exists();
        }
        if let Some(out) = self.too_large(path, file_text.len()) {
            return out;
        }
        let bytes = file_text.as_bytes().to_vec();
        // Create-if-absent within the file limit is one storage step; only overwriting needs
        // to look first, and replacing a file does not change the count.
        if self.create_mode == CreateMode::Overwrite {
            match self.storage.stat(path).await {
                Ok(Some(Entry::Directory)) => return exists(),
                Ok(Some(Entry::File(_))) => return self.overwrite(path, bytes).await,
                Ok(None) => {}
                Err(err) => return self.storage_failure("create", path, &err),
            }
        }
        // In overwrite mode, a file created by someone else since the stat is replaced.
        let retry = (self.create_mode == CreateMode::Overwrite).then(|| bytes.clone());
        match self
            .storage
            .create_within(path, bytes, self.limits.max_files)
            .await
        {
            Ok(_) => ToolOutput::success(format!("File created successfully at: {path}")),
            Err(Error::AlreadyExists { .. }) => match retry {
                Some(bytes) => self.overwrite(path, bytes).await,
                None => exists(),
            },
            Err(Error::StoreFull { max_files }) => ToolOutput::error(format!(
                "Error: The memory store is full ({max_files} files). Delete or consolidate files first."
            )),
            Err(Error::ParentIsFile { parent, .. }) => parent_is_file(path, &parent),
            Err(err) => self.storage_failure("create", path, &err),
        }
    }

    async fn str_replace(&self, path: &MemoryPath, old_str: &str, new_str: &str) -> ToolOutput {
        let missing = does_not_exist_please(path);
        self.edit("str_replace", path, &missing, |text| {
            let lines = if old_str.is_empty() {
                // An empty old_str matches only an empty file.
                if text.is_empty() { vec![1] } else { vec![] }
            } else {
                occurrence_lines(text, old_str)
            };
            match lines.len() {
                0 => {
                    return Err(ToolOutput::error(format!(
                        "No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."
                    )));
                }
                1 => {}
                _ => {
                    let list: Vec<String> = lines.iter().map(usize::to_string).collect();
                    return Err(ToolOutput::error(format!(
                        "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {}. Please ensure it is unique",
                        list.join(", ")
                    )));
                }
            }
            let new_text = if old_str.is_empty() {
                new_str.to_owned()
            } else {
                text.replacen(old_str, new_str, 1)
            };
            let start = lines[0] - 1;
            let end = start + new_str.matches('\n').count();
            let new_lines: Vec<&str> = new_text.split('\n').collect();
            let first = start.saturating_sub(2);
            let last = (end + 2).min(new_lines.len() - 1);
            let snippet = render::numbered(new_lines[first..=last].iter().copied(), first + 1);
            let out = ToolOutput::success(format!(
                "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}",
                snippet.join("\n")
            ));
            Ok((new_text, out))
        })
        .await
    }

    async fn insert(&self, path: &MemoryPath, insert_line: i64, insert_text: &str) -> ToolOutput {
        let missing = does_not_exist(path);
        self.edit("insert", path, &missing, |text| {
            // Lines are the content cut after each '\n'; a last piece counts only if non-empty.
            let starts: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(at, _)| at + 1))
                .filter(|&at| at < text.len())
                .collect();
            let n_lines = starts.len();
            if insert_line < 0 || insert_line as u64 > n_lines as u64 {
                return Err(ToolOutput::error(format!(
                    "Error: Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines of the file: [0, {n_lines}]"
                )));
            }
            let k = insert_line as usize;
            let line = format!("{}\n", insert_text.trim_end_matches('\n'));
            let mut new_text = String::with_capacity(text.len() + line.len() + 1);
            if k == n_lines {
                new_text.push_str(text);
                if !text.is_empty() && !text.ends_with('\n') {
                    new_text.push('\n');
                }
                new_text.push_str(&line);
            } else {
                let at = starts[k];
                new_text.push_str(&text[..at]);
                new_text.push_str(&line);
                new_text.push_str(&text[at..]);
            }
            Ok((
                new_text,
                ToolOutput::success(format!("The file {path} has been edited.")),
            ))
        })
        .await
    }

    async fn delete(&self, path: &MemoryPath) -> ToolOutput {
        if path.is_root() {
            return ToolOutput::error("Error: Cannot delete the /memories directory itself");
        }
        match self.storage.delete(path).await {
            Ok(()) => ToolOutput::success(format!("Successfully deleted {path}")),
            Err(Error::NotFound { .. }) => ToolOutput::error(does_not_exist(path)),
            Err(err) => self.storage_failure("delete", path, &err),
        }
    }

    async fn rename(&self, old_path: &MemoryPath, new_path: &MemoryPath) -> ToolOutput {
        if old_path.is_root() {
            return ToolOutput::error("Error: Cannot rename the /memories directory itself");
        }
        let destination_exists =
            || ToolOutput::error(format!("Error: The destination {new_path} already exists"));
        let source = match self.storage.stat(old_path).await {
            Ok(Some(entry)) => entry,
            Ok(None) => return ToolOutput::error(does_not_exist(old_path)),
            Err(err) => return self.storage_failure("rename", old_path, &err),
        };
        if new_path == old_path {
            return destination_exists();
        }
        if new_path.starts_with(old_path) {
            return match source {
                Entry::Directory => {
                    ToolOutput::error(format!("Error: Cannot move {old_path} into itself"))
                }
                Entry::File(_) => parent_is_file(new_path, old_path),
            };
        }
        match self.storage.stat(new_path).await {
            Ok(Some(_)) => return destination_exists(),
            Ok(None) => {}
            Err(err) => return self.storage_failure("rename", new_path, &err),
        }
        if let Entry::Directory = source {
            // Every moved path must still be a valid path at its new place.
            match self.storage.list(old_path).await {
                Ok(files) => {
                    if let Some(bad) = files
                        .iter()
                        .find(|f| f.path.rebase(old_path, new_path).is_none())
                    {
                        tracing::debug!(file = %bad.path, "rename would exceed the path limits");
                        return ToolOutput::error(format!(
                            "Error: Invalid path {new_path}: moving {old_path} there would make a path longer than 1024 bytes or deeper than 20 levels"
                        ));
                    }
                }
                Err(err) => return self.storage_failure("rename", old_path, &err),
            }
        }
        match self.storage.rename(old_path, new_path).await {
            Ok(()) => ToolOutput::success(format!("Successfully renamed {old_path} to {new_path}")),
            Err(Error::NotFound { .. }) => ToolOutput::error(does_not_exist(old_path)),
            Err(Error::AlreadyExists { .. }) => destination_exists(),
            Err(Error::ParentIsFile { parent, .. }) => parent_is_file(new_path, &parent),
            Err(Error::RenameIntoItself { .. }) => {
                ToolOutput::error(format!("Error: Cannot move {old_path} into itself"))
            }
            Err(err) => self.storage_failure("rename", old_path, &err),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod create_tests;
