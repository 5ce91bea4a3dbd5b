#!/usr/bin/env bash
# Runs the built live example as a user would: start it on a free port, read its event
# stream with curl -N (also with Last-Event-IDs it must refuse) and with Python's standard
# library (reconnecting with Last-Event-ID), a streamed body read slowly, a deferred answer,
# an upload, and the page; then SIGTERM.
set -euo pipefail
app=$(realpath "$1")
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$app" "$port" >"$work/out" 2>&1 &
pid=$!
base="http://127.0.0.1:$port"
up=0
for _ in $(seq 100); do curl -s -o /dev/null "$base/" && { up=1; break; }; sleep 0.05; done
[ "$up" -eq 1 ] || { echo "FAIL: live did not start"; cat "$work/out"; exit 1; }

expect() {
    local what=$1 want=$2 got=$3
    if [ "$got" != "$want" ]; then echo "FAIL $what: want '$want', got '$got'"; exit 1; fi
    echo "ok   $what"
}

# curl -N: the first three events, in order, counting from 1 (curl stops after --max-time;
# exit 28 is that timeout).
events=$(curl -s -N --max-time 1 "$base/events" || true)
expect "SSE with curl -N" "id: 1|data: tick 1||id: 2|data: tick 2||id: 3|data: tick 3|" \
    "$(head -n 8 <<<"$events" | tr '\n' '|')"
# A Last-Event-ID that is not a count the example gives starts at 1: at the counter's maximum
# (+ 1 would overflow a signed 64-bit counter), beyond it, negative, malformed. One below the
# maximum gets the last count, then 1 again.
for last in 9223372036854775807 9223372036854775808 -5 12abc; do
    events=$(curl -s -N --max-time 1 -H "Last-Event-ID: $last" "$base/events" || true)
    expect "SSE after Last-Event-ID $last" "id: 1|data: tick 1|" \
        "$(head -n 2 <<<"$events" | tr '\n' '|')"
done
events=$(curl -s -N --max-time 1 -H "Last-Event-ID: 9223372036854775806" "$base/events" || true)
expect "SSE after Last-Event-ID 2^63 - 2" \
    "id: 9223372036854775807|data: tick 9223372036854775807||id: 1|data: tick 1|" \
    "$(head -n 5 <<<"$events" | tr '\n' '|')"
expect "SSE head" "text/event-stream" \
    "$(curl -s -N --max-time 0.3 -o /dev/null -w '%{content_type}' "$base/events" || true)"

# Python's standard library: read two events, then reconnect as a browser does.
python3 - "$port" <<'PY'
import http.client, sys
port = int(sys.argv[1])
def events(last_id=None, count=2):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    headers = {"Accept": "text/event-stream"}
    if last_id:
        headers["Last-Event-ID"] = last_id
    conn.request("GET", "/events", headers=headers)
    r = conn.getresponse()
    assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream", r.status
    got, event = [], {}
    while len(got) < count:
        line = r.fp.readline().decode().rstrip("\n")
        if line == "":
            got.append(event); event = {}
        else:
            k, _, v = line.partition(": ")
            event[k] = v
    conn.close()
    return got
first = events()
assert [e["data"] for e in first] == ["tick 1", "tick 2"], first
resumed = events(last_id=first[-1]["id"])
assert [e["data"] for e in resumed] == ["tick 3", "tick 4"], resumed
print("ok   SSE with Python http.client, resumed after id", first[-1]["id"])
PY

# A streamed body read slowly: all bytes arrive, in the a..z pattern.
python3 - "$port" <<'PY'
import http.client, sys, time, string
port = int(sys.argv[1])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
conn.request("GET", "/stream?n=64&size=4096")
r = conn.getresponse()
assert r.status == 200 and r.getheader("Transfer-Encoding") == "chunked"
body = b""
while True:
    piece = r.read(32768)
    if not piece:
        break
    body += piece
    time.sleep(0.01)  # a slow reader: the server produces only as fast as this reads
n = 64 * 4096
want = (string.ascii_lowercase * (n // 26 + 1))[:n].encode()
assert body == want, (len(body), body[:40])
print("ok   /stream read slowly:", len(body), "bytes in the a..z pattern")
PY

# An upload spooled to a temporary file and hashed on the blocking pool.
head -c 3000000 /dev/urandom >"$work/upload.bin"
want_sha=$(sha256sum "$work/upload.bin" | cut -d' ' -f1)
expect "upload of 3 MB" "{\"bytes\": 3000000, \"sha256\": \"$want_sha\"}" \
    "$(curl -s --data-binary @"$work/upload.bin" -H 'Content-Type: application/octet-stream' "$base/upload")"
expect "upload over 1 GiB refused before its body" "413" "$(python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2147483648\r\n\r\n")
print(s.recv(100).split(b" ")[1].decode())
PY
)"

expect "deferred answer" "later 150" "$(curl -s "$base/later?ms=150")"
expect "bad ms" "400" "$(curl -s -o /dev/null -w '%{http_code}' "$base/later?ms=-1")"
expect "the page" "1" "$(curl -s "$base/" | grep -c 'id="sse"')"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
expect "exit status after SIGTERM" "0" "$status"
