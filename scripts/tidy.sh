#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy) over libtern's sources and fails on any
# finding. Builds nothing: it configures build-tidy/ for its compile_commands.json (one entry
# per source: no unity build), with HTTP/3 on so that src/quic and src/h3 are checked too.
# The portable I/O path's own sources (*_portable.cpp, docs/platforms.md) are compiled only by
# a -DTERN_IO=portable build: a second configuration, $build-portable/, checks them.
#
#   scripts/tidy.sh [file-regex]     default: every .cpp under src/
set -euo pipefail
cd "$(dirname "$0")/.."

build=${TERN_TIDY_BUILD_DIR:-build-tidy}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DTERN_BUILD_TESTS=OFF -DTERN_BUILD_EXAMPLES=OFF \
    -DTERN_UNITY_BUILD=OFF -DTERN_HTTP3=ON >/dev/null
# run-clang-tidy exits non-zero when a file has a finding (WarningsAsErrors in .clang-tidy).
run-clang-tidy-14 -p "$build" -quiet -j "$(nproc)" "${1:-$PWD/src/.*\.cpp$}"
cmake -S . -B "$build-portable" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DTERN_BUILD_TESTS=OFF -DTERN_BUILD_EXAMPLES=OFF \
    -DTERN_UNITY_BUILD=OFF -DTERN_HTTP3=ON -DTERN_IO=portable >/dev/null
run-clang-tidy-14 -p "$build-portable" -quiet -j "$(nproc)" "$PWD/src/.*_portable\.cpp$"
echo "tidy: no findings"
