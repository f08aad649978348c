//! [`Limits`] and [`CreateMode`]: the knobs an application sets on a [`MemoryTool`](crate::MemoryTool).

/// Size and retry limits, with the defaults of the contract.
///
/// ```
/// use memory_core::Limits;
/// let limits = Limits { max_files: 500, ..Limits::default() };
/// assert_eq!(limits.max_file_bytes, 102_400);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes one file may hold after a command (default 102,400, the memory-store limit).
    pub max_file_bytes: usize,
    /// Most files the store may hold, hidden ones included (default 2,000).
    pub max_files: usize,
    /// How many times an edit (`str_replace`, `insert`) is retried on fresh content when another
    /// writer changed the file in between (default 64). Each retry waits a short random time
    /// first (at most 2 ms after the first conflict, doubling up to 50 ms), so that writers
    /// colliding over and over spread apart. Each round lets at least one writer through, so
    /// this bounds the wait, not correctness.
    pub max_edit_retries: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 102_400,
            max_files: 2_000,
            max_edit_retries: 64,
        }
    }
}

/// What `create` does when the file already exists.
///
/// The documentation allows both; Claude's own tool description says create "creates or
/// overwrites". A directory is never overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CreateMode {
    /// Refuse: `Error: File {path} already exists` (the default).
    #[default]
    Reject,
    /// Replace the file's content.
    Overwrite,
}
