#!/usr/bin/env bash
# Builds libnghttp2 with symbols, for profiles only: Debian's libnghttp2.so.14 is stripped, so
# callgrind can split nghttp2's share of a request only by address. This fetches Debian's own
# source package of the installed version (the .dsc and its tarballs from the Debian archive
# this machine's apt uses: scripts/lib/debian-mirror.sh),
# unpacks it with Debian's patches applied (dpkg-source -x), builds the library alone
# (RelWithDebInfo) and prints the directory holding libnghttp2.so.14, to be put first with
# LD_LIBRARY_PATH (bench/h2-instructions.py --library-path DIR --split). Nothing of it is
# committed or used by the build and the tests, which keep Debian's package.
#
#   bench/nghttp2-symbols.sh [DIR=/tmp/tern-nghttp2-symbols]
#
# Needs curl, dpkg-source (dpkg-dev), cmake, ninja and a C compiler; reaches that archive.
set -euo pipefail
mirror_of="$(cd "$(dirname "$0")/.." && pwd)/scripts/lib/debian-mirror.sh"
dir=${1:-/tmp/tern-nghttp2-symbols}
version=$(dpkg-query -W -f='${source:Version}' libnghttp2-14 2>/dev/null) ||
    { echo "nghttp2-symbols.sh: libnghttp2-14 is not installed" >&2; exit 1; }
upstream=${version%%-*}
lib="$dir/nghttp2-$upstream/build/lib"
if [ -e "$lib/libnghttp2.so.14" ]; then echo "$lib"; exit 0; fi
for tool in curl dpkg-source cmake ninja cc; do
    command -v "$tool" >/dev/null || { echo "nghttp2-symbols.sh: $tool is missing" >&2; exit 1; }
done
mkdir -p "$dir"
cd "$dir"
dsc="nghttp2_${version}.dsc"
# A point release's package is in the main archive's pool, a security update's in the
# security archive's.
for base in $("$mirror_of" main) $("$mirror_of" security 2>/dev/null || true); do
    if curl -sfO "$base/pool/main/n/nghttp2/$dsc"; then break; fi
done
[ -s "$dsc" ] || { echo "nghttp2-symbols.sh: no $dsc in this machine's Debian archives" >&2; exit 1; }
for f in $(awk '/^Files:/ { f = 1; next } f && NF == 3 { print $3; next } f { f = 0 }' "$dsc"); do
    curl -sfO "$base/pool/main/n/nghttp2/$f" ||
        { echo "nghttp2-symbols.sh: cannot fetch $f" >&2; exit 1; }
done
rm -rf "nghttp2-$upstream"
dpkg-source --no-check -x "$dsc" "nghttp2-$upstream" >/dev/null
cmake -S "nghttp2-$upstream" -B "nghttp2-$upstream/build" -G Ninja -DENABLE_LIB_ONLY=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g" >/dev/null
ninja -C "nghttp2-$upstream/build" >/dev/null
echo "$lib"
