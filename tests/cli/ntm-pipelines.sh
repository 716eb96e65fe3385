#!/usr/bin/env bash
# labels: pipeline
# The NTM pipelines in their --quick form: each trains a small model, checks its own claims
# and draws the head traces.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
for p in ntm-copy ntm-repeat-copy ntm-assoc-recall; do
  expect 0 "$ATTNKIT_SRC/pipelines/$p.sh" --quick --keep "$T/$p"
  for f in write.png read.png; do
    CHECKS=$((CHECKS + 1))
    [ -s "$T/$p/$f" ] || fail "$p: no $f"
  done
  check_eq "$(wc -l <"$T/out")" 2 "$p: header and one row"
done
expect 0 "$ATTNKIT_SRC/pipelines/ntm-stability.sh" --quick --keep "$T/st"
check_eq "$(cut -f1 "$T/out" | paste -sd,)" "sequences,1000,2000" "stability: median curve rows"
check_eq "$(grep -c 'below 1 bit' "$T/err")" 2 "stability: one line per seed"
check_eq "$(grep -c 'wrong bits at length 8, 12: 0' "$T/err")" 2 "stability: each seed's model evaluated"
check_eq "$(awk -F'\t' 'NR > 1 && $3 + 0 > 0 && NF == 5' "$T/st/seeds.tsv" | wc -l)" 2 "stability: seeds.tsv"
expect 0 "$ATTNKIT_SRC/pipelines/ntm-copy.sh" --help
grep -q "Graves" "$T/out" || fail "ntm-copy --help"
expect_err 2 "ntm-copy.sh: unknown argument '--fast'" "$ATTNKIT_SRC/pipelines/ntm-copy.sh" --fast
finish
