#!/usr/bin/env bash
# labels: pipeline
# cost: 40
# The Brown genre pipeline's --quick form (skipped, exit 77, when make data has not installed
# the corpus's documents): the fixed split, every model trains, the table has its rows; the
# usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
pipeline_usage_ok "$ATTNKIT_SRC/pipelines/han-brown.sh" "Hierarchical attention on genres"
. "$ATTNKIT_SRC/pipelines/lib.sh" 2>/dev/null
if [ ! -s "$(brown_dir)/documents.tsv" ]; then
  echo "skipped: the Brown corpus's documents are not installed ($(brown_dir); run 'make data')"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/han-brown.sh" --quick --seed 2 --keep brown
check_eq "$(cut -f1 brown/table.tsv | tr '\n' ' ')" "model majority han flat mean ngram-lr " "table rows"
check_eq "$(wc -l < brown/train.tsv) $(wc -l < brown/test.tsv)" "400 100" "the split's sizes"
check_eq "$(cut -f1 brown/test.tsv | sort -u | wc -l)" 15 "every genre in the test set"
check_eq "$(cut -f2- brown/train.tsv brown/test.tsv | sort | uniq -d | wc -l)" 0 "no document in both halves"
grep -q "^checked: 5 rows" "$T/err" || fail "no table check: $(tail -3 "$T/err")"
finish
