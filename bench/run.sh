#!/usr/bin/env bash
# tern's benchmark suite: one command that installs what it needs (Debian packages, only when
# missing), builds tern in Release and the peers into a build folder of its own, runs every
# workload against tern and its peers in interleaved rounds, and writes
# bench/results/<date-time>/report.md with PNG charts (bench/results/latest points to it).
#
# Times measured on the shared 2-core machine (2026-12-07), everything built; the first build
# takes 3 min 40 s more (2 min 7 s for what --quick needs), a change to tern's sources about
# 40 s (libtern again):
#   bench/run.sh --quick         the seeds' hello-world workloads (levtus, pipeline, keepalive,
#                                post, static-small) for tern, nginx and the ceiling,
#                                3 rounds x 1 s: about 1 minute (56 s measuring)
#   bench/run.sh                 the full run, 5 rounds x 3 s, all peers: the hello-world
#                                workloads (15 min), then the real-app ones (13 min), then the
#                                protocol ones (11 min): about 40 minutes
#   bench/run.sh --workloads https,h2,ws,h3
#                                only the protocol workloads: bench/tls.py (HTTPS beside
#                                nginx), bench/h2.py (HTTP/2 beside h2o and nginx),
#                                bench/ws.py (WebSocket beside Node ws and Python websockets)
#                                and bench/h3.py (HTTP/3 beside nginx 1.26 and Caddy; nginx 1.26
#                                is Debian 13's, unpacked by bench/lib/nginx126.sh) on this
#                                run's Release build; about 11 minutes (h3: 2.5 of them)
#   bench/run.sh --workloads jwt,health,db-read,db-write,users1k
#                                only the real-app workloads (issue 19; bench/lib/apps.py):
#                                tern's examples/jwt_login, examples/todo (SQLite and a
#                                PostgreSQL of the run's own) and bench_app beside Go, Node and
#                                nginx; builds only what they need; about 13 minutes
#
# A run that is stopped (SIGINT, SIGTERM, SIGHUP, a timeout, an error) leaves no server
# behind: see "every server ends with the run" below; bench/cleanup-check.py checks it.
#
# Options (see bench/README.md):
#   --quick                the workloads levtus,pipeline,keepalive,post,static-small and the peers
#                          tern,ceiling,nginx unless --workloads or --peers say otherwise;
#                          3 rounds of 1 s, no warm-up, 5 startup samples, 1,000 idle
#                          connections, short micro-benchmarks
#   --rounds N             interleaved rounds per peer and workload (default 5)
#   --duration S           whole seconds per measured wrk run (default 3)
#   --warmup S             whole seconds of unmeasured wrk per peer before a workload's
#                          first round (default 1; 0: none)
#   --server-cpus LIST     CPUs the servers are pinned to (default: 1)
#   --load-cpus LIST       CPUs wrk is pinned to (default: 0)
#   --server-threads N     threads/workers/processes per server where configurable (default 1)
#   --peers LIST           e.g. tern,ceiling,nginx (default: all)
#   --workloads LIST       levtus,pipeline,keepalive,post,static-small,static-large, the
#                          protocol ones https,h2,ws,h3 and the real-app ones
#                          jwt,health,db-read,db-write,users1k (default: all)
#   --levels LIST          connections for health, db-read, db-write (default 10,100,500)
#   --users1k-requests N   ab -n for users1k (default 60000; ab -c is 1000)
#   --conns W=N            connections for workload W (repeatable), e.g. --conns levtus=1000
#   --wrk-threads W=N      wrk threads for workload W (repeatable)
#   --starts N             exec-to-first-response samples per server (default 20)
#   --idle-conns N         idle keep-alive connections for the per-connection figure (10000)
#   --no-micro             skip the Google Benchmark micro-benchmarks
#   --force-static         run the static workloads for the peers even when tern has none
#   --update-docs          paste the headline table into bench/README.md and docs/performance.md
#   --no-install           do not install missing packages
#   --build-dir DIR        build folder (default: bench/results/build)
#   --out DIR              results folder (default: bench/results/<date-time>)
set -euo pipefail
bench_dir=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$bench_dir/.." && pwd)

