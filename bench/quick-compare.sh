#!/usr/bin/env bash
# A quick side-by-side: examples/hello and nginx (Debian package) answering GET / with the
# same 24-byte text body, measured with the same wrk command in interleaved rounds.
# Not the full benchmark (that is bench/'s own issue): a sanity ratio for one machine.
#
#   bench/quick-compare.sh [rounds=3] [duration=5s]
#
# Both servers and wrk share this machine's cores; compare the ratio, not the absolute
# numbers, and only within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
duration=${2:-5s}
tern_port=18080
nginx_port=18081

scripts/install-deps.sh --bench
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERN_BUILD_TESTS=OFF >/dev/null
cmake --build build-release --target hello >/dev/null

work=$(mktemp -d)
cleanup() {
    [ -n "${tern_pid:-}" ] && kill "$tern_pid" 2>/dev/null || true
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

workers=$(nproc)
cat >"$work/nginx.conf" <<CONF
worker_processes $workers;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$nginx_port reuseport;
        location = / { default_type "text/plain; charset=utf-8"; return 200 "An incoming GET request!"; }
    }
}
CONF
nginx -c "$work/nginx.conf" -p "$work"
(cd examples/hello && exec ../../build-release/examples/hello/hello "$tern_port") >/dev/null &
tern_pid=$!
for port in $tern_port $nginx_port; do
    for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
done

run() { wrk -t2 -c100 -d"$duration" "http://127.0.0.1:$1/" | awk '/Requests\/sec/ {print $2}'; }
echo "wrk -t2 -c100 -d$duration, $rounds interleaved rounds, $(nproc) cores shared with wrk"
printf '%-6s %12s %12s %8s\n' round tern nginx ratio
for r in $(seq "$rounds"); do
    t=$(run $tern_port)
    n=$(run $nginx_port)
    awk -v r="$r" -v t="$t" -v n="$n" 'BEGIN { printf "%-6s %12s %12s %8.2f\n", r, t, n, t / n }'
done
