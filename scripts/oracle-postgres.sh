#!/usr/bin/env bash
# The contract cases (tests/oracle: generated and fixed cases, every disagreement with the
# Python SDK's reference explained by DIVERGENCES.md) with `memory exec --store postgres://...`
# as the candidate: each case in a new root of one schema, its final tree copied out with
# `memory copy` into the folder compare.py reads.
#
#   scripts/oracle-postgres.sh MEMORY_BIN [classify.py options, e.g. --count 100]
#
# Uses the PostgreSQL of MEMORY_TEST_POSTGRES_URL when it is set (scripts/test.sh starts one),
# else starts a throwaway one with scripts/pg-test-server.sh for the run. Needs the oracle's
# venv (tests/oracle/setup.sh; ORACLE_VENV).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ "${1:-}" = "--candidate" ]; then
    # One case: `--candidate MEMORY_BIN ROOT_DIR`, the case on standard input.
    memory="$2" dir="$3"
    name="$(basename "$dir" | tr -c 'A-Za-z0-9_-' '_' | tail -c 40)_$$_$RANDOM"
    case "$MEMORY_TEST_POSTGRES_URL" in
        *\?*) url="$MEMORY_TEST_POSTGRES_URL&schema=oracle&root=$name" ;;
        *) url="$MEMORY_TEST_POSTGRES_URL?schema=oracle&root=$name" ;;
    esac
    set +e
    "$memory" exec --store "$url"
    status=$?
    set -e
    mkdir -p "$dir"
    "$memory" copy "$url" "$dir" >/dev/null
    exit "$status"
fi

memory="$(cd "$(dirname "${1:?usage: scripts/oracle-postgres.sh MEMORY_BIN [classify.py options]}")" && pwd)/$(basename "$1")"
shift
if [ -z "${MEMORY_TEST_POSTGRES_URL:-}" ]; then
    exec "$root/scripts/pg-test-server.sh" run -- "$0" "$memory" "$@"
fi
venv="${ORACLE_VENV:-$HOME/.cache/memory-oracle/py}"
bash "$root/tests/oracle/setup.sh" >&2
exec "$venv/bin/python" "$root/tests/oracle/classify.py" \
    --candidate "$(printf '%q' "$root/scripts/oracle-postgres.sh") --candidate $(printf '%q' "$memory") {root}" \
    --oracle-python "$venv/bin/python" --seed "${ORACLE_SEED:-1}" --jobs 2 "$@"
