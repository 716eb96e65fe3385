#!/usr/bin/env bash
# Show-Attend-Tell training speed, attnkit (bench/caption.cpp) against the same model in
# PyTorch (bench/caption_torch.py), in one run, alternating the two sides, REPS times each,
# with the same OPENBLAS_CORETYPE: training images/s (64 scenes 56x56, CNN 16,32,64 and the
# regions' coordinate channels as caption_recipe trains them, LSTM 128,
# attention 64, Adam). PyTorch at N > 1 threads gets the best of torch N / OpenBLAS N, N / 1
# and 1 / N (bench/lib.sh). Prints every measurement as TSV, then the median ratio
# attnkit / pytorch and the range of the per-repetition ratios.
#   bench/caption.sh [STEPS] [REPS] [THREADS]     (defaults 10 3 2)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
steps=${1:-10} reps=${2:-3} th=${3:-2}
peer_setup caption
for r in $(seq "$reps"); do
  peer_pair "$r" "$th" "$steps" "$th" -- "$top/bench/caption_torch.py" "$steps" @T
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$3 " " $4' 2 8 "$th"
