#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests: `initdb` into a folder under target/, the server on a
# free port of 127.0.0.1 only (no Unix socket), a fresh database, password authentication.
#
#   scripts/pg-test-server.sh run -- CMD [ARGS...]   start, run CMD with the variables below
#                                                     exported, stop (also on failure or ^C)
#   scripts/pg-test-server.sh start                   start; print `export ...` lines for eval
#   scripts/pg-test-server.sh stop                    stop the server `start` started
#   scripts/pg-test-server.sh install                 only make sure the server binaries exist
#
# Exported for the tests: MEMORY_TEST_POSTGRES_URL, postgres://memory:PASSWORD@127.0.0.1:PORT/
# memory_test (a new random password and a new, empty cluster on every start), and
# MEMORY_TEST_POSTGRES_CA, the PEM file of the test CA that signed the server's TLS certificate
# (for 127.0.0.1 and localhost; the server takes TLS and plain connections), and
# MEMORY_TEST_POSTGRES_OTHER_CA, a CA that signed nothing. The database uses an ICU collation
# where the server has ICU, so the tests see that listings do not depend on the database's
# collation.
#
# Needs PostgreSQL's server binaries (initdb, pg_ctl, postgres; any version from 13) and the
# openssl command; where they are missing and apt-get is available, installs Debian's
# `postgresql` (or `openssl`) package and says so.
# initdb refuses to run as root, so as root the server runs as the unprivileged system user
# `memory-pg` (created here if missing; override with MEMORY_PG_USER).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="${MEMORY_PG_STATE:-$root/target/pg-test-server}"
# The server runs in its data folder, so a relative state folder is made absolute first.
state="$(realpath -m -- "$state")"
pg_user="${MEMORY_PG_USER:-memory-pg}"
db_name="memory_test"
db_user="memory"

log() { echo "pg-test-server: $*" >&2; }

# The folder holding initdb, pg_ctl and postgres: $MEMORY_PG_BIN, then PATH, then the newest
# of Debian's versioned folders.
find_bin() {
    if [[ -n "${MEMORY_PG_BIN:-}" && -x "$MEMORY_PG_BIN/initdb" ]]; then
        echo "$MEMORY_PG_BIN"
        return 0
    fi
    local initdb
    if initdb="$(command -v initdb 2>/dev/null)" && [[ -x "$(dirname "$initdb")/pg_ctl" ]]; then
        dirname "$initdb"
        return 0
    fi
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
        echo "$dir"
        return 0
    fi
    return 1
}

apt_install() {
    local package="$1" why="$2"
    if ! command -v apt-get >/dev/null; then
        log "$why, and apt-get is not available: install it (PostgreSQL 13 or newer; set MEMORY_PG_BIN to the folder holding initdb)"
        exit 1
    fi
    local sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null || { log "$why: installing $package needs root (or sudo)"; exit 1; }
        sudo=(sudo)
    fi
    log "$why: installing the distribution's $package package with apt-get"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package" >&2
}

install() {
    if ! find_bin >/dev/null; then
        apt_install postgresql "PostgreSQL's server binaries (initdb, pg_ctl) are missing"
        find_bin >/dev/null || { log "apt-get installed postgresql, but initdb is still not found"; exit 1; }
    fi
    if ! command -v openssl >/dev/null; then
        apt_install openssl "the openssl command (for the test TLS certificates) is missing"
    fi
}

# A test CA, the server's certificate and key signed by it (for 127.0.0.1 and localhost), and
# a second CA that signed nothing, in $state/tls.
make_certs() {
    local dir="$state/tls"
    mkdir -p "$dir"
    (
        cd "$dir"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 7 \
            -subj "/CN=memory-postgres test CA" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days 7 \
            -subj "/CN=memory-postgres other CA" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
        openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost"
        printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=CA:FALSE" \
            "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
            -days 7 -extfile server.ext
        rm -f ca.key other-ca.key server.csr server.ext ca.srl
        chmod 0600 server.key
        chmod 0644 ca.pem other-ca.pem server.pem
    ) >"$state/openssl.log" 2>&1 || {
        log "making the test TLS certificates failed; log:"
        sed 's/^/    /' "$state/openssl.log" >&2
        exit 1
    }
    if [[ "$(id -u)" == 0 ]]; then
        chown -R "$pg_user" "$dir"
    fi
}

