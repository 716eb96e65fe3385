#!/usr/bin/env bash
# labels: text
# Every tool stays thin: at most 40 lines of code after its app.parse() (blank lines and
# comments not counted), the work being in the library (its family's run or training
# functions) and the shared parsing and printing in lib/attnkit/cli/. Each tool calls
# app.parse() exactly once, so that the count covers its whole work.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
tools=$(ls "$ATTNKIT_SRC"/tools/*.cpp)
CHECKS=$((CHECKS + 1))
[ "$(echo "$tools" | grep -c .)" -ge 40 ] || fail "found only $(echo "$tools" | grep -c .) tools in tools/"
for f in $tools; do
  t=$(basename "$f" .cpp)
  CHECKS=$((CHECKS + 1))
  p=$(grep -c 'app\.parse();' "$f")
  [ "$p" -eq 1 ] || fail "$t calls app.parse() $p times (expected once)"
  n=$(awk '/app\.parse\(\);/ { f = 1; next } f && !/^[[:space:]]*(\/\/|$)/' "$f" | wc -l)
  CHECKS=$((CHECKS + 1))
  [ "$n" -le 40 ] || fail "$t has $n lines after parse() (at most 40)"
done
finish
