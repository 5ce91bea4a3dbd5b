#!/usr/bin/env bash
# Real WebSocket clients against examples/live's /ws echo: Python's websockets and Node's ws,
# plain and (with a second server started with --ws-compression) compressed.
#   ws_clients.sh path/to/live
set -euo pipefail
app=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT

free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
start() {  # start PORT [ARGS...]
    "$app" "$@" >/dev/null 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.05; done
    echo "FAIL live did not start on $1" >&2
    exit 1
}

plain=$(free_port)
start "$plain"
/usr/bin/python3 "$here/ws_python.py" "ws://127.0.0.1:$plain/ws"
NODE_PATH=/usr/share/nodejs node "$here/ws_node.js" "ws://127.0.0.1:$plain/ws"

packed=$(free_port)
start "$packed" --ws-compression
/usr/bin/python3 "$here/ws_python.py" "ws://127.0.0.1:$packed/ws" --compression
NODE_PATH=/usr/share/nodejs node "$here/ws_node.js" "ws://127.0.0.1:$packed/ws" --compression
