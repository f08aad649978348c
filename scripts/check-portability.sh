#!/usr/bin/env bash
# Builds what macOS and Windows users build, from this Linux machine, and runs the contract
# cases on Windows:
#
#   scripts/check-portability.sh
#
# Steps:
#   1. Debian's packages, installed when missing (apt-get; `apt-get update` only then):
#      rustc-web and cargo-web (a Rust >= the workspace's rust-version, 1.96 on bookworm),
#      rust-web-src (the standard library's source), gcc-mingw-w64-x86-64 (the Windows linker
#      and C compiler) and wine64. rustup cannot download other targets' standard libraries
#      here, so Debian's rustc builds std itself: RUSTC_BOOTSTRAP=1 and `-Zbuild-std`.
#   2. macOS (aarch64-apple-darwin): `cargo check` of the crates without C code (memory-core,
#      memory-fs, memory-encrypted, memory-runner with `fs,encrypted`). Crates with C code
#      (SQLite, ring: every TLS and SQL backend) need a macOS C toolchain and SDK, which this
#      machine has not: they are not checked for macOS.
#   3. Windows (x86_64-pc-windows-gnu): `cargo build` of the `memory` program with its default
#      features (every backend: SQLite, S3, PostgreSQL, folders, encryption), linked by mingw,
#      and a check that it needs no DLL but Windows' own.
#   4. The contract cases of tests/oracle (classify.py, as scripts/test.sh runs them natively)
#      with that memory.exe under wine on a folder store, the store given as a Windows path
#      (Z:\...). Cases: PORTABILITY_ORACLE_COUNT (default 300, as the native run), seed
#      ORACLE_SEED (default 1).
# A warning in one of the workspace's crates fails a build step too: it is what a user building
# for that platform sees. Everything goes under target/portability (its own cargo target folder,
# the wine prefix, and TMPDIR for the compilers, wine and the oracle, emptied at the end), so
# the main build is never disturbed and nothing is left in the system's temporary folder.
# Environment: ORACLE_VENV (the oracle's venv, as in scripts/test.sh).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$root/target/portability"

