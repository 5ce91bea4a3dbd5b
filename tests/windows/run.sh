#!/usr/bin/env bash
# The Windows build, cross-compiled with mingw-w64 and run under wine (issue 52, docs/platforms.md):
# configures build-windows/ with the toolchain file (-Werror, HTTP/3 off, the tests and the
# install rules on), builds examples/hello and examples/live, and runs them under wine,
# headless, in a wine prefix of its own, with clients on the Linux side: hello over HTTP/1.1 (GET, PUT, a static file, names
# Windows must refuse), stopped by Ctrl-C (SIGINT); hello over HTTPS (a certificate made here
# with openssl) with HTTP/1.1 and HTTP/2; live through tests/examples/live_smoke.sh and
# tests/clients/ws_clients.sh; then the C++ unit tests, the test kit's tests and the wire tests
# (tern_unit_tests.exe, tern_testing_tests.exe, tern_integration_tests.exe, built with the same
# -Werror) under wine, with Catch2's summary. Fails (non-zero) at the first step that does not
# work, saying which; the one check known to fail only under Wine, and the unit and wire cases
# left out on Windows, are named where they are let through.
#
#   tests/windows/run.sh            # the dependencies' prefix from scripts/windows-deps.sh
#   TERN_WINDOWS_DEPS_PREFIX=... tests/windows/run.sh
#   TERN_WINDOWS_TOOLCHAIN=FILE (default cmake/toolchains/mingw-w64.cmake), TERN_WINDOWS_BUILD=DIR
#   (default build-windows), TERN_WINDOWS_PORT=N and TERN_WINDOWS_TLS_PORT=N (default: free ports), WINEPREFIX
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
build=${TERN_WINDOWS_BUILD:-build-windows}
# A free port (TCP and UDP, as tests/support/procs.py's free_port), unless one is given.
free_port() {
    python3 -c 'import sys; sys.path.insert(0, "tests/support"); import procs; print(procs.free_port())'
}
port=${TERN_WINDOWS_PORT:-$(free_port)}

fail() {
    echo "tests/windows/run.sh: FAIL: $*" >&2
    exit 1
}

if [[ -z "${TERN_WINDOWS_DEPS_PREFIX:-}" ]]; then
    [[ -x scripts/windows-deps.sh ]] || fail "no scripts/windows-deps.sh and no TERN_WINDOWS_DEPS_PREFIX"
    TERN_WINDOWS_DEPS_PREFIX=$(scripts/windows-deps.sh | tail -n 1)
fi
toolchain=${TERN_WINDOWS_TOOLCHAIN:-cmake/toolchains/mingw-w64.cmake}
[[ -f "$toolchain" ]] || fail "no toolchain file $toolchain"

start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DTERN_WINDOWS_DEPS_PREFIX="$TERN_WINDOWS_DEPS_PREFIX" \
    -DTERN_IO=portable -DTERN_HTTP3=OFF -DTERN_OPENSSL_DLOPEN=OFF -DTERN_CODECS_DLOPEN=OFF \
    -DTERN_WERROR=ON \
    -DTERN_BUILD_TESTS=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null ||
    fail "configure"
nice cmake --build "$build" --target hello live || fail "build of hello.exe and live.exe"
echo "tests/windows/run.sh: hello.exe and live.exe built in $(($(date +%s) - start)) s"
start=$(date +%s)
test_programs=(tern_unit_tests tern_testing_tests tern_integration_tests)
nice cmake --build "$build" --target "${test_programs[@]}" || fail "build of ${test_programs[*]}"
echo "tests/windows/run.sh: ${test_programs[*]} built in $(($(date +%s) - start)) s"

exe=$(find "$build" -name hello.exe | head -n 1)
[[ -n "$exe" ]] || fail "no hello.exe in $build"
live_exe=$(find "$build" -name live.exe | head -n 1)
[[ -n "$live_exe" ]] || fail "no live.exe in $build"

export WINEPREFIX=${WINEPREFIX:-$HOME/.cache/tern-wine/tests-windows}
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="  # no Mono or Gecko prompts on a fresh prefix
mkdir -p "$WINEPREFIX"
winebin=$(printf 'Z:%s/bin' "$TERN_WINDOWS_DEPS_PREFIX" | tr / '\\')
export WINEPATH="$winebin"

work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    # Whatever still runs in this script's own wine prefix (hello.exe outlives its launcher).
    wineserver -k 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# start_hello LOG ARGS...: hello.exe under wine, serving ./public from examples/hello.
