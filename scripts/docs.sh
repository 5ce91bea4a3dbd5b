#!/usr/bin/env bash
# Builds tern's API reference with Doxygen (target tern_docs) into build-docs/docs/html/,
# installing what is missing first (doxygen, and tern's own dependencies, which configuring
# needs). Fails on any Doxygen warning, e.g. a public declaration in include/tern without
# its `///` comment.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

if ! command -v doxygen >/dev/null; then
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "docs.sh: run as root or install sudo" >&2; exit 1; }
        sudo_cmd=(sudo)
    fi
    echo "docs.sh: installing doxygen"
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends doxygen
fi

build="build-docs"
cmake -S . -B "$build" -G Ninja -DTERN_BUILD_TESTS=OFF -DTERN_BUILD_EXAMPLES=OFF >/dev/null
if ! cmake --build "$build" --target tern_docs; then
    echo "docs.sh: tern_docs failed; every Doxygen warning above fails it" >&2
    exit 1
fi
echo "docs.sh: API reference in $build/docs/html/index.html"
