#!/usr/bin/env bash
# Checks that a build's libtern calls none of Linux's own I/O: the portable path
# (-DTERN_IO=portable, docs/platforms.md) must build where epoll, io_uring, sendfile(2),
# splice(2), accept4(2), recvmmsg(2) and sendmmsg(2) do not exist. Reads the undefined
# symbols (nm -u) of BUILD_DIR's libtern.a, and of its libtern.so when there is one; prints
# each Linux-only symbol found and fails on any. On a TERN_IO=linux build it fails (those are
# its fast paths), which is how the check is checked.
#
#   scripts/check-portable-symbols.sh BUILD_DIR
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build=$1
libraries=()
for name in libtern.a libtern.so; do
    [ -e "$build/$name" ] && libraries+=("$build/$name")
done
if [ ${#libraries[@]} -eq 0 ]; then
    echo "check-portable-symbols: no libtern.a or libtern.so in $build" >&2
    exit 2
fi

linux_only='^(epoll_[a-z_0-9]*|io_uring_[a-z_0-9]*|sendfile(64)?|splice|accept4|recvmmsg|sendmmsg)(@.*)?$'
found=0
for lib in "${libraries[@]}"; do
    # A static archive lists each member's undefined symbols; one symbol once is enough.
    symbols=$(nm -u "$lib" 2>/dev/null | awk 'NF >= 2 && $(NF-1) == "U" { print $NF }' | sort -u)
    bad=$(grep -E "$linux_only" <<<"$symbols" || true)
    if [ -n "$bad" ]; then
        echo "check-portable-symbols: $lib calls Linux-only I/O:"
        sed 's/^/  /' <<<"$bad"
        found=1
    else
        echo "check-portable-symbols: $lib: none of epoll_*, io_uring_*, sendfile, splice, accept4, recvmmsg, sendmmsg ($(wc -l <<<"$symbols") undefined symbols read)"
    fi
done
exit "$found"
