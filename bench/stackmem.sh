#!/usr/bin/env bash
# Stack-LSTM training speed, attnkit (bench/stackmem.cpp) against the same model in PyTorch
# (bench/stackmem_torch.py), in one run, alternating the two sides, REPS times each, with the
# same OPENBLAS_CORETYPE: training sequences/s (reversal of LEN of 10 symbols, batch 16,
# embed 32, hidden 64, width 16, Adam, clipping at 5: exercise 8-4's Stack-LSTM). PyTorch at
# N > 1 threads gets the best of torch N / OpenBLAS N, N / 1 and 1 / N (bench/lib.sh).
# Prints every measurement as TSV, then per case the median ratio attnkit / pytorch and the
# range of the per-repetition ratios.
#   bench/stackmem.sh [REPS] [THREADS]     (defaults 3 2; lengths 8 and 16)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
reps=${1:-3} th=${2:-2}
peer_setup stackmem
for r in $(seq "$reps"); do
  for len in 8 16; do
    peer_pair "$r" "$th" $len 20 "$th" -- "$top/bench/stackmem_torch.py" $len 10 @T
  done
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$4' 2 8 "$th"
