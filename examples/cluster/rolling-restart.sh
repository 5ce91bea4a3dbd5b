#!/usr/bin/env bash
# Restarts a fleet of tern processes behind nginx one by one while wrk loads it, and counts
# the requests that failed (docs/deploy.md).
#
#   rolling-restart.sh [--app PATH] [--instances N] [--rounds R] [--connections C]
#                      [--grace-ms MS] [--port PORT] [--method GET|POST]
#
#   --app          the cluster app (default: build/examples/cluster/app beside this repo)
#   --instances    tern processes behind nginx (default 3), on ports PORT+1 .. PORT+N
#   --rounds       how many times each process is restarted (default 1)
#   --connections  wrk connections (default 50)
#   --grace-ms     each process's readiness grace period at stop (default 1000)
#   --port         nginx's port (default 18000)
#   --method       GET (must lose nothing) or POST (what happens to non-idempotent requests)
#
# Prints wrk's summary, then the line
#   rolling restart: N requests, M failed
# where M counts wrk's socket errors and non-2xx answers. Exits 1 when M > 0 for GET.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
app="$here/../../build/examples/cluster/app"
instances=3
rounds=1
connections=50
grace_ms=1000
front=18000
method=GET
while [ $# -gt 0 ]; do
    case "$1" in
    --app) app="$2"; shift 2 ;;
    --instances) instances="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --grace-ms) grace_ms="$2"; shift 2 ;;
    --port) front="$2"; shift 2 ;;
    --method) method="$2"; shift 2 ;;
    *) echo "rolling-restart.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
case "$method" in GET | POST) ;; *) echo "rolling-restart.sh: --method GET or POST" >&2; exit 2 ;; esac
for tool in nginx wrk curl; do
    command -v "$tool" >/dev/null || { echo "rolling-restart.sh: $tool is not installed" >&2; exit 2; }
done
[ -x "$app" ] || { echo "rolling-restart.sh: no app at $app (build it, or pass --app)" >&2; exit 2; }

work="$(mktemp -d)"
declare -a pids
nginx_pid=""
wrk_pid=""
cleanup() {
    [ -n "$wrk_pid" ] && kill "$wrk_pid" 2>/dev/null || true
    for pid in "${pids[@]:-}"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]:-}"; do [ -n "$pid" ] && wait "$pid" 2>/dev/null || true; done
    [ -n "$nginx_pid" ] && kill -QUIT "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

wait_for() {  # url, what: polls until the URL answers 200 (at most 10 s)
    for _ in $(seq 1 200); do
        if curl -fs -o /dev/null "$1"; then return 0; fi
        sleep 0.05
    done
    echo "rolling-restart.sh: $2 did not become ready" >&2
    exit 1
}

start_instance() {  # index
    local i="$1" port=$((front + 1 + $1))
    "$app" "$port" --grace-ms "$grace_ms" --name "node$i" >>"$work/node$i.log" 2>&1 &
    pids[$i]=$!
    wait_for "http://127.0.0.1:$port/ready" "node$i"
}

for i in $(seq 0 $((instances - 1))); do start_instance "$i"; done

upstreams=""
for i in $(seq 0 $((instances - 1))); do
    upstreams+="        server 127.0.0.1:$((front + 1 + i)) max_fails=1 fail_timeout=1s;"$'\n'
done
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    upstream tern {
$upstreams        keepalive 64;
    }
    server {
        listen 127.0.0.1:$front backlog=4096;
        location / {
            proxy_pass http://tern;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Request-Id \$request_id;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            # A request that could not be delivered (refused, reset before an answer) goes
            # to the next process. nginx retries only idempotent methods this way.
            proxy_next_upstream error timeout http_502 http_503;
            proxy_next_upstream_tries $instances;
            proxy_connect_timeout 1s;
        }
    }
}
EOF
nginx -p "$work" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
nginx_pid=$!
wait_for "http://127.0.0.1:$front/ready" "nginx"

