#!/usr/bin/env bash
# Fails when a C++ file in the repository is not formatted as .clang-format says.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp' '*.h')
clang-format --dry-run -Werror $files
echo "check-format: $(echo "$files" | wc -w) files formatted"
