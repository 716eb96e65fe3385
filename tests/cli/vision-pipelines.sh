#!/usr/bin/env bash
# labels: pipeline
# pipelines/same-different.sh --quick (needs Fashion-MNIST; skipped when absent): the table's
# rows, the parameter check, the smoke verdict; the usage.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
pipeline_usage_ok "$ATTNKIT_SRC/pipelines/same-different.sh" "opposite corners"
if [ ! -f /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ]; then
  echo "SKIPPED: the rest needs Fashion-MNIST (the Debian package dataset-fashion-mnist; make deps)"
  finish
fi
expect 0 "$ATTNKIT_SRC/pipelines/same-different.sh" --quick --seed 2 --keep sd
check_eq "$(cut -f1,2 sd/table.tsv | tr '\t\n' ': ')" "task:model pairs:cnn pairs:cnn-sagan plain:cnn plain:cnn-sagan " "table rows"
grep -q "^parameters: cnn (16,32,35) 15070, cnn-sagan (16,32,32) 15515" "$T/err" || fail "parameter counts: $(head -3 "$T/err")"
grep -q "^checked (smoke)" "$T/err" || fail "no smoke check: $(tail -3 "$T/err")"
finish
