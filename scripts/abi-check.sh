#!/usr/bin/env bash
# The ABI and API check against the last release (docs/versioning.md): builds the shared
# libtern at the last release in RELEASES and at the working tree, compares them with
# abidiff (abigail-tools) over the public headers, and fails when
#
#   - the version went backwards, or the minor version moved without a CHANGELOG.md section
#     for the new version;
#   - the ABI changed in a way that breaks (a function removed or changed, a public type whose
#     layout changed, a symbol removed, the soname) while major.minor stayed the release's:
#     0.x promises source and ABI within a minor version, so such a change must move the
#     minor version.
#
# Additions (a new function) pass with the report printed.
#
#   scripts/abi-check.sh [--against COMMIT] [--work DIR]
#
#   --against COMMIT   compare with COMMIT instead of the last release (e.g. to see what a
#                      change would break); its version is read from its version.hpp
#   --work DIR         where the two builds go (default build-abi/); the release's build is
#                      kept there and reused while its commit stays the same
#
# Needs what scripts/install-deps.sh installs (abigail-tools among the test dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

against="" work="$repo/build-abi"
while [ $# -gt 0 ]; do
    case "$1" in
    --against) against=$2; shift ;;
    --work) work=$2; shift ;;
    *) echo "abi-check.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
command -v abidiff >/dev/null || {
    echo "abi-check.sh: abidiff is missing: run scripts/install-deps.sh" >&2
    exit 1
}

# version_of TEXT: "major.minor.patch" from the text of a version.hpp.
version_of() {
    local major minor patch
    major=$(sed -n 's/^#define TERN_VERSION_MAJOR \([0-9]*\).*/\1/p' <<<"$1")
    minor=$(sed -n 's/^#define TERN_VERSION_MINOR \([0-9]*\).*/\1/p' <<<"$1")
    patch=$(sed -n 's/^#define TERN_VERSION_PATCH \([0-9]*\).*/\1/p' <<<"$1")
    echo "$major.$minor.$patch"
}

if [ -z "$against" ]; then
    # The last release listed that HEAD descends from.
    while read -r version commit _; do
        case "$version" in '' | '#'*) continue ;; esac
        if git merge-base --is-ancestor "$commit" HEAD 2>/dev/null; then
            against=$commit
        fi
    done <RELEASES
    [ -n "$against" ] || { echo "abi-check.sh: no release in RELEASES is an ancestor of HEAD" >&2; exit 1; }
fi
base_commit=$(git rev-parse --verify "$against^{commit}")
base_version=$(version_of "$(git show "$base_commit:include/tern/version.hpp")")
head_version=$(version_of "$(cat include/tern/version.hpp)")
echo "abi-check.sh: release $base_version (${base_commit:0:9}) against the working tree's $head_version"

IFS=. read -r base_major base_minor base_patch <<<"$base_version"
IFS=. read -r head_major head_minor head_patch <<<"$head_version"
base_key=$((base_major * 1000000 + base_minor * 1000 + base_patch))
head_key=$((head_major * 1000000 + head_minor * 1000 + head_patch))
if [ "$head_key" -lt "$base_key" ]; then
    echo "abi-check.sh: FAIL: the version went backwards ($base_version -> $head_version)" >&2
    exit 1
fi
if [ "$head_version" != "$base_version" ] && ! grep -q "^## $head_version\b" CHANGELOG.md; then
    echo "abi-check.sh: FAIL: the version moved to $head_version but CHANGELOG.md has no" \
        "'## $head_version' section" >&2
    exit 1
fi
# While the major version is 0 a minor step may break; from 1.0, a major step.
if [ "$head_major" -eq 0 ]; then
    breaking_allowed=$([ "$head_major.$head_minor" != "$base_major.$base_minor" ] && echo 1 || echo 0)
else
    breaking_allowed=$([ "$head_major" != "$base_major" ] && echo 1 || echo 0)
