#!/usr/bin/env bash
# The HTTP/2 conformance run: h2spec 2.6 (146 tests, RFC 7540/9113 and RFC 7541) against
# examples/hello over TLS (ALPN h2) and over h2c with prior knowledge, on 127.0.0.1.
#
#   tests/conformance/h2spec.sh HELLO [REPORT_DIR]
#
# HELLO is the built examples/hello. h2spec's packages come from ../shared/tools/h2spec
# (TERN_H2SPEC_DIR overrides it): its source and golang.org/x/net at the commit its go.mod
# pins; Go and the few libraries it needs come from Debian (installed here when missing). The
# command line is tern's own (tests/conformance/h2spec/main.go). Fails when a test fails on
# either transport; prints both summaries and writes JUnit reports to REPORT_DIR (default: a
# temporary directory, removed at exit).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
hello=$(realpath "${1:?usage: h2spec.sh HELLO [REPORT_DIR]}")
src=${TERN_H2SPEC_DIR:-$root/../shared/tools/h2spec}
[ -d "$src/h2spec-src" ] && [ -d "$src/xnet" ] ||
    { echo "h2spec.sh: no h2spec source at $src (set TERN_H2SPEC_DIR)" >&2; exit 1; }

work=$(mktemp -d)
server_pids=()
cleanup() {
    for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
reports=${2:-$work}
mkdir -p "$reports"

need=()
for p in golang-go golang-github-fatih-color-dev golang-github-mattn-go-colorable-dev \
         golang-github-mattn-go-isatty-dev golang-golang-x-sys-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need[@]}" >/dev/null ||
        { apt-get update -qq && apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need[@]}" >/dev/null; }
fi

# GOPATH mode, offline: h2spec's packages and x/net under one GOPATH, Debian's beside it.
gp=$work/gopath
mkdir -p "$gp/src/github.com/summerwind" "$gp/src/golang.org/x" "$gp/src/tern/h2spec-run"
cp -a "$src/h2spec-src" "$gp/src/github.com/summerwind/h2spec"
rm -rf "$gp/src/github.com/summerwind/h2spec/cmd"
cp -a "$src/xnet" "$gp/src/golang.org/x/net"
cp "$here/h2spec/main.go" "$gp/src/tern/h2spec-run/"
bin=$work/h2spec-run
(cd "$gp/src/tern/h2spec-run" &&
    env GO111MODULE=off GOPATH="$gp:/usr/share/gocode" GOPROXY=off GOFLAGS= GOTOOLCHAIN=local \
        GOCACHE="${TERN_H2SPEC_GOCACHE:-/tmp/tern-h2spec-gocache}" go build -o "$bin" .)

PYTHONPATH="$root/tests/support" python3 -c 'import sys, certs; certs.self_signed(sys.argv[1])' "$work"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "h2spec.sh: nothing answers on port $1" >&2
    return 1
}

mkdir -p "$work/public"   # hello serves ./public
tls_port=$(free_port)
h2c_port=$(free_port)
(cd "$work" && exec "$hello" "$tls_port" --cert "$work/cert.pem" --key "$work/key.pem") >"$work/tls.log" 2>&1 &
server_pids+=($!)
(cd "$work" && exec "$hello" "$h2c_port") >"$work/h2c.log" 2>&1 &
server_pids+=($!)
wait_port "$tls_port"
wait_port "$h2c_port"

# The tests that failed, by h2spec's IDs (http2/5.1/8), from the JUnit report.
failed_ids() {
    python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
# A case's number is its place in its section (h2spec's own numbering).
for suite in ET.parse(sys.argv[1]).iter("testsuite"):
    for number, case in enumerate(suite.iter("testcase"), 1):
        if case.find("failure") is not None or case.find("error") is not None:
            print(f"{case.get('package')}/{number}")
PY
}

status=0
# run NAME WAIVED_IDS h2spec-arguments...: every test must pass but the waived ones (docs/http2.md).
run() {
    local name=$1 waived=$2
    shift 2
    echo "== h2spec over $name"
    "$bin" "$@" -j "$reports/h2spec-$name.xml" >"$work/$name.out" 2>&1 || true
    grep -E '^[0-9]+ tests, ' "$work/$name.out" ||
        { cat "$work/$name.out"; echo "h2spec.sh: h2spec did not finish over $name" >&2; status=1; return; }
    local id unexpected=0
    for id in $(failed_ids "$reports/h2spec-$name.xml"); do
        if [[ " $waived " == *" $id "* ]]; then
            echo "   $id failed: waived over $name (docs/http2.md)"
        else
            echo "   $id FAILED"
            unexpected=1
        fi
    done
    if [ "$unexpected" -eq 1 ]; then
        status=1
        sed -n '/^Failures:/,$p' "$work/$name.out"
    fi
}
run tls "" -h 127.0.0.1 -p "$tls_port" -t -k -o 2
# h2c shares its port with HTTP/1.1: an invalid preface is an HTTP/1.1 request, answered
# 400 before the close (h2spec reads that answer as a frame).
run h2c "http2/3.5/2" -h 127.0.0.1 -p "$h2c_port" -o 2
for pid in "${server_pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "h2spec.sh: hello exited during the run" >&2; status=1; }
done
exit "$status"
