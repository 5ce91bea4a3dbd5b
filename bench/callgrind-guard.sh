#!/usr/bin/env bash
# Instruction-count regression guard: runs examples/hello under callgrind, sends it a fixed
# number of keep-alive GET / requests and fails when the instructions executed per request
# exceed a threshold. It counts instructions, not time, so it gives about the same figure on a
# busy machine (docs/performance.md, "Instruction-count regression guard").
#
#   bench/callgrind-guard.sh [--threshold N] [--requests N] path/to/hello
#
#   --threshold N   fail above N instructions per request (default 10,500)
#   --requests N    requests in the measured run (default 20,000); a baseline run sends a
#                   tenth of that, so startup and shutdown cancel out:
#                   per request = (Ir_big - Ir_small) / (N_big - N_small)
#
# The client is a small Python program outside valgrind: 4 keep-alive connections on
# 127.0.0.1, used in turn with one request in flight at a time (no pipelining), so the
# server does the same work for every request on every run. Both runs take about 4 s here.
#
# Measured 2026-11-30 on a RelWithDebInfo build (g++ 12, the CI's first build), 2-core AMD
# EPYC: about 6,100 instructions per request at commit 222fd9d (6,062 to 6,173 over twelve
# runs), 5,492 at da04ee9 after responses went out with a direct send, 5,254 at 9c880cd
# (one-growth writer, event loops without asio locks); 5,605 at ff4ef70 (2026-12-02, after
# the features since), 5,674 with connections on tern's own socket poller and 5,289 once
# examples/hello stopped calling fmt::format per request (issue 21). The spread, 2% at most,
# comes from timing: whether a read finds the next request already waiting or goes back to
# epoll. The default threshold, 10,500, is about twice the figure: it catches a hot path that
# doubles its work (a copy of every request, a table rebuilt per call), not a few percent, and
# leaves room for other compilers and library versions.
set -euo pipefail

threshold=10500
requests=20000
hello=""
while [ $# -gt 0 ]; do
    case "$1" in
    --threshold) threshold=${2:-}; threshold=${threshold//,/}; shift ;;
    --requests) requests=${2:-}; requests=${requests//,/}; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "callgrind-guard.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) hello=$1 ;;
    esac
    [ $# -gt 0 ] && shift
done
die() { echo "callgrind-guard.sh: $2" >&2; exit "$1"; }
[ -n "$hello" ] || die 2 "usage: callgrind-guard.sh [--threshold N] [--requests N] path/to/hello"
[[ "$threshold" =~ ^[0-9]+$ && "$requests" =~ ^[0-9]+$ && "$requests" -ge 20 ]] ||
    die 2 "--threshold and --requests take whole numbers (--requests at least 20)"
command -v valgrind >/dev/null || die 1 "valgrind not found (scripts/install-deps.sh installs it)"
hello=$(realpath "$hello")
baseline=$((requests / 10))

work=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/public"

# Waits for the server (process $3; up to 30 s: valgrind starts slowly), then sends $2
# requests round-robin over 4 connections, one at a time, and checks every answer.
cat >"$work/client.py" <<'PY'
import os, socket, sys, time

port, count, server = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
expected = b"An incoming GET request!"

def connect():
    deadline = time.monotonic() + 30
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return s
        except OSError:
            try:
                os.kill(server, 0)
            except OSError:
                sys.exit("client: the server exited before accepting a connection")
            if time.monotonic() > deadline:
                sys.exit("client: the server did not accept a connection within 30 s")
            time.sleep(0.1)

def exchange(s, buf):
    s.sendall(request)
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("client: connection closed before a response")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if not head.startswith(b"HTTP/1.1 200") or length is None:
        sys.exit("client: unexpected response head: %r" % head[:200])
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("client: connection closed mid-body")
        rest += chunk
    if rest[:length] != expected:
        sys.exit("client: unexpected body: %r" % rest[:length])
    return rest[length:]

conns = [connect() for _ in range(4)]
bufs = [b""] * len(conns)
for i in range(count):
    k = i % len(conns)
    bufs[k] = exchange(conns[k], bufs[k])
for s in conns:
    s.close()
PY

# Runs hello under callgrind for $1 requests; sets ir to the instructions (Ir) it executed.
# Not run in a $(...) subshell, so that the exit trap sees $pid. At most 90 s per run (client
# 60 s, exit 30 s), so the script stays under ctest's 300 s even when something hangs.
ir=""
measure() {
    local n=$1 out="$work/callgrind.$1" port status
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
    (cd "$work" && exec valgrind --tool=callgrind --callgrind-out-file="$out" "$hello" "$port") \
        >"$work/hello.$n.log" 2>&1 &
    pid=$!
    if ! timeout 60 python3 "$work/client.py" "$port" "$n" "$pid" >&2; then
        echo "callgrind-guard.sh: the client failed or timed out ($n requests)" >&2
        cat "$work/hello.$n.log" >&2
        return 1
    fi
    # SIGTERM stops hello cleanly; callgrind writes its file as the process exits.
    kill -TERM "$pid"
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        echo "callgrind-guard.sh: hello did not exit within 30 s of SIGTERM" >&2
        return 1
    fi
    status=0
    wait "$pid" || status=$?
    pid=""
    if [ "$status" -ne 0 ]; then
        echo "callgrind-guard.sh: hello under valgrind exited with status $status" >&2
        cat "$work/hello.$n.log" >&2
        return 1
    fi
    # The whole run's count: the "totals:" line at the end of the file (what valgrind prints
    # as "Collected"), else the "summary:" line of the header.
    ir=$(awk '/^totals:/ { t = $2 } /^summary:/ { s = $2 } END { print (t != "" ? t : s) }' "$out")
    [[ "$ir" =~ ^[0-9]+$ ]] || { echo "callgrind-guard.sh: no total in $out" >&2; return 1; }
}

start=$SECONDS
measure "$baseline"
ir_small=$ir
measure "$requests"
ir_big=$ir
per_request=$(((ir_big - ir_small) / (requests - baseline)))
comma() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }
result="callgrind: $(comma "$per_request") instructions/request (threshold $(comma "$threshold");"
result+=" $(comma "$baseline") and $(comma "$requests") requests, $((SECONDS - start)) s)"
if [ "$per_request" -gt "$threshold" ]; then
    echo "FAIL $result"
    exit 1
fi
echo "$result"
