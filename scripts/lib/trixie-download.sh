#!/usr/bin/env bash
# Downloads packages from the Debian 13 (trixie) suite of the archive this machine's apt
# already uses (scripts/lib/debian-mirror.sh), through a private apt configuration kept
# under DIR/apt: the system's own sources, lists and package state are never touched and
# nothing is installed. The .deb files land in DIR/debs, emptied first; apt's output goes to
# stderr.
#
#   scripts/lib/trixie-download.sh DIR PACKAGE...
#
# Used by scripts/install-deps.sh (llhttp >= 9.2, which Debian 12 lacks) and
# bench/lib/nginx126.sh (nginx 1.26, HTTP/3's peer in bench/h3.py).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: trixie-download.sh DIR PACKAGE..." >&2; exit 2; }
dir=$1
shift
apt_dir="$dir/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts" "$dir/debs"
mirror=$("$(dirname "$0")/debian-mirror.sh" main)
cat >"$apt_dir/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main
SOURCES
: >"$apt_dir/status"
apt_private=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
             -o "Dir::Etc::SourceParts=$apt_dir/parts"
             -o "Dir::State::Lists=$apt_dir/lists"
             -o "Dir::State::status=$apt_dir/status"
             -o "Dir::Cache=$apt_dir"
             -o "Dir::Cache::archives=$apt_dir/archives"
             -o "APT::Sandbox::User=root"
             -o "Debug::NoLocking=1")
apt-get "${apt_private[@]}" update -qq >&2
(cd "$dir/debs" && rm -f ./*.deb && apt-get "${apt_private[@]}" download "$@" >&2)
