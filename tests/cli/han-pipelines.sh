#!/usr/bin/env bash
# labels: pipeline
# cost: 60
# The hierarchical-attention pipeline's --quick form on the fine-food reviews (skipped, exit
# 77, when make data has not installed them): word2vec and every model train, the table has
# its rows, five reviews are drawn; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
pipeline_usage_ok "$ATTNKIT_SRC/pipelines/han-reviews.sh" "Hierarchical attention"
. "$ATTNKIT_SRC/pipelines/lib.sh" 2>/dev/null
if [ ! -s "$(reviews_dir)/train.tsv" ]; then
  echo "skipped: the fine-food reviews are not installed ($(reviews_dir); run 'make data')"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/han-reviews.sh" --quick --seed 2 --keep rev
check_eq "$(cut -f1 rev/table.tsv | tr '\n' ' ')" "model majority han flat mean ngram-lr han-w2v flat-w2v mean-w2v " "table rows"
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s rev/fig5.png ] || fail "no Figure 5 PNG"
check_eq "$(grep -c 'class="doc"' rev/fig5.html)" 5 "five reviews drawn"
finish
