#!/usr/bin/env bash
# labels: text
# Every C++ source and header of the tree is as the committed .clang-format lays it out
# (clang-format --dry-run -Werror; a file that differs is named). Skipped without
# clang-format (make deps installs it).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
command -v clang-format >/dev/null || { echo "SKIPPED: clang-format is not installed (make deps)"; exit 77; }
cd "$ATTNKIT_SRC" || exit 1
files=$(git ls-files '*.cpp' '*.h' 2>/dev/null) || files=$(find lib tools tests bench -name '*.cpp' -o -name '*.h')
# One run over every file; each that differs is named once.
# shellcheck disable=SC2086
clang-format --dry-run -Werror $files > "$T/err" 2>&1
CHECKS=$((CHECKS + 1))
bad=$(grep -o '^[^:]*:[0-9]*:[0-9]*: error' "$T/err" | cut -d: -f1 | sort -u)
for f in $bad; do fail "$f is not formatted (clang-format -i $f)"; done
[ -n "$bad" ] || [ ! -s "$T/err" ] || fail "clang-format: $(head -c 400 "$T/err")"
finish
