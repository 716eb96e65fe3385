#!/usr/bin/env bash
# labels: text
# Every C++ source and header of the tree is as the committed .clang-format lays it out
# (clang-format --dry-run -Werror; a file that differs is named), and every unit test file
# keeps its code in a namespace of its own. Skipped without clang-format (make deps installs
# it).
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
# The unit tests compile as a unity build (tests/CMakeLists.txt): each test file's code sits in
# a namespace named after the file, so that its helpers and using-directives stay its own.
for f in tests/unit/*_test.cpp; do
  CHECKS=$((CHECKS + 1))
  ns=attnkit_unit_$(basename "$f" .cpp)
  grep -qx "namespace $ns {" "$f" && grep -qx "}  // namespace $ns" "$f" ||
    fail "$f: its code is not inside 'namespace $ns { ... }  // namespace $ns'"
done
finish