start_hello() {
    local log=$1
    shift
    (cd examples/hello && exec wine "$here/$exe" "$@") >"$log" 2>&1 &
    pids+=($!)
}

# wait_for URL LOG: until the port answers (wine's first start in a fresh prefix is slow).
wait_for() {
    local pid=${pids[-1]}
    for _ in $(seq 1 120); do
        if curl -sk -o /dev/null "$1" 2>/dev/null; then return 0; fi
        kill -0 "$pid" 2>/dev/null || { cat "$2" >&2; fail "hello.exe ended before it listened"; }
        sleep 0.5
    done
    cat "$2" >&2
    fail "hello.exe did not answer on $1"
}

expect='An incoming GET request!'

start_hello "$work/http.log" "$port"
wait_for "http://127.0.0.1:$port/" "$work/http.log"
body=$(curl -sS --max-time 10 "http://127.0.0.1:$port/") || fail "curl GET / over HTTP/1.1"
[[ "$body" == "$expect" ]] || fail "GET / answered '$body', not '$expect'"
body=$(curl -sS --max-time 10 -X PUT --data 'echo me' "http://127.0.0.1:$port/") ||
    fail "curl PUT / over HTTP/1.1"
[[ "$body" == "echo me" ]] || fail "PUT / answered '$body', not its body"
# A static file below ./public, and names Windows would read as something else refused.
curl -sS --max-time 10 -o "$work/index.html" "http://127.0.0.1:$port/index.html" ||
    fail "curl GET /index.html"
cmp -s "$work/index.html" examples/hello/public/index.html ||
    fail "GET /index.html did not answer examples/hello/public/index.html"
for refused in /CON /index.html. '/index.html::$DATA' /.hidden; do
    code=$(curl -sS --max-time 10 --path-as-is -o /dev/null -w '%{http_code}' \
        "http://127.0.0.1:$port$refused") || fail "curl GET $refused"
    [[ "$code" == 404 ]] || fail "GET $refused answered $code, not 404"
done
echo "tests/windows/run.sh: wine hello.exe answered curl over HTTP/1.1 (GET, PUT, a static file)"

# Ctrl-C: wine turns SIGINT into the console's Ctrl-C, which app.listen's signal set takes as
# a stop; hello then returns from main (status 0), not killed by the signal.
kill -INT "${pids[0]}"
status=0
for _ in $(seq 1 40); do
    kill -0 "${pids[0]}" 2>/dev/null || break
    sleep 0.25
done
kill -0 "${pids[0]}" 2>/dev/null && fail "hello.exe still runs 10 s after SIGINT (Ctrl-C)"
wait "${pids[0]}" || status=$?
[[ "$status" == 0 ]] || { cat "$work/http.log" >&2; fail "hello.exe ended with $status after SIGINT, not 0"; }
echo "tests/windows/run.sh: hello.exe stopped on Ctrl-C (SIGINT under wine) with status 0"

# HTTPS: a certificate for 127.0.0.1, made here; wine reads it through its Z: drive.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
    -days 1 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 ||
    fail "openssl could not make a test certificate"
tls_port=${TERN_WINDOWS_TLS_PORT:-$(free_port)}
winpath() { printf 'Z:%s' "$1" | tr / '\\'; }
start_hello "$work/https.log" "$tls_port" --cert "$(winpath "$work/cert.pem")" \
    --key "$(winpath "$work/key.pem")"
