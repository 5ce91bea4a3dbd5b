#!/usr/bin/env bash
# Runs the built hello example as a user would: start it on a free port, call each route
# with curl, then stop it with SIGTERM and expect a clean exit.
set -euo pipefail
hello=$(realpath "$1")
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/public"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$work" && exec "$hello" "$port") >"$work/out" 2>&1 &
pid=$!
up=0
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/" >/dev/null && { up=1; break; }; sleep 0.05; done
[ "$up" -eq 1 ] || { echo "FAIL: hello did not start"; cat "$work"/*.log "$work/out" 2>/dev/null; exit 1; }

expect() {
    local what=$1 want=$2 got=$3
    if [ "$got" != "$want" ]; then echo "FAIL $what: want '$want', got '$got'"; exit 1; fi
    echo "ok   $what"
}
url="http://127.0.0.1:$port/"
expect "GET /" "An incoming GET request!" "$(curl -s "$url")"
expect "POST / status" "201" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")"
expect "POST / body" "Created!" "$(curl -s -X POST "$url")"
expect "PUT / echoes" "echo me" "$(curl -s -X PUT --data-binary 'echo me' "$url")"
expect "DELETE /" "Deleted successfully!" "$(curl -s -X DELETE "$url")"
expect "body over max_body_size" "413" \
    "$(head -c 1048577 /dev/zero | curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary @- "$url")"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
expect "exit status after SIGTERM" "0" "$status"
