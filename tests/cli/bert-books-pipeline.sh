#!/usr/bin/env bash
# labels: pipeline
# cost: 30
# pipelines/bert-books.sh --quick (20 documents of Brown and 20 chapters of Austen; skipped,
# exit 77, when make data has not installed them): the held-out documents, both runs train,
# the evaluation and masking columns are there, bert-fill prints its ten examples; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
pipeline_usage_ok "$ATTNKIT_SRC/pipelines/bert-books.sh" "Jane Austen"
. "$ATTNKIT_SRC/pipelines/lib.sh" 2>/dev/null
if [ ! -s "$(brown_dir)/documents.tsv" ] || [ ! -s "$(austen_dir)/novels.txt" ]; then
  echo "skipped: the Brown corpus's documents or Austen's novels are not installed (run 'make data')"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/bert-books.sh" --quick --seed 2 --keep b
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
# 40 documents, the 20th and the 40th held out: one sentence a line, a blank line between.
check_eq "$(($(grep -c '^$' b/train.txt) + 1)) $(($(grep -c '^$' b/valid.txt) + 1))" "38 2" "documents trained on and held out"
check_eq "$(grep -c '^bert-fill: .* -> ' "$T/err")" 10 "ten bert-fill examples"
check_eq "$(awk -F'\t' 'NR > 1' b/fill.tsv | wc -l)" 30 "three words for each example's [MASK]"
check_eq "$(wc -l < b/d2l.tsv)" 6 "a log row for each of the d2l run's 5 steps"
grep -q "^measured: held-out MLM accuracy .* (unigram baseline " "$T/err" || fail "no held-out figures"
finish
