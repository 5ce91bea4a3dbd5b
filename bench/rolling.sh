#!/usr/bin/env bash
# The rolling restart of examples/cluster over a longer run than ctest's: three tern
# processes behind nginx, wrk with 400 connections, every process restarted several times;
# once with GETs (must lose nothing) and once with POSTs (docs/deploy.md says what happens
# to those). Prints wrk's summaries and the two "rolling restart: N requests, M failed"
# lines. Load on 127.0.0.1 only, bounded (about 40 s per method with the defaults).
#
#   bench/rolling.sh [--rounds R] [--connections C] [--grace-ms MS]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=3 connections=400 grace_ms=1000
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --grace-ms) grace_ms=$2; shift 2 ;;
    *) echo "rolling.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
"$repo/scripts/install-deps.sh"
build="$repo/bench/results/build"
mkdir -p "$build"
cmake -S "$repo/bench/superbuild" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; exit 1; }
nice cmake --build "$build" --target cluster_app >"$build/build.log" 2>&1 ||
    { tail -40 "$build/build.log" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || true
status=0
for method in GET POST; do
    echo "== $method, $connections connections, $rounds rounds of restarts"
    "$repo/examples/cluster/rolling-restart.sh" --app "$build/tern/examples/cluster/app" \
        --method "$method" --rounds "$rounds" --connections "$connections" \
        --grace-ms "$grace_ms" --port 18500 || status=1
done
exit "$status"
