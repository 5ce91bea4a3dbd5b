# shellcheck shell=bash
# Sourced (not run): a private apt configuration under a directory of the caller's, through
# which scripts/lib/trixie-download.sh and scripts/lib/debian-source.sh read the indexes of
# one suite of the archive this machine's apt already uses (scripts/lib/debian-mirror.sh)
# and download packages from it: the system's own sources, lists and package state are never
# touched and nothing is installed.
#
#   . scripts/lib/private-apt.sh
#   private_apt DIR          sets apt_dir (DIR/apt) and apt_private (the options that point
#                            apt-get and apt-cache there) and makes its folders
#   private_apt_source TYPE MIRROR SUITE
#                            prints the sources.list line of SUITE's main component (TYPE:
#                            deb or deb-src), checked against Debian's archive keyring

# shellcheck disable=SC2034  # apt_dir and apt_private are the caller's
private_apt() {
    apt_dir="$1/apt"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts"
    # No package is installed through it: its package state stays empty.
    [ -f "$apt_dir/status" ] || : >"$apt_dir/status"
    apt_private=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
                 -o "Dir::Etc::SourceParts=$apt_dir/parts"
                 -o "Dir::State::Lists=$apt_dir/lists"
                 -o "Dir::State::status=$apt_dir/status"
                 -o "Dir::Cache=$apt_dir"
                 -o "Dir::Cache::archives=$apt_dir/archives"
                 -o "APT::Sandbox::User=root"
                 -o "Debug::NoLocking=1")
}

private_apt_source() {
    echo "$1 [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $2 $3 main"
}
