#!/usr/bin/env bash
# Exercise 8.3: self-attention, convolution and recurrence compared as the sequence grows.
#
# For N = 256 ... 8192 positions of width d = 64, times one forward pass of each layer with
# layer-time (best of R passes): self-attention softmax(X X^T/sqrt d) X, a 1-D convolution
# with k = 3 taps and d channels, and an Elman RNN with d hidden units. Prints a TSV on
# standard output:
#   N  d  k  time_attention  time_conv  time_rnn  path_attention  path_conv  path_dilated  path_rnn
#   flops_attention  flops_conv  flops_rnn
# (seconds; path_* is the maximum path length between two positions, in layers or steps:
# 1, ceil((N-1)/(k-1)), ceil(log_k N) for dilated convolutions, N-1; flops_* the
# floating-point operations of the layer's matrix products, counted as they run). The
# theory: attention costs O(N^2 d) and conv and rnn O(N d^2), so attention is cheaper while N
# is below about k d, then grows quadratically; in exchange its path length stays 1.
#
# The script fits the growth exponent of each cost between the smallest and the largest N
# (slope on log-log axes) and exits 1 unless the counted operations grow like N^2 for
# attention and N for conv and rnn (within 0.05: they do not depend on the machine) and,
# in the full run only, the times near them too: attention 1.5 to 3.0, conv and rnn 0.5 to
# 1.6 (generous, as a loaded machine blurs timings; --quick reports them unchecked). With gnuplot
# installed, --plot FILE (or --keep DIR) draws the times on log-log axes as a PNG; without it
# the plot is skipped with a note.
#   pipelines/exercise-8-3.sh [--quick] [--dim D] [--repeat R] [--threads T] [--plot FILE]
#                             [--keep DIR] [--seed S]
# --quick: N = 256 ... 2048, a few seconds. --threads: default 1, so that thread start-up
# does not blur the growth at small N. --seed: of the random inputs and weights (default 1).
# Needs layer-time (ATTNKIT_BIN, else build/bin of this tree, else PATH).
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/lib.sh"
# This script's own options first; the shared ones (--quick, --keep, --help) to pipeline_args.
dim=64 kernel=3 repeat=5 threads=1 plot=
whole() { case $2 in ''|*[!0-9]*|0) echo "$PIPELINE: $1 needs a whole number >= 1" >&2; exit 2 ;; esac; }
rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --dim) dim=${2:?--dim needs a value}; whole --dim "$dim"; shift ;;
    --repeat) repeat=${2:?--repeat needs a value}; whole --repeat "$repeat"; shift ;;
    --threads) threads=${2:?--threads needs a value}; whole --threads "$threads"; shift ;;
    --plot) plot=${2:?--plot needs a file name}; shift ;;
    *) rest+=("$1") ;;
  esac
  shift
done
pipeline_args ${rest[@]+"${rest[@]}"}
need_tools layer-time

if [ "$quick" = 1 ]; then sizes="256 512 1024 2048"; else
  sizes="256 512 1024 2048 4096 8192"; fi
work_dir
[ -n "$keep" ] && [ -z "$plot" ] && plot=$dir/times.png

printf 'N\td\tk\ttime_attention\ttime_conv\ttime_rnn\tpath_attention\tpath_conv\tpath_dilated\tpath_rnn\tflops_attention\tflops_conv\tflops_rnn\n' \
  >"$dir/result.tsv"
