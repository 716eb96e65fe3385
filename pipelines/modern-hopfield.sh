#!/usr/bin/env bash
# Modern Hopfield networks (Ramsauer et al. 2020): the update xi <- softmax(beta xi X') X is
# softmax attention, and beta sets what it retrieves.
#
# Stores P = 16384 random patterns of d = 64 values -1/+1 (the rows of X), takes 100 of them,
# flips 10% of their bits (pattern-noise), and applies one update (hopfield-recall --modern)
# for beta = 1, 1/2, 1/4, 1/8. Prints a TSV on standard output:
#   beta  max_weight  exact  overlap  max_diff_attn
# max_weight: mean over probes of the largest softmax weight; exact: fraction of probes whose
# update equals their stored pattern (every value within 1e-3); overlap: mean of
# update . pattern / d; max_diff_attn: largest difference between the update and
# attn-score --score dot with the queries beta xi and X as keys and values.
# At beta = 1 one update retrieves the exact pattern (the weight sits on it); at beta = 1/8
# the weight spreads over thousands of patterns and the update is a metastable average, far
# from every pattern. The script checks this, and the equality with attention to 1e-5, and
# exits 1 when a claim fails.
#   pipelines/modern-hopfield.sh [--quick] [--seed S] [--keep DIR]
# --quick: 20 probes instead of 100. Needs the attnkit tools (ATTNKIT_BIN or build/bin).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools tensor-rand tensor-convert pattern-noise hopfield-recall attn-score
if [ "$quick" = 1 ]; then probes=20; else probes=100; fi
work_dir

tensor-rand --shape 16384,64 --dist sign --seed "$seed" -o "$dir/X.npy"
tensor-convert -i "$dir/X.npy" "$dir/X.txt"
head -n "$probes" "$dir/X.txt" >"$dir/targets.txt"
pattern-noise -q -i "$dir/targets.txt" --flip 0.1 --seed "$seed" -o "$dir/probes.txt"

printf 'beta\tmax_weight\texact\toverlap\tmax_diff_attn\n' >"$dir/modern.tsv"
for beta in 1 0.5 0.25 0.125; do
  hopfield-recall -q --modern --patterns "$dir/X.npy" --beta "$beta" -i "$dir/probes.txt" -o "$dir/out.txt"
  hopfield-recall -q --modern --patterns "$dir/X.npy" --beta "$beta" -i "$dir/probes.txt" \
    --emit weights -o "$dir/w.npy"
  awk -v b="$beta" '{ for (j = 1; j <= NF; j++) $j = b * $j; print }' "$dir/probes.txt" >"$dir/bq.txt"
  attn-score --score dot --query "$dir/bq.txt" --key "$dir/X.npy" --value "$dir/X.npy" >"$dir/attn.txt"
  attn-score --score dot --query "$dir/bq.txt" --key "$dir/X.npy" -o "$dir/aw.npy"
  maxw=$(tensor-convert -i "$dir/w.npy" - | awk '{ m = 0; for (j = 1; j <= NF; j++) if ($j > m) m = $j; s += m } END { printf "%.4f", s / NR }')
  diff=$(paste -d' ' "$dir/out.txt" "$dir/attn.txt" | awk '{ n = NF / 2; for (i = 1; i <= n; i++) { d = $i - $(i + n); if (d < 0) d = -d; if (d > m) m = d } } END { printf "%.2g", m }')
  read -r exact overlap < <(paste -d' ' "$dir/out.txt" "$dir/targets.txt" | awk '{ n = NF / 2; ok = 1; o = 0
      for (i = 1; i <= n; i++) { d = $i - $(i + n); if (d < 0) d = -d; if (d > 1e-3) ok = 0; o += $i * $(i + n) }
      ex += ok; ov += o / n } END { printf "%.4f %.4f\n", ex / NR, ov / NR }')
  printf '%s\t%s\t%s\t%s\t%s\n' "$beta" "$maxw" "$exact" "$overlap" "$diff" >>"$dir/modern.tsv"
done
cat "$dir/modern.tsv"
echo "Look at beta = 1: weight ~1 on one pattern and exact retrieval in one update; at" \
  "beta = 1/8 the largest weight is a few percent and the update is an average near no pattern." >&2
awk -F'\t' 'NR == 1 { next }
  { if ($5 > 1e-5) { printf "claim failed: update differs from attn-score by %s at beta %s\n", $5, $1; bad++ } }
  $1 == 1 { if ($3 < 1) { printf "claim failed: beta = 1 retrieved only %s of the probes exactly\n", $3; bad++ } }
  $1 == 0.125 { if ($2 > 0.5 || $3 > 0 || $4 > 0.9) { printf "claim failed: beta = 1/8 is not metastable (max weight %s, exact %s, overlap %s)\n", $2, $3, $4; bad++ } }
  END { if (bad) exit 1
    print "checked: beta = 1 exact in one update; beta = 1/8 a metastable average; the update equals attn-score (dot, beta-scaled queries) to 1e-5" }' \
  "$dir/modern.tsv" >&2
