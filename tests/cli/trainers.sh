#!/usr/bin/env bash
# labels: text
# One flag vocabulary for every trainer (tools that include cli/training.h): each --help
# carries the shared options, each man page the shared TRAINING section, and each tool's code
# after parse() stays thin (at most 40 lines: the work is in the library's training modules).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
trainers=$(grep -l 'cli/training.h' "$ATTNKIT_SRC"/tools/*.cpp | xargs -n1 basename | sed 's/\.cpp$//')
check_eq "$(echo "$trainers" | grep -c .)" "$(echo "$trainers" | grep -c -- '-train$\|-pretrain$')" "trainers are named *-train"
for t in $trainers; do
  expect 0 "$t" --help
  for f in --batch-size --lr --clip --checkpoint --checkpoint-every --resume --log --log-every \
           --seed --threads --config --dump-config --quiet; do
    CHECKS=$((CHECKS + 1))
    grep -q -- "$f\b" "$T/out" || fail "$t --help lacks $f"
  done
  CHECKS=$((CHECKS + 1))
  grep -q -- '--epochs\b\|--steps\b' "$T/out" || fail "$t --help has neither --epochs nor --steps"
  CHECKS=$((CHECKS + 1))
  grep -q '^\.SH TRAINING' "$ATTNKIT_SRC/man/man1/$t.1" || fail "man page of $t lacks the TRAINING section"
  # Lines of code after app.parse() (blank lines and comments not counted).
  n=$(awk '/app\.parse\(\);/ { f = 1; next } f && !/^[[:space:]]*(\/\/|$)/' "$ATTNKIT_SRC/tools/$t.cpp" | wc -l)
  CHECKS=$((CHECKS + 1))
  [ "$n" -le 40 ] || fail "$t has $n lines after parse() (at most 40)"
done
finish