for n in $sizes; do
  lt() { layer-time --length "$n" --dim "$dim" --kernel "$kernel" --repeat "$repeat" --threads "$threads" --seed "$seed" "$@"; }
  a=$(lt --layer attention) c=$(lt --layer conv) r=$(lt --layer rnn)
  # The path of a dilated stack only (a 1-wide pass: its time is not used).
  cd_=$(layer-time --layer conv --dilated --length "$n" --dim 1 --kernel "$kernel" --repeat 1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$dim" "$kernel" \
    "$(cut -f5 <<<"$a")" "$(cut -f5 <<<"$c")" "$(cut -f5 <<<"$r")" \
    "$(cut -f6 <<<"$a")" "$(cut -f6 <<<"$c")" "$(cut -f6 <<<"$cd_")" "$(cut -f6 <<<"$r")" \
    "$(cut -f7 <<<"$a")" "$(cut -f7 <<<"$c")" "$(cut -f7 <<<"$r")" >>"$dir/result.tsv"
done
cat "$dir/result.tsv"

if [ -n "$plot" ]; then
  if command -v gnuplot >/dev/null; then
    gnuplot <<EOG || echo "$PIPELINE: gnuplot failed: no plot" >&2
set terminal pngcairo size 800,560
set output "$plot"
set logscale xy
set key top left
set xlabel "sequence length N"
set ylabel "seconds per layer (d = $dim)"
set datafile separator "\t"
plot "$dir/result.tsv" skip 1 using 1:4 with linespoints title "self-attention", \
     "" skip 1 using 1:5 with linespoints title "convolution, k = $kernel", \
     "" skip 1 using 1:6 with linespoints title "RNN"
EOG
    [ -s "$plot" ] && echo "plot: $plot" >&2
  else
    echo "$PIPELINE: gnuplot is not installed: no plot (the TSV has the numbers)" >&2
  fi
fi

echo "Look at time_attention growing about 4x per doubling of N while conv and rnn grow 2x," \
  "and at the path lengths: attention 1 at every N, the others growing with N." >&2

# The claims, checked: growth exponents from the first and last rows (operations always,
# times in the full run), path lengths exact.
awk -F '\t' -v k="$kernel" -v quick="$quick" '
  NR == 1 { next }
  NR == 2 { n0 = $1; a0 = $4; c0 = $5; r0 = $6; fa0 = $11; fc0 = $12; fr0 = $13 }
  {
    n1 = $1; a1 = $4; c1 = $5; r1 = $6; fa1 = $11; fc1 = $12; fr1 = $13
    if ($7 != 1) { printf "claim failed: attention path %s at N=%d (want 1)\n", $7, $1; bad++ }
    if ($8 != int(($1 - 1 + k - 2) / (k - 1))) { printf "claim failed: conv path %s at N=%d\n", $8, $1; bad++ }
    L = 0; for (reach = 1; reach < $1; reach *= k) L++
    if ($9 != L) { printf "claim failed: dilated conv path %s at N=%d (want %d)\n", $9, $1, L; bad++ }
    if ($10 != $1 - 1) { printf "claim failed: rnn path %s at N=%d (want N-1)\n", $10, $1; bad++ }
    for (j = 4; j <= 6; j++) if (!($j > 0)) { printf "claim failed: no time in column %d at N=%d\n", j, $1; bad++ }
    for (j = 11; j <= 13; j++) if (!($j > 0)) { printf "claim failed: no operation count in column %d at N=%d\n", j, $1; bad++ }
  }
  END {
    if (NR < 3) { print "claim failed: fewer than two lengths"; exit 1 }
    if (bad) exit 1
    L = log(n1 / n0)
    oa = log(fa1 / fa0) / L; oc = log(fc1 / fc0) / L; orr = log(fr1 / fr0) / L
    printf "growth exponents of the operations (log-log slope, N=%d..%d): attention %.2f, conv %.2f, rnn %.2f\n", n0, n1, oa, oc, orr
    if (oa < 1.95 || oa > 2.05) { printf "claim failed: attention operations grow like N^%.2f (want N^2)\n", oa; bad++ }
    if (oc < 0.95 || oc > 1.05) { printf "claim failed: conv operations grow like N^%.2f (want N)\n", oc; bad++ }
    if (orr < 0.95 || orr > 1.05) { printf "claim failed: rnn operations grow like N^%.2f (want N)\n", orr; bad++ }
    ea = log(a1 / a0) / L; ec = log(c1 / c0) / L; er = log(r1 / r0) / L
    printf "growth exponents of the times%s: attention %.2f, conv %.2f, rnn %.2f\n", quick ? " (--quick: reported, not checked)" : "", ea, ec, er
    if (!quick) {
      if (ea < 1.5 || ea > 3.0) { printf "claim failed: attention time grows like N^%.2f (want about N^2)\n", ea; bad++ }
      if (ec < 0.5 || ec > 1.6) { printf "claim failed: conv time grows like N^%.2f (want about N)\n", ec; bad++ }
      if (er < 0.5 || er > 1.6) { printf "claim failed: rnn time grows like N^%.2f (want about N)\n", er; bad++ }
    }
    if (bad) exit 1
    print "checked: attention ~N^2, conv and rnn ~N" (quick ? " (operations)" : " (operations and times)") "; path lengths 1, ceil((N-1)/(k-1)), N-1"
  }' "$dir/result.tsv" >&2
