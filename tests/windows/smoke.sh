#!/usr/bin/env bash
# The smoke test of the Windows dependencies: cross-builds tests/windows/smoke (one program
# using every library of the prefix scripts/windows-deps.sh builds) with
# cmake/toolchains/mingw-w64.cmake, then, under wine, headless, in a fresh WINEPREFIX:
#   1. ctest runs its Catch2 case through CMAKE_CROSSCOMPILING_EMULATOR (DLLs on WINEPATH);
#   2. the program, with the prefix's DLLs copied beside it and no WINEPATH, runs the case
#      again and serves one HTTP request on 127.0.0.1, which curl on the Linux side sends.
# Prints how long wine's first start (wineboot -i) took on the fresh WINEPREFIX.
#
#   tests/windows/smoke.sh [PREFIX]   PREFIX: default $TERN_WINDOWS_DEPS_PREFIX, else the one
#                                     scripts/windows-deps.sh prints (building it if needed)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${1:-${TERN_WINDOWS_DEPS_PREFIX:-}}
if [ -z "$prefix" ]; then
    prefix=$("$repo/scripts/windows-deps.sh" | tail -n 1)
fi
[ -f "$prefix/VERSIONS" ] || { echo "smoke.sh: $prefix is no prefix of scripts/windows-deps.sh" >&2; exit 1; }

work=$(mktemp -d /tmp/tern-windows-smoke.XXXXXX)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    WINEPREFIX="$work/wine" wineserver -k 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

build="$work/build"
cmake -S "$repo/tests/windows/smoke" -B "$build" -G Ninja \
    -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/toolchains/mingw-w64.cmake" \
    -DTERN_WINDOWS_DEPS_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" ||
    { cat "$work/configure.log"; exit 1; }
nice cmake --build "$build" -j 2

# wine, headless: no window, no debug chatter, and no offer to install Mono or Gecko (the
# .NET and HTML engines nothing here needs) on the first start.
export WINEPREFIX="$work/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY
start=$(date +%s%N)
wineboot -i >/dev/null 2>&1
wineserver -w
ms=$((($(date +%s%N) - start) / 1000000))
echo "smoke.sh: wine's first start (wineboot -i on a fresh WINEPREFIX): $((ms / 1000)).$(printf %03d $((ms % 1000))) s"

(cd "$build" && ctest --output-on-failure)

# The DLLs beside the executable, as an installed program carries them.
run="$work/run"
mkdir -p "$run"
cp "$build/smoke.exe" "$prefix"/bin/*.dll "$run/"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$run" && exec env -u WINEPATH wine smoke.exe "$port") >"$work/server.log" 2>&1 &
server_pid=$!
body=$(curl -sS --retry 60 --retry-connrefused --retry-delay 1 --max-time 120 "http://127.0.0.1:$port/hello") ||
    { cat "$work/server.log"; exit 1; }
status=0
wait "$server_pid" || status=$?
server_pid=
cat "$work/server.log"
if [ "$status" -ne 0 ]; then
    echo "smoke.sh: smoke.exe exited $status" >&2
    exit 1
fi
if [ "$body" != "hello from windows with 9 libraries" ]; then
    echo "smoke.sh: unexpected answer: '$body'" >&2
    exit 1
fi
echo "smoke.sh: curl got '$body' from smoke.exe under wine"
echo "smoke.sh: passed"
