#!/usr/bin/env bash
# Downloads packages from the Debian 13 (trixie) suite of the archive this machine's apt
# already uses (scripts/lib/debian-mirror.sh), through a private apt configuration kept
# under DIR/apt (scripts/lib/private-apt.sh): the system's own sources, lists and package
# state are never touched and nothing is installed. The .deb files land in DIR/debs, emptied
# first; apt's output goes to stderr.
#
#   scripts/lib/trixie-download.sh DIR PACKAGE...
#
# Used by scripts/install-deps.sh (llhttp >= 9.2, which Debian 12 lacks) and
# bench/lib/nginx126.sh (nginx 1.26, HTTP/3's peer in bench/h3.py).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: trixie-download.sh DIR PACKAGE..." >&2; exit 2; }
dir=$1
shift
here=$(dirname "$0")
# shellcheck source=scripts/lib/private-apt.sh
. "$here/private-apt.sh"
private_apt "$dir"
mkdir -p "$dir/debs"
private_apt_source deb "$("$here/debian-mirror.sh" main)" trixie >"$apt_dir/sources.list"
apt-get "${apt_private[@]}" update -qq >&2
(cd "$dir/debs" && rm -f ./*.deb && apt-get "${apt_private[@]}" download "$@" >&2)
