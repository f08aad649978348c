#!/usr/bin/env bash
# Run the TypeScript SDK's own memory-tool tests against `memory exec` (see README.md).
#
#   tests/sdk-suites/run-typescript.sh SDK_DIR MEMORY_BIN NODE_MODULES [jest args...]
#
# SDK_DIR: an extracted copy of the TypeScript SDK's repository (this script never fetches it).
# MEMORY_BIN: the `memory` binary under test. NODE_MODULES: a node_modules folder outside this
# repository holding jest 29, ts-jest 29 and typescript 5. The SDK's test file is copied
# unchanged into a scratch folder, at its own relative place; typescript/jest.config.js maps its
# import of the SDK's tool to typescript/memory-exec-tool.ts (no SDK source is loaded). It runs
# once as reported and once with SDK_SUITES_HIDE_STORE_FILES=1 (diagnostic); check_results.py
# judges both against expected-typescript.tsv. Exit 0 only when every failure is an expected one.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage="usage: run-typescript.sh SDK_DIR MEMORY_BIN NODE_MODULES [jest args...]"
sdk="${1:?$usage}"
bin="${2:?$usage}"
mods="${3:?$usage}"
shift 3
sdk="$(cd "$sdk" && pwd)"
mods="$(cd "$mods" && pwd)"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
suite="$sdk/tests/lib/tools/BetaLocalFilesystemMemoryTool.test.ts"
[ -f "$suite" ] || { echo "no $suite: is SDK_DIR the TypeScript SDK?" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin is not an executable" >&2; exit 2; }
[ -x "$mods/.bin/jest" ] || { echo "no jest in $mods" >&2; exit 2; }

run="$(mktemp -d)"
trap 'rm -rf "$run"' EXIT
mkdir -p "$run/tests/lib/tools"
cp "$suite" "$run/tests/lib/tools/"
ln -s "$mods" "$run/node_modules"

cd "$run"
run_pass() { # $1: JSON report file; the rest: extra jest args
  local report="$1"
  shift
  SDK_SUITES_RUN_DIR="$run" MEMORY_BIN="$bin" "$mods/.bin/jest" \
    --config "$here/typescript/jest.config.js" --json --outputFile="$report" "$@" || true
}
echo "== reported run"
run_pass "$run/strict.json" "$@"
echo "== diagnostic run (the folder store's bookkeeping files hidden from the snapshots)"
SDK_SUITES_HIDE_STORE_FILES=1 run_pass "$run/hidden.json" "$@" 2>/dev/null
python3 "$here/check_results.py" --suite typescript --results "$run/strict.json" \
  --hidden-results "$run/hidden.json" --expected "$here/expected-typescript.tsv" \
  ${SDK_SUITES_DIVERGENCES:+--divergences "$SDK_SUITES_DIVERGENCES"}
