#!/usr/bin/env bash
# Headless Chromium loads the live example's page and must see the SSE element take three
# successive "tick N" values, then the WebSocket element three successive echoes "hello N"
# (tests/browser/cdp.py drives it over the DevTools protocol).
# Exit 77 (ctest: skipped) when Chromium is not installed.
set -euo pipefail
app=$(realpath "$1")
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$app" "$port" >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done

status=0
python3 "$here/browser/cdp.py" --url "http://127.0.0.1:$port/" --element-id sse \
    --expect '^tick [0-9]+$' --changes 3 --timeout 20 || status=$?
if [ "$status" -eq 0 ]; then echo "ok   Chromium shows the live ticks"; fi
if [ "$status" -eq 0 ]; then
    python3 "$here/browser/cdp.py" --url "http://127.0.0.1:$port/" --element-id ws \
        --expect '^hello [0-9]+$' --changes 3 --timeout 20 || status=$?
    if [ "$status" -eq 0 ]; then echo "ok   Chromium shows the WebSocket echoes"; fi
fi
exit "$status"
