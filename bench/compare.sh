#!/usr/bin/env bash
# Runs the same JSON-lines workloads through `memory exec` on every backend and through the
# official SDKs' BetaLocalFilesystemMemoryTool, and prints a table of medians with the ratio to
# the Python SDK, beside the disk's floor (raw write + fsync + rename). One command, from a
# fresh machine with a Rust toolchain and Python 3 (Node is optional):
#
#   bench/compare.sh
#
# It builds `memory` and `memory-bench` in release mode, makes the Python venv with
# anthropic==2.14.0 (tests/oracle/setup.sh), installs @anthropic-ai/sdk into a local folder
# when node and npm are present, then runs bench/compare.py. Everything runs in one scratch
# folder, so on one filesystem. Environment (defaults in brackets):
#   BENCH_WORK      scratch folder, also where report.md and report.json go [target/bench-compare]
#   BENCH_RUNS      runs per runner and mix [5]
#   BENCH_COUNT     commands per workload [3000]
#   BENCH_SEED      workload seed [1]
#   BENCH_MIXES     comma-separated mixes [agent,write-heavy,views]
#   BENCH_VIEWS     commands in the views mix (a seeded store, then views alone) [5000]
#   BENCH_TS        0 to leave out the TypeScript SDK even when node is present [1]
#   BENCH_POSTGRES  0 to leave out the PostgreSQL row when MEMORY_TEST_POSTGRES_URL is unset [1]
#   TS_SDK_VERSION  the @anthropic-ai/sdk version to install [1.14.0]
#   ORACLE_VENV     the Python venv [~/.cache/memory-oracle/py]
#   MEMORY_BIN, MEMORY_BENCH_BIN   release binaries to use instead of building them (both or none)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '==> %s\n' "$*" >&2; }

command -v cargo >/dev/null || { echo "compare.sh needs cargo (a Rust toolchain)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "compare.sh needs python3" >&2; exit 2; }

WORK="${BENCH_WORK:-target/bench-compare}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
TS_SDK_VERSION="${TS_SDK_VERSION:-1.14.0}"
export ORACLE_VENV="${ORACLE_VENV:-$HOME/.cache/memory-oracle/py}"

if [ -n "${MEMORY_BIN:-}" ] && [ -n "${MEMORY_BENCH_BIN:-}" ]; then
    step "using the given binaries $MEMORY_BIN and $MEMORY_BENCH_BIN"
    memory_bin="$(cd "$(dirname "$MEMORY_BIN")" && pwd)/$(basename "$MEMORY_BIN")"
    bench_bin="$(cd "$(dirname "$MEMORY_BENCH_BIN")" && pwd)/$(basename "$MEMORY_BENCH_BIN")"
else
    step "release build of memory and memory-bench"
    cargo build --release -p memory-layer-cli -p memory-bench --bins >&2
    target_dir="$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    memory_bin="$target_dir/release/memory"
    bench_bin="$target_dir/release/memory-bench"
fi

step "Python venv with anthropic==2.14.0"
bash tests/oracle/setup.sh >&2

ts_args=()
ts_version=""
if [ "${BENCH_TS:-1}" != 0 ] && command -v node >/dev/null && command -v npm >/dev/null; then
    step "@anthropic-ai/sdk $TS_SDK_VERSION in $WORK/ts-sdk"
    ts_dir="$WORK/ts-sdk"
    mkdir -p "$ts_dir"
    [ -f "$ts_dir/package.json" ] ||
        printf '{"name": "memory-bench-ts", "private": true, "type": "module"}\n' >"$ts_dir/package.json"
    have="$(cd "$ts_dir" && node -e 'try{console.log(require("./node_modules/@anthropic-ai/sdk/package.json").version)}catch(e){}')"
    if [ "$have" != "$TS_SDK_VERSION" ]; then
        (cd "$ts_dir" && npm install --no-audit --no-fund --save-exact "@anthropic-ai/sdk@$TS_SDK_VERSION" >&2)
    fi
    ts_args=(--node "$(command -v node)" --ts-runner bench/ts_runner.mjs --ts-sdk "$ts_dir")
    ts_version="$TS_SDK_VERSION (node $(node --version))"
else
    step "no node/npm (or BENCH_TS=0): the TypeScript SDK is left out"
fi

versions="$(python3 - "$("$ORACLE_VENV/bin/python" --version 2>&1)" "$(rustc --version)" "$ts_version" <<'PY'
import json, sys
py, rustc, ts = sys.argv[1:4]
v = {"rustc": rustc.split()[1], "Python SDK": f"anthropic 2.14.0 ({py})"}
if ts:
    v["TypeScript SDK"] = f"@anthropic-ai/sdk {ts}"
print(json.dumps(v))
PY
)"

# A PostgreSQL row: the given database (MEMORY_TEST_POSTGRES_URL), else a throwaway server
# that scripts/pg-test-server.sh starts for this run and stops after it.
pg_run=()
if [ -z "${MEMORY_TEST_POSTGRES_URL:-}" ] && [ "${BENCH_POSTGRES:-1}" != 0 ]; then
    step "a throwaway PostgreSQL for the postgres row (BENCH_POSTGRES=0 leaves it out)"
    pg_run=(scripts/pg-test-server.sh run --)
fi

step "running (several minutes)"
"${pg_run[@]}" python3 bench/compare.py \
    --memory "$memory_bin" --bench "$bench_bin" \
    --python "$ORACLE_VENV/bin/python" --py-oracle tests/oracle/py_oracle.py \
    "${ts_args[@]}" \
    --work "$WORK" --runs "${BENCH_RUNS:-5}" --count "${BENCH_COUNT:-3000}" \
    --seed "${BENCH_SEED:-1}" --mixes "${BENCH_MIXES:-agent,write-heavy,views}" --views-count "${BENCH_VIEWS:-5000}" \
    --versions "$versions" --json "$WORK/report.json" | tee "$WORK/report.md"
echo "(report in $WORK/report.md and $WORK/report.json)" >&2
