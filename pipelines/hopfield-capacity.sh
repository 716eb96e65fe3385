#!/usr/bin/env bash
# The capacity of the Hebb rule (Amit, Gutfreund and Sompolinsky 1985): random patterns are
# recalled up to alpha = P/N of about 0.138, and beyond it recall collapses.
#
# For alpha = 0.02, 0.03, ..., 0.25 the script stores P = round(alpha N) random patterns of
# N neurons (tensor-rand, hopfield-store), recalls from the stored patterns themselves
# (hopfield-recall), and prints a TSV on standard output:
#   alpha  P  one_step_error  theory  final_error  fixed
# one_step_error: fraction of bits wrong after one synchronous step; theory: its value for
# large N, Phi(-sqrt((N-1)/(P-1))); final_error: fraction of bits wrong after asynchronous
# updates converge; fixed: fraction of patterns that are exact fixed points. With gnuplot
# installed it also draws capacity.png (in --keep DIR, else the current folder).
#
# The script checks the claims (one-step error near theory; small final error up to
# alpha = 0.1, a collapse above 0.17) and exits 1 when one fails.
#   pipelines/hopfield-capacity.sh [--quick] [--seed S] [--keep DIR]
# --quick: N = 200 instead of 1000 (seconds). Needs the attnkit tools (ATTNKIT_BIN or build/bin).
set -euo pipefail
export LC_ALL=C
. "$(dirname "$0")/lib.sh"
pipeline_args "$@"
need_tools tensor-rand hopfield-store hopfield-recall
if [ "$quick" = 1 ]; then n=200; else n=1000; fi
work_dir

# errors FILE PATTERNS: "bits_wrong_fraction fraction_of_rows_without_error"
errors() {
  paste -d' ' "$1" "$2" | awk '{ n = NF / 2; d = 0; for (i = 1; i <= n; i++) d += $i != $(i + n)
      bad += d; bits += n; rows++; if (d == 0) ok++ }
    END { printf "%.6f %.4f\n", bad / bits, ok / rows }'
}

printf 'alpha\tP\tone_step_error\ttheory\tfinal_error\tfixed\n' >"$dir/capacity.tsv"
for a in $(seq 2 25); do
  alpha=$(awk -v a="$a" 'BEGIN { printf "%.2f", a / 100 }')
  p=$(awk -v a="$a" -v n="$n" 'BEGIN { printf "%d", a * n / 100 + 0.5 }')
  tensor-rand --shape "$p,$n" --dist sign --seed $((seed * 1000 + a)) -o "$dir/p.txt"
  hopfield-store -q -i "$dir/p.txt" -o "$dir/net.npz"
  hopfield-recall -q -m "$dir/net.npz" -i "$dir/p.txt" --mode sync --max-steps 1 -o "$dir/one.txt"
  hopfield-recall -q -m "$dir/net.npz" -i "$dir/p.txt" --seed "$seed" -o "$dir/final.txt"
  read -r one fixed < <(errors "$dir/one.txt" "$dir/p.txt")
  read -r fin _ < <(errors "$dir/final.txt" "$dir/p.txt")
  # Phi(-x) by Abramowitz and Stegun 26.2.17 (error < 7.5e-8).
  theory=$(awk -v n="$n" -v p="$p" 'BEGIN { x = sqrt((n - 1) / (p - 1)); t = 1 / (1 + 0.2316419 * x)
    s = t * (0.319381530 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))))
    printf "%.6f", exp(-x * x / 2) / sqrt(2 * 3.141592653589793) * s }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$alpha" "$p" "$one" "$theory" "$fin" "$fixed" >>"$dir/capacity.tsv"
done
cat "$dir/capacity.tsv"
echo "Look at final_error: below 1-2% up to alpha ~ 0.13, then jumping to tens of percent" \
  "past alpha_c ~ 0.138 (the collapse), while one_step_error follows theory smoothly." >&2

if command -v gnuplot >/dev/null; then
  png=${keep:-.}/capacity.png
  gnuplot -e "set terminal png size 800,500; set output '$png'; set key left top;
    set xlabel 'alpha = P/N'; set ylabel 'fraction of bits wrong'; set arrow from 0.138,0 to 0.138,0.5 nohead dt 2;
    plot '$dir/capacity.tsv' using 1:3 skip 1 with points title 'one step', '' using 1:4 skip 1 with lines title 'theory',
         '' using 1:5 skip 1 with linespoints title 'after convergence (N = $n)'" && echo "plot: $png" >&2
fi

awk -F'\t' -v n="$n" '
  NR == 1 { next }
  {
    a = $1 + 0; bits = $2 * n
    # One-step error near theory: 5 binomial sigma + 25% (the bits of one run are not
    # independent: they share the patterns) + 2 bits.
    sd = sqrt($4 * (1 - $4) / bits); tol = 5 * sd + 0.25 * $4 + 2 / bits
    if ($3 > $4 + tol || $3 < $4 - tol) { printf "claim failed: one-step error %s vs theory %s at alpha %s\n", $3, $4, $1; bad++ }
    if (a <= 0.10 && $5 > 0.02) { printf "claim failed: final error %s at alpha %s (want < 2%%)\n", $5, $1; bad++ }
    if (a <= 0.05 && $6 < 0.8) { printf "claim failed: only %s of the patterns are fixed points at alpha %s\n", $6, $1; bad++ }
    if (a >= 0.18) { hi++; hisum += $5 }
  }
  END {
    if (hisum / hi < 0.10) { printf "claim failed: no collapse: mean final error %.4f for alpha >= 0.18\n", hisum / hi; bad++ }
    if (bad) exit 1
    printf "checked: one-step error near theory (5 sigma + 25%%); final error < 2%% up to alpha 0.10; mean final error %.3f for alpha >= 0.18 (collapse)\n", hisum / hi
  }' "$dir/capacity.tsv" >&2
