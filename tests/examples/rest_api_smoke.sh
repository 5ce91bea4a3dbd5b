#!/usr/bin/env bash
# Runs the built rest_api program as deployed: start it on the free port given as its
# argument, call it with curl (cookie jar, --compressed), check the usage error and the
# access log, then stop it with SIGTERM and expect a clean exit. The API's behaviour is
# tested with the test kit in tests/examples/test_rest_api.cpp.
set -euo pipefail
app=$(realpath "$1")
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$app" "$port" >"$work/out" 2>"$work/access.log" &
pid=$!
base="http://127.0.0.1:$port"
up=0
for _ in $(seq 100); do curl -s -o /dev/null "$base/" && { up=1; break; }; sleep 0.05; done
[ "$up" -eq 1 ] || { echo "FAIL: rest_api did not start"; cat "$work/out" "$work/access.log"; exit 1; }

expect() {
    local what=$1 want=$2 got=$3
    if [ "$got" != "$want" ]; then echo "FAIL $what: want '$want', got '$got'"; exit 1; fi
    echo "ok   $what"
}
contains() {
    local what=$1 want=$2 got=$3
    case "$got" in *"$want"*) echo "ok   $what" ;; *) echo "FAIL $what: '$want' not in '$got'"; exit 1 ;; esac
}
jar="$work/jar"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# The API itself is tested with the test kit (tests/examples/test_rest_api.cpp); here, the
# program as deployed: its port argument, curl as a client, the access log, SIGTERM.
expect "GET / redirects" "302 /api/todos" "$(curl -s -o /dev/null -w '%{http_code} %header{location}' "$base/")"
expect "login" '{"user":"demo"}' "$(curl -s -c "$jar" -d 'user=demo&password=demo' "$base/login")"
expect "create with the cookie curl kept" '{"done":false,"id":1,"title":"write docs"}' \
    "$(curl -s -b "$jar" -d '{"title":"write docs"}' "$base/api/todos")"
for i in $(seq 2 40); do curl -s -o /dev/null -b "$jar" -d "{\"title\":\"to-do number $i\"}" "$base/api/todos"; done
contains "curl --compressed inflates the list" '"title":"to-do number 40"' \
    "$(curl -s --compressed -b "$jar" "$base/api/todos?limit=100")"
expect "delete" "204" "$(code -b "$jar" -X DELETE "$base/api/todos/2")"
expect "bad usage" "2" "$("$app" not-a-port >/dev/null 2>&1 || echo $?)"

contains "access log line" '"DELETE /api/todos/2 HTTP/1.1" 204 0 "-" "curl/' "$(cat "$work/access.log")"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
expect "exit status after SIGTERM" "0" "$status"