fi

# build SOURCE DIR: a shared libtern with debug information (what abidiff reads), unoptimized
# (quicker to compile; the ABI does not depend on it).
build() {
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g" \
        -DBUILD_SHARED_LIBS=ON -DTERN_BUILD_TESTS=OFF -DTERN_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build "$2" --target tern
}

mkdir -p "$work"
base_src="$work/release-src"
if [ "$(cat "$work/release-commit" 2>/dev/null)" != "$base_commit" ]; then
    rm -rf "$base_src" "$work/release-build"
    mkdir -p "$base_src"
    git archive "$base_commit" | tar -x -C "$base_src"
    echo "$base_commit" >"$work/release-commit"
fi
build "$base_src" "$work/release-build"
build "$repo" "$work/head-build"

# The real files (not the soname links), each with the public headers of its tree, so that
# only types of tern's API are compared.
base_lib=$(find "$work/release-build" -maxdepth 1 -name 'libtern.so.*.*.*' | head -n 1)
head_lib=$(find "$work/head-build" -maxdepth 1 -name 'libtern.so.*.*.*' | head -n 1)
# Instances of standard-library templates that libtern happens to export (std::from_chars,
# std::__detail::__to_chars_16...) are not tern's API (tests/packaging/run.sh leaves them out
# of its export check for the same reason), and libabigail misreads them: it merges the
# `type` typedefs of different std::enable_if<true, T> instances, so that the return type of
# std::from_chars<unsigned long> "changed" to std::string& or std::optional<...>& whenever a
# unity batch of libtern happens to instantiate those first (seen on 2026-12-07 with the
# multipart reader's sources added: 1 to 9 such "changes", nothing of tern's). Their changes
# are not counted.
cat >"$work/suppressions.txt" <<'SUPPRESSIONS'
[suppress_function]
  name_regexp = ^std::
SUPPRESSIONS
status=0
abidiff --suppressions "$work/suppressions.txt" \
    --headers-dir1 "$base_src/include/tern" --headers-dir2 "$repo/include/tern" \
    "$base_lib" "$head_lib" >"$work/report.txt" || status=$?
cat "$work/report.txt"
# abidiff's exit status is a bit mask: 1 error, 2 usage error, 4 an ABI change, 8 a change it
# is sure breaks (a removed symbol, a soname). It counts a public struct that gained a field
# (tern::config's layout) as a change, not as sure to break, so what breaks is read from its
# summary lines: anything removed or changed breaks, only additions do not.
if [ $((status & 3)) -ne 0 ]; then
    echo "abi-check.sh: FAIL: abidiff could not compare the two libraries (status $status)" >&2
    exit 1
fi
broken=0
[ $((status & 8)) -ne 0 ] && broken=1
if grep -Eq '^(Functions|Variables) changes summary: ([1-9][0-9]* Removed|[0-9]+ Removed, [1-9][0-9]* Changed)' \
    "$work/report.txt" ||
    grep -Eq '^(Function|Variable) symbols changes summary: [1-9][0-9]* Removed' "$work/report.txt"; then
    broken=1
fi
if [ "$broken" = 1 ]; then
    if [ "$breaking_allowed" = 1 ]; then
        echo "abi-check.sh: ABI changes that break, allowed: the version moved" \
            "$base_version -> $head_version (CHANGELOG.md says what to change)"
        exit 0
    fi
    echo "abi-check.sh: FAIL: the ABI changed in a way that breaks programs built against" \
        "$base_version (above: something removed or changed) but the version is still" \
        "$head_version: move the minor version (include/tern/version.hpp) and say what to" \
        "change in CHANGELOG.md (docs/versioning.md)" >&2
    exit 1
fi
if [ $((status & 4)) -ne 0 ]; then
    echo "abi-check.sh: compatible ABI changes only (additions, above)"
else
    echo "abi-check.sh: no ABI change"
fi
