#!/usr/bin/env bash
# Debian source packages (and arch-independent source-carrying binary packages such as
# libllhttp-source) of one suite of the archive this machine's apt already uses
# (scripts/lib/debian-mirror.sh), through a private apt configuration kept under DIR/apt
# (scripts/lib/private-apt.sh, as scripts/lib/trixie-download.sh for binary packages): the
# system's own sources, lists and package state are never touched and nothing is installed.
# apt's output goes to stderr.
#
#   debian-source.sh DIR SUITE update
#       writes the configuration for SUITE (deb and deb-src, with SUITE-updates and, when the
#       machine's sources name a security archive, SUITE-security) and fetches its indexes,
#       unless it fetched them less than a day ago (DEBIAN_SOURCE_REFRESH=1: fetch anyway);
#       keeps the indexes it had when the archive cannot be reached
#   debian-source.sh DIR SUITE fetch SOURCE
#       downloads source package SOURCE into DIR/files/SOURCE_VERSION (once: a later call finds
#       it there) and prints VERSION. The newest version of the suite is taken, or the newest
#       whose files the archive serves when a newer one's cannot be fetched (a version that
#       could not be fetched is not tried again for a day).
#   debian-source.sh DIR SUITE unpack SOURCE VERSION DEST
#       unpacks that download into DEST with dpkg-source -x, which applies Debian's patches
#   debian-source.sh DIR SUITE fetch-deb PACKAGE
#       downloads binary package PACKAGE into DIR/files/PACKAGE_VERSION (once), prints VERSION
#
# Used by scripts/windows-deps.sh.
set -euo pipefail
usage() {
    echo "usage: debian-source.sh DIR SUITE update | fetch SOURCE | unpack SOURCE VERSION DEST | fetch-deb PACKAGE" >&2
    exit 2
}
[ $# -ge 3 ] || usage
dir=$1
suite=$2
action=$3
here=$(dirname "$0")
# shellcheck source=scripts/lib/private-apt.sh
. "$here/private-apt.sh"
private_apt "$dir"

# Every version of $1 the indexes know (source packages with $2 = src, binary with $2 = bin),
# newest first.
versions() {
    local name=$1 kind=$2
    if [ "$kind" = src ]; then
        apt-cache "${apt_private[@]}" showsrc "$name" 2>/dev/null |
            awk -v pkg="$name" '$1 == "Package:" { p = $2 } $1 == "Version:" && p == pkg { print $2 }'
    else
        apt-cache "${apt_private[@]}" madison "$name" 2>/dev/null | awk -F' *[|] *' '{ print $2 }'
    fi | sort -u | {
        # Newest first, in dpkg's order.
        mapfile -t vs
        for ((i = 0; i < ${#vs[@]}; i++)); do
            for ((j = i + 1; j < ${#vs[@]}; j++)); do
                if dpkg --compare-versions "${vs[j]}" gt "${vs[i]}"; then
                    t=${vs[i]} && vs[i]=${vs[j]} && vs[j]=$t
                fi
            done
        done
        [ "${#vs[@]}" -eq 0 ] || printf '%s\n' "${vs[@]}"
    }
}

# Downloads $1 (kind $2) into DIR/files/NAME_VERSION, trying the newest version first.
fetch() {
    local name=$1 kind=$2 v dest
    mapfile -t vs < <(versions "$name" "$kind")
    [ "${#vs[@]}" -gt 0 ] || { echo "debian-source.sh: no package '$name' in $suite" >&2; exit 1; }
    for v in "${vs[@]}"; do
        dest="$dir/files/${name}_$v"
        if [ -f "$dest/.complete" ]; then
            echo "$v"
            return 0
        fi
        if [ -n "$(find "$dir/files" -maxdepth 1 -name "${name}_$v.unavailable" -mmin -1440 2>/dev/null)" ]; then
            continue
        fi
        rm -rf "$dest"
        mkdir -p "$dest"
        # apt checks each file against the signed indexes, and fails when one cannot be had.
        if [ "$kind" = src ]; then
            (cd "$dest" && apt-get "${apt_private[@]}" source -qq --only-source --download-only "$name=$v" >&2) &&
                touch "$dest/.complete" || true
        else
            (cd "$dest" && apt-get "${apt_private[@]}" download -qq "$name=$v" >&2) &&
                touch "$dest/.complete" || true
        fi
        if [ -f "$dest/.complete" ]; then
            echo "$v"
            return 0
        fi
        echo "debian-source.sh: $name $v could not be fetched from $suite, trying an older version" >&2
        rm -rf "$dest"
        touch "$dir/files/${name}_$v.unavailable"
    done
    echo "debian-source.sh: no version of '$name' in $suite could be fetched" >&2
    exit 1
}

case "$action" in
update)
    mirror=$("$here/debian-mirror.sh" main)
    {
        for type in deb deb-src; do
            private_apt_source "$type" "$mirror" "$suite"
            # A stable release's point-release and security updates (testing has neither).
            case "$suite" in
            bookworm | trixie)
                private_apt_source "$type" "$mirror" "$suite-updates"
                if security=$("$here/debian-mirror.sh" security 2>/dev/null); then
                    private_apt_source "$type" "$security" "$suite-security"
                fi
                ;;
            esac
        done
    } >"$apt_dir/sources.list.new"
    if cmp -s "$apt_dir/sources.list.new" "$apt_dir/sources.list" && [ "${DEBIAN_SOURCE_REFRESH:-0}" != 1 ] &&
        [ -n "$(find "$apt_dir" -maxdepth 1 -name updated -mmin -1440)" ]; then
        rm "$apt_dir/sources.list.new"
        exit 0
    fi
    mv "$apt_dir/sources.list.new" "$apt_dir/sources.list"
    if apt-get "${apt_private[@]}" update -qq >&2; then
        touch "$apt_dir/updated"
    else
        compgen -G "$apt_dir/lists/*Sources*" >/dev/null || exit 1
        echo "debian-source.sh: $suite's indexes could not be updated; using the ones fetched before" >&2
    fi
    ;;
fetch)
    [ $# -eq 4 ] || usage
    fetch "$4" src
    ;;
fetch-deb)
    [ $# -eq 4 ] || usage
    fetch "$4" bin
    ;;
unpack)
    [ $# -eq 6 ] || usage
    rm -rf "$6"
    mkdir -p "$(dirname "$6")"
    dpkg-source --no-check -x "$(ls "$dir/files/${4}_$5"/*.dsc)" "$6" >&2
    ;;
*) usage ;;
esac
