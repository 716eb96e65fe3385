#!/usr/bin/env bash
# Recurrent-attention-model speed, attnkit (bench/ram.cpp) against the same model in PyTorch
# (bench/ram_torch.py), in one run, alternating the two sides, REPS times each, with the same
# OPENBLAS_CORETYPE: training images/s (60 x 60 images, batch 64, 6 glimpses of 3 patches
# 12/24/48 -> 12 x 12, h_g = h_l = 128, RNN core 256, Adam). PyTorch at N > 1 threads gets the
# best of torch N / OpenBLAS N, N / 1 and 1 / N (bench/lib.sh). Prints every measurement as
# TSV, then the median ratio attnkit / pytorch and the range of the per-repetition ratios.
#   bench/ram.sh [STEPS] [REPS] [THREADS]     (defaults 20 3 2)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
steps=${1:-20} reps=${2:-3} th=${3:-2}
peer_setup ram
for r in $(seq "$reps"); do
  peer_pair "$r" "$th" "$steps" "$th" -- "$top/bench/ram_torch.py" "$steps" @T
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$3 " " $4' 2 8 "$th"
