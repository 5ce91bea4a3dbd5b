#!/usr/bin/env bash
# Shows that tern's hot path takes no lock shared between threads: runs examples/bench_app
# with two worker threads under `strace -f -e trace=futex` while wrk drives keep-alive
# requests at it over both threads, and counts the futex(2) calls. A lock that two threads
# contend for ends in futex calls (a mutex sleeping or waking a waiter), so a shared lock on
# the request path would show up as thousands of them; uncontended locks, atomics and
# per-thread state make none. Passes when there are no more futex calls than one per 1,000
# requests plus 20 for starting and stopping the threads (which make 4 to 7 here). The
# allowance is fixed, not scaled: on a slow machine strace's stops hold wrk to a few thousand
# requests in its 3 s, and a limit of requests/1000 alone then fell below the start and stop
# calls (a CI run saw 7 calls for 5,157 requests, limit 5, with no lock on the request path).
#
#   bench/lock-check.sh path/to/bench_app
#
# Loopback only, about 10 s. Needs strace and wrk (scripts/install-deps.sh installs both).
set -euo pipefail
app=${1:-}
[ -n "$app" ] || { echo "usage: lock-check.sh path/to/bench_app" >&2; exit 2; }
command -v strace >/dev/null || { echo "lock-check.sh: strace not found" >&2; exit 1; }
command -v wrk >/dev/null || { echo "lock-check.sh: wrk not found" >&2; exit 1; }
app=$(realpath "$app")
work=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
strace -f -qq -e trace=futex -o "$work/futex.log" "$app" "$port" 2 >"$work/out" 2>&1 &
pid=$!
up=0
for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && { up=1; break; }
    sleep 0.1
done
[ "$up" -eq 1 ] || { echo "lock-check.sh: bench_app did not start"; cat "$work/out"; exit 1; }

# Two wrk threads with 50 connections: the kernel spreads them over both workers'
# SO_REUSEPORT acceptors, so both event loops serve requests at once.
timeout 30 wrk -t2 -c50 -d3s "http://127.0.0.1:$port/" >"$work/wrk.txt"
requests=$(awk '/requests in/ { print $1 }' "$work/wrk.txt")
# SIGTERM to bench_app itself (strace does not pass its own on), then strace exits with it.
kill -TERM "$(pgrep -P "$pid")"
wait "$pid" || true
pid=""
futex=$(grep -c 'futex(' "$work/futex.log" || true)
[ -n "$requests" ] && [ "$requests" -gt 0 ] || { echo "lock-check.sh: wrk made no requests"; cat "$work/wrk.txt"; exit 1; }
limit=$((20 + requests / 1000))
echo "lock-check: $futex futex calls while serving $requests requests on 2 threads (limit $limit)"
if [ "$futex" -gt "$limit" ]; then
    echo "FAIL: threads contend for a lock on the request path; the calls:"
    sort "$work/futex.log" | awk '{ $1=""; print }' | sort | uniq -c | sort -rn | head -20
    exit 1
fi
