#!/usr/bin/env bash
# labels: pipeline
# pipelines/translate-fra.sh --quick: the fra recipe end to end on fra-small (both models
# trained, every held-out line translated, BLEU scored).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 bash "$ATTNKIT_SRC/pipelines/translate-fra.sh" --quick
check_eq "$(grep -c 'corpus BLEU on the held-out pairs' "$T/out")" 2 "two BLEU scores"
grep -q '== 1800 training pairs, 200 held-out pairs' "$T/out" || fail "split: $(grep '^==' "$T/out" | head -1)"
if command -v gnuplot >/dev/null; then
  CHECKS=$((CHECKS + 1)); [ -s translate-fra-learning-curve.png ] || fail "no learning curve"
fi
finish
