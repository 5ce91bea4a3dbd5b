#!/usr/bin/env bash
# Installs what is missing, builds tern with its tests and examples, and runs every test.
#
#   scripts/test.sh               g++, warnings as errors, build/: every test but the slow tier
#   scripts/test.sh --slow        the same build, only the slow tier (ctest label "slow": the
#                                 packaging tests that compile libtern again and testssl.sh)
#   scripts/test.sh --sanitize    clang, AddressSanitizer + UndefinedBehaviorSanitizer, build-asan/
#   scripts/test.sh --tsan        clang, ThreadSanitizer, build-tsan/: the wire tests and the
#                                 HTTP/2 frame tests (the threads, stop and blocking-pool paths
#                                 cross threads; the unit tests replace operator new, which
#                                 TSan's runtime forbids)
#   scripts/test.sh --io-uring    g++, -DTERN_IO_URING=ON (asio's io_uring backend), build-uring/:
#                                 the wire tests
#   scripts/test.sh --portable    g++, warnings as errors, -DTERN_IO=portable (the I/O path other
#                                 systems build: asio's own waits, no epoll set, sendfile,
#                                 O_TMPFILE or SO_REUSEPORT; docs/platforms.md), build-portable/:
#                                 every test but the slow tier, then
#                                 scripts/check-portable-symbols.sh on its libtern
#   scripts/test.sh --libcxx      clang with LLVM's libc++ (macOS's toolchain shape), warnings as
#                                 errors, build-libcxx/: builds everything, runs the unit tests
#                                 and the test kit's tests
set -euo pipefail
cd "$(dirname "$0")/.."

# Line tables only (-g1), not full debug info: backtraces, sanitizer reports and gdb still
# name files and lines, and the builds compile about 30% faster (2026-12-04: a wire test
# 10.6 -> 6.8 s, libtern's worker.cpp 9.0 -> 6.7 s, Catch2's main 22.7 -> 15.1 s of CPU).
# A build for a debugger keeps -g: cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo without this.
relwithdebinfo_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

sanitize=0
tsan=0
uring=0
portable=0
libcxx=0
slow=0
for arg in "$@"; do
    case "$arg" in
    --sanitize) sanitize=1 ;;
    --tsan) tsan=1 ;;
    --io-uring) uring=1 ;;
    --portable) portable=1 ;;
    --libcxx) libcxx=1 ;;
    --slow) slow=1 ;;
    *) echo "test.sh: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

scripts/install-deps.sh

# run_ctest BUILD ARGS...: ctest in BUILD; when a test fails, what the failed tests printed is
# shown once more at the end, where a log's tail (CI keeps only that) has it.
run_ctest() {
    local build=$1
    shift
    if ! ctest --test-dir "$build" "$@"; then
        scripts/lib/failed-output.py "$build"
        exit 1
    fi
}

if [ "$tsan" -eq 1 ]; then
    build=build-tsan
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTERN_WERROR=ON -DTERN_SANITIZE=thread "${relwithdebinfo_flags[@]}"
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    cmake --build "$build" --target tern_integration_tests tern_h2_app
    # Not the HTTP/2 bounds test ("... stay bounded"): it measures resident memory, which
    # TSan's shadow memory multiplies; it runs in the other builds.
    run_ctest "$build" --output-on-failure --timeout 300 -j2 \
        -R '^wire:|^clients: Python h2 frames' -E 'stay bounded$'
    exit 0
fi

if [ "$uring" -eq 1 ]; then
    build=build-uring
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON -DTERN_IO_URING=ON \
        "${relwithdebinfo_flags[@]}"
    cmake --build "$build" --target tern_integration_tests
    run_ctest "$build" --output-on-failure --timeout 300 -j3 -R '^wire:'
    exit 0
fi

if [ "$libcxx" -eq 1 ]; then
    build=build-libcxx
    libcxx_flags=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-stdlib=libc++
                  -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ -DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++)
    # Every C++ library linked into a program must be built against libc++ too. Debian's are
    # built against libstdc++ (fmt and Catch2 are used header-only, asio and nlohmann_json
    # are header-only, the rest are C), except GoogleTest, which the kit's GoogleTest test
    # links: it is compiled here from Debian's own sources (googletest) once per build dir
    # (10 s; clang for its C checks too, since the linker flags name libc++).
    gtest="$PWD/$build/googletest"
    if [ ! -f "$gtest/install/lib/cmake/GTest/GTestConfig.cmake" ]; then
        cmake -S /usr/src/googletest -B "$gtest/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_CXX_FLAGS_RELEASE="-O2 -g0" -DBUILD_GMOCK=OFF -DINSTALL_GTEST=ON \
            -DCMAKE_INSTALL_PREFIX="$gtest/install" -DCMAKE_C_COMPILER=clang "${libcxx_flags[@]}"
        cmake --build "$gtest/build"
        cmake --install "$gtest/build" >/dev/null
    fi
    # libtern and the examples at -O1 without debug information: what this build checks is
    # that the code compiles cleanly and the cores behave the same on another standard
    # library, not its speed or its debugging; the tests' own code at -O0 (tests/CMakeLists.txt).
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON \
        -DTERN_HTTP3=ON "${libcxx_flags[@]}" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g0" \
        -DCMAKE_PREFIX_PATH="$gtest/install"
    cmake --build "$build"
    # The unit tests and the kit's tests (ctest names "unit:..." and "testing:...").
    run_ctest "$build" --output-on-failure --timeout 300 -j3 -R '^(unit|testing):'
    exit 0
fi

if [ "$portable" -eq 1 ]; then
    build=build-portable
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON \
        -DTERN_HTTP3=ON -DTERN_IO=portable "${relwithdebinfo_flags[@]}"
    cmake --build "$build"
    run_ctest "$build" --output-on-failure --timeout 300 -j3 -LE slow
    # Its libtern calls none of Linux's own I/O (epoll, io_uring, sendfile, splice, accept4,
    # recvmmsg, sendmmsg).
    scripts/check-portable-symbols.sh "$build"
    exit 0
fi

if [ "$sanitize" -eq 1 ]; then
    build=build-asan
    # libtern and the examples at -O1 with assertions on (ASan's advice for a usable speed;
    # the suite waits less on sanitized code than at -O0), the tests' own code at -O0
    # (tests/CMakeLists.txt), as in the plain build.
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTERN_WERROR=ON -DTERN_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
        -DTERN_HTTP3=ON
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
    build=build
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON \
        -DTERN_HTTP3=ON "${relwithdebinfo_flags[@]}"
fi
cmake --build "$build"
# The slow tier runs on its own (--slow); the other builds leave it out.
if [ "$slow" -eq 1 ]; then
    tier=(-L slow)
else
    tier=(-LE slow)
fi
# Three at a time on two cores: most tests wait on sockets, timers and child processes more
# than they compute (2026-12-04, a fresh build's ctest: 193 s at -j2, 160 s at -j3, 143 s at
# -j4). No test asserts on time, so more overlap changes durations, not results. Two under
# the sanitizers, whose code runs several times slower.
jobs=3
[ "$sanitize" -eq 1 ] && jobs=2
run_ctest "$build" --output-on-failure --timeout 300 -j"$jobs" "${tier[@]}"
