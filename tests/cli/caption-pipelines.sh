#!/usr/bin/env bash
# labels: pipeline
# The Show-Attend-Tell pipeline's --quick form: four models (soft, none, soft-l0, hard) trained
# and scored, the figures drawn; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "skipped: Fashion-MNIST is not installed (make deps)"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/show-attend-tell.sh" --quick --seed 2 --keep sat
check_eq "$(cut -f1 sat/table.tsv | tr '\n' ' ')" "model soft none soft-l0 hard " "table rows"
check_eq "$(awk -F'\t' 'NR > 1 { print $2, $4 }' sat/table.tsv | sort -u)" "64 $(cut -f2 sat/test.tsv | tr ' ' '\n' | grep -c '^[0-3]$')" "images and nouns"
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
CHECKS=$((CHECKS + 1)); [ -s sat/figure.png ] && [ -s sat/figure-hard.png ] || fail "no figures"
check_eq "$(wc -l < sat/captions.txt)" 64 "a caption a test scene"
expect 0 "$ATTNKIT_SRC/pipelines/show-attend-tell.sh" --help
expect 2 "$ATTNKIT_SRC/pipelines/show-attend-tell.sh" --bogus
finish
