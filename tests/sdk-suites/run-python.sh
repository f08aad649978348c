#!/usr/bin/env bash
# Run the Python SDK's own memory-tool tests against `memory exec` (see README.md).
#
#   tests/sdk-suites/run-python.sh SDK_DIR MEMORY_BIN [pytest args...]
#
# SDK_DIR: an extracted copy of the Python SDK's repository (this script never fetches it).
# MEMORY_BIN: the `memory` binary under test. PYTHON (default python3): an interpreter with
# pytest, pytest-asyncio and the SDK's runtime dependencies; the SDK itself is imported from
# SDK_DIR/src. The SDK's test file is copied unchanged into a scratch folder and run there with
# the memory_exec_plugin, which swaps the SDK's filesystem tools for the adapters: once as
# reported, once with SDK_SUITES_HIDE_STORE_FILES=1 (diagnostic). Then check_results.py judges
# both against expected-python.tsv. Exit 0 only when every failure is an expected one.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sdk="${1:?usage: run-python.sh SDK_DIR MEMORY_BIN [pytest args...]}"
bin="${2:?usage: run-python.sh SDK_DIR MEMORY_BIN [pytest args...]}"
shift 2
sdk="$(cd "$sdk" && pwd)"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
suite="$sdk/tests/lib/tools/memory_tools/test_filesystem.py"
[ -f "$suite" ] || { echo "no $suite: is SDK_DIR the Python SDK?" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin is not an executable" >&2; exit 2; }

run="$(mktemp -d)"
trap 'rm -rf "$run"' EXIT
cp "$suite" "$run/test_filesystem.py"
cat >"$run/pytest.ini" <<'INI'
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
INI

cd "$run"
run_pass() { # $1: junit file; the rest: extra pytest args
  local junit="$1"
  shift
  MEMORY_BIN="$bin" PYTHONPATH="$sdk/src:$here/python" "${PYTHON:-python3}" -m pytest \
    -p memory_exec_plugin -p no:cacheprovider -q -rfE --tb=short \
    --junitxml="$junit" "$@" test_filesystem.py || true
}
echo "== reported run"
run_pass "$run/strict.xml" "$@"
echo "== diagnostic run (the folder store's bookkeeping files hidden from the snapshots)"
SDK_SUITES_HIDE_STORE_FILES=1 run_pass "$run/hidden.xml" "$@" >/dev/null
"${PYTHON:-python3}" "$here/check_results.py" --suite python --results "$run/strict.xml" \
  --hidden-results "$run/hidden.xml" --expected "$here/expected-python.tsv" \
  ${SDK_SUITES_DIVERGENCES:+--divergences "$SDK_SUITES_DIVERGENCES"}
