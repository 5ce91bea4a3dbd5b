#!/usr/bin/env bash
# Fails when a C++ file in the repository is not formatted as .clang-format says. The
# version is pinned: clang-format 14 (Debian 12's), since another major version formats
# some constructs differently and the gate must give every machine the same answer.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp' '*.h')
clang-format-14 --dry-run -Werror $files
echo "check-format: $(echo "$files" | wc -w) files formatted"
