//! `memory keygen FILE`: a new random encryption key.

use std::process::ExitCode;

#[cfg(feature = "encrypted")]
use crate::failure::error_chain;

#[cfg(feature = "encrypted")]
pub(crate) fn run(file: &std::path::Path) -> ExitCode {
    match memory_encrypted::generate_key_file(file) {
        Ok(key) => {
            eprintln!(
                "memory: wrote a new key (id {}) to {}",
                key.id(),
                file.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("memory: cannot write key file: {}", error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "encrypted"))]
pub(crate) fn run(_file: &std::path::Path) -> ExitCode {
    eprintln!("memory: keygen needs the `encrypted` feature of memory-cli, which this build lacks");
    crate::exit::Exit::Usage.into()
}
