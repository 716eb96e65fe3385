#!/usr/bin/env bash
# labels: text
# One flag vocabulary for every trainer (tools that include cli/training.h): each --help
# carries the shared options, and each man page the shared TRAINING section (tools-thin.sh
# checks that every tool, the trainers included, stays thin).
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
done
finish
