#!/usr/bin/env bash
# Run the Python SDK's own memory-tool tests against `memory exec` (see README.md).
#
#   tests/sdk-suites/run-python.sh SDK_DIR MEMORY_BIN [pytest args...]
#
# SDK_DIR: an extracted copy of the Python SDK's repository (this script never fetches it).
# MEMORY_BIN: the `memory` binary under test. PYTHON (default python3): an interpreter with
# pytest, pytest-asyncio and the SDK's runtime dependencies; the SDK itself is imported from
# SDK_DIR/src. The SDK's test file is copied unchanged into a scratch folder and run there with
# the memory_exec_plugin, which swaps the SDK's filesystem tools for the adapters. Then
# check_results.py judges the outcome against expected-python.tsv. Exit 0 only when every
# failure is an expected one.
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
set +e
MEMORY_BIN="$bin" PYTHONPATH="$sdk/src:$here/python" "${PYTHON:-python3}" -m pytest \
  -p memory_exec_plugin -p no:cacheprovider -q -rfE --tb=line \
  --junitxml="$run/junit.xml" "$@" test_filesystem.py
set -e
"${PYTHON:-python3}" "$here/check_results.py" --suite python --results "$run/junit.xml" \
  --expected "$here/expected-python.tsv" ${SDK_SUITES_DIVERGENCES:+--divergences "$SDK_SUITES_DIVERGENCES"}