rounds=5 duration=3 warmup=1 starts=20 idle_conns=10000 micro_time=0.5
server_cpus=1 load_cpus=0 server_threads=1
peers="" workloads="" extra=() install=1 levels=10,100,500 users1k_requests=60000 quick=0
build_dir="$repo/bench/results/build"
out=""
argv="$*"
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 rounds=3 duration=1 warmup=0 starts=5 idle_conns=1000 micro_time=0.02 ;;
    --rounds) rounds=$2; shift ;;
    --duration) duration=${2%s}; shift ;;
    --warmup) warmup=${2%s}; shift ;;
    --server-cpus) server_cpus=$2; shift ;;
    --load-cpus) load_cpus=$2; shift ;;
    --server-threads) server_threads=$2; shift ;;
    --peers) peers=$2; shift ;;
    --workloads) workloads=$2; shift ;;
    --levels) levels=$2; shift ;;
    --users1k-requests) users1k_requests=$2; shift ;;
    --conns) extra+=(--conns "$2"); shift ;;
    --wrk-threads) extra+=(--wrk-threads "$2"); shift ;;
    --starts) starts=$2; shift ;;
    --idle-conns) idle_conns=$2; shift ;;
    --no-micro) extra+=(--no-micro) ;;
    --force-static) extra+=(--force-static) ;;
    --update-docs) extra+=(--update-docs) ;;
    --no-install) install=0 ;;
    --build-dir) build_dir=$2; shift ;;
    --out) out=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "$(nproc)" -lt 2 ] && echo "run.sh: warning: one CPU; server and wrk will share it" >&2
[ -n "$out" ] || out="$repo/bench/results/$(date +%Y-%m-%d-%H%M)"
if [ "$quick" -eq 1 ] && [ -z "$workloads" ]; then
    # The seeds' hello-world workloads beside nginx and the ceiling: the quick reproduction.
    workloads=levtus,pipeline,keepalive,post,static-small
    [ -n "$peers" ] || peers=tern,ceiling,nginx
fi
wants_peer() { [ -z "$peers" ] || [[ ",$peers," == *",$1,"* ]]; }

# ---- every server ends with the run ----------------------------------------------------------
# Each measuring step (and the build) runs in a process group of its own (setsid), so its load
# generators go with it; the Python steps start every server in a group of its own too
# (bench/lib/groups.py) and list it in $TERN_BENCH_GROUPS. Whatever ends the run (its end, an
# error under set -e, SIGINT, SIGTERM, SIGHUP), end_groups stops the step's group and then
# every listed server group: SIGTERM first (a Python step stops its servers itself), SIGKILL
# for what is left after a grace period.
TERN_BENCH_GROUPS=$(mktemp "${TMPDIR:-/tmp}/tern-bench-groups.XXXXXX")
export TERN_BENCH_GROUPS
step_pid=""
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [[ "$s" != Z* ]]; }
group_alive() {  # a member that is not a zombie (reaped by whoever its parent now is)
    local p
    for p in $(pgrep -g "$1"); do alive "$p" && return 0; done
    return 1
}
end_groups() {
    local status=$? g i
    set +e
    trap '' INT TERM HUP  # a second signal must not cut the cleanup short
    if [ -n "$step_pid" ]; then
        kill -TERM -- "-$step_pid" 2>/dev/null
        for i in $(seq 50); do alive "$step_pid" || break; sleep 0.2; done
        kill -KILL -- "-$step_pid" 2>/dev/null
    fi
    local listed
    listed=$(sort -un "$TERN_BENCH_GROUPS" 2>/dev/null)
    for g in $listed; do kill -TERM -- "-$g" 2>/dev/null; done
    for g in $listed; do
        for i in $(seq 25); do group_alive "$g" || break; sleep 0.2; done
        kill -KILL -- "-$g" 2>/dev/null
    done
    rm -f "$TERN_BENCH_GROUPS"
    exit "$status"
}
trap end_groups EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
# step CMD...: runs CMD in a new session (its own process group) and waits for it; a signal
# to the runner interrupts the wait and end_groups ends the group.
step() {
    local status=0
    setsid "$@" &
    step_pid=$!
    wait "$step_pid" || status=$?
    step_pid=""
    return "$status"
}

# The real-app workloads (bench/lib/apps.py) and the hello-world ones (bench/lib/bench.py).
# The protocol workloads (bench/tls.py, bench/h2.py, bench/ws.py, bench/h3.py), each a script
# of its own.
app_keys=" jwt health db-read db-write users1k "
proto_keys=" https h2 ws h3 "
app_workloads="" base_workloads="" proto_workloads=""
if [ -z "$workloads" ]; then
    app_workloads=$(echo $app_keys | tr ' ' ,)
    proto_workloads=$(echo $proto_keys | tr ' ' ,)
