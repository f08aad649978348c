#!/usr/bin/env bash
# Browser tests of the web console of `memory serve`, in headless Chromium.
#
#   scripts/console-test.sh            # builds `memory` (cargo build -p memory-layer-cli)
#   MEMORY_BIN=path/to/memory scripts/console-test.sh
#   CONSOLE_SCREENSHOTS=docs/console scripts/console-test.sh   # also refreshes the screenshots
#
# Installs what it needs when it is missing, and says so: Node.js and Debian's `chromium`
# (apt-get, as root), and playwright-core (npm ci, from tests/console/package-lock.json, into
# target/console-node). Starts `memory serve` with a fresh key file and database on a free
# 127.0.0.1 port, runs tests/console/console.test.mjs against it (each check is also read back
# through the HTTP API), saves screenshots when CONSOLE_SCREENSHOTS names a folder, and stops
# everything when it exits. Any missing part is a loud failure, never a skip.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf 'console-test: %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

apt_install() {
    [ "$(id -u)" = 0 ] || die "$* is missing and installing it needs root (apt-get install $*)"
    command -v apt-get >/dev/null || die "$* is missing and there is no apt-get to install it"
    say "installing $* with apt-get"
    if [ -z "${CONSOLE_APT_UPDATED:-}" ]; then
        apt-get update -q >&2 || die "apt-get update failed"
        CONSOLE_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2 || die "apt-get install $* failed"
}

# --- Node.js and Chromium -------------------------------------------------------------
command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
node_major="$(node -e 'process.stdout.write(String(process.versions.node.split(".")[0]))')"
[ "$node_major" -ge 18 ] || die "Node.js 18 or newer is needed (found $(node --version))"
chromium="${CONSOLE_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || apt_install chromium
[ -x "$chromium" ] || die "no Chromium at $chromium after installing it"

# --- playwright-core, exactly as locked ------------------------------------------------
node_dir="$root/target/console-node"
mkdir -p "$node_dir"
if ! cmp -s tests/console/package-lock.json "$node_dir/package-lock.json" \
    || [ ! -f "$node_dir/node_modules/playwright-core/package.json" ]; then
    say "installing playwright-core (npm ci) into target/console-node"
    cp tests/console/package.json tests/console/package-lock.json "$node_dir/"
    (cd "$node_dir" && npm ci --no-audit --no-fund --ignore-scripts >&2) || die "npm ci failed"
fi
[ -f "$node_dir/node_modules/playwright-core/package.json" ] || die "playwright-core did not install"

# --- the memory binary -------------------------------------------------------------------
if [ -n "${MEMORY_BIN:-}" ]; then
    bin="$MEMORY_BIN"
else
    target="${CARGO_TARGET_DIR:-$root/target}"
    say "building memory (cargo build -p memory-layer-cli)"
    cargo build -q -p memory-layer-cli >&2 || die "cargo build -p memory-layer-cli failed"
    bin="$target/debug/memory"
fi
case "$bin" in */*) bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" ;; esac
[ -x "$bin" ] || die "no memory binary at $bin"

# --- a server of its own ---------------------------------------------------------------
mkdir -p "$root/target/tmp"
work="$(mktemp -d "$root/target/tmp/console-test.XXXXXX")"
# Chromium's profile and every other temporary file of node, Chromium and the servers go in
# $work too, removed at the end: nothing is left in the system's temporary folder.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
server_pid=""
plain_pid=""
cleanup() {
    for pid in $server_pid $plain_pid; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}

# Starts `memory serve ARGS...` in the background: its pid in $started_pid, its URL in
# $started_url (from the first line it prints).
start_server() {
    local out="$1"
    shift
    "$bin" serve "$@" --listen 127.0.0.1:0 > "$out.out" 2> "$out.err" &
    started_pid=$!
    started_url=""
    local line
    for _ in $(seq 1 200); do
        if line="$(head -n1 "$out.out" 2>/dev/null)" && [ -n "$line" ]; then
            started_url="${line#memory serve: listening on }"
            return 0
        fi
        kill -0 "$started_pid" 2>/dev/null || break
        sleep 0.1
    done
    cat "$out.err" >&2 || true
    return 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

secret="sk-console-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
key_id="apikey_01console"
printf '# the browser tests key\n%s %s\n' "$key_id" "$secret" > "$work/keys.txt"
chmod 600 "$work/keys.txt"
start_server "$work/serve" --db "$work/stores.db" --api-keys "$work/keys.txt" || {
    server_pid="$started_pid"
    die "memory serve did not start"
}
server_pid="$started_pid"
url="$started_url"
say "memory serve at $url"

shots="${CONSOLE_SCREENSHOTS:-}"
if [ -n "$shots" ]; then
    mkdir -p "$shots"
    shots="$(cd "$shots" && pwd)"
fi
CONSOLE_URL="$url" CONSOLE_KEY="$secret" CONSOLE_KEY_ID="$key_id" CONSOLE_MEMORY_BIN="$bin" \
    CONSOLE_NODE_MODULES="$node_dir/node_modules" CONSOLE_CHROMIUM="$chromium" \
    CONSOLE_PROFILE="$work/profile" CONSOLE_SCREENSHOTS="$shots" \
    node tests/console/console.test.mjs || {
        say "server log:"
        tail -n 50 "$work/serve.err" >&2 || true
        die "the browser tests failed"
    }

# `memory serve --no-console`: the console is a 404, the API is unchanged.
start_server "$work/plain" --db "$work/plain.db" --no-console || {
    plain_pid="$started_pid"
    die "memory serve --no-console did not start"
}
plain_pid="$started_pid"
PLAIN_URL="$started_url" node --input-type=module -e '
const u = process.env.PLAIN_URL;
for (const [path, want] of [["/console/", 404], ["/console/assets/console.css", 404], ["/health", 200], ["/v1/memory_stores", 200]]) {
  const r = await fetch(u + path);
  if (r.status !== want) { console.error(`${path}: ${r.status}, not ${want}`); process.exit(1); }
}
console.log("ok - memory serve --no-console answers 404 at /console/");
' || die "memory serve --no-console still serves the console"
