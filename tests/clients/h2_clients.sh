#!/usr/bin/env bash
# HTTP/2 with the clients users have: curl (--http2 over TLS, --http2-prior-knowledge), nghttp
# (many streams at once, h2 and h2c) and h2load (a short bounded run) against examples/live,
# over HTTPS (h2 by ALPN, a certificate made here) and plain (h2c): its page, SSE, a
# streamed body, a deferred answer and a spooled upload; HTTP/1.1 still served on the same
# ports; SIGTERM ends it cleanly.
#
#   h2_clients.sh PATH/TO/live
set -euo pipefail
app=$(realpath "$1")
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
passed=0
failed=0
expect() {
    local what=$1 want=$2 got=$3
    if [ "$got" == "$want" ]; then
        echo "ok   $what"
        passed=$((passed + 1))
    else
        echo "FAIL $what: want '$want', got '${got:0:300}'"
        failed=$((failed + 1))
    fi
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
    -out "$work/cert.pem" -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
    2>/dev/null
tls_port=$(free_port)
plain_port=$(free_port)
"$app" "$tls_port" --cert "$work/cert.pem" --key "$work/key.pem" >"$work/tls.out" 2>&1 &
tls_pid=$!
pids+=("$tls_pid")
"$app" "$plain_port" >"$work/plain.out" 2>&1 &
plain_pid=$!
pids+=("$plain_pid")
tls="https://localhost:$tls_port"
plain="http://127.0.0.1:$plain_port"
resolve=(--resolve "localhost:$tls_port:127.0.0.1" --cacert "$work/cert.pem")
for _ in $(seq 100); do
    curl -s -o /dev/null "${resolve[@]}" "$tls/" && curl -s -o /dev/null "$plain/" && break
    sleep 0.05
done

# ---- curl -------------------------------------------------------------------------------
expect "curl --http2 over TLS negotiates h2 and gets the page" "2 200" \
    "$(curl -s -o /dev/null -w '%{http_version} %{http_code}' --http2 "${resolve[@]}" "$tls/")"
expect "curl --http2-prior-knowledge (h2c) gets the page" "2 200" \
    "$(curl -s -o /dev/null -w '%{http_version} %{http_code}' --http2-prior-knowledge "$plain/")"
expect "curl --http1.1 on the HTTPS port still gets HTTP/1.1" "1.1 200" \
    "$(curl -s -o /dev/null -w '%{http_version} %{http_code}' --http1.1 "${resolve[@]}" "$tls/")"
expect "curl --http2 on a plain port (Upgrade: h2c, not built) is answered over HTTP/1.1" \
    "1.1 200" "$(curl -s -o /dev/null -w '%{http_version} %{http_code}' --http2 "$plain/")"
expect "a deferred answer over h2" "later 100" \
    "$(curl -s --http2 "${resolve[@]}" "$tls/later?ms=100")"
expect "a streamed body of 1 MB over h2c" "1000000" \
    "$(curl -s --http2-prior-knowledge "$plain/stream?n=100&size=10000" | wc -c | tr -d ' ')"
events=$(curl -s -N --http2 --max-time 1 "${resolve[@]}" "$tls/events" || true)
expect "SSE over h2: the first three events" "id: 1|data: tick 1||id: 2|data: tick 2||id: 3|data: tick 3|" \
    "$(head -n 8 <<<"$events" | tr '\n' '|')"
head -c 3000000 /dev/urandom >"$work/upload.bin"
want_sha=$(sha256sum "$work/upload.bin" | cut -d' ' -f1)
expect "a 3 MB upload over h2 (spooled, hashed on the blocking pool)" \
    "{\"bytes\": 3000000, \"sha256\": \"$want_sha\"}" \
    "$(curl -s --http2 "${resolve[@]}" --data-binary "@$work/upload.bin" "$tls/upload")"
expect "HEAD over h2: the page's length, no body" "0" \
    "$(curl -s -I --http2 "${resolve[@]}" "$tls/" -o /dev/null -w '%{size_download}')"

# ---- nghttp: many streams on one connection ---------------------------------------------
for base in "$tls" "$plain"; do
    kind=h2
    [ "$base" == "$plain" ] && kind=h2c
    urls=()
    for i in $(seq 30); do urls+=("$base/later?ms=$((i * 10))"); done
    out=$(nghttp -n -s "${urls[@]}" 2>&1 || true)
    expect "nghttp: 30 deferred answers on one $kind connection" "30" \
        "$(grep -c ' 200 ' <<<"$out" || true)"
done
settings=$(nghttp -nv "$plain/" 2>&1 | grep -A4 'recv SETTINGS frame <length=18' || true)
expect "tern's SETTINGS: 100 concurrent streams" "1" \
    "$(grep -c 'SETTINGS_MAX_CONCURRENT_STREAMS(0x03):100' <<<"$settings" || true)"

# ---- h2load: a short bounded load, no error -------------------------------------------
for base in "$tls" "$plain"; do
    out=$(h2load -n 5000 -c 4 -m 10 "$base/later?ms=0" 2>&1 || true)
    expect "h2load $base: 5000 requests, all 2xx" \
        "requests: 5000 total, 5000 started, 5000 done, 5000 succeeded, 0 failed, 0 errored, 0 timeout" \
        "$(grep '^requests:' <<<"$out")"
done

# ---- SIGTERM ----------------------------------------------------------------------------
kill -TERM "$tls_pid" "$plain_pid"
rc_tls=0
rc_plain=0
wait "$tls_pid" || rc_tls=$?
wait "$plain_pid" || rc_plain=$?
expect "live stops on SIGTERM with status 0 (both)" "0 0" "$rc_tls $rc_plain"
pids=()

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