else
    for w in ${workloads//,/ }; do
        if [[ "$proto_keys" == *" $w "* ]]; then
            proto_workloads+="${proto_workloads:+,}$w"
        elif [[ "$app_keys" == *" $w "* ]]; then
            app_workloads+="${app_workloads:+,}$w"
        else
            base_workloads+="${base_workloads:+,}$w"
        fi
    done
fi
run_base=1
[ -n "$workloads" ] && [ -z "$base_workloads" ] && run_base=0

# ---- 1. packages (idempotent: only what is missing, only what Debian has) -------------------
if [ "$install" -eq 1 ]; then
    "$repo/scripts/install-deps.sh"  # tern's own build dependencies (llhttp >= 9.2 and so on)
    sudo_cmd=()
    [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    wanted=(wrk nginx libnginx-mod-http-echo h2o libboost-dev golang-go libcpp-httplib-dev
            gnuplot-nox libbenchmark-dev python3 binutils util-linux procps
            apache2-utils golang-github-lib-pq-dev postgresql liburing-dev
            caddy golang-github-lucas-clemente-quic-go-dev)
    command -v node >/dev/null || wanted+=(nodejs)
    command -v npm >/dev/null || wanted+=(npm)
    missing=()
    for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "run.sh: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        "${sudo_cmd[@]}" apt-get update -qq
        for p in "${missing[@]}"; do
            # A package this Debian does not have leaves its peer out (the report says so).
            "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$p" >/dev/null ||
                echo "run.sh: could not install $p; continuing without it" >&2
        done
    fi
    if [[ ",$proto_workloads," == *",h3,"* ]]; then
        # nginx 1.26 with HTTP/3 (Debian 12's 1.22 has none): Debian 13's binary, unpacked from
        # its .deb into the build folder, not installed; fetched once (bench/lib/nginx126.sh).
        "$bench_dir/lib/nginx126.sh" "$build_dir/nginx126" >/dev/null ||
            echo "run.sh: nginx 1.26 could not be fetched; h3 runs without it" >&2
    fi
fi

# ---- 2. build: tern (Release), examples, micro-benchmarks, compiled peers -------------------
echo "run.sh: building into $build_dir"
mkdir -p "$build_dir"
cmake -S "$bench_dir/superbuild" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log" >&2; exit 1; }
targets=()  # all, unless only some peers or only the real-app or protocol workloads run
if [ "$run_base" -eq 0 ]; then
    targets=(--target bench_app jwt_login todo hello ws_load live)
elif [ -n "$peers" ] && [ -z "$app_workloads$proto_workloads" ]; then
    # Only the hello-world workloads for the peers named (--quick: tern, ceiling, nginx).
    targets=(--target bench_app hello ceiling tern_micro)
    for p in beast httplib; do wants_peer "$p" && targets+=("$p"); done
fi
step nice cmake --build "$build_dir" "${targets[@]}" >"$build_dir/build.log" 2>&1 ||
    { tail -40 "$build_dir/build.log" >&2; exit 1; }
if [ "$run_base" -eq 1 ] && wants_peer tern-uring; then
    # The io_uring variant of bench_app (peer tern-uring): tern alone, -DTERN_IO_URING=ON.
    if ! { cmake -S "$repo" -B "$build_dir/uring" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERN_IO_URING=ON \
            -DTERN_BUILD_TESTS=OFF -DTERN_INSTALL=OFF >"$build_dir/uring-configure.log" 2>&1 &&
        step nice cmake --build "$build_dir/uring" --target bench_app >"$build_dir/uring-build.log" 2>&1; }; then
        echo "run.sh: the io_uring variant did not build (see $build_dir/uring-*.log)" >&2
    fi
fi
if command -v go >/dev/null; then
    if [ "$run_base" -eq 1 ] && wants_peer go; then
        (cd "$build_dir" && GOCACHE="$build_dir/gocache" GOPATH="$build_dir/gopath" GOFLAGS=-trimpath \
            nice go build -o go-peer "$bench_dir/peers/go/main.go") || echo "run.sh: the Go peer did not build" >&2
    fi
    if [ -n "$app_workloads" ]; then
        # GOPATH mode, offline: lib/pq comes from Debian's golang-github-lib-pq-dev.
        (cd "$build_dir" && GO111MODULE=off GOCACHE="$build_dir/gocache" \
            GOPATH="$build_dir/gopath:/usr/share/gocode" GOFLAGS=-trimpath \
            nice go build -o go-app "$bench_dir/peers/go/app/main.go") ||
            echo "run.sh: the Go app peer did not build (lib/pq: golang-github-lib-pq-dev)" >&2
    fi
fi
if [ -n "$app_workloads" ] && command -v npm >/dev/null; then
    # Node's pg package (bench/peers/node/package.json, the versions locked), installed into
    # the build folder; again only when the lock file changed.
    node_dir="$build_dir/node"
    mkdir -p "$node_dir"
    if ! cmp -s "$bench_dir/peers/node/package-lock.json" "$node_dir/package-lock.json" ||
        [ ! -d "$node_dir/node_modules/pg" ]; then
        cp "$bench_dir/peers/node/package.json" "$bench_dir/peers/node/package-lock.json" "$node_dir/"
        (cd "$node_dir" && npm ci --no-audit --no-fund --omit=dev >npm.log 2>&1) ||
            echo "run.sh: npm ci for the Node pg peer failed (see $node_dir/npm.log)" >&2
    fi
fi

# ---- 3. measure ------------------------------------------------------------------------------
mkdir -p "$out"
echo "run.sh: results in $out"
if [ "$run_base" -eq 1 ]; then
    step env PYTHONDONTWRITEBYTECODE=1 taskset -c "$load_cpus" python3 "$bench_dir/lib/bench.py" \
        --build-dir "$build_dir" --out "$out" --rounds "$rounds" --duration "$duration" \
        --warmup "$warmup" --server-cpus "$server_cpus" --load-cpus "$load_cpus" \
        --server-threads "$server_threads" --starts "$starts" --idle-conns "$idle_conns" \
        --micro-min-time "$micro_time" ${peers:+--peers "$peers"} ${base_workloads:+--workloads "$base_workloads"} \
        "${extra[@]}" "--argv=$argv"
fi
if [ -n "$app_workloads" ]; then
    # The real-app workloads: bench/results/<date-time>/apps.md and apps.json.
    step env PYTHONDONTWRITEBYTECODE=1 taskset -c "$load_cpus" python3 "$bench_dir/lib/apps.py" \
        --build-dir "$build_dir" --out "$out" --rounds "$rounds" --duration "$duration" \
        --warmup "$warmup" --server-cpus "$server_cpus" --load-cpus "$load_cpus" \
        --server-threads "$server_threads" --levels "$levels" \
        --users1k-requests "$users1k_requests" ${peers:+--peers "$peers"} --workloads "$app_workloads"
fi
if [ -n "$proto_workloads" ]; then
    # The protocol workloads on this run's Release hello and bench_live_app, each beside its
    # peers; their tables go into report.md (or protocols.md when no hello-world workload ran).
    # Each script pins the servers and the load generator itself.
    proto_md="$out/report.md"
    [ -f "$proto_md" ] || proto_md="$out/protocols.md"
    hello_bin="$build_dir/tern/examples/hello/hello"
    quick_ws=()
    [ "$duration" -le 1 ] && quick_ws=(--quick)
    for w in ${proto_workloads//,/ }; do
        case "$w" in
        https) title="HTTPS beside nginx (bench/tls.py)"
               cmd=(python3 "$bench_dir/tls.py" --hello "$hello_bin" --seconds "$duration"
                    --rounds "$rounds") ;;
        h2) title="HTTP/2 beside h2o and nginx (bench/h2.py)"
            cmd=(python3 "$bench_dir/h2.py" --hello "$hello_bin" --seconds "$duration"
                 --rounds "$rounds") ;;
        ws) title="WebSocket beside Node ws and Python websockets (bench/ws.py)"
            cmd=(python3 "$bench_dir/ws.py" --build-dir "$build_dir" --no-build
                 --out "$out/ws" "${quick_ws[@]}") ;;
        h3) title="HTTP/3 (and HTTP/2, HTTPS) beside nginx 1.26 and Caddy (bench/h3.py)"
            nginx126="$build_dir/nginx126/root/usr/sbin/nginx"
            h3_peers=tern
            [ -x "$nginx126" ] && h3_peers+=,nginx,nginx-retry
            command -v caddy >/dev/null && h3_peers+=,caddy
            cmd=(python3 "$bench_dir/h3.py" --live "$build_dir/tern/examples/live/live"
                 --seconds "$duration" --rounds "$rounds" --peers "$h3_peers")
            [ -x "$nginx126" ] && cmd+=(--nginx "$nginx126") ;;
        esac
        echo "run.sh: $title"
        if step env PYTHONDONTWRITEBYTECODE=1 "${cmd[@]}" >"$out/$w.txt" 2>&1; then
            { printf '\n## %s\n\n`%s`\n\n' "$title" "${cmd[*]#"$repo/"}"
              if [ "$w" = ws ]; then
                  cat "$out/ws/report.md"  # markdown already
              else
                  printf '```\n'; cat "$out/$w.txt"; printf '```\n'
              fi; } >>"$proto_md"
        else
            echo "run.sh: $w failed (see $out/$w.txt)" >&2
        fi
    done
fi
if [ "$(cd "$out/.." && pwd)" = "$repo/bench/results" ]; then
    ln -sfn "$(basename "$out")" "$repo/bench/results/latest"
fi