wait_for "https://127.0.0.1:$tls_port/" "$work/https.log"
for version in 1.1 2; do
    out=$(curl -sS --max-time 10 --cacert "$work/cert.pem" "--http$version" \
        -w '\n%{http_version}' "https://127.0.0.1:$tls_port/") || fail "curl --http$version over HTTPS"
    got_version=${out##*$'\n'}
    body=${out%$'\n'*}
    [[ "$body" == "$expect" ]] || fail "HTTPS GET / (--http$version) answered '$body'"
    [[ "$got_version" == "$version" ]] || fail "HTTPS --http$version was served as HTTP/$got_version"
done
echo "tests/windows/run.sh: wine hello.exe answered curl over HTTPS with HTTP/1.1 and HTTP/2"

# examples/live through the Linux-side client scripts ctest runs against the Linux build
# (SSE with curl -N and Python, a slow streamed body, a deferred answer, an upload, the page;
# WebSocket with Python's websockets and Node's ws, plain and permessage-deflate), given a
# wrapper that starts live.exe under wine. They wait 5 s for the port: wine is warm by now.
cat >"$work/live" <<WRAPPER
#!/bin/sh
exec wine "$here/$live_exe" "\$@"
WRAPPER
chmod +x "$work/live"
# Its last check, the exit status after SIGTERM, cannot pass under Wine: Windows has no
# SIGTERM, and wine ends the process at once (status 143), so tern's stop never runs. That one
# failure, and only it, is named and let through; any other fails this script.
sigterm_fail="FAIL exit status after SIGTERM: want '0', got '143'"
if ! tests/examples/live_smoke.sh "$work/live" >"$work/live_smoke.log" 2>&1; then
    if [[ $(grep -c '^FAIL' "$work/live_smoke.log") != 1 ]] ||
        ! grep -qxF "$sigterm_fail" "$work/live_smoke.log"; then
        cat "$work/live_smoke.log" >&2
        fail "tests/examples/live_smoke.sh against live.exe"
    fi
    echo "tests/windows/run.sh: live_smoke.sh's SIGTERM check fails under Wine (no SIGTERM on Windows: wine ends the process, 143)"
fi
echo "tests/windows/run.sh: live.exe passed tests/examples/live_smoke.sh ($(grep -c '^ok' "$work/live_smoke.log") checks)"
wineserver -k 2>/dev/null || true
tests/clients/ws_clients.sh "$work/live" >"$work/ws.log" 2>&1 ||
    { cat "$work/ws.log" >&2; fail "tests/clients/ws_clients.sh against live.exe"; }
echo "tests/windows/run.sh: live.exe passed tests/clients/ws_clients.sh (Python websockets, Node ws; plain and compressed)"

# The C++ tests under wine: the unit tests and the test kit's tests (tern_unit_tests.exe,
# tern_testing_tests.exe), each program run whole, headless, from the repository's root, with
# Catch2's console summary printed. The cases that cannot exist on Windows are compiled out
# (`#if !defined(_WIN32)` in the test, each named in docs/platforms.md); a case that fails
# only under Wine is left out here by name (wine_only below), with its reason.
# run_tests PROGRAM [CATCH2 ARGUMENTS...]
run_tests() {
    local name=$1
    shift
    local exe log status=0 began
    exe=$(find "$build" -name "$name.exe" | head -n 1)
    [[ -n "$exe" ]] || fail "no $name.exe in $build"
    log="$work/$name.log"
    began=$(date +%s)
    timeout 900 wine "$here/$exe" --use-colour no "$@" >"$log" 2>&1 || status=$?
    summary=$(grep -E '^(All tests passed|test cases:)' "$log" | tail -n 1)
    echo "tests/windows/run.sh: $name.exe under wine in $(($(date +%s) - began)) s: ${summary:-no summary}"
    if [[ "$status" != 0 ]]; then
        tail -n 200 "$log" >&2
        fail "$name.exe under wine (status $status)"
    fi
}
wineserver -k 2>/dev/null || true
# Left out of the unit tests on Windows, by tag, not a Wine limitation: [symlink] (14 cases):
# the test trees are made with std::filesystem::create_symlink, which mingw-w64's libstdc++
# (GCC 12) does not implement ("Function not implemented"), and tern on Windows follows no
# symlink at all (docs/platforms.md), where these cases expect the ones inside the root
# followed.
run_tests tern_unit_tests "~[symlink]"
run_tests tern_testing_tests
# The wire tests (tern_integration_tests.exe: real servers on 127.0.0.1, the raw client over
# Winsock), the files and cases that cannot exist on Windows compiled out in the test files
# (docs/platforms.md). Left out here by name, each with its reason:
# - llhttp's version, neither Wine nor tern: the Windows prefix builds llhttp 9.4.3 (Debian
#   forky's libllhttp-source), which accepts a tab after the Content-Length digits (OWS,
#   RFC 9112 5); Debian 12's 9.2.1, which the Linux build uses, refuses it, as the case expects.
# - mingw-w64's libstdc++, not Wine: std::filesystem::create_symlink is not implemented, and
#   the case's tree needs a symlink (the unit tests' [symlink] cases, above).
# - tern on Windows, documented: a connection stays on the loop that accepted it, so the first
#   loop serves every connection (docs/platforms.md, "Readiness").
wire_left_out=(
    "~a trailing tab after a framing value is refused with 400 (documented strictness)"
    "~the small-file cache never serves a file swapped for a symlink out of the root*"
    "~a server with threads(3) serves its connections on all three of its loops"
)
run_tests tern_integration_tests "${wire_left_out[@]}"
