#!/usr/bin/env bash
# labels: pipeline
# cost: 40
# The needle pipeline's --quick form on Brown sentences (skipped, exit 77, when make data has
# not installed the corpus): documents made, a HAN trained, its attention read, the table and
# the pictures written; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
pipeline_usage_ok "$ATTNKIT_SRC/pipelines/han-needle.sh" "planted sentence"
. "$ATTNKIT_SRC/pipelines/lib.sh" 2>/dev/null
if [ ! -s "$(brown_dir)/sentences.txt" ]; then
  echo "skipped: the Brown corpus is not installed ($(brown_dir); run 'make data')"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/han-needle.sh" --quick --seed 2 --keep needle
check_eq "$(head -1 needle/table.tsv)" "$(printf 'documents\ttest_accuracy\tsentence_argmax_planted\tkey_word_argmax')" "table header"
check_eq "$(awk -F'\t' 'NR == 2 { print $1 }' needle/table.tsv)" 40 "40 test documents read"
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s needle/needle.png ] || fail "no picture"
check_eq "$(grep -c 'class="doc"' needle/needle.html)" 5 "five documents drawn"
finish
