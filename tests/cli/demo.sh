#!/usr/bin/env bash
# labels: pipeline
# make demo's script runs and shows what it says it shows.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 bash "$ATTNKIT_SRC/pipelines/demo.sh" --quick
grep -q "Self-attention of positional encodings" "$T/out" || fail "demo: no attention section"
grep -q "^1024	" "$T/out" || fail "demo: no exercise 8-2 table"
# The picture has one row per position, darkest on the diagonal.
check_eq "$(grep -c '^ *[0-9]* |.*|$' "$T/out")" 12 "demo picture rows"
row=$(grep -m1 '^ *5 |.*|$' "$T/out" | sed 's/.*|\(.*\)|/\1/')
check_eq "${row:10:2}" "##" "demo picture: position 5 darkest at column 5"
# The translation part: most unseen dates right, and the alignment picture written.
right=$(sed -n 's/.*exactly right: \([0-9]*\) of 200.*/\1/p' "$T/out")
CHECKS=$((CHECKS + 1))
[ "${right:-0}" -ge 120 ] || fail "demo: only ${right:-no} unseen dates right"
check_eq "$(head -c 4 demo-alignment.png | tail -c 3)" "PNG" "demo alignment picture"
if command -v gnuplot >/dev/null; then check_eq "$(head -c 4 demo-learning-curve.png | tail -c 3)" "PNG" "demo learning curve"; fi
finish
