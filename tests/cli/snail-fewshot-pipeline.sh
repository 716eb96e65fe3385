#!/usr/bin/env bash
# labels: pipeline
# cost: 52
# pipelines/snail-fewshot.sh: its smoke form on Fashion-MNIST (skipped when Debian's
# dataset-fashion-mnist is absent), its usage and its message without the data set.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
pipeline_usage_ok "$ATTNKIT_SRC/pipelines/snail-fewshot.sh" "few-shot"
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIPPED: no Fashion-MNIST (the Debian package dataset-fashion-mnist; make deps installs it)"
  exit 77
fi
expect 0 "$ATTNKIT_SRC/pipelines/snail-fewshot.sh" --quick --seed 2 --keep k
grep -q "^checked (smoke)" "$T/err" || fail "snail-fewshot.sh --quick: $(tail -3 "$T/err")"
check_eq "$(cut -f1 k/table.tsv | tr '\n' ' ')" "agent snail embed-nn pixel-nn chance " "agents"
finish
