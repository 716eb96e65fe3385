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
# Measured with this recipe (2026-11-25 evening, the 2-core machine): seed 1: 1,095 s wall
# (18.2 min; 15.4 min of CPU; load 2-6 from a test run), exact hulls 91.6% at n = 5, 82.2% at
# 10, 57.1% at 20, 11.6% at 50; coverage 99.8%, 99.9%. Seed 41 (another training set): 1,310 s
# wall (21.8 min, 15.8 min of CPU, load 5-20 from other work), 92.0%, 83.8%, 59.5%, 14.3%;
# coverage 99.75%, 99.9%. Both bars met on both training sets. Again with ptr-train's 2
# slices of 64 a batch (4 of 32 before; another model: the sums split otherwise), seed 1,
# 2026-11-26: 3,334 s wall (55.6 min at a load of 4-14 from other work, niced; 15.6 min of
# CPU), exact hulls 91.2% at n = 5, 81.7% at 10, 57.4% at 20, 11.6% at 50; coverage 99.8%,
# 99.9%: both bars met (by 1.2 and 1.7 points); seed 41 not re-run.
# The previous recipe (the same, but the rate falling as 1/sqrt(step) after the warm-up) gave
# on seed 1 90.2% at n = 5 and 80.4% at 10 (both bars met by a hair), on seed 41 91.5% and
# 76.6% (the n = 10 bar not met).
# Why the cosine: the two schedules on seed 41's training set with the same shortened budget
# (3 epochs of the 200,000 problems, 4,689 steps, 1 thread, ~200 CPU-s each, run side by side
# under load 10-20): greedy exact hulls 86.0% / 68.2% / 38.8% at n = 5 / 10 / 20 with
# 1/sqrt(step), 88.1% / 73.7% / 43.4% with the cosine; valid polygons 99.1-99.9% at n = 5 and
# 10 for both, so the misses are valid polygons with a wrong vertex set, not broken outputs.
# Beam search does not help here: beam 4 gave 84.4% / 67.5% (1/sqrt) and 86.4% / 72.3%
# (cosine) at n = 5 / 10, below greedy, better only at n = 20 (40.7%, 46.6%): without length
# normalisation it favours the shorter output, a hull missing a vertex (cosine model, n = 10:
# beam 4's output shorter than greedy's on 45 of the 1,000 problems, longer on 6). So the
# pipeline decodes greedily. Not tried: --bidirectional at full length (after one epoch: 65.6%
# exact on the validation set against 63.4% without it), beam search with length
# normalisation.
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
