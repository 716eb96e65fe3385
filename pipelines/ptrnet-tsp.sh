#!/usr/bin/env bash
# Pointer networks on the travelling salesman (Vinyals, Fortunato & Jaitly 2015, Table 2): one
# model trained on tours of 5 to 10 points uniform in the unit square with exact labels
# (ptrtask-gen: Held-Karp; ptr-train: 150,000 problems, 8 epochs, 128 units, masking),
# tested on fresh problems of 5 and 10 points (1,000 each), 15 (200) and 20 (100), greedy
# and beam 4 (ptr-run --eval: the mean tour against the optimum of the same problems and the
# nearest-neighbour heuristic's). Draws 8 tours of 10 points against the optimal ones
# (tours.png).
#
# Why: the attention over the input is the output, so one model serves every n; masking
# makes every output a tour, and what is learned is which tour.
# Claims checked (exit 1 when one fails; the paper: 2.12 against 2.12 at n = 5, 2.88 against
# 2.87 at n = 10): greedy tours within 0.5% of the optimum at n = 5 and 2.8% at n = 10, and
# below the nearest-neighbour heuristic at n = 10; every output a tour. n = 15 and 20 are
# reported without a bar.
# Measured results (dates, loads, earlier recipes): doc/experiments/ptrnet-tsp.md.
# With --quick (a smoke run: 2,000 problems, 1 epoch, 32 units) only the tables' shapes are
# checked.
#   pipelines/ptrnet-tsp.sh [--quick] [--seed S] [--keep DIR]
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools ptrtask-gen ptr-train ptr-run

if [ "$quick" = 1 ]; then
  count=2000 epochs=1 size="--hidden 32 --embed 16" tests="5:50 10:50 15:5 20:2"
else
  count=150000 epochs=8 size="" tests="5:1000 10:1000 15:200 20:100"
fi
work_dir

ptrtask-gen --task tsp --len-min 5 --len-max 10 --count $count --seed "$seed" -q -o "$dir/train.txt"
ptrtask-gen --task tsp --n 10 --count 1000 --seed $((seed + 1)) -q -o "$dir/valid.txt"
: > "$dir/test.txt"
for t in $tests; do
  ptrtask-gen --task tsp --n "${t%:*}" --count "${t#*:}" --seed $((seed + 100 + ${t%:*})) -q -o "$dir/test-${t%:*}.txt"
  cat "$dir/test-${t%:*}.txt" >> "$dir/test.txt"
done
# shellcheck disable=SC2086
ptr-train --task tsp -i "$dir/train.txt" --valid "$dir/valid.txt" --epochs $epochs $size \
  --seed "$seed" --log "$dir/train.tsv" -q -o "$dir/tsp.akm"
echo "greedy:"
ptr-run --model "$dir/tsp.akm" -i "$dir/test.txt" --eval | tee "$dir/table.tsv"
echo "beam 4:"
ptr-run --model "$dir/tsp.akm" -i "$dir/test.txt" --eval --beam 4 | tee "$dir/table-beam4.tsv"
ptr-run --model "$dir/tsp.akm" -i "$dir/test-10.txt" --draw "$dir/tours.png" -o /dev/null
echo "$PIPELINE: 8 tours of the test set against the optimal ones: $dir/tours.png" >&2

awk -F'\t' -v quick="$quick" '
  FNR == 1 { f++; next }
  f == 1 { rows++; valid[$1] = $4; gap[$1] = $7; tour[$1] = $5; nn[$1] = $8 }
  f == 2 { rows2++; bvalid[$1] = $4 }
  END {
    if (rows != 5 || rows2 != 5) { print "claim failed: the tables have " rows " and " rows2 " rows, not 5 (n = 5, 10, 15, 20, all)"; exit 1 }
    if (quick) { print "checked (smoke): 5 rows each"; exit 0 }
    if (valid["all"] < 1 || bvalid["all"] < 1) { print "claim failed: an output that is not a tour"; bad++ }
    if (gap[5] > 0.5) { printf "claim failed: n = 5 gap %.2f%% > 0.5%%\n", gap[5]; bad++ }
    if (gap[10] > 2.8) { printf "claim failed: n = 10 gap %.2f%% > 2.8%%\n", gap[10]; bad++ }
    if (tour[10] >= nn[10]) { printf "claim failed: n = 10 tour %.4f not below the nearest neighbour %.4f\n", tour[10], nn[10]; bad++ }
    if (bad) exit 1
    printf "checked: gap %.2f%% <= 0.5%% at n = 5 and %.2f%% <= 2.8%% at n = 10 (tour %.3f, nearest neighbour %.3f); n = 15: %.2f%%, n = 20: %.2f%% (not claimed); every output a tour\n", gap[5], gap[10], tour[10], nn[10], gap[15], gap[20]
  }' "$dir/table.tsv" "$dir/table-beam4.tsv" >&2
