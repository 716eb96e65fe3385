#!/usr/bin/env bash
# labels: pipeline
# pipelines/translate-sharded.sh --quick: a model trained, 100 sentences translated as 3
# slices by GNU parallel (greedy and beam 4), merged and found equal to one whole run; then
# the kept model reused with --model and other slice counts; its usage errors.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
command -v parallel >/dev/null || { echo "GNU parallel not installed: skipped"; exit 77; }
P="$ATTNKIT_SRC/pipelines/translate-sharded.sh"
expect 0 bash "$P" --quick --keep k
check_eq "$(grep -c 'the 3 slices merged (100 lines) equal the whole run' "$T/out")" 2 "both beams merged equal"
check_eq "$(wc -l <k/translations.txt)" 100 "the merged translations"
expect 0 bash "$P" --quick --model k/model.akm --shards 7 --jobs 2
check_eq "$(grep -c 'the 7 slices merged (100 lines) equal the whole run' "$T/out")" 2 "7 slices"
grep -q '== training' "$T/out" && fail "--model still trained a model"
expect 0 bash "$P" --help
grep -q "translate-sharded.sh \[--quick\]" "$T/out" || fail "--help: no usage line"
expect_err 2 "--shards needs a number" bash "$P" --quick --shards 0
expect_err 2 "--model needs a value" bash "$P" --model
expect_err 1 "cannot read nothing.akm" bash "$P" --quick --model nothing.akm
finish
