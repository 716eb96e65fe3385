#!/usr/bin/env bash
# labels: pipeline
# pipelines/bert-tiny.sh --quick (on the tiny bAbI fixtures of testdata/babi): both runs
# train, the evaluation and masking columns are there, bert-fill prints its examples, the
# learning curve is drawn; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 "$ATTNKIT_SRC/pipelines/bert-tiny.sh" --quick --seed 2 --keep b
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
check_eq "$(grep -c '^bert-fill: .* -> ' "$T/err")" 5 "five bert-fill examples"
check_eq "$(awk -F'\t' 'NR > 1' b/fill.tsv | wc -l)" 15 "three words for each example's [MASK]"
check_eq "$(wc -l < b/d2l.tsv)" 6 "a log row for each of the d2l run's 5 steps"
if command -v gnuplot >/dev/null; then CHECKS=$((CHECKS + 1)); [ -s b/curve.png ] || fail "no learning curve"; fi
expect 0 "$ATTNKIT_SRC/pipelines/bert-tiny.sh" --help
grep -q "bert-tiny.sh \[--quick\]" "$T/out" || fail "--help: no usage line"
expect 2 "$ATTNKIT_SRC/pipelines/bert-tiny.sh" --bogus
finish