# The fleet as a client sees it through nginx: every process answers, each answer has a
# request id (nginx's $request_id, passed on), and a process's metrics count requests.
names=""
for _ in $(seq 1 $((instances * 4))); do
    names+="$(curl -fs "http://127.0.0.1:$front/" | cut -d' ' -f1)"$'\n'
done
seen=$(printf '%s' "$names" | sort -u | grep -c . || true)
echo "balancing: $seen of $instances processes answered: $(printf '%s' "$names" | sort -u | tr '\n' ' ')"
[ "$seen" -eq "$instances" ] || { echo "rolling-restart.sh: nginx did not reach every process" >&2; exit 1; }
request_id=$(curl -fs -D - -o /dev/null "http://127.0.0.1:$front/" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-request-id" {print $2}')
[ -n "$request_id" ] || { echo "rolling-restart.sh: no X-Request-Id on the answer" >&2; exit 1; }
echo "request id through nginx: $request_id"
# A client's own Forwarded header passes nginx untouched; the address is read from the
# X-Forwarded-For nginx appends to, so the forged one is never believed.
forged_ip=$(curl -fs -H 'Forwarded: for=6.6.6.6' "http://127.0.0.1:$front/ip")
forged_ip6=$(curl -fs -H 'Forwarded: for="[2001:db8::66]", for=127.0.0.1' "http://127.0.0.1:$front/ip")
echo "client address through nginx with a forged Forwarded header: $forged_ip, $forged_ip6"
[ "$forged_ip" = "127.0.0.1" ] && [ "$forged_ip6" = "127.0.0.1" ] ||
    { echo "rolling-restart.sh: a client's own Forwarded header decided ctx.ip()" >&2; exit 1; }
curl -fs "http://127.0.0.1:$((front + 1))/metrics" | grep -q '^tern_requests_total{method="GET",status="2xx"}' ||
    { echo "rolling-restart.sh: node0's /metrics has no GET 2xx count" >&2; exit 1; }

# Long enough for every restart: each takes about the grace period plus a start.
per_restart=$(((grace_ms + 999) / 1000 + 2))
duration=$((instances * rounds * per_restart + 4))
cat >"$work/post.lua" <<'EOF'
wrk.method = "POST"
wrk.body = "order=42"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
EOF
target="http://127.0.0.1:$front/"
script=()
if [ "$method" = POST ]; then
    target="http://127.0.0.1:$front/echo"
    script=(-s "$work/post.lua")
fi
wrk -t1 -c"$connections" -d"${duration}s" --latency "${script[@]}" "$target" >"$work/wrk.txt" 2>&1 &
wrk_pid=$!

sleep 1
for round in $(seq 1 "$rounds"); do
    for i in $(seq 0 $((instances - 1))); do
        kill -TERM "${pids[$i]}"
        wait "${pids[$i]}" || true
        echo "round $round: node$i restarted" >&2
        start_instance "$i"
        sleep 0.5
    done
done
wait "$wrk_pid" || true
wrk_pid=""
cat "$work/wrk.txt"

requests="$(awk '/requests in/ {print $1}' "$work/wrk.txt")"
socket_errors="$(awk '/Socket errors/ {gsub(",", ""); n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) n += $i; print n}' "$work/wrk.txt")"
non_2xx="$(awk '/Non-2xx/ {print $NF}' "$work/wrk.txt")"
failed=$((${socket_errors:-0} + ${non_2xx:-0}))
if [ "$failed" -ne 0 ] && [ -s "$work/nginx-error.log" ]; then
    echo "nginx's error log says why (last lines):" >&2
    tail -n 8 "$work/nginx-error.log" >&2
fi
echo "rolling restart: ${requests:-0} requests, $failed failed"
if [ -z "$requests" ] || [ "$requests" -eq 0 ]; then
    echo "rolling-restart.sh: wrk made no requests" >&2
    exit 1
fi
if [ "$method" = GET ] && [ "$failed" -ne 0 ]; then exit 1; fi
exit 0
