#!/usr/bin/env bash
# Builds tests/packaging/consumer.cpp and kit_consumer.cpp (a test written with the test kit,
# tern::testing) the ways a user would and runs them (see
# tests/packaging/CMakeLists.txt, which registers one ctest test per mode).
#
#   run.sh install <tern-build-dir> <config> <prefix>    cmake --install into an empty prefix
#   run.sh find-package <prefix> <work-dir>              find_package(tern) + tern::tern
#   run.sh pkg-config <prefix> <libdir> <work-dir>       c++ ... $(pkg-config --cflags --libs tern)
#   run.sh add-subdirectory <tern-source> <work-dir>     add_subdirectory(tern) + tern::tern
#   run.sh shared <tern-source> <work-dir>               build a shared libtern, install it,
#                                                        check its exports, find_package it
#   run.sh exports <libtern.so>                          only the public API is exported
#
# The compiler, generator, build type and extra flags (the sanitizers of a sanitizer build,
# which an instrumented static libtern needs on the application's link line too) come from
# TERN_PKG_CXX, TERN_PKG_GENERATOR, TERN_PKG_BUILD_TYPE and TERN_PKG_FLAGS.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cxx="${TERN_PKG_CXX:-c++}"
generator="${TERN_PKG_GENERATOR:-Ninja}"
build_type="${TERN_PKG_BUILD_TYPE:-RelWithDebInfo}"
flags="${TERN_PKG_FLAGS:-}"

run() {
    echo "+ $*"
    "$@"
}

# Configures and builds the CMake project in $1 into $2 with the settings above; the other
# arguments are passed to the configure step. TERN_PKG_QUICK=1: the build type's flags are
# -O0 without debug information, for the modes that compile libtern again (what they test is
# how it is consumed, not how fast it runs; about 3x quicker to compile). The build type
# itself stays: the installed package names its configuration, and a consumer built with
# the same type must find it.
cmake_build() {
    local source="$1" build="$2"
    shift 2
    local quick=()
    if [ "${TERN_PKG_QUICK:-0}" = 1 ]; then
        quick=("-DCMAKE_CXX_FLAGS_${build_type^^}=-O0 -g0")
    fi
    rm -rf "$build"
    run cmake -S "$source" -B "$build" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_FLAGS="$flags" "${quick[@]}" \
        -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" "$@"
    run cmake --build "$build" --parallel 2
}

# Fails unless the shared library $1 exports tern's public API (tern::app, tern::context,
# tern::group, tern::deferred, tern::body_reader (and its next_piece), tern::body_error,
# tern::multipart_reader (and its next_part_op, next_data_op), tern::multipart_error, tern::repeating_task, tern::response_stream, tern::sse_client, tern::sse_clients, the WebSocket classes,
# tern::session, tern::session_store, tern::http_error, tern::client and tern::client_response
# members, tern::version, tern::describe,
# tern::access_log, tern::blocking, tern::listen_fds, tern::rate_limit, tern::request_timeout,
# tern::body_category, tern::multipart_category,
# and the type information of the
# public exception classes, which must be one across libraries) and nothing else of tern, asio or llhttp. Entities are told apart
# by their mangled names: symbols of namespace tern or asio (functions, statics, vtables,
# typeinfo) versus instantiations of standard-library templates that merely mention tern's
# types (clang exports some), which are not tern's API.
check_exports() {
    local ours leaked
    ours="$(nm -D --defined-only "$1" | awk '{ print $3 }' |
        grep -E '^_Z(T[VIST]|GV|Z)?NK?(4tern|4asio)|^llhttp' | c++filt)"
    leaked="$(grep -vE '^tern::(app|context|group|deferred|body_reader|body_reader::next_piece|body_error|multipart_reader|multipart_reader::next_part_op|multipart_reader::next_data_op|multipart_error|repeating_task|response_stream|sse_client|sse_clients|ws_connection|ws_handlers|ws_clients|session|session_store|http_error|client|client_response)::~?[A-Za-z0-9_]+(\[abi:cxx11\])?\(|^tern::(version|access_log|blocking|listen_fds|describe|rate_limit|request_timeout|body_category|multipart_category)\(|^tern::detail::(resume_on_loop|resume_after|run_on_pool|wait_fd|coroutine_route|await_client_call|take_client_result)\(' \
        <<<"$ours" | grep -vE '^(typeinfo|typeinfo name|vtable) for tern::[a-z_]+$' || true)"
    if [ -n "$leaked" ]; then
        echo "run.sh: $1 exports internals:" >&2
        echo "$leaked" >&2
        exit 1
    fi
    for wanted in 'tern::app::app()' 'tern::context::text(' 'tern::version()'; do
        grep -qF "$wanted" <<<"$ours" || {
            echo "run.sh: $1 does not export $wanted" >&2
            exit 1
        }
    done
    echo "$1 exports $(wc -l <<<"$ours") symbols of tern, all public API"
}

