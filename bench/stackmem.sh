#!/usr/bin/env bash
# Stack-LSTM training speed, attnkit (bench/stackmem.cpp) against the same model in PyTorch
# (bench/stackmem_torch.py), in one run, alternating the two sides, REPS times each, with the
# same OPENBLAS_CORETYPE: training sequences/s (reversal of LEN of 10 symbols, batch 16,
# embed 32, hidden 64, width 16, Adam, clipping at 5: exercise 8-4's Stack-LSTM). Each side
# at its best thread setting within N: PyTorch the best of torch N / OpenBLAS N, N / 1 and
# 1 / N (bench/lib.sh), attnkit the best of N threads and 1 (its one slice of 16 sequences
# gains nothing from OpenBLAS threads in products of 16 rows; the model is the same).
# Prints every measurement as TSV, then per case the median ratio attnkit / pytorch and the
# range of the per-repetition ratios.
#   bench/stackmem.sh [REPS] [THREADS]     (defaults 3 2; lengths 8 and 16)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
reps=${1:-3} th=${2:-2}
peer_setup stackmem
# attnkit's faster of THREADS and 1 thread, its threads column set to THREADS, the setting
# appended (as torch_best does for PyTorch); kept in $out behind the repetition.
mine_best() {
  local r=$1 len=$2 best="" brate=0 n line rate
  for n in $(printf '%s\n' "$th" 1 | sort -u); do
    line=$(OMP_NUM_THREADS=$n "$bin" "$len" 20 "$n")
    rate=$(echo "$line" | cut -f7)
    if awk -v a="$rate" -v b="$brate" 'BEGIN { exit !(a + 0 > b + 0) }'; then
      brate=$rate
      best=$(echo "$line" | awk -F'\t' -v OFS='\t' -v th="$th" -v s="attnkit $n" '{ $4 = th; print $0, s }')
    fi
  done
  echo "$best"
  echo -e "$r\t$best" >> "$out"
}
for r in $(seq "$reps"); do
  for len in 8 16; do
    mine_best "$r" $len
    [ -z "$py" ] && continue
    line=$(torch_best 7 4 "$th" "$py" "$top/bench/stackmem_torch.py" $len 10 @T)
    echo "$line"
    echo -e "$r\t$line" >> "$out"
  done
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$4' 2 8 "$th"
