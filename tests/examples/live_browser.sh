#!/usr/bin/env bash
# Headless Chromium loads the live example's page and must see the SSE element take three
# successive "tick N" values, then the WebSocket element three successive echoes "hello N"
# (tests/browser/cdp.py drives it over the DevTools protocol).
#
#   live_browser.sh <live> [--tls]
#
# --tls: live serves HTTPS (--cert/--key, a throwaway EC certificate for 127.0.0.1) and the
# page is loaded over https:// with its WebSocket over wss://. Chromium accepts exactly that
# certificate's key (--ignore-certificate-errors-spki-list with its SHA-256 SPKI hash), no
# other. Exit 77 (ctest: skipped) when Chromium is not installed.
set -euo pipefail
app=$(realpath "$1")
tls=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
scheme=http
app_args=()
browser_args=()
if [ "$tls" = "--tls" ]; then
    scheme=https
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
        -out "$work/cert.pem" -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
        2>/dev/null
    spki=$(openssl x509 -in "$work/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der |
        openssl dgst -sha256 -binary | base64)
    app_args=(--cert "$work/cert.pem" --key "$work/key.pem")
    browser_args=("--browser-arg=--ignore-certificate-errors-spki-list=$spki")
fi
"$app" "$port" "${app_args[@]}" >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sk -o /dev/null "$scheme://127.0.0.1:$port/" && break; sleep 0.05; done

status=0
python3 "$here/browser/cdp.py" --url "$scheme://127.0.0.1:$port/" --element-id sse \
    --expect '^tick [0-9]+$' --changes 3 --timeout 20 "${browser_args[@]}" || status=$?
if [ "$status" -eq 0 ]; then echo "ok   Chromium shows the live ticks over $scheme"; fi
if [ "$status" -eq 0 ]; then
    python3 "$here/browser/cdp.py" --url "$scheme://127.0.0.1:$port/" --element-id ws \
        --expect '^hello [0-9]+$' --changes 3 --timeout 20 "${browser_args[@]}" || status=$?
    if [ "$status" -eq 0 ]; then echo "ok   Chromium shows the WebSocket echoes over $scheme"; fi
fi
exit "$status"
