#!/usr/bin/env bash
# Exercise 8.2: why scaled dot-product attention divides the scores by sqrt(d_k).
#
# For d_k = 4, 16, 64, 256, 1024, draws queries q and keys k with independent unit-variance
# entries (tensor-rand), scores every query against every key with the plain dot product and
# with the scaled one (attn-score --score dot / scaled-dot), and prints a TSV on standard
# output:
#   d_k  var_dot  var_scaled  maxw_dot  maxw_scaled
# var_dot is the variance of q.k (theory: d_k), var_scaled that of q.k / sqrt(d_k) (theory:
# 1), maxw_* the mean over queries of the largest softmax weight of the row. Without scaling
# the scores spread like sqrt(d_k), softmax saturates and its largest weight approaches 1 (a
# near one-hot whose gradients vanish); with scaling it stays where it was at small d_k.
#
# The script checks those claims and exits 1 when one fails.
#   pipelines/exercise-8-2.sh [--quick] [--seed S] [--keep DIR]
# Needs tensor-rand and attn-score on PATH (or in ATTNKIT_BIN, or build/bin of this tree).
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools tensor-rand attn-score

# Queries and keys. The variance estimate's relative error is about sqrt(2/(n_q d_k) +
# 2/(n_k d_k)), ~5% at d_k = 4 with the full sizes, ~8% with --quick: 20% is a safe margin.
if [ "$quick" = 1 ]; then nq=128 nk=256; else nq=256 nk=1024; fi
dims="4 16 64 256 1024"

work_dir

printf 'd_k\tvar_dot\tvar_scaled\tmaxw_dot\tmaxw_scaled\n' >"$dir/result.tsv"
i=0
for d in $dims; do
  i=$((i + 1))
  tensor-rand --shape "$nq,$d" --dist normal --seed $((seed * 100 + 2 * i)) -o "$dir/q$d.txt"
  tensor-rand --shape "$nk,$d" --dist normal --seed $((seed * 100 + 2 * i + 1)) -o "$dir/k$d.txt"
  attn-score --query "$dir/q$d.txt" --key "$dir/k$d.txt" --score dot --emit scores >"$dir/dot$d.txt"
  attn-score --query "$dir/q$d.txt" --key "$dir/k$d.txt" --score scaled-dot --emit scores \
    >"$dir/scaled$d.txt"
  # Variance of all scores and the mean (over rows = queries) of the largest softmax weight,
  # 1 / sum_j exp(s_j - max s), for each file.
  awk -v d="$d" '
    FNR == 1 { f++ }
    NF > 0 {
      m = $1
      for (j = 1; j <= NF; j++) { x = $j; n[f]++; s[f] += x; ss[f] += x * x; if (x > m) m = x }
      z = 0
      for (j = 1; j <= NF; j++) z += exp($j - m)
      w[f] += 1 / z; rows[f]++
    }
    END {
      if (f != 2 || rows[1] == 0 || rows[2] == 0) { print "exercise-8-2.sh: no scores for d_k=" d > "/dev/stderr"; exit 1 }
      for (k = 1; k <= 2; k++) var[k] = (ss[k] - s[k] * s[k] / n[k]) / (n[k] - 1)
      printf "%d\t%.4f\t%.4f\t%.4f\t%.4f\n", d, var[1], var[2], w[1] / rows[1], w[2] / rows[2]
    }' "$dir/dot$d.txt" "$dir/scaled$d.txt" >>"$dir/result.tsv"
done
cat "$dir/result.tsv"

echo "Look at var_dot growing like d_k while var_scaled stays near 1, and at maxw_dot" \
  "climbing toward 1 (softmax saturating into a one-hot) while maxw_scaled stays flat." >&2

# The claims, checked.
awk -F '\t' '
  NR == 1 { next }
  {
    d = $1; r = $2 / d
    if (r < 0.8 || r > 1.2) { printf "claim failed: var_dot / d_k = %.3f at d_k=%d (want 1 +- 20%%)\n", r, d; bad++ }
    if ($3 < 0.8 || $3 > 1.2) { printf "claim failed: var_scaled = %.3f at d_k=%d (want 1 +- 20%%)\n", $3, d; bad++ }
    if (NR > 2 && $4 <= prev) { printf "claim failed: maxw_dot does not grow with d_k (%.4f at d_k=%d after %.4f)\n", $4, d, prev; bad++ }
    if ($5 > 0.25) { printf "claim failed: maxw_scaled = %.4f at d_k=%d (want a spread-out softmax, < 0.25)\n", $5, d; bad++ }
    prev = $4; last_d = d; last_dot = $4; last_scaled = $5
    if (NR == 2) first_scaled = $5
  }
  END {
    if (last_dot < 0.5) { printf "claim failed: maxw_dot = %.4f at d_k=%d (want saturation, > 0.5)\n", last_dot, last_d; bad++ }
    if (last_dot < 5 * last_scaled) { printf "claim failed: at d_k=%d scaling does not spread the softmax (%.4f vs %.4f)\n", last_d, last_dot, last_scaled; bad++ }
    if (last_scaled > 2 * first_scaled || first_scaled > 2 * last_scaled) { printf "claim failed: maxw_scaled moves with d_k (%.4f to %.4f)\n", first_scaled, last_scaled; bad++ }
    if (bad) exit 1
    print "checked: var_dot/d_k and var_scaled within 20% of 1; maxw_dot grows to saturation; maxw_scaled flat"
  }' "$dir/result.tsv" >&2
