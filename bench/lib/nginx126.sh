#!/usr/bin/env bash
# nginx 1.26 with HTTP/3, for bench/h3.py's `nginx` peer. Debian 12's nginx 1.22 has no
# HTTP/3; Debian 13's nginx 1.26 is built with --with-http_v3_module and its binary runs on
# Debian 12 unpacked from its .deb (against Debian 12's OpenSSL 3.0 it uses its OpenSSL
# compatibility layer for QUIC). The .deb is fetched from the Debian 13 (trixie) suite through
# a private apt configuration under DIR, as scripts/install-deps.sh does for llhttp, from the
# mirror this machine's apt already uses (scripts/lib/debian-mirror.sh); the system's own
# sources and packages are never touched. Nothing is installed: the package is unpacked with
# dpkg-deb -x into DIR/root.
#
#   bench/lib/nginx126.sh [DIR]    (default: bench/results/build/nginx126)
#
# Prints the path of the nginx binary. Idempotent: when DIR/root already holds an nginx whose
# `nginx -V` lists http_v3_module, it fetches nothing.
#
# Libraries: `ldd` of trixie's nginx on Debian 12 finds everything it links (libcrypt, libpcre2,
# libssl/libcrypto 3, zlib) in Debian 12; a library that is missing would be fetched the same
# way into DIR/root and found through LD_LIBRARY_PATH (bench/h3.py sets it to DIR/root's
# library folders), which is what the check below runs with.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$repo/bench/results/build/nginx126}
root="$dir/root"
nginx="$root/usr/sbin/nginx"
libs="$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu"

works() {
    [ -x "$nginx" ] && LD_LIBRARY_PATH="$libs" "$nginx" -V 2>&1 | grep -q -- --with-http_v3_module
}
if works; then
    echo "$nginx"
    exit 0
fi

echo "nginx126.sh: fetching nginx 1.26 from the Debian 13 (trixie) suite into $dir" >&2
"$repo/scripts/lib/trixie-download.sh" "$dir" nginx
rm -rf "$root"
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done

missing=$(LD_LIBRARY_PATH="$libs" ldd "$nginx" | awk '/not found/ { print $1 }')
if [ -n "$missing" ]; then
    echo "nginx126.sh: trixie's nginx needs libraries this system lacks: $missing" >&2
    exit 1
fi
if ! works; then
    echo "nginx126.sh: $nginx does not run or has no http_v3_module:" >&2
    LD_LIBRARY_PATH="$libs" "$nginx" -V >&2 || true
    exit 1
fi
echo "$nginx"