if [ "${1:-}" = "--wine-run" ]; then
    # One run of memory.exe under wine (the oracle's candidate, set up by step 4 below): the
    # arguments are memory's, with the path after `--store` made a Windows path (wine's drive
    # Z: is the Linux root). A case that has not finished in 60 s fails (timeout's exit
    # status), instead of holding the step for compare.py's 120 s.
    shift
    args=()
    while [ $# -gt 0 ]; do
        if [ "$1" = "--store" ] && [ $# -ge 2 ] && [ "${2:0:1}" = "/" ]; then
            args+=("$1" "Z:${2//\//\\}")
            shift 2
        else
            args+=("$1")
            shift
        fi
    done
    exec timeout --kill-after=5 60 "$PORTABILITY_WINE" "$PORTABILITY_EXE" "${args[@]}"
fi

cd "$root"

step_name=""
step_start=$SECONDS
# Each step's time is printed when the next one starts.
step_took() {
    if [ -n "$step_name" ]; then
        printf '    (took %ds)\n' $((SECONDS - step_start))
    fi
}
step() {
    step_took
    step_name="$1"
    step_start=$SECONDS
    printf '\n==> %s\n' "$*"
}

fail() {
    echo >&2
    echo "check-portability: FAILED: $*" >&2
    exit 1
}
# Any other command of this script that fails (set -e) says which, instead of ending the script
# silently.
trap 'echo "check-portability: FAILED: line $LINENO: $BASH_COMMAND" >&2' ERR

mkdir -p "$work"
# The compilers (mingw's gcc leaves empty cc* files in its temporary folder), wine's server
# folder and the oracle's case folders all go here; removed when the script exits.
export TMPDIR="$work/tmp"
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"
wineserver=""
cleanup() {
    if [ -n "$wineserver" ]; then
        "$wineserver" -k >/dev/null 2>&1 || true
        "$wineserver" -w >/dev/null 2>&1 || true
    fi
    rm -rf "$TMPDIR"
}
trap cleanup EXIT

step "Debian packages: rustc-web, cargo-web, rust-web-src, gcc-mingw-w64-x86-64, wine64"
packages=(rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 wine64)
missing=()
for package in "${packages[@]}"; do
    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" != "installed" ]; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y "${missing[@]}"
fi
# Debian's binaries, by the packages' own file lists (rustup's `rustc` and `cargo` come first
# on PATH and have no other target's standard library).
package_file() {
    local file
    while read -r file; do
        if [ -f "$file" ] && [ -x "$file" ]; then
            printf '%s\n' "$file"
            return
        fi
    done < <(dpkg -L "$1" | grep -E "$2")
    fail "the package $1 has no program matching $2"
}
rustc="$(package_file rustc-web '/bin/rustc$')"
rustdoc="$(package_file rustc-web '/bin/rustdoc$')"
cargo="$(package_file cargo-web '/bin/cargo$')"
# Debian's wine64 is not on PATH: /usr/lib/wine/wine64, its wineserver beside it.
wine="$(package_file wine64 '/wine64$')"
wineserver_bin="$(dirname "$wine")/wineserver"
[ -x "$wineserver_bin" ] || fail "no wineserver beside $wine"
library="$("$rustc" --print sysroot)/lib/rustlib/src/rust/library"
[ -f "$library/std/Cargo.toml" ] || fail "no standard library source at $library (rust-web-src)"
need="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)"
have="$("$rustc" --version | awk '{print $2}')"
[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1)" = "$need" ] ||
    fail "$rustc is $have, older than the workspace's rust-version $need"
echo "rustc $have ($rustc), $("$cargo" --version), $("$wine" --version), std source: $library"

export RUSTC_BOOTSTRAP=1 RUSTC="$rustc" RUSTDOC="$rustdoc"
export CARGO_TARGET_DIR="$work/cargo"
# Windows: mingw links, and compiles the C of the cc-based crates (SQLite, ring).
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc
export AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar
# Line tables only: full debug information makes a 380 MB memory.exe, slow to link.
export CARGO_PROFILE_DEV_DEBUG=line-tables-only

# Debian's cargo with the standard library built from source; fails on an error, and on a
# warning in one of the workspace's crates (cargo hides the dependencies' and std's).
xcargo() {
    local log="$TMPDIR/cargo.log"
    if ! "$cargo" "$@" -Zbuild-std 2>&1 | tee "$log"; then
        fail "cargo $* does not build"
    fi
    if grep -qE -- '--> (crates|examples)/' "$log"; then
        fail "cargo $* warns (see above)"
    fi
}

step "macOS (aarch64-apple-darwin): cargo check of memory-core, memory-fs, memory-encrypted, memory-runner (fs, encrypted)"
xcargo check --target aarch64-apple-darwin \
    -p memory-layer-core -p memory-layer-fs -p memory-layer-encrypted -p memory-layer-runner \
    --no-default-features --features fs,encrypted

step "Windows (x86_64-pc-windows-gnu): cargo build of memory.exe, default features, linked by mingw"
xcargo build --target x86_64-pc-windows-gnu -p memory-layer-cli --bin memory
exe="$CARGO_TARGET_DIR/x86_64-pc-windows-gnu/debug/memory.exe"
[ -f "$exe" ] || fail "cargo built no $exe"
# A DLL of mingw's (libgcc_s_seh-1.dll, libwinpthread-1.dll, ...) is on no user's Windows.
dlls="$(x86_64-w64-mingw32-objdump -p "$exe" | sed -n 's/^\s*DLL Name: //p' | sort -fu)"
echo "memory.exe ($(du -h "$exe" | cut -f1)) imports: $(echo "$dlls" | tr '\n' ' ')"
if grep -qi '^lib' <<<"$dlls"; then
    fail "memory.exe needs mingw's DLLs: $(grep -i '^lib' <<<"$dlls" | tr '\n' ' ')"
fi

step "contract cases (tests/oracle) with memory.exe under wine on a folder store"
export WINEPREFIX="$work/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineserver="$wineserver_bin"
# One server kept running for the prefix's set-up and all the cases (each would otherwise
# start its own), stopped on exit; first, one an interrupted run may have left.
mkdir -p "$WINEPREFIX"
"$wineserver" -k >/dev/null 2>&1 || true
"$wineserver" -w >/dev/null 2>&1 || true
"$wineserver" -p
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "creating the wine prefix $WINEPREFIX"
    "$wine" wineboot -i
fi
[ "$(readlink "$WINEPREFIX/dosdevices/z:")" = "/" ] || fail "wine's Z: is not / in $WINEPREFIX"
# Rust's std (and getrandom) take random bytes from ProcessPrng in bcryptprimitives.dll, which
# every Windows since 8 has and wine < 9 lacks: the prefix gets a stand-in that answers it with
# BCryptGenRandom. memory.exe itself is unchanged.
system32="$WINEPREFIX/drive_c/windows/system32"
wine_dlls="$(dirname "$(dpkg -L libwine | grep -m1 '/x86_64-windows/ntdll.dll$')")"
if [ ! -f "$wine_dlls/bcryptprimitives.dll" ] && [ ! -f "$system32/bcryptprimitives.dll" ]; then
    shim="$work/bcryptprimitives"
    mkdir -p "$shim"
    cat >"$shim/bcryptprimitives.c" <<'C'
#include <windows.h>
#include <bcrypt.h>
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
C
    printf 'LIBRARY bcryptprimitives\nEXPORTS\n    ProcessPrng\n' >"$shim/bcryptprimitives.def"
    x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" \
        "$shim/bcryptprimitives.c" "$shim/bcryptprimitives.def" -lbcrypt
    echo "installed a ProcessPrng stand-in into $system32 (wine $("$wine" --version) has none)"
fi
export PORTABILITY_WINE="$wine" PORTABILITY_EXE="$exe"
version="$("$root/scripts/check-portability.sh" --wine-run --version)" || fail "memory.exe does not run under wine"
echo "under wine: $version"

export ORACLE_VENV="${ORACLE_VENV:-$HOME/.cache/memory-oracle/py}"
bash tests/oracle/setup.sh
rm -rf "$work/oracle"
mkdir -p "$work/oracle"
# classify.py's own exit status (0: every disagreement with the Python SDK documented in
# DIVERGENCES.md) fails the step; its report stays in target/portability/oracle.
"$ORACLE_VENV/bin/python" tests/oracle/classify.py \
    --candidate "$(printf '%q' "$root/scripts/check-portability.sh") --wine-run exec --store {root}" \
    --oracle-python "$ORACLE_VENV/bin/python" --seed "${ORACLE_SEED:-1}" \
    --count "${PORTABILITY_ORACLE_COUNT:-300}" --jobs 2 --platform windows \
    --report "$work/oracle/report.json" --unexplained-out "$work/oracle/unexplained.jsonl" ||
    fail "the contract cases differ under wine (report: $work/oracle/report.json)"

step_took
echo "check-portability: macOS check, Windows build and the contract cases under wine passed"
