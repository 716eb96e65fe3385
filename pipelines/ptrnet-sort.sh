#!/usr/bin/env bash
# Pointer networks sort numbers (Vinyals, Fortunato & Jaitly 2015; the textbook's section on
# pointer networks): a model trained on 5 numbers uniform in [0, 1) (ptrtask-gen, ptr-train:
# 50,000 problems, 5 epochs, the default model of 128 units and masking) is tested on 1,000
# fresh problems each of 5, 10 and 15 numbers (ptr-run --eval: the share in exact order).
# Draws the pointer distributions of one 5-number problem (attn-plot: pointer.png).
#
# Why: the output is a permutation of the input, a dictionary as large as the input; the
# attention over the input is the output itself, so the model is the same for any n.
# Claim checked (exit 1 when it fails): exact order >= 90% at n = 5. The 10- and 15-number
# results are reported without a bar (the model never saw them).
# Measured results (dates, loads, earlier recipes): doc/experiments/ptrnet-sort.md.
# With --quick (a smoke run: 1,000 problems, 1 epoch, 32 units) only the table's shape is
# checked.
#   pipelines/ptrnet-sort.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ptrtask-gen ptr-train ptr-run attn-plot

if [ "$quick" = 1 ]; then
  count=1000 epochs=1 tcount=100 size="--hidden 32 --embed 16"
else
  count=50000 epochs=5 tcount=1000 size=""
fi
work_dir

ptrtask-gen --task sort --n 5 --count $count --seed "$seed" -o "$dir/train.txt"
ptrtask-gen --task sort --n 5 --count 1000 --seed $((seed + 1)) -o "$dir/valid.txt"
: > "$dir/test.txt"
for n in 5 10 15; do
  ptrtask-gen --task sort --n $n --count $tcount --seed $((seed + 100 + n)) >> "$dir/test.txt"
done
# shellcheck disable=SC2086
ptr-train --task sort -i "$dir/train.txt" --valid "$dir/valid.txt" --epochs $epochs $size \
  --seed "$seed" --log "$dir/train.tsv" -q -o "$dir/sort.akm"
ptr-run --model "$dir/sort.akm" -i "$dir/test.txt" --eval | tee "$dir/table.tsv"
head -1 "$dir/test.txt" > "$dir/one.txt"
ptr-run --model "$dir/sort.akm" -i "$dir/one.txt" --alignments "$dir/pointer.npz" -o /dev/null
# Labelled axes: a row per output step (the last one points to the end), a column per input
# number after column 0, the end.
{ echo end; awk '{ for (i = 1; $i != "output"; i++) print $i }' "$dir/one.txt"; } > "$dir/cols.txt"
awk '{ for (i = 1; $i != "output"; i++) n++; for (k = 1; k <= n + 1; k++) print "output " k }' \
  "$dir/one.txt" > "$dir/rows.txt"
attn-plot -i "$dir/pointer.npz:s0" --rows "$dir/rows.txt" --cols "$dir/cols.txt" \
  --title "pointers: rows output steps, columns the end, then the inputs" \
  -o "$dir/pointer.png" 2>/dev/null || true
[ -s "$dir/pointer.png" ] && echo "$PIPELINE: the pointer distributions of one problem: $dir/pointer.png" >&2

awk -F'\t' -v quick="$quick" '
  NR > 1 { e[$1] = $3; v[$1] = $4; n++ }
  END {
    if (n != 4) { print "claim failed: the table has " n " rows, not 4 (n = 5, 10, 15, all)"; exit 1 }
    if (quick) { print "checked (smoke): 4 rows"; exit 0 }
    if (e[5] < 0.90) { printf "claim failed: exact order at n = 5 %.3f < 0.90\n", e[5]; exit 1 }
    printf "checked: exact order at n = 5 %.3f >= 0.90 (n = 10: %.3f, n = 15: %.3f, not claimed)\n", e[5], e[10], e[15]
  }' "$dir/table.tsv" >&2
