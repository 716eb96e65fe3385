#!/usr/bin/env bash
# labels: pipeline
# The Show-Attend-Tell pipelines' --quick forms: three models (soft, none, soft-l0) trained and
# scored, then soft and hard, the figures drawn; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "skipped: Fashion-MNIST is not installed (make deps)"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/show-attend-tell.sh" --quick --seed 2 --keep sat
check_eq "$(cut -f1 sat/table.tsv | tr '\n' ' ')" "model soft none soft-l0 " "table rows"
check_eq "$(awk -F'\t' 'NR > 1 { print $2, $4 }' sat/table.tsv | sort -u)" "64 $(cut -f2 sat/test.tsv | tr ' ' '\n' | grep -c '^[0-3]$')" "images and nouns"
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s sat/figure.png ] || fail "no figure"
check_eq "$(wc -l < sat/captions.txt)" 64 "a caption a test scene"
expect 0 "$ATTNKIT_SRC/pipelines/show-attend-tell-hard.sh" --quick --seed 2 --keep hard
check_eq "$(cut -f1 hard/table.tsv | tr '\n' ' ')" "model soft hard " "hard table rows"
grep -q "^checked (smoke): 2 rows" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s hard/figure-hard.png ] || fail "no hard figure"
for p in show-attend-tell show-attend-tell-hard; do
  expect 0 "$ATTNKIT_SRC/pipelines/$p.sh" --help
  expect 2 "$ATTNKIT_SRC/pipelines/$p.sh" --bogus
done
finish
