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
build=${ATTNKIT_BUILD:-$top/build}
bin="$build/bench/bench-ram"
[ -x "$bin" ] || { echo "ram.sh: no $bin (build first: make)" >&2; exit 1; }
steps=${1:-20} reps=${2:-3} th=${3:-2}
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
py=
/usr/bin/python3 -c 'import torch' 2>/dev/null && py=/usr/bin/python3
[ -n "$py" ] || echo "# PyTorch not importable by /usr/bin/python3: peer skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo -e "impl\ttask\tmodel\tthreads\tsteps\tsec\trate\tloss\tsetting"
for r in $(seq "$reps"); do
  line=$(OMP_NUM_THREADS=$th "$bin" "$steps" "$th"); echo "$line"; echo -e "$r\t$line" >> "$out"
  [ -n "$py" ] || continue
  line=$(torch_best 7 4 "$th" "$py" "$top/bench/ram_torch.py" "$steps" @T); echo "$line"; echo -e "$r\t$line" >> "$out"
done
[ -n "$py" ] || exit 0
echo
median_ratios "$out" '$3 " " $4' 2 8 "$th"
