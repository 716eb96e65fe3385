#!/usr/bin/env bash
# Pointer networks find planar convex hulls (Vinyals, Fortunato & Jaitly 2015, Table 1): a
# model trained on 5 to 10 points uniform in the unit square (ptrtask-gen: the exact hull,
# counter-clockwise from the lowest index and closed; ptr-train: 200,000 problems, 15 epochs,
# 128 units, masking, the learning rate 2e-3 warmed up over 2,000 steps, then a cosine
# down to 0 at the last step) is tested on 1,000 fresh problems each of 5, 10, 20 and 50
# points (ptr-run --eval: exact hulls, valid polygons, and the area of the output polygon
# over the hull's). Draws 8 hulls of 10 points against the exact ones (hulls.png).
#
# Why: the hull is a subset of the input in an order; a pointer network outputs it directly,
# whatever the number of points.
# Claims checked (exit 1 when one fails; the paper, trained on 5-50 points: 92.0% at n = 5 and
# 87.0% at n = 10): exact hulls >= 90% at n = 5 and >= 80% at n = 10, area coverage >= 99% at
# both. n = 20 and 50 are reported without a bar (the model never saw them).
# Measured results (dates, loads, earlier recipes): doc/experiments/ptrnet-hull.md.
# With --quick (a smoke run: 2,000 problems, 1 epoch, 32 units) only the table's shape is
# checked.
#   pipelines/ptrnet-hull.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ptrtask-gen ptr-train ptr-run

if [ "$quick" = 1 ]; then
  count=2000 epochs=1 size="--hidden 32 --embed 16" tcount=50
else
  count=200000 epochs=15 tcount=1000
  size="--lr 0.002 --schedule cosine --warmup 2000"
fi
work_dir

ptrtask-gen --task hull --len-min 5 --len-max 10 --count $count --seed "$seed" -o "$dir/train.txt"
ptrtask-gen --task hull --len-min 5 --len-max 10 --count 1000 --seed $((seed + 1)) -o "$dir/valid.txt"
: > "$dir/test.txt"
for n in 5 10 20 50; do
  ptrtask-gen --task hull --n $n --count $tcount --seed $((seed + 100 + n)) -o "$dir/test-$n.txt"
  cat "$dir/test-$n.txt" >> "$dir/test.txt"
done
# shellcheck disable=SC2086
ptr-train --task hull -i "$dir/train.txt" --valid "$dir/valid.txt" --epochs $epochs $size \
  --seed "$seed" --log "$dir/train.tsv" -q -o "$dir/hull.akm"
ptr-run --model "$dir/hull.akm" -i "$dir/test.txt" --eval | tee "$dir/table.tsv"
ptr-run --model "$dir/hull.akm" -i "$dir/test-10.txt" --draw "$dir/hulls.png" -o /dev/null
echo "$PIPELINE: 8 hulls of 10 points against the exact ones: $dir/hulls.png" >&2

awk -F'\t' -v quick="$quick" '
  NR > 1 { rows++; e[$1] = $3; cov[$1] = $5 }
  END {
    if (rows != 5) { print "claim failed: the table has " rows " rows, not 5 (n = 5, 10, 20, 50, all)"; exit 1 }
    if (quick) { print "checked (smoke): 5 rows"; exit 0 }
    if (e[5] < 0.90) { printf "claim failed: exact hulls at n = 5 %.3f < 0.90\n", e[5]; bad++ }
    if (e[10] < 0.80) { printf "claim failed: exact hulls at n = 10 %.3f < 0.80\n", e[10]; bad++ }
    if (cov[5] < 0.99 || cov[10] < 0.99) { printf "claim failed: area coverage %.4f (n = 5), %.4f (n = 10) < 0.99\n", cov[5], cov[10]; bad++ }
    if (bad) exit 1
    printf "checked: exact hulls %.3f >= 0.90 at n = 5, %.3f >= 0.80 at n = 10; coverage %.4f, %.4f >= 0.99; n = 20: %.3f, n = 50: %.3f (not claimed)\n", e[5], e[10], cov[5], cov[10], e[20], e[50]
  }' "$dir/table.tsv" >&2
