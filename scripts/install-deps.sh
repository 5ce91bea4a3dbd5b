#!/usr/bin/env bash
# Installs what tern needs to build, test and run its examples on Debian 12 or newer.
# Idempotent: every step checks first and does nothing when the need is already met.
#
#   scripts/install-deps.sh          build + test dependencies
#   scripts/install-deps.sh --bench  also the benchmark peers (h2o; nginx is a test dependency)
#
# nginx: examples/cluster's rolling-restart test puts three tern processes behind it.
#
# libsqlite3-dev, libpq-dev, postgresql: examples/todo keeps its to-dos in SQLite or
# PostgreSQL; its test starts a PostgreSQL server of its own (initdb + pg_ctl).
#
# libngtcp2-dev, libngtcp2-crypto-gnutls-dev, libnghttp3-dev, libgnutls28-dev: HTTP/3 over QUIC
# (TERN_HTTP3, on by default; docs/http3.md); ngtcp2-client: gtlsclient, the HTTP/3 client its
# tests run.
#
# libc++-dev, libc++abi-dev: LLVM's C++ standard library, for the clang + libc++ build of
# scripts/test.sh --libcxx (macOS's toolchain shape; docs/building.md). googletest: the
# sources the same build compiles GoogleTest from, since libgtest-dev is built for libstdc++.
#
# python3-grpcio, python3-grpc-tools: the gRPC client of tests/grpc/ (a unary and a
# server-streaming call to a gRPC service on tern's routes, trailers both ways) and the protoc
# that generates its stubs at test time (docs/grpc.md); the test skips (exit 77) without them.
#
# abigail-tools: abidiff, for scripts/abi-check.sh (the ABI check of .ci/run against the last
# release, docs/versioning.md).
#
# chromium: the browser tests (tests/browser/) drive headless Chromium over its DevTools
# protocol to check that a real page updates; they skip (exit 77) when it is missing.
#
# llhttp: tern needs >= 9.2 (8.x accepts "\r\n\rX" as the end of headers and obs-fold,
# both request-smuggling vectors). Debian 12 ships 8.1, so on such a system the two
# llhttp packages are fetched from the Debian 13 (trixie) suite through a private apt
# configuration kept under a cache folder; the system's own sources are never touched.
set -euo pipefail

want_bench=0
for arg in "$@"; do
    case "$arg" in
    --bench) want_bench=1 ;;
    *) echo "install-deps.sh: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps.sh: run as root or install sudo" >&2; exit 1; }
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

packages=(build-essential cmake ninja-build pkg-config zlib1g-dev libbrotli-dev libzstd-dev libasio-dev libfmt-dev
          nlohmann-json3-dev libssl-dev openssl catch2 curl python3 wrk clang clang-format-14 clang-tidy-14
          libclang-rt-14-dev libc++-dev libc++abi-dev googletest valgrind
          strace abigail-tools
          chromium python3-websockets node-ws testssl.sh
          libnghttp2-dev nghttp2-client python3-h2 python3-prometheus-client
          python3-grpcio python3-grpc-tools
          libsqlite3-dev libpq-dev postgresql
          nginx libgtest-dev liburing-dev
          libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev libgnutls28-dev ngtcp2-client)
[ "$want_bench" -eq 1 ] && packages+=(h2o)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-deps.sh: installing ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- from the npm registry ------------------------------------------------------------
# swagger-ui-dist: the Swagger UI page app.swagger_ui serves (its files are installed with
# tern); @seriousme/openapi-schema-validator: the validator ctest runs on the OpenAPI
# documents of examples/todo and examples/rest_api (docs/openapi.md). Pinned versions,
# installed globally (npm root -g) without their install scripts.
npm_packages=(swagger-ui-dist@5.35.0 @seriousme/openapi-schema-validator@2.11.0)
command -v npm >/dev/null || {
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends npm
}
npm_root=$(npm root -g)
npm_missing=()
for spec in "${npm_packages[@]}"; do
    name=${spec%@*}
    version=${spec##*@}
    have=$(node -p "require('$npm_root/$name/package.json').version" 2>/dev/null || true)
    [ "$have" = "$version" ] || npm_missing+=("$spec")
done
if [ "${#npm_missing[@]}" -gt 0 ]; then
    echo "install-deps.sh: installing from npm: ${npm_missing[*]}"
    "${sudo_cmd[@]}" npm install -g --no-audit --no-fund --ignore-scripts "${npm_missing[@]}"
fi

# --- llhttp >= 9.2 ---------------------------------------------------------------------
llhttp_ok() {
    local v
    v=$(dpkg-query -W -f='${Version}' libllhttp-dev 2>/dev/null) || return 1
    dpkg --compare-versions "$v" ge 9.2
}
if llhttp_ok; then
    exit 0
fi

# A newer Debian may carry it in its own suites.
if apt-cache policy libllhttp-dev 2>/dev/null | awk '/Candidate:/ {print $2}' |
    { read -r cand && [ "$cand" != "(none)" ] && dpkg --compare-versions "$cand" ge 9.2; }; then
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends libllhttp-dev
    llhttp_ok && exit 0
fi

cache="${TERN_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tern-deps}"
echo "install-deps.sh: fetching llhttp >= 9.2 from the Debian 13 (trixie) suite"
"$(dirname "$0")/lib/trixie-download.sh" "$cache" libllhttp-dev libllhttp9.2
"${sudo_cmd[@]}" dpkg -i "$cache"/debs/*.deb
llhttp_ok || { echo "install-deps.sh: llhttp >= 9.2 could not be installed" >&2; exit 1; }
