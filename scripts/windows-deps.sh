#!/usr/bin/env bash
# Builds the libraries tern needs on Windows, cross-compiled with Debian's mingw-w64 toolchain
# (GCC 12, posix threads) from Debian's own source packages (apt-get source: Debian's patches
# applied by dpkg-source), into a prefix a CMake cross build consumes through
# cmake/toolchains/mingw-w64.cmake (docs/building.md, "Windows (cross-built, run under Wine)").
#
#   scripts/windows-deps.sh          installs the toolchain and Wine, builds what is missing,
#                                    prints the prefix as the last line of stdout
#   scripts/windows-deps.sh --tools  only installs the toolchain and Wine
#
# Everything but the prefix goes to stderr. Idempotent: apt-get runs only for missing
# packages, and each library has a stamp file in the prefix, so a re-run after a failure
# builds only what is missing and a warm run takes seconds.
set -euo pipefail

tools_only=0
for arg in "$@"; do
    case "$arg" in
    --tools) tools_only=1 ;;
    *) echo "windows-deps.sh: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

log() { echo "windows-deps.sh: $*" >&2; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "run as root or install sudo"; exit 1; }
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

# --- the toolchain, Wine and the tools the source packages build with -------------------
# wine64 runs the 64-bit .exe files; wine gives the `wine` command. dpkg-dev: dpkg-source,
# which apt-get source runs to unpack a source package and apply Debian's patches.
packages=(g++-mingw-w64-x86-64-posix wine64 wine dpkg-dev cmake ninja-build make perl pkg-config
          xz-utils curl python3)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq >&2
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
[ "$tools_only" -eq 1 ] && exit 0
log "the libraries are not built yet by this version of the script"
exit 1
