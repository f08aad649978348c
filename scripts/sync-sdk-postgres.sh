#!/usr/bin/env bash
# `memory sync` against two `memory serve` instances on one PostgreSQL database, checked with
# the official Python SDK (tests/stores-sdk/sync_test.py --instances 2): folder A syncs through
# the first instance, folder B through the second, the SDK's own SessionMemoryStores through
# the first.
#
#   scripts/sync-sdk-postgres.sh MEMORY_BIN
#
# Uses the PostgreSQL of MEMORY_TEST_POSTGRES_URL when it is set (scripts/test.sh starts one),
# else starts a throwaway one with scripts/pg-test-server.sh (under MEMORY_PG_STATE) for the
# run. Each run uses a new schema. Needs the oracle's venv (tests/oracle/setup.sh; ORACLE_VENV).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
memory="${1:?usage: scripts/sync-sdk-postgres.sh MEMORY_BIN}"
venv="${ORACLE_VENV:-$HOME/.cache/memory-oracle/py}"
python="$venv/bin/python"
[ -x "$python" ] || python=python3

if [ -z "${MEMORY_TEST_POSTGRES_URL:-}" ]; then
    exec "$root/scripts/pg-test-server.sh" run -- "$0" "$@"
fi

schema="sync_$(date +%s)_$$"
case "$MEMORY_TEST_POSTGRES_URL" in
    *\?*) db="$MEMORY_TEST_POSTGRES_URL&schema=$schema" ;;
    *) db="$MEMORY_TEST_POSTGRES_URL?schema=$schema" ;;
esac
exec "$python" "$root/tests/stores-sdk/sync_test.py" --memory "$memory" --db "$db" --instances 2
