#!/usr/bin/env bash
# Installs what is missing, builds one example in Release and runs it with the arguments
# given (from its own folder, so relative paths such as todo.db land there). Ctrl-C stops it.
#
#   scripts/run-example.sh NAME [ARGS...]
#
#   JWT_SECRET=change-me scripts/run-example.sh jwt_login 8080
#   scripts/run-example.sh todo 8080 --db todo.db
#   scripts/run-example.sh cluster 8080          (examples/cluster/app)
#   scripts/run-example.sh live | chat | rest_api | hello | getting_started
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:-}
if [ -z "$name" ] || [ ! -f "examples/$name/CMakeLists.txt" ]; then
    echo "usage: scripts/run-example.sh NAME [ARGS...]; NAME is one of:" \
        $(cd examples && ls -d */ | tr -d / | grep -v bench_app) >&2
    exit 2
fi
shift
target=$name
binary=$name
if [ "$name" = cluster ]; then
    target=cluster_app
    binary=app
fi
scripts/install-deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERN_BUILD_TESTS=OFF
cmake --build build-release --target "$target"
cd "examples/$name"
exec "../../build-release/examples/$name/$binary" "$@"
