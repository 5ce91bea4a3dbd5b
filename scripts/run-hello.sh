#!/usr/bin/env bash
# Installs what is missing, builds tern in Release and runs examples/hello on :8080
# (or the port given as the first argument). Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERN_BUILD_TESTS=OFF
cmake --build build-release --target hello
cd examples/hello
exec ../../build-release/examples/hello/hello "${1:-8080}"
