#!/usr/bin/env bash
# Builds what users build: memory-runner with no feature and with each feature alone,
# memory-core without its runner (as every backend compiles it), and the
# dependency trees that must stay small (memory-core: no HTTP, SQL or object-store library;
# memory-runner with only `sqlite`: no HTTP stack). Checks, not builds: one target directory,
# `cargo check` and `cargo tree` only.
#
# Usage: scripts/check-features.sh   (CARGO_TARGET_DIR is honoured; exits non-zero on the
# first failure, saying what failed)
set -euo pipefail

cd "$(dirname "$0")/.."

FEATURES=(fs sqlite s3 postgres encrypted stores http)

fail() {
    echo >&2
    echo "check-features: FAILED: $*" >&2
    exit 1
}

check() {
    local what="$1"
    shift
    echo "check-features: cargo check -p memory-layer-runner $*"
    local out
    if ! out="$(cargo check --quiet -p memory-layer-runner --lib "$@" 2>&1)"; then
        printf '%s\n' "$out" >&2
        fail "memory-runner does not compile with $what"
    fi
    # A warning in memory-runner itself (dead code behind a feature, an unused import) fails
    # too: it is what a user building with these features sees.
    if grep -q -- '--> crates/memory-runner/' <<<"$out"; then
        printf '%s\n' "$out" >&2
        fail "memory-runner compiles with warnings with $what"
    fi
}

check "no default features" --no-default-features
for feature in "${FEATURES[@]}"; do
    check "only the \`$feature\` feature" --no-default-features --features "$feature"
done

# `cargo tree` names each package as `name vX.Y.Z`; a banned name at the start of a package
# name is a failure (`aws-` catches every AWS SDK crate).
tree_must_not_name() {
    local what="$1" pattern="$2"
    shift 2
    echo "check-features: cargo tree -e normal $*"
    local tree
    if ! tree="$(cargo tree --quiet -e normal --prefix none "$@")"; then
        fail "cargo tree $* did not run"
    fi
    local found
    found="$(printf '%s\n' "$tree" | awk '{print $1}' | grep -E "^(${pattern})" | sort -u || true)"
    if [[ -n "$found" ]]; then
        fail "$what, but its tree holds: $(echo "$found" | tr '\n' ' ')"
    fi
}

echo "check-features: cargo check -p memory-layer-core --no-default-features (a backend's view: no runner)"
if ! out="$(cargo check --quiet -p memory-layer-core --lib --no-default-features 2>&1)"; then
    printf '%s\n' "$out" >&2
    fail "memory-core does not compile without its runner feature"
fi
if grep -q -- '--> crates/memory-core/' <<<"$out"; then
    printf '%s\n' "$out" >&2
    fail "memory-core compiles with warnings without its runner feature"
fi

tree_must_not_name "memory-core must use no HTTP client, SQL or object-store library" \
    'reqwest$|hyper$|hyper-|rusqlite$|libsqlite3-sys$|object_store$|aws-' \
    -p memory-layer-core
tree_must_not_name "memory-runner with only \`sqlite\` must pull no HTTP stack" \
    'reqwest$|hyper$|hyper-' \
    -p memory-layer-runner --no-default-features --features sqlite

echo "check-features: ok"
