#!/usr/bin/env bash
# Runs the built rest_api example as a user would: start it on a free port, log in, create,
# read, replace, upload to and delete to-dos with curl, check the errors, CORS, compression
# and the access log, then stop it with SIGTERM and expect a clean exit.
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

expect "GET / redirects" "302 /api/todos" "$(curl -s -o /dev/null -w '%{http_code} %header{location}' "$base/")"
expect "API without a session" "401" "$(code "$base/api/todos")"
contains "401 body is JSON for a JSON client" '"detail":"log in first: POST /login"' \
    "$(curl -s -H 'Accept: application/json' "$base/api/todos")"
expect "wrong password" "401" "$(code -d 'user=demo&password=x' "$base/login")"
expect "login" '{"user":"demo"}' "$(curl -s -c "$jar" -d 'user=demo&password=demo' "$base/login")"
contains "session cookie attributes" "HttpOnly" "$(curl -s -D - -o /dev/null -d 'user=demo&password=demo' "$base/login")"

expect "create" '{"done":false,"id":1,"title":"write docs"}' \
    "$(curl -s -b "$jar" -d '{"title":"write docs"}' "$base/api/todos")"
expect "create status and Location" "201 /api/todos/2" \
    "$(curl -s -o /dev/null -w '%{http_code} %header{location}' -b "$jar" -d '{"title":"test","done":true}' "$base/api/todos")"
expect "list" '[{"done":false,"id":1,"title":"write docs"},{"done":true,"id":2,"title":"test"}]' \
    "$(curl -s -b "$jar" "$base/api/todos")"
expect "list with limit and offset" '[{"done":true,"id":2,"title":"test"}]' \
    "$(curl -s -b "$jar" "$base/api/todos?limit=1&offset=1")"
expect "bearer token works too" "200" "$(code -H 'Authorization: Bearer demo-session-token' "$base/api/todos/1")"
expect "limit that is not a number" "query parameter 'limit' must be a non-negative integer in range, not 'ten'" \
    "$(curl -s -b "$jar" "$base/api/todos?limit=ten")"
expect "replace" '{"done":true,"id":1,"title":"write better docs"}' \
    "$(curl -s -b "$jar" -X PUT -d '{"title":"write better docs","done":true}' "$base/api/todos/1")"
expect "malformed JSON" "400" "$(code -b "$jar" -d '{"title":' "$base/api/todos")"
expect "JSON of the wrong shape" "400" "$(code -b "$jar" -d '{"title":5}' "$base/api/todos")"
expect "empty title" "422" "$(code -b "$jar" -d '{"title":""}' "$base/api/todos")"
expect "unknown to-do" '{"error":"no to-do with id 99"}' "$(curl -s -b "$jar" "$base/api/todos/99")"
expect "unknown route" '{"error":"no route for /nowhere"}' "$(curl -s "$base/nowhere")"
expect "nosniff on every response" "nosniff" \
    "$(curl -s -o /dev/null -w '%header{x-content-type-options}' "$base/nowhere")"

printf 'line 1\r\nline 2\r\n' >"$work/notes.txt"
expect "upload" '{"content_type":"text/plain","filename":"notes.txt","size":16,"todo":1}' \
    "$(curl -s -b "$jar" -F "file=@$work/notes.txt;type=text/plain" "$base/api/todos/1/attachments")"
head -c 1100000 /dev/zero >"$work/big.bin"
expect "upload over max_upload_file_size" "413" \
    "$(code -b "$jar" -F "file=@$work/big.bin" "$base/api/todos/1/attachments")"

for i in $(seq 3 40); do curl -s -o /dev/null -b "$jar" -d "{\"title\":\"to-do number $i\"}" "$base/api/todos"; done
expect "large list is gzip-compressed" "gzip" \
    "$(curl -s -o /dev/null -w '%header{content-encoding}' -H 'Accept-Encoding: gzip' -b "$jar" "$base/api/todos?limit=100")"
contains "and inflates to JSON" '"title":"to-do number 40"' \
    "$(curl -s --compressed -b "$jar" "$base/api/todos?limit=100")"

expect "CORS preflight" "204 http://localhost:3000 true" \
    "$(curl -s -o /dev/null -w '%{http_code} %header{access-control-allow-origin} %header{access-control-allow-credentials}' \
        -X OPTIONS -H 'Origin: http://localhost:3000' -H 'Access-Control-Request-Method: PUT' "$base/api/todos/1")"
expect "CORS on an error response" "http://localhost:3000" \
    "$(curl -s -o /dev/null -w '%header{access-control-allow-origin}' -H 'Origin: http://localhost:3000' "$base/api/todos")"
expect "CORS refuses other origins" "403" \
    "$(code -X OPTIONS -H 'Origin: http://evil.example' -H 'Access-Control-Request-Method: PUT' "$base/api/todos/1")"

expect "delete" "204" "$(code -b "$jar" -X DELETE "$base/api/todos/2")"
expect "deleted is gone" "404" "$(code -b "$jar" "$base/api/todos/2")"
expect "logout clears the cookie" "204" "$(code -b "$jar" -c "$jar" -X POST "$base/logout")"
expect "after logout" "401" "$(code -b "$jar" "$base/api/todos")"

contains "access log line" '"DELETE /api/todos/2 HTTP/1.1" 204 0 "-" "curl/' "$(cat "$work/access.log")"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
expect "exit status after SIGTERM" "0" "$status"
