#!/usr/bin/env bash
# Builds tern's libFuzzer harnesses (clang, ASan + UBSan) and runs each one for a share of
# the given time. Exits non-zero when a harness crashes, hangs or runs out of memory.
#
#   scripts/fuzz.sh [seconds=60]
#
# The request parser and HTTP/2 harnesses get 12% of the time each; the router, json,
# WebSocket and HTTP/3 ones 10% each; the HPACK one 6%; the response parser, forms,
# QUIC datagram, PROXY header, HTTP/2 frame layer and TLS ones 5% each, less 3% of the
# TLS one's for the streamed multipart one (differential, against the whole-body parser)
# (at least 8 s in all; each harness gets at least a second, since libFuzzer reads 0 as no
# limit). Seeds come
# from fuzz/corpus/<name>/ and, for the parser, from the h2o corpus when it is there
# ($TERN_H2O_CORPUS, default ../shared/corpus/h2o-http1 beside the repository); both are
# only read. New inputs, crash files and logs go to the build directory
# ($TERN_FUZZ_BUILD_DIR, default build-fuzz/). Needs no network: run
# scripts/install-deps.sh once first if clang or a dependency is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 8 ]; then
    echo "fuzz.sh: the time must be a whole number of seconds, at least 8 (got '$seconds')" >&2
    exit 2
fi
build=${TERN_FUZZ_BUILD_DIR:-build-fuzz}
h2o_corpus=${TERN_H2O_CORPUS:-../shared/corpus/h2o-http1}

# Line tables only (-g1, as scripts/test.sh): crash reports still name files and lines.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DTERN_BUILD_FUZZERS=ON -DTERN_HTTP3=ON -DTERN_BUILD_TESTS=OFF -DTERN_BUILD_EXAMPLES=OFF -DTERN_WERROR=ON \
    >/dev/null
cmake --build "$build" --target fuzz_parser fuzz_response fuzz_router fuzz_forms \
    fuzz_multipart_stream fuzz_json \
    fuzz_ws fuzz_tls fuzz_h2 fuzz_h3 fuzz_quic fuzz_proxy fuzz_hpack
cmake --build "$build" --target fuzz_h2_frames

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# share PERCENT: that share of the time in whole seconds, at least 1.
share() {
    local t=$((seconds * $1 / 100))
    echo $((t < 1 ? 1 : t))
}
# The HTTP/2 frame layer's differential harness: 5%, taken from the TLS one's rest.
h2_frames_time=$(share 5)
parser_time=$(share 12)
response_time=$(share 5)
router_time=$(share 10)
forms_time=$(share 5)
json_time=$(share 10)
ws_time=$(share 10)
h2_time=$(share 12)
h3_time=$(share 10)
quic_time=$(share 5)
proxy_time=$(share 5)
hpack_time=$(share 6)
tls_time=$((seconds - parser_time - response_time - router_time - forms_time - json_time -
    ws_time - h2_time - h3_time - quic_time - proxy_time - hpack_time))
multipart_stream_time=$(share 3)
tls_time=$((tls_time - h2_frames_time - multipart_stream_time))
[ "$tls_time" -lt 1 ] && tls_time=1
failed=0
summary=()

# run_fuzzer NAME SECONDS [EXTRA_SEED_DIR...]
run_fuzzer() {
    local name=$1 time=$2
    shift 2
    local work="$build/fuzz-work/$name"
    mkdir -p "$work/corpus" "$work/artifacts"
    local seeds=("fuzz/corpus/$name")
    for dir in "$@"; do
        if [ -d "$dir" ]; then seeds+=("$dir"); fi
    done
    echo "fuzz.sh: fuzz_$name for ${time}s, seeds: ${seeds[*]}"
    # The first corpus directory receives new inputs; the seed directories are only read.
    local rc=0
    "$build/fuzz/fuzz_$name" -max_total_time="$time" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/" -dict="fuzz/$name.dict" \
        "$work/corpus" "${seeds[@]}" >"$work/log.txt" 2>&1 || rc=$?
    local done_line runs
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log.txt" | tail -n 1 || true)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log.txt" | tail -n 1)
    if [ "$rc" -ne 0 ]; then
        failed=1
        echo "fuzz.sh: fuzz_$name FAILED (exit $rc); the end of its log ($work/log.txt):" >&2
        tail -n 60 "$work/log.txt" >&2
        summary+=("fuzz_$name: FAILED after ${runs:-?} executions; inputs in $work/artifacts/")
    else
        summary+=("fuzz_$name: ${runs:-?} executions in ${time}s; ${done_line:-no DONE line}")
    fi
}

run_fuzzer parser "$parser_time" "$h2o_corpus"
run_fuzzer response "$response_time"
run_fuzzer router "$router_time"
run_fuzzer forms "$forms_time"
run_fuzzer multipart_stream "$multipart_stream_time"
run_fuzzer json "$json_time"
run_fuzzer ws "$ws_time"
run_fuzzer tls "$tls_time"
run_fuzzer h2 "$h2_time"
run_fuzzer h2_frames "$h2_frames_time"
run_fuzzer h3 "$h3_time"
run_fuzzer quic "$quic_time"
run_fuzzer proxy "$proxy_time"
run_fuzzer hpack "$hpack_time"

echo
for line in "${summary[@]}"; do echo "$line"; done
exit "$failed"
