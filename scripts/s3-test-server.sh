#!/usr/bin/env bash
# A throwaway S3 API for the tests: moto's server (`moto[server]` from PyPI, pinned below) in a
# virtualenv this script manages, listening on a free port of 127.0.0.1.
#
#   scripts/s3-test-server.sh run -- CMD [ARGS...]   start, run CMD with the variables below
#                                                     exported, stop (also on failure or ^C)
#   scripts/s3-test-server.sh start                   start; print `export ...` lines for eval
#   scripts/s3-test-server.sh stop                    stop the server `start` started
#   scripts/s3-test-server.sh install                 only create the virtualenv
#
# Exported for the tests: MEMORY_TEST_S3_ENDPOINT, and AWS_ENDPOINT_URL, AWS_ALLOW_HTTP,
# AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY for `s3://` store URLs. The server starts
# with one bucket, `memory-local` (e.g. `memory exec --store s3://memory-local/notes`).
#
# Needs python3 (with venv) and the package registry. Moto 5.2.5 is pinned because the tests
# rely on its conditional writes: PutObject with If-None-Match: * and If-Match: <etag>, and
# CompleteMultipartUpload with If-None-Match: * (object_store's copy-if-absent).
set -euo pipefail

MOTO_VERSION="${MEMORY_MOTO_VERSION:-5.2.5}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MEMORY_MOTO_VENV:-$root/target/moto-venv}"
state="${MEMORY_MOTO_STATE:-$root/target/moto-server}"

log() { echo "s3-test-server: $*" >&2; }

install() {
    if [[ -x "$venv/bin/moto_server" ]] &&
        [[ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))' 2>/dev/null)" == "$MOTO_VERSION" ]]; then
        return
    fi
    log "installing moto[server]==$MOTO_VERSION into $venv"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2
}

free_port() {
    "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
    install
    stop_quietly
    mkdir -p "$state"
    local port pid
    for _attempt in 1 2 3; do
        port="$(free_port)"
        # setsid: its own process group, so `stop` ends the server and nothing else.
        # One request at a time: moto checks If-Match / If-None-Match and then writes without a
        # lock, so with a thread per connection two conditional writes can both pass, which S3
        # never allows. Served one by one, its conditional writes are atomic, as S3's are.
        setsid "$venv/bin/python" -c '
import sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
app = DomainDispatcherApplication(create_backend_app)
run_simple("127.0.0.1", int(sys.argv[1]), app, threaded=False, request_handler=MotoRequestHandler)
' "$port" >"$state/server.log" 2>&1 &
        pid=$!
        echo "$pid" >"$state/pid"
        echo "$port" >"$state/port"
        if "$venv/bin/python" - "$port" "$pid" <<'PY'
import os, sys, time, urllib.request
port, pid = sys.argv[1], int(sys.argv[2])
deadline = time.time() + 60
while time.time() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(1)  # the server died (port taken?)
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=2)
        sys.exit(0)
    except Exception:
        time.sleep(0.2)
sys.exit(1)
PY
        then
            # A bucket for examples and manual runs (the tests make their own).
            "$venv/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/memory-local", method="PUT"), timeout=10)' "$port"
            log "moto $MOTO_VERSION listening on http://127.0.0.1:$port (pid $pid), bucket memory-local"
            print_env "$port"
            return
        fi
        log "moto did not come up on port $port; log:"
        sed 's/^/    /' "$state/server.log" >&2 || true
        stop_quietly
    done
    log "giving up: moto_server would not start"
    exit 1
}

print_env() {
    local endpoint="http://127.0.0.1:$1"
    cat <<ENV
export MEMORY_TEST_S3_ENDPOINT=$endpoint
export AWS_ENDPOINT_URL=$endpoint
export AWS_ALLOW_HTTP=true
export AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=testing
export AWS_SECRET_ACCESS_KEY=testing
ENV
}

stop_quietly() {
    if [[ -f "$state/pid" ]]; then
        local pid
        pid="$(cat "$state/pid")"
        if kill -0 "$pid" 2>/dev/null; then
            kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 -- "-$pid" 2>/dev/null || true
        fi
        rm -f "$state/pid" "$state/port"
    fi
}

stop() {
    stop_quietly
    log "stopped"
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    run)
        shift
        [[ "${1:-}" == "--" ]] && shift
        [[ $# -gt 0 ]] || { log "usage: $0 run -- CMD [ARGS...]"; exit 2; }
        env_lines="$(start)"
        trap stop_quietly EXIT INT TERM
        eval "$env_lines"
        "$@"
        ;;
    *)
        sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