mode="${1:-}"
shift || true
case "$mode" in
install)
    build="$1" config="$2" prefix="$3"
    rm -rf "$prefix"
    run cmake --install "$build" --config "$config" --prefix "$prefix"
    ;;
find-package)
    prefix="$1" work="$2"
    # llhttp and fmt are private to libtern: the package must not need their CMake packages.
    cmake_build "$here/find-package" "$work" -DCMAKE_PREFIX_PATH="$prefix" --no-warn-unused-cli \
        -DCMAKE_DISABLE_FIND_PACKAGE_llhttp=ON -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON
    run "$work/consumer"
    run "$work/kit_consumer"
    ;;
pkg-config)
    prefix="$1" libdir="$2" work="$3"
    export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
    rm -rf "$work" && mkdir -p "$work"
    cflags="$(pkg-config --cflags tern)"
    libs="$(pkg-config --libs tern)"
    rpath="$(pkg-config --variable=libdir tern)"
    # shellcheck disable=SC2086  # flags from pkg-config are meant to be split
    run "$cxx" -std=c++20 $flags $cflags "$here/consumer.cpp" -o "$work/consumer" $libs \
        -Wl,-rpath,"$rpath"
    run "$work/consumer"
    # The test kit through tern-testing.pc (which requires tern.pc).
    cflags="$(pkg-config --cflags tern-testing)"
    libs="$(pkg-config --libs tern-testing)"
    # shellcheck disable=SC2086  # flags from pkg-config are meant to be split
    run "$cxx" -std=c++20 $flags $cflags "$here/kit_consumer.cpp" -o "$work/kit_consumer" $libs \
        -Wl,-rpath,"$rpath"
    run "$work/kit_consumer"
    ;;
add-subdirectory)
    source="$1" work="$2"
    TERN_PKG_QUICK=1 cmake_build "$here/add-subdirectory" "$work" -DTERN_SOURCE_DIR="$source"
    run "$work/consumer"
    run "$work/kit_consumer"
    ;;
shared)
    source="$1" work="$2"
    TERN_PKG_QUICK=1 cmake_build "$source" "$work/tern-build" -DBUILD_SHARED_LIBS=ON -DTERN_BUILD_TESTS=OFF \
        -DTERN_BUILD_EXAMPLES=OFF -DTERN_WERROR=ON -DCMAKE_INSTALL_LIBDIR=lib
    "$0" install "$work/tern-build" "$build_type" "$work/prefix"
    check_exports "$work/prefix/lib/libtern.so"
    "$0" find-package "$work/prefix" "$work/consumer-build"
    readelf -d "$work/consumer-build/consumer" | grep -q 'NEEDED.*libtern\.so' || {
        echo "run.sh: the consumer is not linked to the shared libtern" >&2
        exit 1
    }
    ;;
exports)
    check_exports "$1"
    ;;
*)
    echo "run.sh: unknown mode '$mode'" >&2
    exit 2
    ;;
esac
