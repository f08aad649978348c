#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

mod check;
mod encrypted;
mod envelope;
mod history;
mod key;
mod rekey;

pub use check::{EncryptionState, KEY_CHECK_PATH, KeyCheckError, probe};
pub use encrypted::Encrypted;
pub use envelope::{EncryptionError, EnvelopePart, FORMAT_VERSION, MAGIC, OVERHEAD};
pub use key::{KEY_ID_LEN, KEY_LEN, Key, KeyError, KeyId, Keyring, generate_key_file};
pub use rekey::{RekeyOptions, RekeyOutcome, RekeyProgress, RekeyReport};

/// The `backend` name in the [`memory_core::Error::Backend`] errors this crate returns.
pub const BACKEND: &str = "encrypted";
