#!/usr/bin/env bash
# Load plus abuse: wrk drives the hello example while slowloris, garbage, silent, oversized
# and header-flooding clients run beside it. The well-behaved clients must see no error:
# no socket errors and no non-2xx answers. Bounded: about `seconds` (default 8) in all.
#
#   tests/load/abuse_check.sh path/to/hello [seconds]
set -euo pipefail
hello=$(realpath "$1")
seconds=${2:-8}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; kill "$abusers" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/public"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$work" && exec "$hello" "$port") >"$work/hello.log" 2>&1 &
pid=$!
up=0
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/" >/dev/null && { up=1; break; }; sleep 0.05; done
[ "$up" -eq 1 ] || { echo "FAIL: hello did not start"; cat "$work"/*.log "$work/out" 2>/dev/null; exit 1; }

python3 "$here/abusers.py" "$port" "$((seconds + 1))" >"$work/abusers.log" 2>&1 &
abusers=$!
sleep 1  # let the abusers take their places first
wrk -t1 -c50 -d"${seconds}s" "http://127.0.0.1:$port/" >"$work/wrk.log" 2>&1 || true
wait "$abusers" || true
cat "$work/wrk.log" "$work/abusers.log"

requests=$(awk '/requests in/ {print $1}' "$work/wrk.log")
fail=0
if grep -q "Socket errors" "$work/wrk.log"; then echo "FAIL: wrk saw socket errors"; fail=1; fi
if grep -q "Non-2xx" "$work/wrk.log"; then echo "FAIL: wrk saw non-2xx answers"; fail=1; fi
if [ -z "$requests" ] || [ "$requests" -lt 1000 ]; then
    echo "FAIL: wrk completed only '${requests:-0}' requests"; fail=1
fi
if ! curl -sf "http://127.0.0.1:$port/" >/dev/null; then echo "FAIL: not serving afterwards"; fail=1; fi
[ "$fail" -eq 0 ] && echo "abuse check: $requests well-behaved requests, no errors"
exit "$fail"