# Runs a server binary as the user that owns the cluster: ourselves, or `memory-pg` as root.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u "$pg_user" -- "$@"
    else
        "$@"
    fi
}

ensure_user() {
    [[ "$(id -u)" == 0 ]] || return 0
    if ! id "$pg_user" >/dev/null 2>&1; then
        log "running as root: creating the unprivileged system user $pg_user for the server"
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$pg_user"
    fi
}

free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
    else
        echo $((20000 + RANDOM % 40000))
    fi
}

start() {
    install
    ensure_user
    stop_quietly
    local bin
    bin="$(find_bin)"
    rm -rf "$state"
    mkdir -p "$state"
    chmod 0755 "$state"
    local password
    password="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
    # Files the server user reads and writes; the password file only for initdb.
    printf '%s\n' "$password" >"$state/pwfile"
    echo "$password" >"$state/password"
    chmod 0600 "$state/password"
    if [[ "$(id -u)" == 0 ]]; then
        chown "$pg_user" "$state" "$state/pwfile"
    fi
    chmod 0600 "$state/pwfile"
    as_owner "$bin/initdb" --pgdata="$state/data" --username="$db_user" --pwfile="$state/pwfile" \
        --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 || {
        log "initdb failed; log:"
        sed 's/^/    /' "$state/initdb.log" >&2
        exit 1
    }
    rm -f "$state/pwfile"
    make_certs
    local port
    for _attempt in 1 2 3 4 5; do
        port="$(free_port)"
        # Loopback TCP only, no Unix socket; fsync stays on (the tests check durability claims);
        # enough connections for the concurrency tests; TLS offered, not required.
        if as_owner "$bin/pg_ctl" --pgdata="$state/data" --log="$state/data/server.log" --wait --timeout=60 \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='' -c max_connections=200 -c ssl=on -c ssl_cert_file='$state/tls/server.pem' -c ssl_key_file='$state/tls/server.key'" \
            start >"$state/pg_ctl.log" 2>&1; then
            echo "$port" >"$state/port"
            echo "$bin" >"$state/bin"
            create_db "$bin" "$port" "$password"
            log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') listening on 127.0.0.1:$port (data in $state/data), database $db_name"
            print_env "$port" "$password"
            return
        fi
        log "the server did not start on port $port; log:"
        sed 's/^/    /' "$state/data/server.log" >&2 2>/dev/null || true
        stop_quietly
    done
    log "giving up: the server would not start"
    exit 1
}

create_db() {
    local bin="$1" port="$2" password="$3"
    local psql=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$db_user" -d postgres)
    [[ -x "$bin/psql" ]] || psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$db_user" -d postgres)
    # An ICU collation where the server has one, so that nothing in the tests relies on the
    # database sorting like C; the plain default otherwise.
    if ! PGPASSWORD="$password" "${psql[@]}" -c "CREATE DATABASE $db_name TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'" 2>"$state/createdb.log"; then
        PGPASSWORD="$password" "${psql[@]}" -c "CREATE DATABASE $db_name TEMPLATE template0 ENCODING 'UTF8'" >&2
    fi
}

print_env() {
    cat <<ENV
export MEMORY_TEST_POSTGRES_URL=postgres://$db_user:$2@127.0.0.1:$1/$db_name
export MEMORY_TEST_POSTGRES_CA=$state/tls/ca.pem
export MEMORY_TEST_POSTGRES_OTHER_CA=$state/tls/other-ca.pem
ENV
}

stop_quietly() {
    if [[ -f "$state/port" && -d "$state/data" ]]; then
        local bin
        bin="$(cat "$state/bin" 2>/dev/null || find_bin || true)"
        if [[ -n "$bin" ]]; then
            as_owner "$bin/pg_ctl" --pgdata="$state/data" --mode=fast --wait --timeout=30 stop >/dev/null 2>&1 ||
                as_owner "$bin/pg_ctl" --pgdata="$state/data" --mode=immediate --wait stop >/dev/null 2>&1 || true
        fi
        rm -f "$state/port"
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
        sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
