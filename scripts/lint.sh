#!/usr/bin/env bash
# Formatting and lints of the whole workspace, as issue reviews expect them: no diff, no warning.
#
#   scripts/lint.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

printf '\n==> %s\n' "cargo fmt --check"
cargo fmt --all -- --check

printf '\n==> %s\n' "cargo clippy (all targets, all features)"
cargo clippy --workspace --all-targets --all-features -- -D warnings
