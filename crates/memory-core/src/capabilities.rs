//! [`Capabilities`]: what a store can hold beyond plain text files at ordinary paths.

/// What a store can hold beyond plain text files at ordinary paths, from
/// [`Storage::capabilities`](crate::Storage::capabilities).
///
/// Most backends have every capability ([`Capabilities::FULL`], the trait's provided answer).
/// A store with rules of its own (a versioned memory store holds NFC-named UTF-8 text of at
/// most 102,400 bytes; a store mounted one level below `/memories` has one level and a few
/// bytes less) declares what it lacks. The conformance suite reads the declaration from the
/// store and runs the narrower form of the checks that need more, and wrappers that need a
/// capability (encryption writes binary envelopes) refuse a store that lacks it.
///
/// ```
/// use memory_core::Capabilities;
/// let text_only = Capabilities { binary_files: false, non_nfc_names: false, ..Capabilities::FULL };
/// assert!(text_only.large_files);
/// assert!(!text_only.binary_files);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Files of any bytes (images, non-UTF-8 data), not only UTF-8 text.
    pub binary_files: bool,
    /// Names in any Unicode normalization form (`e\u{301}` beside `\u{e9}`).
    pub non_nfc_names: bool,
    /// Files larger than the tool's 102,400-byte limit, written through the storage.
    pub large_files: bool,
    /// How many levels below `/memories` a path may go.
    pub max_depth: usize,
    /// How long a path may be, in bytes, `/memories` included.
    pub max_path_bytes: usize,
}

impl Capabilities {
    /// Everything: any bytes, any names, the full path limits.
    pub const FULL: Capabilities = Capabilities {
        binary_files: true,
        non_nfc_names: true,
        large_files: true,
        max_depth: crate::MAX_SEGMENTS,
        max_path_bytes: crate::MAX_PATH_BYTES,
    };
}

impl Default for Capabilities {
    /// [`Capabilities::FULL`].
    fn default() -> Self {
        Capabilities::FULL
    }
}
