#!/usr/bin/env bash
# The README's example pipelines run as they stand and print what the README shows.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
readme="$ATTNKIT_SRC/README.md"
n=0
for name in $(sed -n 's/^<!-- example: \([a-z0-9-]*\) -->$/\1/p' "$readme"); do
  n=$((n + 1))
  # The ```sh block after the marker, then the ```text block with its expected output.
  awk -v m="<!-- example: $name -->" '
    $0 == m { on = 1; next }
    on && /^```sh$/ { cmd = 1; next }
    on && /^```text$/ { want = 1; next }
    on && /^```$/ { if (want) exit; cmd = 0; next }
    cmd { print > "cmd.sh" } want { print > "expected.txt" }' "$readme"
  mkdir "ex-$name" && (cd "ex-$name" && bash -o pipefail -e ../cmd.sh > ../got.txt 2> ../err.txt)
  rc=$?
  CHECKS=$((CHECKS + 1))
  [ $rc -eq 0 ] || fail "README example $name exited $rc: $(cat err.txt)"
  diff expected.txt got.txt > diff.txt || fail "README example $name printed other output: $(cat diff.txt)"
  rm -f cmd.sh expected.txt
done
check_eq "$n" 3 "number of README examples"
# The two set-up commands are documented.
grep -q "make demo" "$readme" && grep -q "make test" "$readme" || fail "README lacks make demo / make test"
# Every tool and pipeline has a line in the README.
for src in "$ATTNKIT_SRC"/tools/*.cpp "$ATTNKIT_SRC"/pipelines/*.sh; do
  t=$(basename "$src"); t=${t%.cpp}
  [ "$t" = lib.sh ] && continue  # the pipelines' shared set-up, not a pipeline
  CHECKS=$((CHECKS + 1))
  grep -q -- "$t" "$readme" || fail "README does not mention $t"
done
# The layout section names every folder of the library, and every model family's folder.
sed -n '/^## Layout$/,/^## /p' "$readme" > layout.txt
for d in "$ATTNKIT_SRC"/lib/attnkit/*/; do
  name=$(basename "$d")
  CHECKS=$((CHECKS + 1))
  grep -q -- "$name/" layout.txt || fail "the README's layout does not name lib/attnkit/$name/"
done
for d in "$ATTNKIT_SRC"/lib/attnkit/models/*/ "$ATTNKIT_SRC"/lib/attnkit/memory/*/; do
  [ -d "$d" ] || continue
  name=$(basename "$d")
  CHECKS=$((CHECKS + 1))
  grep -qw -- "$name" layout.txt || fail "the README's layout does not name the family folder $name"
done
finish
